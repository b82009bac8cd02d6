"""The ``senteval`` experiment (Conneau et al. 2018, Table 2) on tasks built from the EWT sample."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from synrob.perturb.errors import ParameterError, ResourceError
from synrob.perturb.plugins import get_registry
from synrob.probe.experiments.base import Context
from synrob.probe.experiments.runner import run_experiment
from synrob.probe.experiments.senteval.experiment import SentEvalExperiment
from synrob.probe.experiments.senteval.report import PAPER_TABLE2

#: A small grid: two tasks, MiniLM layers 0 and 6, both classifiers, every baseline.
SMALL = {"tasks": "SentLen,Tense", "encoders": "minilm", "layers": "0,6"}


@pytest.fixture(scope="module")
def sample_run(tmp_path_factory: pytest.TempPathFactory):
    out = tmp_path_factory.mktemp("senteval-run")
    exp = SentEvalExperiment.from_preset("sample", **SMALL)
    return run_experiment(exp, out, seed=0), out


def test_registered_with_presets() -> None:
    cls = get_registry().get("experiment", "senteval")
    assert cls is SentEvalExperiment and "sample" in cls.presets
    exp = SentEvalExperiment.from_preset("sample")
    assert exp.options["treebanks"] == "sample:en_ewt"
    assert exp.layer_plan() == {"minilm": [0, 6], "glove-6b-50d": [0]}
    assert SentEvalExperiment().task_names()[0] == "SentLen"
    assert SentEvalExperiment(tasks="bigram_shift,tense").task_names() == ["BShift", "Tense"]
    with pytest.raises(ParameterError):
        SentEvalExperiment(tasks="Parsing").task_names()


def test_bad_names_are_refused(tmp_path: Path) -> None:
    for bad in ({"baselines": "oracle"}, {"classifiers": "svm"}):
        with pytest.raises(ParameterError):
            SentEvalExperiment.from_preset("sample", **SMALL, **bad).prepare(Context(tmp_path))


def test_sample_run_writes_the_table2_report(sample_run) -> None:
    result, out = sample_run
    for name in ("report.md", "results.json", "results.csv", "senteval-layers.png"):
        assert (out / name).is_file(), name
    # 2 tasks x (5 baselines + 2 layers x 2 classifiers) runs, a dev and a test row each
    assert len(result.runs) == 18 and result.executed == 18
    runs = [r for r in result.rows if not r.get("derived")]
    assert len(runs) == 36
    test = {(r["row"], r["task"]): r["value"] for r in runs if r["split"] == "test"}
    # every test accuracy has its 95% bootstrap interval; each task one lead row with p-value
    assert all(r["ci_low"] <= r["value"] <= r["ci_high"] for r in runs if r["split"] == "test")
    leads = {r["task"]: r for r in result.rows if r.get("derived")}
    assert set(leads) == {"SentLen", "Tense"} and leads["Tense"]["metric"] == "lead_accuracy"
    tense = leads["Tense"]
    assert tense["ci_low"] <= tense["value"] <= tense["ci_high"] and tense["seeds"] == [0]
    assert 0 < tense["p_value"] <= 1
    assert tense["value"] == pytest.approx(test[(tense["model"], "Tense")]
                                           - test[(tense["baseline"], "Tense")])
    # SentLen: the length baseline is perfect, so no model leads it
    assert leads["SentLen"]["baseline"] == "length" and leads["SentLen"]["value"] <= 0
    assert test[("length", "SentLen")] == 1.0
    assert test[("majority", "Tense")] == pytest.approx(0.5, abs=0.05)
    for layer in (0, 6):  # MiniLM knows the tense far better than chance
        assert test[(f"minilm L{layer} mlp", "Tense")] > 0.7
    assert test[("minilm L0 logreg", "SentLen")] > test[("majority", "SentLen")] + 0.2
    mlp = [r for r in runs if r["classifier"] == "mlp" and r["split"] == "test"]
    assert all(set(r["chosen"]) == {"hidden", "dropout"} for r in mlp)
    assert all(r["model"] and r["encoder_version"] for r in mlp)
    report = (out / "report.md").read_text()
    assert "| row | SentLen | Tense |" in report
    assert "| minilm L6 mlp |" in report and "| bov-glove |" in report
    assert "BoV-fastText" in report and "chosen on dev" in report
    assert "## Lead of the best model over the best baseline" in report and "| Tense |" in report
    assert set(PAPER_TABLE2) >= {"Majority vote", "Length", "NB-uni-tfidf", "NB-bi-tfidf"}
    stats = json.loads(next((out / "data").glob("tasks-*/stats.json")).read_text())
    assert stats["treebanks"] == ["sample:en_ewt"]


def test_rerun_is_served_from_runs(sample_run) -> None:
    first, out = sample_run
    again = run_experiment(SentEvalExperiment.from_preset("sample", **SMALL), out, seed=0)
    assert again.executed == 0 and again.reused == 18
    assert [r["value"] for r in again.rows] == [r["value"] for r in first.rows]


def test_toml_config_on_a_tasks_dir(sample_run, tmp_path: Path, cli) -> None:
    _, out = sample_run
    tasks_dir = next((out / "data").glob("tasks-*"))
    config = tmp_path / "senteval.toml"
    config.write_text(f"""
experiment = "senteval"
output = "{tmp_path / 'toml-out'}"

[params]
tasks_dir = "{tasks_dir}"
tasks = ["Tense"]
encoders = ["minilm"]
layers = ["minilm:0"]
classifiers = ["logreg"]
baselines = ["majority", "nb-uni-tfidf"]
""", encoding="utf-8")
    res = cli(["run", str(config), "--json"])
    assert res.exit_code == 0, res.stderr
    data = json.loads(res.stdout)
    assert data["experiment"] == "senteval" and data["executed"] == 3
    rows = {r["row"]: r["value"] for r in data["rows"]
            if r["split"] == "test" and not r.get("derived")}
    assert set(rows) == {"majority", "nb-uni-tfidf", "minilm L0 logreg"}
    # same task file, same features: the same number as the preset run
    first = {(r["row"], r["task"]): r["value"] for r in sample_run[0].rows
             if r["split"] == "test" and not r.get("derived")}
    assert rows["minilm L0 logreg"] == first[("minilm L0 logreg", "Tense")]
    assert (tmp_path / "toml-out" / "report.md").is_file()


@pytest.mark.slow
def test_behaviour_column_on_the_oi_tasks(sample_run, tmp_path: Path, tiny_lms) -> None:
    """behaviour_lm scores each modified test sentence of BShift against its original (the
    pairs written by the build) beside the classifiers' accuracy on the same sentences."""
    from synrob.perturb.senteval import read_pairs

    _, out = sample_run
    tasks_dir = next((out / "data").glob("tasks-*"))
    exp = SentEvalExperiment.from_preset(
        "sample", tasks="BShift,Tense", encoders="glove-6b-50d", layers="glove-6b-50d:0",
        classifiers="logreg", baselines="majority", tasks_dir=str(tasks_dir),
        behaviour_lm=str(tiny_lms["causal"]))
    specs = exp.plan(Context(tmp_path / "o"))
    behav = [s.key for s in specs if s.key.get("kind") == "behaviour"]
    assert [k["task"] for k in behav] == ["BShift"]  # Tense has no original/modified pairs
    res = run_experiment(exp, tmp_path / "o", seed=0)
    rows = [r for r in res.rows if not r.get("derived")]
    lm = next(r for r in rows if r.get("kind") == "behaviour")
    n_te = sum(p["split"] == "te" for p in read_pairs(tasks_dir, "BShift"))
    assert lm["metric"] == "lm_prefers_original" and lm["n_items"] == n_te > 0
    assert lm["ci_low"] <= lm["value"] <= lm["ci_high"]
    mod = [r for r in rows if r.get("metric") == "accuracy_modified"]
    assert {r["task"] for r in mod} == {"BShift"} and all(r["n_items"] == n_te for r in mod)
    report = (tmp_path / "o" / "report.md").read_text(encoding="utf-8")
    assert "## Behaviour: does the LM prefer the original?" in report
    assert f"| BShift | {n_te} |" in report
    # official task files have no pairs: asking for the behavioural column is one clear error
    bare = tmp_path / "bare"
    bare.mkdir()
    for f in tasks_dir.glob("*.txt"):
        (bare / f.name).write_bytes(f.read_bytes())
    with pytest.raises(ResourceError, match="pairs"):
        SentEvalExperiment.from_preset("sample", tasks="BShift", tasks_dir=str(bare),
                                       behaviour_lm="smollm2").plan(Context(tmp_path / "b"))
