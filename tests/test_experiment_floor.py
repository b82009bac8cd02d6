"""bench/experiment_floor.py: the FLOP floor counts the structural and perceptron runs of an
experiment directory from their epochs and treebanks, and nothing else."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from synrob.perturb.corpus import read_conllu

ROOT = Path(__file__).resolve().parents[1]


def _write(runs: Path, name: str, key: dict, epochs: int | None) -> None:
    rows = [{"epochs_run": epochs, "metric": "uuas"}] if epochs is not None else [{}]
    (runs / f"{name}.json").write_text(json.dumps({"key": key, "seconds": 12.5, "rows": rows}))


def _stats(path: Path, limit: int | None = None) -> tuple[int, int]:
    lens = [len(s.forms) for s in read_conllu(path)][:limit]
    return sum(lens), sum(n * n for n in lens)


def test_floor_of_two_probe_runs(tmp_path: Path, ewt_dev: Path, ewt_test: Path) -> None:
    runs = tmp_path / "runs"
    runs.mkdir()
    base = {"kind": "probe", "encoder": "minilm", "encoder_params": {},
            "train": str(ewt_dev), "dev": str(ewt_test)}
    _write(runs, "a", {**base, "probe": "structural", "probe_params": {"rank": 0}}, 3)
    _write(runs, "b", {**base, "probe": "perceptron", "probe_params": {"rank": 64}}, 2)
    _write(runs, "c", {**base, "probe": "linear", "task": "pos"}, 5)  # another probe
    _write(runs, "d", {"kind": "baselines", "probe": "structural"}, None)  # trains nothing
    # two layers trained together in one run (jabberwocky's fuse_layers): 1 + 2 epochs
    (runs / "e.json").write_text(json.dumps({
        "key": {**base, "probe": "structural", "probe_params": {"rank": 0}}, "seconds": 10.0,
        "rows": [{"layer": 0, "epochs_run": 1, "metric": m} for m in ("uuas", "dspr")]
        + [{"layer": 2, "epochs_run": 2, "metric": "uuas"}]}))
    (tmp_path / "results.json").write_text(json.dumps({"stages": {"runs": 30.0}}))
    out = subprocess.run([sys.executable, str(ROOT / "bench" / "experiment_floor.py"),
                          str(tmp_path), "--repeats", "1", "--target-s", "10"],
                         capture_output=True, text=True, check=True)
    got = dict(line.split(": ", 1) for line in out.stdout.splitlines())
    (w, s), (wd, sd) = _stats(ewt_dev), _stats(ewt_test)

    def epoch(rank: int) -> int:  # train: projection fwd + grad of B, Gram x3; dev: fwd only
        return 4 * w * 384 * rank + 6 * s * rank + 2 * wd * 384 * rank + 2 * sd * rank

    expected = 6 * epoch(384) + 2 * epoch(64)
    assert got["runs"] == "5" and got["runs_counted"] == "3" and got["runs_not_counted"] == "2"
    assert got["epochs_counted"] == "8"
    assert float(got["probe_tflop"]) == pytest.approx(expected / 1e12, abs=5e-4)
    rate = float(got["matmul_gflops_fp32"])
    assert rate == float(got["matmul_gflops_fp32_median"])  # one measurement: best = median
    assert float(got["flop_floor_s"]) == pytest.approx(expected / (rate * 1e9), abs=0.1)
    assert float(got["runs_seconds_sum"]) == pytest.approx(60.0, abs=0.5)
    assert float(got["floor_over_target"]) == pytest.approx(expected / (rate * 1e9) / 10,
                                                            abs=0.01)
    # from the unrounded floor: flop_floor_s is printed to 0.1 s, which on a fast machine
    # (a floor of 0.4 s) is a 10 % error
    assert float(got["runs_over_floor"]) == pytest.approx(
        60.0 / (expected / (rate * 1e9)), rel=0.01)
    assert got["runs_wall_s"] == "30.0"  # the runs stage of results.json: workers overlap
    assert float(got["runs_wall_over_floor"]) == pytest.approx(
        30.0 / (expected / (rate * 1e9)), rel=0.01)


def test_floor_counts_only_the_train_sentences_a_run_used(tmp_path: Path, ewt_dev: Path,
                                                          ewt_test: Path) -> None:
    """A run keyed with ``train_sentences`` N trained on the first N sentences: only those
    count (issue 29: the whole file made a 174 s floor of a 35 s one)."""
    runs = tmp_path / "runs"
    runs.mkdir()
    key = {"kind": "probe", "encoder": "minilm", "encoder_params": {}, "train": str(ewt_dev),
           "dev": str(ewt_test), "probe": "structural", "probe_params": {"rank": 0},
           "train_sentences": 100}
    _write(runs, "a", key, 2)
    out = subprocess.run([sys.executable, str(ROOT / "bench" / "experiment_floor.py"),
                          str(tmp_path), "--repeats", "1"],
                         capture_output=True, text=True, check=True)
    got = dict(line.split(": ", 1) for line in out.stdout.splitlines())
    (w, s), (wd, sd) = _stats(ewt_dev, 100), _stats(ewt_test)
    assert w < _stats(ewt_dev)[0]
    expected = 2 * (4 * w * 384 * 384 + 6 * s * 384 + 2 * wd * 384 * 384 + 2 * sd * 384)
    assert float(got["probe_tflop"]) == pytest.approx(expected / 1e12, abs=5e-4)


def test_a_directory_without_runs_is_one_line(tmp_path: Path) -> None:
    out = subprocess.run([sys.executable, str(ROOT / "bench" / "experiment_floor.py"),
                          str(tmp_path)], capture_output=True, text=True)
    assert out.returncode != 0 and "no runs/*.json" in out.stderr
    assert "Traceback" not in out.stderr


def test_only_the_runs_results_json_lists_count(tmp_path: Path, ewt_dev: Path,
                                                ewt_test: Path) -> None:
    """A directory re-run with another plan (other ``fuse_layers``) keeps the first plan's run
    files; results.json lists the runs of the last one, and only those count."""
    runs = tmp_path / "runs"
    runs.mkdir()
    key = {"kind": "probe", "encoder": "minilm", "encoder_params": {}, "train": str(ewt_dev),
           "dev": str(ewt_test), "probe": "structural", "probe_params": {"rank": 0}}
    _write(runs, "old", key, 7)  # the earlier plan's run, not listed
    _write(runs, "new", key, 2)
    (tmp_path / "results.json").write_text(json.dumps({"runs": [{"id": "new"}],
                                                       "stages": {"runs": 5.0}}))
    out = subprocess.run([sys.executable, str(ROOT / "bench" / "experiment_floor.py"),
                          str(tmp_path), "--repeats", "1"],
                         capture_output=True, text=True, check=True)
    got = dict(line.split(": ", 1) for line in out.stdout.splitlines())
    assert got["runs"] == "1" and got["epochs_counted"] == "2"
    assert float(got["runs_seconds_sum"]) == pytest.approx(12.5, abs=0.5)
