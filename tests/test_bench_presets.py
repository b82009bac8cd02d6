"""bench/presets.py: a preset run cold in a child process, its stages and training share read
back from results.json, and a failing experiment reported, not raised."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from .bench_script import load_bench

ROOT = Path(__file__).resolve().parents[1]


def _bench(tmp_path: Path, *args: str) -> dict[str, str]:
    out = subprocess.run([sys.executable, str(ROOT / "bench" / "presets.py"), "--out",
                          str(tmp_path), "--device", "cpu", *args],
                         check=True, capture_output=True, text=True).stdout
    return dict(line.split(": ", 1) for line in out.splitlines())


@pytest.mark.slow
def test_demo_preset_cold_with_its_stages(tmp_path: Path) -> None:
    got = _bench(tmp_path, "--experiments", "jabberwocky:demo", "--workers", "2",
                 "--keep-caches", "-p", "jabberwocky.draws=1", "-p", "senteval.draws=9")
    assert got["cold"] == "yes" and got["device"].startswith("CPU")
    assert got["jabberwocky-demo_status"] == "ok"
    results = json.loads((tmp_path / "jabberwocky-demo" / "results.json").read_text())
    for stage, secs in results["stages"].items():
        key = f"jabberwocky-demo_stage_{stage.replace(' ', '_')}_seconds"
        assert float(got[key]) == pytest.approx(secs, abs=0.06)
    assert int(got["jabberwocky-demo_runs"]) == results["run_time"]["runs"] > 0
    assert 0 < float(got["jabberwocky-demo_training_share"]) < 1
    assert float(got["jabberwocky-demo_seconds"]) > results["stages"]["runs"]
    # cold: its own cache, inside --out, filled by this run only
    caches = list(tmp_path.glob("synrob-cache-jabberwocky-demo-*"))
    assert len(caches) == 1 and any(caches[0].rglob("*.npy"))
    options = json.loads((tmp_path / "jabberwocky-demo" / "experiment.json").read_text())
    assert options["options"]["draws"] == 1  # -p NAME.key=value reaches that experiment only
    table = (tmp_path / "presets.md").read_text()
    assert "| jabberwocky-demo | ok |" in table and "cold caches" in table


def test_a_failing_experiment_is_a_status_line(tmp_path: Path) -> None:
    got = _bench(tmp_path, "--experiments", "no-such-experiment")
    assert got["no-such-experiment-default_status"].startswith("failed (exit ")
    assert "no-such-experiment" in got["no-such-experiment-default_status"].split("(", 2)[-1]
    assert "| no-such-experiment-default | failed" in (tmp_path / "presets.md").read_text()
    assert not list(tmp_path.glob("synrob-cache-*"))  # the cold cache is removed after it


def test_out_onto_a_file_is_one_line_and_keeps_the_file(tmp_path: Path) -> None:
    target = tmp_path / "results.txt"
    target.write_text("keep me")
    run = subprocess.run([sys.executable, str(ROOT / "bench" / "presets.py"), "--out",
                          str(target), "--experiments", "jabberwocky:demo"],
                         capture_output=True, text=True)
    assert run.returncode == 1 and run.stdout == ""
    assert run.stderr.strip() == f"{target}: not a directory (--out takes a directory)"
    assert target.read_text() == "keep me"


def test_seed_cache_fills_each_cold_cache_and_the_table_says_so(tmp_path: Path) -> None:
    seed = tmp_path / "seed" / "pseudowords"
    seed.mkdir(parents=True)
    (seed / "lexicon.json").write_text("{}")
    out = tmp_path / "out"
    got = _bench(out, "--experiments", "no-such-experiment", "--keep-caches",
                 "--seed-cache", str(tmp_path / "seed"), "--commit", "abc1234")
    assert got["no-such-experiment-default_status"].startswith("failed (exit ")
    caches = list(out.glob("synrob-cache-no-such-experiment-default-*"))
    assert len(caches) == 1
    assert (caches[0] / "pseudowords" / "lexicon.json").read_text() == "{}"
    table = (out / "presets.md").read_text()
    assert "cold caches seeded with pseudowords" in table and "synrob abc1234" in table
    log = (out / "no-such-experiment-default.stderr").read_text()
    assert "no-such-experiment" in log  # the child's stderr is kept


def test_seed_cache_that_is_no_directory_is_one_line(tmp_path: Path) -> None:
    run = subprocess.run([sys.executable, str(ROOT / "bench" / "presets.py"), "--out",
                          str(tmp_path / "out"), "--seed-cache", str(tmp_path / "missing"),
                          "--experiments", "jabberwocky:demo"], capture_output=True, text=True)
    assert run.returncode == 1 and run.stdout == ""
    assert run.stderr.strip() == f"{tmp_path / 'missing'}: not a directory (--seed-cache takes a directory)"
    assert not list((tmp_path / "out").glob("synrob-cache-*"))  # nothing ran


def test_a_preset_past_its_timeout_keeps_the_stages_and_runs_it_printed(tmp_path: Path,
                                                                        capsys) -> None:
    """A child killed past --timeout-s: its stderr is in the log as it came, and the stages
    and runs that ended before the kill are read from it (progress bars redraw with \\r)."""
    mod = load_bench("presets", "bench_presets")
    child = tmp_path / "child.py"
    child.write_text(
        "import sys, time\n"
        "w = sys.stderr.write\n"
        "w('synrob: stage perturbation done in 1.5 s\\n')\n"
        "w('encoding:  50%|#####     |\\rsynrob: stage encoding done in 12.25 s\\n')\n"
        "w('synrob: run minilm/L0/structural/clean done in 20.0 s\\n')\n"
        "w('synrob: run fast+pos/L0/perceptron/clean done in 4.5 s\\n')\n"
        "sys.stderr.flush()\n"
        "time.sleep(60)\n")
    log = tmp_path / "k.stderr"
    code, lines = mod._child([sys.executable, str(child)], dict(__import__("os").environ),
                             3.0, log, "k")
    assert code is None  # killed at the timeout, long before the child's 60 s
    assert "encoding:  50%" in log.read_text() and "done in 4.5 s" in log.read_text()
    echoed = capsys.readouterr().err
    assert "[k] synrob: stage encoding done in 12.25 s" in echoed
    got = mod._progress(lines)
    assert got == {"stages": {"perturbation": 1.5, "encoding": 12.25}, "runs_done": 2,
                   "runs_done_seconds_sum": 24.5}
    row = {"key": "jabberwocky-default", "seconds": 400.0, "status": "timeout", **got}
    args = type("A", (), {"workers": 8, "warm": False, "seed_cache": None, "commit": "abc",
                          "experiments": "jabberwocky", "device": "cuda"})()
    table = mod._table([row], "GPU", args)
    assert ("| jabberwocky-default | timeout | 6 min 40 s | 1.5 s | 12.2 s | - | - | - | "
            "2 finished (24 s summed) | - |") in table


def test_a_finished_child_gives_its_exit_code(tmp_path: Path) -> None:
    mod = load_bench("presets", "bench_presets")
    code, lines = mod._child([sys.executable, "-c", "import sys; sys.stderr.write('x\\n'); "
                              "sys.exit(3)"], dict(__import__("os").environ), 30.0,
                             tmp_path / "log", "k")
    assert code == 3 and lines == ["x"]
