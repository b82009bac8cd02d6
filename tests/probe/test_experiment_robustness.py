"""The ``robustness`` experiment (La Malfa et al. Table 1): per-sentence metrics, worst cases,
and a real run of the ``sample`` preset (GloVe, coPOS) through the CLI, resumed from cache."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import numpy as np
import pytest
from synrob.perturb.errors import ParameterError
from synrob.probe.experiments.base import Context
from synrob.probe.experiments.robustness.experiment import (
    RobustnessExperiment,
    parse_limits,
    parse_perturber_params,
)
from synrob.probe.experiments.robustness.stats import (
    adversarial_choice,
    adversary_drop,
    lamalfa_counts,
    sentence_losses,
    sentence_metrics,
    worst_case_distance,
    worst_case_drop,
)
from synrob.probe.metrics import trees as metrics
from synrob.probe.metrics.lamalfa import lamalfa_gold_matrix
from synrob.probe.tasks.base import load_gold
from synrob.probe.tasks.classification import CorpusTreeDepthTask, PosTask, RootTask
from synrob.probe.tasks.structural import DistanceTask


@pytest.fixture(scope="module")
def gold(sample_dev):
    return load_gold(sample_dev, limit=40)


def test_distance_sentence_metrics_match_corpus_metrics(gold) -> None:
    task = DistanceTask()
    rng = np.random.default_rng(0)
    preds = []
    for i in range(len(gold)):
        d = gold.distances(i) + rng.normal(0, 0.7, (len(gold.heads[i]),) * 2)
        preds.append((d + d.T) / 2)
    per = sentence_metrics(task, gold, preds)
    for i in (0, 5, 17):
        single = type(gold)(gold.path, [gold.sent_ids[i]], [gold.forms[i]], [gold.upos[i]],
                            [gold.xpos[i]], [gold.heads[i]])
        corpus = task.evaluate(single, [preds[i]])
        assert per["uuas"][i] == pytest.approx(corpus["uuas"], nan_ok=True)
        assert per["sdr"][i] == pytest.approx(corpus["sdr"])
    # perfect predictions score 1 everywhere they are defined
    perfect = sentence_metrics(task, gold, [gold.distances(i) for i in range(len(gold))])
    for name in ("uuas", "sdr", "dspr"):
        vals = perfect[name][np.isfinite(perfect[name])]
        assert vals.size and np.allclose(vals, 1.0)
    assert np.nanmean(per["uuas"]) < 1.0


def test_classification_sentence_metrics(gold) -> None:
    pos = PosTask()
    pos.fit(gold)
    targets = pos.targets(gold)
    wrong = [np.where(np.arange(t.size) == 0, (t + 1) % len(pos.labels), t) for t in targets]
    per = sentence_metrics(pos, gold, wrong)
    assert np.array_equal(per["words_right"], gold.lengths - 1)
    corpus = pos.evaluate(gold, wrong)
    assert per["words_right"].mean() == pytest.approx(corpus["words_right"])
    root = RootTask()
    roots = [np.array(gold.root(i)) for i in range(len(gold))]
    assert sentence_metrics(root, gold, roots)["root_acc"].sum() == len(gold)
    depth = CorpusTreeDepthTask()
    depth.fit(gold)
    assert set(sentence_metrics(depth, gold, depth.targets(gold))["acc"]) == {1.0}


def test_worst_cases() -> None:
    clean = np.array([0.8, 0.5, np.nan])
    pert = np.array([[0.7, 0.2, 0.9], [np.nan, 0.6, 0.55], [0.1, 0.2, 0.3]])
    drop = worst_case_drop(clean, pert)
    assert drop[0] == pytest.approx(0.6) and drop[1] == pytest.approx(-0.05)
    assert np.isnan(drop[2])
    c = np.array([[1.0, 0.0], [0.0, 2.0]])
    p = np.array([[[1.0, 0.0], [0.0, 1.0]], [[0.0, 2.0], [0.0, 4.0]]])
    d = worst_case_distance(c, p)
    assert d["l2"] == pytest.approx([np.sqrt(2), 2.0])
    assert d["cosine"] == pytest.approx([0.0, 1.0])
    assert list(adversarial_choice(np.array([[1, 3, 3], [np.nan, 0, 2]]))) == [1, 2]
    assert metrics.spearman([1, 2, 3], [1, 2, 3]) == pytest.approx(1.0)


def test_adversary_drop_uses_one_variant_for_every_metric() -> None:
    losses = np.array([[0.1, 0.9, 0.5], [np.nan, 0.2, 0.3]])
    pick = adversarial_choice(losses)
    assert list(pick) == [1, 2]
    clean = np.array([0.8, 0.5])
    uuas = np.array([[0.7, 0.6, 0.2], [0.4, 0.1, 0.45]])
    # on the loss adversary: 0.8 - 0.6 and 0.5 - 0.45; the per-metric worst is 0.6 and 0.4
    assert adversary_drop(clean, uuas, pick) == pytest.approx([0.2, 0.05])
    assert worst_case_drop(clean, uuas) == pytest.approx([0.6, 0.4])
    assert np.isnan(adversary_drop(clean, np.array([[0, np.nan, 0], [0, 0, 0]]), pick)[0])


def test_sentence_losses_are_the_probe_training_loss_per_sentence(gold) -> None:
    import torch
    from synrob.probe.probes.classifier import LinearProbe
    from synrob.probe.probes.inputs import Features
    from synrob.probe.probes.structural import StructuralProbe

    sub = gold.subset(6)
    rng = np.random.default_rng(1)
    feats = Features.from_sentences([rng.normal(size=(len(h), 4)) for h in sub.heads])
    task = DistanceTask()
    task.fit(sub)
    probe = StructuralProbe()
    torch.manual_seed(0)
    module = probe.build(4, task.n_classes, task.kind)
    got = sentence_losses(task, probe, module, feats, sub)
    proj = module.proj.detach().double().numpy()
    for i in range(len(sub)):
        t = feats.sentence(i).astype(np.float64) @ proj
        d = ((t[:, None, :] - t[None, :, :]) ** 2).sum(-1)
        n = len(sub.heads[i])
        assert got[i] == pytest.approx(np.abs(d - sub.distances(i)).sum() / n**2, rel=1e-4)
    pos = PosTask()
    pos.fit(sub)
    lin = LinearProbe()
    module = lin.build(4, pos.n_classes, pos.kind)
    got = sentence_losses(pos, lin, module, feats, sub)
    w = module[0].weight.detach().double().numpy()
    b = module[0].bias.detach().double().numpy()
    for i, tg in enumerate(pos.targets(sub)):
        logits = feats.sentence(i).astype(np.float64) @ w.T + b
        logp = logits - np.log(np.exp(logits).sum(1, keepdims=True))
        ok = tg >= 0
        assert got[i] == pytest.approx(-logp[np.flatnonzero(ok), tg[ok]].mean(), rel=1e-4)


def test_lamalfa_counts_on_gold_distances(gold) -> None:
    preds = [gold.distances(i) for i in range(len(gold))]
    counts = lamalfa_counts(gold, preds)
    hits, total = counts["uuas_lamalfa"].T
    assert np.array_equal(hits, total) and total.sum() > 0  # every kept gold edge is found
    for i in (0, 3):
        g = lamalfa_gold_matrix(gold.heads[i].tolist())
        n = min(len(gold.heads[i]), 20)
        # SDR over 20 x 20 cells: wrong exactly where their loader dropped an edge
        wrong = np.count_nonzero(np.rint(preds[i][:n, :n]) != g[:n, :n])
        assert tuple(counts["sdr_lamalfa"][i]) == (400 - wrong, 400)


def test_parameters() -> None:
    assert parse_limits("coco=6, copos=0") == {"coco": 6, "copos": 0}
    assert parse_perturber_params("coco.candidates=8; copos.upos=NOUN,VERB") == {
        "coco": {"candidates": "8"}, "copos": {"upos": "NOUN,VERB"}}
    with pytest.raises(ParameterError):
        parse_limits("coco")
    with pytest.raises(ParameterError):
        parse_perturber_params("candidates=8")
    exp = RobustnessExperiment.from_preset("default")
    assert exp.options["test"] == "ud:en_ewt:test" and exp.list("budgets", int) == [1, 5, 10]
    assert exp.options["adversary"] == "loss"
    assert RobustnessExperiment(adversary="per-metric").options["adversary"] == "per-metric"
    with pytest.raises(ParameterError):
        RobustnessExperiment(adversary="worst")
    with pytest.raises(ParameterError):
        RobustnessExperiment.from_preset("nope")


def test_an_encoders_layers_train_in_one_run_when_the_probe_can() -> None:
    """MiniLM's two layers: one run for the structural and linear probes (the grouping of
    ``_groups``, ``fuse_layers``); one run per layer without it."""
    exp = RobustnessExperiment(encoders="minilm,glove-6b-50d", layers="3,6",
                               tasks="distance,pos,root,tree-depth", fuse_layers="true")
    ctx = Context(Path("unused"), device="cpu")
    assert exp._encoder_layers() == [("minilm", [3, 6]), ("glove-6b-50d", [0])]
    assert exp._groups("distance", [3, 6], ctx) == exp._groups("pos", [3, 6], ctx) == [[3, 6]]
    for fuse in ("false", "auto"):  # auto: apart on the CPU (runs of one thread)
        apart = RobustnessExperiment(fuse_layers=fuse)
        assert apart._groups("distance", [3, 6], ctx) == [[3], [6]]


@pytest.mark.slow
def test_fused_runs_give_the_rows_of_one_run_per_layer(tmp_path) -> None:
    from synrob.probe.experiments.runner import run_experiment

    def rows(fuse: str) -> tuple[list[str], int]:
        exp = RobustnessExperiment.from_preset(
            "sample", encoders="minilm", layers="3,6", tasks="distance,pos", epochs=2,
            budgets="1", variants=2, test_limit=30, bootstrap=50, fuse_layers=fuse)
        res = run_experiment(exp, tmp_path / f"out-{fuse}", seed=0, device="cpu")
        return sorted(json.dumps({k: v for k, v in r.items() if k not in ("run", "seconds")},
                                 sort_keys=True, default=str) for r in res.rows), len(res.runs)

    (fused, n_fused), (apart, n_apart) = rows("true"), rows("false")
    assert (n_fused, n_apart) == (2, 4)
    assert fused == apart and any('"layer": 6' in r for r in fused)


@pytest.mark.slow
def test_sample_preset_runs_and_resumes(cli, tmp_path) -> None:
    out = tmp_path / "rob"
    res = cli(["run", "robustness", "--preset", "sample", "-o", out, "-p", "test_limit=40"])
    assert res.exit_code == 0, res.stderr
    assert "ΔUUAS" in res.stdout and (out / "robustness-tau.png").stat().st_size > 10_000
    data = json.loads((out / "results.json").read_text())
    rows = [r for r in data["rows"] if not r.get("derived")]
    assert data["executed"] == 4
    # every drop has its bootstrap interval and one-sided p-value; derived rows pool the seeds
    for r in rows:
        if r["metric"].startswith("drop_") and r["metric"] != "drop_spearman":
            assert r["ci_low"] <= r["value"] <= r["ci_high"] and 0 < r["p_value"] <= 1, r
    pooled = {(r["task"], r["metric"], r["budget"]): r for r in data["rows"] if r.get("derived")}
    uuas = pooled[("distance", "drop_uuas_over_seeds", 5)]
    assert uuas["seeds"] == [0] and uuas["ci_low"] <= uuas["value"] <= uuas["ci_high"]
    assert re.search(r"\d \[-?\d\.\d{3}, -?\d\.\d{3}\] \|", res.stdout)  # intervals beside drops
    assert {r["task"] for r in rows} == {"distance", "pos", "root", "tree-depth"}
    drops = {(r["task"], r["metric"], r["budget"]): r["value"] for r in rows
             if r["metric"].startswith("drop_")}
    for (_task, _metric, tau), value in drops.items():
        assert tau in (1, 5) and np.isfinite(value)
    # copos keeps trees, changes up to tau words, and the worst of 3 variants costs something
    changed = {r["budget"]: r["value"] for r in rows if r["metric"] == "changed_words"}
    assert 0.5 < changed[1] <= 1.0 and 1.0 < changed[5] <= 5.0
    l2 = {r["budget"]: r["value"] for r in rows if r["metric"] == "l2" and r["task"] == "pos"}
    assert 0 < l2[1] < l2[5]
    assert drops[("pos", "drop_words_right", 5)] > 0
    assert drops[("distance", "drop_uuas", 5)] > 0
    assert {r["adversary"] for r in rows} == {"loss"}
    assert ("distance", "drop_uuas_lamalfa", 5) in drops and ("distance", "drop_sdr_lamalfa", 1) in drops
    assert "ΔUUAS (LM code)" in res.stdout
    for r in rows:
        if r["metric"].startswith("drop_"):
            assert {"encoder", "layer", "task", "perturbation", "params", "seed",
                    "perturber_version", "encoder_version", "model"} <= set(r)
    # finished: re-running only rebuilds the report
    t0 = time.perf_counter()
    again = cli(["run", "robustness", "--preset", "sample", "-o", out, "-p", "test_limit=40",
                 "--json"])
    assert again.exit_code == 0
    assert json.loads(again.stdout)["executed"] == 0
    assert time.perf_counter() - t0 < 20
    # a run lost midway (its file missing) is the only one executed again
    pos_run = next(r["id"] for r in data["runs"] if r["key"]["task"] == "pos")
    (out / "runs" / f"{pos_run}.json").unlink()
    third = cli(["run", "robustness", "--preset", "sample", "-o", out, "-p", "test_limit=40",
                 "--json"])
    redo = json.loads(third.stdout)
    assert redo["executed"] == 1
    assert sorted((r["metric"], r["budget"], r["value"]) for r in redo["rows"]
                  if r["task"] == "pos" and not r.get("derived")) == sorted(
        (r["metric"], r["budget"], r["value"]) for r in rows if r["task"] == "pos")
    # the per-metric worst case is a new run key; per sentence it is at least the drop on the
    # loss adversary, so its means are too
    per = cli(["run", "robustness", "--preset", "sample", "-o", out, "-p", "test_limit=40",
               "-p", "adversary=per-metric", "--json"])
    per_rows = json.loads(per.stdout)
    assert per_rows["executed"] == 4
    worst = {(r["task"], r["metric"], r["budget"]): r["value"] for r in per_rows["rows"]
             if r["metric"].startswith("drop_") and r["metric"] != "drop_spearman"
             and not r.get("derived")}
    assert worst.keys() == {k for k in drops if k[1] != "drop_spearman"}
    for k, v in worst.items():
        assert v >= drops[k] - 1e-12, k
    assert any(v > drops[k] + 1e-9 for k, v in worst.items())
