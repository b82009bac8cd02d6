"""The experiment framework: the synrob_register_experiments hook, the resumable runner, the
backends (local pool, dask, ray in their local modes), TOML configs and `synrob run`."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from synrob.perturb.errors import ParameterError, SynrobError
from synrob.perturb.params import Param
from synrob.perturb.plugins import get_registry, register_plugin, unregister_plugin
from synrob.probe.experiments.base import Experiment, RunSpec
from synrob.probe.experiments.config import load_config
from synrob.probe.experiments.report import markdown_table, mean_std, write_markdown
from synrob.probe.experiments.runner import run_experiment


class ChangeRate(Experiment):
    """Mean chrF-2 and Levenshtein of each perturber's rewrites of a real treebank."""

    name = "test-change-rate"
    version = "1.0"
    summary = "mean chrF-2 per perturber"
    params = (
        Param("kinds", str, "shuffle,flip", "perturbers"),
        Param("treebank", str, "sample:en_ewt:dev", "treebank"),
        Param("limit", int, 60, "sentences"),
        Param("fail_on", str, "", "a kind whose run raises (simulates a crash)"),
    )
    presets = {"three": {"kinds": "shuffle,flip,bshift"}}

    def prepare(self, ctx):
        with ctx.stage("perturbation"):  # a stage of the experiment's own
            time.sleep(0.05)

    def plan(self, ctx):
        return [RunSpec({"kind": k, "treebank": self.options["treebank"],
                         "limit": self.options["limit"]}, k) for k in self.list("kinds")]

    def execute(self, spec, ctx):
        from itertools import islice

        from synrob.perturb.pipeline import perturb_records, read_blocks
        from synrob.probe.experiments.data import resolve_one

        if spec.key["kind"] == self.options["fail_on"]:
            raise SynrobError(f"simulated crash in {spec.key['kind']}")
        perturber = get_registry().get("perturber", spec.key["kind"])()
        with resolve_one(spec.key["treebank"]).open(encoding="utf-8") as fh:
            recs = list(perturb_records(perturber, islice(read_blocks(fh), spec.key["limit"]),
                                        seed=ctx.seed))
        log = ctx.outdir / "executions.log"
        with log.open("a") as fh:  # one line per execution, from whichever process ran it
            fh.write(spec.key["kind"] + "\n")
        return [{"perturbation": spec.key["kind"], "metric": m,
                 "value": sum(getattr(r, m) for r in recs) / len(recs)} for m in ("chrf2", "lev")]

    def report(self, rows, ctx):
        table = markdown_table(["perturber", "metric", "value"],
                               [[r["perturbation"], r["metric"], r["value"]] for r in rows])
        return [write_markdown(ctx.outdir / "report.md", "# change rate", [table])]


class _Plugin:
    @staticmethod
    def synrob_register_experiments():
        return [ChangeRate]


@pytest.fixture
def registered() -> Iterator[None]:
    register_plugin(_Plugin, "test-experiments")
    try:
        yield
    finally:
        unregister_plugin("test-experiments")


def _executions(out: Path) -> list[str]:
    log = out / "executions.log"
    return log.read_text().split() if log.exists() else []


def _values(rows):
    return sorted((r["perturbation"], r["metric"], r["value"]) for r in rows)


def test_hook_registers_experiments(registered: None) -> None:
    """synrob_register_experiments puts the class under kind 'experiment'."""
    assert get_registry().get("experiment", "test-change-rate") is ChangeRate


def test_run_writes_results_and_reuses_finished_runs(tmp_path: Path) -> None:
    out = tmp_path / "res"
    first = run_experiment(ChangeRate(), out, seed=3)
    assert (first.executed, first.reused) == (2, 0)
    for name in ("results.json", "results.csv", "report.md", "experiment.json"):
        assert (out / name).is_file(), name
    data = json.loads((out / "results.json").read_text())
    assert data["experiment"] == "test-change-rate" and data["seed"] == 3
    assert data["options"]["kinds"] == "shuffle,flip" and "torch" in data["versions"]
    assert {r["metric"] for r in data["rows"]} == {"chrf2", "lev"}
    assert all(r["seed"] == 3 and r["experiment"] == "test-change-rate" and len(r["run"]) == 16
               for r in data["rows"])
    shuffle_chrf = next(r["value"] for r in data["rows"]
                        if r["perturbation"] == "shuffle" and r["metric"] == "chrf2")
    assert 0.2 < shuffle_chrf < 1.0  # a real rewrite: changed, not destroyed
    csv_lines = (out / "results.csv").read_text().splitlines()
    assert len(csv_lines) == 1 + len(data["rows"]) and "perturbation" in csv_lines[0]
    # the stage breakdown: the experiment's own stages, then the runner's, within the total
    assert list(data["stages"]) == ["perturbation", "other preparation", "runs", "report"]
    assert data["stages"]["perturbation"] >= 0.05 and data["stages"]["runs"] > 0
    assert sum(first.stages.values()) <= first.seconds + 1e-6
    told: list[tuple[str, float]] = []
    timed = run_experiment(ChangeRate(), tmp_path / "told", seed=3,
                           on_stage=lambda name, secs: told.append((name, secs)))
    assert [n for n, _ in told] == list(timed.stages)  # on_stage hears every stage, in order
    assert [round(s, 3) for _, s in told] == list(timed.stages.values())

    again = run_experiment(ChangeRate(), out, seed=3)
    assert (again.executed, again.reused) == (0, 2)
    assert _values(again.rows) == _values(first.rows)
    assert _executions(out) == ["shuffle", "flip"]  # nothing executed twice

    more = run_experiment(ChangeRate(kinds="shuffle,flip,bshift"), out, seed=3)
    assert (more.executed, more.reused) == (1, 2)
    other_seed = run_experiment(ChangeRate(), out, seed=4)  # the seed is part of a run's id
    assert other_seed.executed == 2


def test_perturber_named_in_key_version_bump_reruns_its_runs(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """ChangeRate names its perturbers in the key ("kind"): the runner keys them by version and
    full options, so a new shuffle version re-executes the shuffle run only."""
    out = tmp_path / "res"
    first = run_experiment(ChangeRate(limit=30), out)
    assert first.executed == 2
    runs = {r["label"]: r for r in first.runs}
    shuffle = get_registry().get("perturber", "shuffle")
    assert runs["shuffle"]["content_key"]["kind"] == {
        "component": "perturber", "name": "shuffle", "version": shuffle.version,
        "options": shuffle().options}
    assert runs["flip"]["provenance"]["perturbers"] == {"flip": runs["flip"]["content_key"][
        "kind"]["version"]}
    monkeypatch.setattr(shuffle, "version", shuffle.version + ".1")
    again = run_experiment(ChangeRate(limit=30), out)
    assert (again.executed, again.reused) == (1, 1)
    assert _executions(out) == ["shuffle", "flip", "shuffle"]


def test_interrupted_experiment_resumes(tmp_path: Path) -> None:
    out = tmp_path / "res"
    with pytest.raises(SynrobError, match="simulated crash"):
        run_experiment(ChangeRate(kinds="shuffle,bshift,flip", fail_on="bshift"), out)
    assert _executions(out) == ["shuffle"]  # finished before the crash, and saved
    resumed = run_experiment(ChangeRate(kinds="shuffle,bshift,flip"), out)
    assert resumed.reused == 1 and resumed.executed == 2
    assert sorted(_executions(out)) == ["bshift", "flip", "shuffle"]


def test_force_and_outdir_of_another_experiment(tmp_path: Path) -> None:
    out = tmp_path / "res"
    run_experiment(ChangeRate(kinds="flip"), out)
    assert run_experiment(ChangeRate(kinds="flip"), out, force=True).executed == 1
    meta = json.loads((out / "experiment.json").read_text())
    meta["experiment"] = "something-else"
    (out / "experiment.json").write_text(json.dumps(meta))
    with pytest.raises(ParameterError, match="holds results of experiment 'something-else'"):
        run_experiment(ChangeRate(kinds="flip"), out)


def test_parameters_presets_and_lists() -> None:
    assert ChangeRate(kinds=["shuffle", "bshift"]).list("kinds") == ["shuffle", "bshift"]
    assert ChangeRate.from_preset("three").list("kinds") == ["shuffle", "flip", "bshift"]
    assert ChangeRate.from_preset("three", limit="5").options["limit"] == 5
    with pytest.raises(ParameterError, match="unknown preset 'nope'"):
        ChangeRate.from_preset("nope")
    with pytest.raises(ParameterError, match="unknown parameter 'kind'"):
        ChangeRate(kind="flip")
    with pytest.raises(ParameterError, match="expects int"):
        ChangeRate(limit="many")


def test_report_helpers() -> None:
    assert mean_std([1.0, 2.0, 3.0]) == "2.000 ± 1.000"
    assert mean_std([0.5]) == "0.500" and mean_std([]) == "—"
    table = markdown_table(["a", "b"], [["x", 0.12345], ["y", float("nan")]])
    assert table.splitlines() == ["| a | b |", "| --- | ---: |", "| x | 0.123 |", "| y | — |"]


def test_toml_config(tmp_path: Path) -> None:
    good = tmp_path / "exp.toml"
    good.write_text('experiment = "test-change-rate"\nseed = 2\nworkers = 2\n'
                    '[params]\nkinds = ["flip", "bshift"]\nlimit = 10\n')
    cfg = load_config(good)
    assert (cfg.experiment, cfg.seed, cfg.workers) == ("test-change-rate", 2, 2)
    assert cfg.params == {"kinds": ["flip", "bshift"], "limit": 10}
    for text, message in (('experiment = "x"\ncolour = 1\n', "unknown key 'colour'"),
                          ("seed = 1\n", "'experiment'"),
                          ('experiment = "x"\nseed = "one"\n', "'seed' must be a int"),
                          ('experiment = "x\n', "not valid TOML")):
        bad = tmp_path / "bad.toml"
        bad.write_text(text)
        with pytest.raises(ParameterError, match=message):
            load_config(bad)


def test_cli_run_from_toml_and_by_name(cli, registered: None, tmp_path: Path) -> None:
    out = tmp_path / "cli-res"
    cfg = tmp_path / "exp.toml"
    cfg.write_text(f'experiment = "test-change-rate"\noutput = "{out}"\n'
                   '[params]\nkinds = ["flip"]\nlimit = 20\n')
    res = cli(["run", cfg, "--json"])
    assert res.exit_code == 0, res.stderr
    data = json.loads(res.stdout)
    assert data["experiment"] == "test-change-rate" and data["executed"] == 1
    assert "1 runs executed, 0 reused" in res.stderr
    assert "synrob: stages: perturbation " in res.stderr and ", runs " in res.stderr
    # each stage is told as it ends, before the run's summary (a stopped run still shows them)
    ends = [line.split(" done in ")[0].removeprefix("synrob: stage ")
            for line in res.stderr.splitlines() if line.startswith("synrob: stage ")]
    assert ends == ["perturbation", "other preparation", "runs", "report"]
    assert res.stderr.index("synrob: stage runs done in") < res.stderr.index("runs executed")
    res = cli(["run", cfg])  # the same, from the finished run: prints the report
    assert res.exit_code == 0 and "0 runs executed, 1 reused" in res.stderr
    assert res.stdout.startswith("# change rate") and f"report: {out}/report.md" in res.stderr
    res = cli(["run", "test-change-rate", "-o", tmp_path / "b", "-p", "kinds=bshift",
               "-p", "limit=5", "--seed", "1", "--json"])
    assert res.exit_code == 0, res.stderr
    assert json.loads(res.stdout)["rows"][0]["perturbation"] == "bshift"
    described = json.loads(cli(["run", "test-change-rate", "--describe"]).stdout)
    assert described["name"] == "test-change-rate" and "three" in described["presets"]
    listed = cli(["experiments"]).stdout
    assert "test-change-rate" in listed and "presets: default, three" in listed


def test_cli_errors(cli, registered: None, tmp_path: Path) -> None:
    res = cli(["run", "no-such-experiment"])
    assert res.exit_code == 1 and res.stderr.startswith("synrob: error: unknown experiment")
    res = cli(["run", "test-change-rate", "-p", "colour=red", "-o", tmp_path / "x"])
    assert res.exit_code == 1 and "unknown parameter 'colour'" in res.stderr
    assert "Traceback" not in res.stderr
    res = cli(["run", "test-change-rate", "--backend", "spark", "-o", tmp_path / "y"])
    assert res.exit_code == 1 and "unknown backend 'spark'" in res.stderr
    res = cli(["run", "test-change-rate", "--workers", "0", "-o", tmp_path / "w"])
    assert res.exit_code == 1 and res.stderr.strip().splitlines()[-1] == (
        "synrob: error: --workers must be at least 1, got 0")
    assert not (tmp_path / "w").exists()  # refused before any work
    victim = tmp_path / "input.conllu"
    victim.write_text("# text = a\n1\ta\n\n", encoding="utf-8")
    res = cli(["run", "test-change-rate", "-o", victim])
    assert res.exit_code == 1 and res.stderr.strip().splitlines()[-1] == (
        f"synrob: error: {victim}: not a directory (--out takes a directory)")
    assert victim.read_text(encoding="utf-8") == "# text = a\n1\ta\n\n"


@pytest.mark.slow
def test_backends_give_identical_results(tmp_path: Path) -> None:
    """A local process pool, dask and ray (each in its local mode) reproduce the serial rows."""
    import sys

    import cloudpickle

    pytest.importorskip("distributed")
    pytest.importorskip("ray")
    # dask/ray workers cannot import this test module: ship its classes by value
    cloudpickle.register_pickle_by_value(sys.modules[__name__])
    os.environ.setdefault("RAY_AUTH_MODE", "disabled")
    exp = ChangeRate(kinds="shuffle,flip,bshift", limit=40)
    serial = run_experiment(exp, tmp_path / "serial")
    for backend in ("local", "dask", "ray"):
        res = run_experiment(exp, tmp_path / backend, backend=backend, workers=2)
        assert res.executed == 3
        assert _values(res.rows) == _values(serial.rows), backend


def test_finite_mean_keeps_each_former_helper() -> None:
    """finite_mean replaces robustness's ``_mean``/``_mean_or_nan`` (NumPy arrays) and
    jabberwocky's ``_mean`` (lists): the same numbers, NaN when nothing is defined."""
    import math

    import numpy as np
    from synrob.probe.experiments.stats import finite_mean

    def old_array_mean(values: np.ndarray) -> float:
        finite = np.asarray(values, float)[np.isfinite(values)]
        return float(finite.mean()) if finite.size else float("nan")

    def old_list_mean(values: list) -> float:
        vals = [v for v in values if v is not None and not math.isnan(v)]
        return sum(vals) / len(vals) if vals else math.nan

    rng = np.random.default_rng(0)
    arrays = [rng.random(1000), rng.random((40, 5)).astype(np.float32),
              np.array([0.1, np.nan, 0.7, np.inf, -np.inf, 0.3]), np.array([np.nan]),
              np.array([], dtype=float)]
    for a in arrays:
        got, want = finite_mean(a), old_array_mean(a)
        assert (math.isnan(got) and math.isnan(want)) or got == want
    lists = [[0.1, 0.2, 0.7], [0.3, None, float("nan"), 0.9], [float(x) for x in rng.random(13)],
             [], [None, float("nan")]]
    for v in lists:
        got, want = finite_mean(v), old_list_mean(v)
        assert (math.isnan(got) and math.isnan(want)) or got == want



class TrainsHalf(ChangeRate):
    """Each run spends ~0.1 s "training" (on the probe-training clock) and ~0.1 s otherwise."""

    name = "test-trains-half"

    def execute(self, spec, ctx):
        from synrob.probe.runtime.clock import TRAINING, timed

        with timed(TRAINING):
            time.sleep(0.1)
        time.sleep(0.1)
        return [{"perturbation": spec.key["kind"], "metric": "x", "value": 1.0}]


def test_runs_record_their_training_share(tmp_path: Path) -> None:
    """Each run file records train_seconds; results.json's run_time sums the executed runs
    (reused ones are not counted again) and gives training's share."""
    first = run_experiment(TrainsHalf(), tmp_path / "res")
    rt = json.loads((tmp_path / "res" / "results.json").read_text())["run_time"]
    assert rt == first.run_time and rt["runs"] == 2
    assert 0.2 <= rt["training_seconds"] < rt["seconds"]
    assert 0.3 < rt["training_share"] < 0.7
    for f in (tmp_path / "res" / "runs").glob("*.json"):
        assert json.loads(f.read_text())["provenance"]["train_seconds"] >= 0.1
    again = run_experiment(TrainsHalf(), tmp_path / "res")
    assert again.run_time == {"runs": 0, "seconds": 0.0, "training_seconds": 0.0,
                              "training_share": None}


def test_probe_training_runs_on_the_clock() -> None:
    """training.fit adds its wall time (TrainLog.seconds) to the clock."""
    import numpy as np
    from synrob.perturb.plugins import get_registry
    from synrob.probe.probes.inputs import Features
    from synrob.probe.runtime.clock import TRAINING
    from synrob.probe.training.batches import make_batches
    from synrob.probe.training.loop import fit

    rng = np.random.default_rng(0)
    feats = Features(rng.normal(size=(40, 8)).astype(np.float32),
                     np.arange(0, 41, 4, dtype=np.int64))
    targets = [rng.integers(0, 3, size=4) for _ in range(10)]
    probe = get_registry().get("probe", "linear")(epochs=2)
    module = probe.build(8, 3, "tag")
    before = TRAINING.seconds
    log = fit(probe, module, make_batches(feats, "tag", targets),
              make_batches(feats, "tag", targets))
    assert TRAINING.seconds - before == pytest.approx(log.seconds)


class SeesThreads(ChangeRate):
    """Each run's row is the number of torch threads it ran with."""

    name = "test-sees-threads"

    def execute(self, spec, ctx):
        import torch

        return [{"perturbation": spec.key["kind"], "metric": "threads",
                 "value": float(torch.get_num_threads())}]


def test_each_run_gets_its_share_of_the_cores(tmp_path: Path, monkeypatch) -> None:
    """One local worker: the run has every thread of the driver (jabberwocky's runs had one,
    leaving the other cores idle); a pool of N: cpu_count // N each; dask and ray: one (a task
    per CPU there). The driver's own setting is restored after each run."""
    import torch
    from synrob.probe.experiments.backends import execute_run
    from synrob.probe.experiments.base import Context, run_threads

    monkeypatch.setattr(os, "cpu_count", lambda: 16)
    assert [run_threads("local", w) for w in (1, 2, 3, 8, 32)] == [0, 8, 5, 2, 1]
    assert run_threads("dask", 4) == run_threads("ray", 1) == 1
    before = torch.get_num_threads()
    rows, _, _ = execute_run(SeesThreads(), RunSpec({"kind": "flip"}),
                             Context(tmp_path, threads=1))
    assert rows[0]["value"] == 1.0 and torch.get_num_threads() == before
    res = run_experiment(SeesThreads(kinds="flip"), tmp_path / "one")  # workers=1: all of them
    assert res.rows[0]["value"] == float(before)
    alone = run_experiment(SeesThreads(kinds="flip"), tmp_path / "alone", workers=8)
    assert alone.rows[0]["value"] == float(before)  # a single run executes here, with all
