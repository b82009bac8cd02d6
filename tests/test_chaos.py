"""Kill tests (bench/chaos.py, reduced): SIGKILL the real ``synrob`` entry point at random
moments and check that no partial output is ever visible and that a re-run gives the result of
an uninterrupted run."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from .bench_script import load_bench

ROOT = Path(__file__).resolve().parents[1]


chaos = load_bench("chaos", "synrob_bench_chaos")


def _assert_clean(tally, kills: int = 2) -> None:
    assert tally.kills + tally.finished_before_kill == tally.trials <= 2 * kills
    assert tally.kills >= 1, f"{tally.command}: every command finished before its kill moment"
    assert tally.partial_outputs == 0, tally.problems
    assert tally.results_differ == 0, tally.problems
    assert tally.reference_s > 0


@pytest.mark.slow
def test_kill_perturb(tmp_path: Path) -> None:
    _assert_clean(chaos.chaos_perturb(2, tmp_path, random.Random(7), source="sample:en_ewt:dev",
                                      kind="shuffle"))


@pytest.mark.slow
def test_kill_encode(tmp_path: Path) -> None:
    _assert_clean(chaos.chaos_encode(2, tmp_path, random.Random(8), source="sample:en_ewt:train",
                                     encoder="glove-6b-50d"))


@pytest.mark.slow
def test_kill_run(tmp_path: Path, sample_slice) -> None:
    """``synrob run jabberwocky`` with a pool of 2 workers (the whole process group is killed)
    on slices of the sample; the warm-up run with 1 worker gives the same rows too."""
    data = tmp_path / "data"
    data.mkdir()
    params = [f"train={sample_slice('train', 40, data)}", f"dev={sample_slice('dev', 20, data)}",
              f"test={sample_slice('test', 20, data)}", "draws=1", "train_on=clean",
              "baselines=path", "epochs=1", "train_sentences=0"]
    _assert_clean(chaos.chaos_run(2, tmp_path, random.Random(9), params=params, workers=2))


def test_check_run_dir_flags_partial_files(tmp_path: Path) -> None:
    """The run checker sees a truncated JSON, CSV or PNG and accepts complete ones."""
    ref, out = tmp_path / "ref", tmp_path / "out"
    for d in (ref, out):
        (d / "runs").mkdir(parents=True)
    (ref / "runs" / "a.json").write_text('{"rows": [{"value": 1}]}')
    (ref / "results.csv").write_text("metric,value\nuuas,0.5\n")
    png = chaos.PNG_END.join([b"\x89PNG....", b""])
    (ref / "plot.png").write_bytes(png)
    (out / "runs" / "a.json").write_text('{"rows": [{"value": 1}]}')
    (out / "results.csv").write_text("metric,value\nuuas,0.5\n")
    (out / "plot.png").write_bytes(png)
    (out / ".results.json.123.abcd.tmp").write_text('{"ro')  # a killed writer's temporary
    assert chaos.check_run_dir(out, ref) == []
    assert len(chaos.temporaries(out)) == 1
    (out / "runs" / "a.json").write_text('{"rows": [{"va')
    (out / "results.csv").write_text("metric,value\nuu")
    (out / "plot.png").write_bytes(png[:-3])
    assert sorted(chaos.check_run_dir(out, ref)) == [
        "plot.png: truncated PNG", "results.csv: not byte-identical to the reference's",
        "runs/a.json: not valid JSON"]
    (out / "runs" / "a.json").write_text('{"rows": [{"value": 2}]}')
    assert "runs/a.json: rows differ from the reference" in chaos.check_run_dir(out, ref)


def test_comparable_results_ignores_times_only() -> None:
    a = {"experiment": "x", "written": "t1", "seconds": 3.0, "stages": {"runs": 2.0},
         "executed": 7, "reused": 0,
         "versions": {"torch": "1"}, "options": {"k": 1}, "seed": 0,
         "runs": [{"id": "r", "label": "l", "content_key": "c", "seconds": 1.0,
                   "reused": False, "provenance": {"time": "t1"}, "key": {"tests": "/a"}}],
         "rows": [{"run": "r", "value": 0.5}]}
    b = {**a, "written": "t2", "seconds": 9.0, "stages": {"runs": 0.0}, "executed": 0,
         "reused": 7,
         "runs": [{**a["runs"][0], "seconds": 2.0, "reused": True,
                   "provenance": {"time": "t2"}, "key": {"tests": "/b"}}]}
    assert chaos.comparable_results(a) == chaos.comparable_results(b)
    c = {**b, "rows": [{"run": "r", "value": 0.25}]}
    assert chaos.comparable_results(a) != chaos.comparable_results(c)
