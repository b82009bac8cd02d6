"""The ``jabberwocky`` experiment (Hall Maudslay & Cotterell 2021) on slices of the EWT sample."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from synrob.perturb.corpus import read_conllu
from synrob.perturb.errors import ParameterError
from synrob.probe.experiments.base import Context
from synrob.probe.experiments.jabberwocky.experiment import JabberwockyExperiment
from synrob.probe.experiments.jabberwocky.stats import summarize
from synrob.probe.experiments.report import fmt_ci
from synrob.probe.experiments.runner import run_experiment


@pytest.fixture
def tiny(sample_slice):
    """``tiny(dest, **extra)``: parameters of a small but complete grid (MiniLM layer 2, every
    baseline, two draws) on slices of the bundled sample."""

    def make(dest: Path, **extra: object) -> dict[str, object]:
        return {"train": sample_slice("train", 160, dest), "dev": sample_slice("dev", 40, dest),
                "test": sample_slice("test", 60, dest), "layers": "2", "draws": 2,
                "train_on": "clean,jabberwocky", "jabberwocky_layers": "2", "epochs": 2,
                "patience": 1, "rank": 16, **extra}

    return make


def test_plan_trains_once_per_cell_on_clean_and_per_draw_on_jabberwocky(tmp_path, tiny) -> None:
    exp = JabberwockyExperiment(**tiny(tmp_path, fuse_layers="true"))
    ctx = Context(tmp_path / "out")
    specs = exp.plan(ctx)
    keys = [s.key for s in specs]
    assert len({json.dumps(k, sort_keys=True, default=str) for k in keys}) == len(keys)
    clean = [k for k in keys if k["kind"] == "probe" and k["train_on"] == "clean"]
    jab = [k for k in keys if k["kind"] == "probe" and k["train_on"] == "jabberwocky"]
    # each probe: (minilm L0 and L2 together, fast+pos)
    assert len(clean) == 4 and len(jab) == 8
    assert {(k["probe"], tuple(k["layers"]), tuple(k["roles"])) for k in clean} == {
        ("structural", (0, 2), ("layer0", "model")), ("structural", (0,), ("fast+pos",)),
        ("perceptron", (0, 2), ("layer0", "model")), ("perceptron", (0,), ("fast+pos",))}
    ids = {s.label for s in specs}
    assert "minilm/L0+2/structural/clean" in ids and "minilm/L0+2/perceptron/jabberwocky-1" in ids
    for fuse in ("false", "auto"):  # auto: apart on the CPU (runs of one thread)
        apart = JabberwockyExperiment(**tiny(tmp_path, fuse_layers=fuse)).plan(ctx)
        assert len([s for s in apart if s.key["kind"] == "probe"]) == 18  # one run per layer
    for k in clean:  # evaluated on clean test and every draw, trained on the clean train
        assert set(k["tests"]) == {"clean", "jabberwocky-0", "jabberwocky-1"}
        assert k["train"] == exp.options["train"]
    for k in jab:
        assert set(k["tests"]) == {"clean", f"jabberwocky-{k['draw']}"}
        assert ".jabberwocky." in k["train"] and ".jabberwocky." in k["dev"]
    assert len([k for k in keys if k["kind"] == "baselines"]) == 2
    # draws are different files with the same trees
    t0, t1 = (clean[0]["tests"][f"jabberwocky-{d}"] for d in (0, 1))
    assert Path(t0).read_text() != Path(t1).read_text()
    # another seed: other draws, other run keys
    other = JabberwockyExperiment(**tiny(tmp_path)).plan(Context(tmp_path / "out", seed=1))
    assert other[0].key["tests"]["jabberwocky-0"] != specs[0].key["tests"]["jabberwocky-0"]


def test_run_keys_hold_the_resolved_training_precision(tmp_path, tiny, monkeypatch) -> None:
    """``train_precision=auto`` is resolved per encoder and probe when the runs are planned:
    on native-bf16 hardware MiniLM's probes train in bf16 (checked pairs), fast+pos's
    (unchecked) in fp32; without native bf16, everything in fp32."""
    def precisions() -> dict[tuple[str, str], set[str]]:
        out: dict[tuple[str, str], set[str]] = {}
        for spec in JabberwockyExperiment(**tiny(tmp_path)).plan(Context(tmp_path / "out")):
            if spec.key["kind"] == "probe":
                for role in spec.key["roles"]:
                    out.setdefault((role, spec.key["probe"]), set()).add(
                        spec.key["probe_params"]["train_precision"])
        return out

    monkeypatch.setenv("SYNROB_NATIVE_BF16", "1")
    got = precisions()
    assert got[("model", "structural")] == got[("layer0", "structural")] == {"bfloat16"}
    assert got[("model", "perceptron")] == {"bfloat16"}
    assert got[("fast+pos", "structural")] == got[("fast+pos", "perceptron")] == {"float32"}
    monkeypatch.setenv("SYNROB_NATIVE_BF16", "0")
    assert set().union(*precisions().values()) == {"float32"}


def test_bad_parameters_are_refused(tmp_path, tiny) -> None:
    with pytest.raises(ParameterError, match="bootstrap must be 0"):
        JabberwockyExperiment(**tiny(tmp_path, bootstrap=-1))
    for bad in ({"probes": "mlp"}, {"baselines": "random"}, {"train_on": "noise"},
                {"draws": 0}, {"layers": "9"}):
        with pytest.raises(ParameterError):
            JabberwockyExperiment(**tiny(tmp_path, **bad)).plan(Context(tmp_path / "o"))


@pytest.mark.slow
def test_fused_run_equals_one_run_per_layer_with_a_cut_train_that_is_also_dev(tmp_path,
                                                                              tiny) -> None:
    """Layers trained in one run give the rows of one run per layer; ``train_sentences`` cuts
    the training split only, even when dev is the same file (its vectors stay whole)."""
    params = tiny(tmp_path, layers="1,2", probes="structural", baselines="path",
                  train_on="clean", draws=1, epochs=2, bootstrap=0, train_sentences=60)
    params["dev"] = params["train"]

    def rows(fuse: str) -> list[str]:
        exp = JabberwockyExperiment(**params, fuse_layers=fuse)
        res = run_experiment(exp, tmp_path / f"out-{fuse}", seed=0, device="cpu")
        return sorted(json.dumps({k: v for k, v in r.items() if k not in ("run", "seconds")},
                                 sort_keys=True, default=str)
                      for r in res.rows if r.get("kind") != "baselines" and "layer" in r
                      and r.get("encoder") == "minilm")

    fused, apart = rows("true"), rows("false")
    assert fused == apart and any('"layer": 1' in r for r in fused)
    dev = [json.loads(r) for r in fused if '"split": "dev"' in r and '"metric": "uuas"' in r]
    assert dev and all(r["value"] > 0 for r in dev)


@pytest.mark.slow
def test_runs_reports_and_resumes(tmp_path, tiny) -> None:
    exp = JabberwockyExperiment(**tiny(tmp_path, probes="structural"))
    out = tmp_path / "out"
    res = run_experiment(exp, out, seed=0, device="cpu")
    assert res.executed == len(res.runs) and res.reused == 0
    rows = res.rows
    runs = [r for r in rows if not r.get("derived")]
    assert all({"encoder", "layer", "task", "perturbation", "params", "metric", "value",
                "seed"} <= set(r) for r in runs)
    # every test score has a 95% interval around it; results.json keeps no resamples
    test = [r for r in runs if r["split"] == "test" and r["metric"] in ("uuas", "dspr")]
    assert test and all(r["ci_low"] <= r["value"] <= r["ci_high"] for r in test)
    assert all(len(r["_boot"]) == 1000 for r in test)
    saved = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert not any(k.startswith("_") for r in saved["rows"] for k in r)
    derived = {(r["role"], r["label"], r["metric"]): r for r in saved["rows"] if r.get("derived")}
    drop = derived[("model", "minilm L2", "drop_uuas")]
    assert {"ci_low", "ci_high", "p_value", "seeds"} <= set(drop) and drop["seeds"] == [0]
    assert drop["ci_low"] <= drop["value"] <= drop["ci_high"] and 0 < drop["p_value"] <= 1
    # word-blind baselines score the same on clean and Jabberwocky sentences (same trees)
    path = {(r["test_on"], r["draw"]): r["value"] for r in runs
            if r["role"] == "path" and r["metric"] == "uuas"}
    assert len(path) == 3 and len(set(path.values())) == 1
    model = [r for r in runs if r["role"] == "model" and r["split"] == "test"
             and r["metric"] == "uuas" and r["train_on"] == "clean"]
    assert {r["test_on"] for r in model} == {"clean", "jabberwocky"}
    assert all(0.0 < r["value"] <= 1.0 for r in model)
    summary = summarize(rows, ["structural"])
    assert summary["best_layers"] == {"structural": 2}
    entry = next(e for e in summary["entries"] if e["role"] == "model" and e["metric"] == "uuas")
    assert len(entry["jab_draws"]) == 2
    assert math.isclose(entry["drop"], entry["clean"] - entry["jab_mean"])
    assert entry["clean_ci"][0] <= entry["clean"] <= entry["clean_ci"][1]
    assert entry["drop_ci"][0] <= entry["drop"] <= entry["drop_ci"][1]
    # word-blind baselines: identical on every resample, so no drop at all (p = 1)
    flat = next(e for e in summary["entries"] if e["role"] == "path" and e["metric"] == "uuas")
    assert flat["drop"] == 0 and flat["drop_ci"] == [0.0, 0.0] and flat["drop_p"] == 1.0
    lead = next(x for x in summary["lead"] if x["metric"] == "uuas")
    if lead["lead_clean"] > 0:
        assert math.isclose(lead["lead_lost"],
                            (lead["lead_clean"] - lead["lead_jab"]) / lead["lead_clean"])
    assert {x["role"] for x in summary["train_on"]} == {"model", "layer0", "fast+pos"}
    report = (out / "report.md").read_text(encoding="utf-8")
    assert "| structural | minilm L2 |" in report and "Training on Jabberwocky" in report
    clean = fmt_ci(entry["clean"], entry["clean_ci"])
    assert f"| structural | minilm L2 | {clean} |" in report and " p " in report
    assert (out / "jabberwocky-bars.png").stat().st_size > 10_000
    # a finished experiment is reused; a lost run (killed midway) is the only one redone
    again = run_experiment(exp, out, seed=0, device="cpu")
    assert again.executed == 0 and json.dumps(again.rows) == json.dumps(rows)  # NaN-safe
    victim = sorted((out / "runs").glob("*.json"))[0]
    victim.unlink()
    third = run_experiment(exp, out, seed=0, device="cpu")
    assert third.executed == 1 and victim.exists()
    assert sorted(map(json.dumps, third.rows)) == sorted(map(json.dumps, rows))


@pytest.mark.slow
def test_behaviour_column(tmp_path, tiny, tiny_lms) -> None:
    """behaviour_lm: one run per draw scoring (clean, Jabberwocky) test pairs; the report shows
    the LM's preference beside the probes."""
    params = tiny(tmp_path, probes="structural", baselines="path", train_on="clean",
                  behaviour_lm=str(tiny_lms["causal"]))
    params["test"] = _short(Path(str(params["test"])), tmp_path, 60)  # the tiny LM: 64 positions
    exp = JabberwockyExperiment(**params)
    out = tmp_path / "out"
    res = run_experiment(exp, out, seed=0, device="cpu")
    behav = sorted((r for r in res.rows if r.get("kind") == "behaviour"), key=lambda r: r["draw"])
    n_test = len(list(read_conllu(params["test"])))
    assert [r["draw"] for r in behav] == [0, 1]
    for r in behav:
        assert r["metric"] == "lm_prefers_clean" and r["pairs"] + r["unchanged"] == n_test
        assert r["pairs"] > 0 and r["ci_low"] <= r["value"] <= r["ci_high"]
    summary = summarize(res.rows, ["structural"])
    assert [b["draw"] for b in summary["behaviour"]] == [0, 1]
    report = (out / "report.md").read_text(encoding="utf-8")
    assert "## Behaviour: does the LM prefer the clean sentence?" in report


def _short(path: Path, dest: Path, max_words: int) -> str:
    """The sentences of ``path`` with at most ``max_words`` words, written under ``dest``."""
    from synrob.perturb.corpus import write_conllu

    out = dest / f"short-{path.name}"
    write_conllu([s for s in read_conllu(path) if len(s.words()) <= max_words], out)
    return str(out)
