"""Paired bootstrap (synrob.probe.metrics.bootstrap): exact metrics from per-sentence statistics, coverage
of the percentile interval, paired drops and alignment by ``# synrob.source``."""

from __future__ import annotations

import numpy as np
import pytest
from synrob.perturb.io.data import sample_path
from synrob.probe.metrics import bootstrap as st
from synrob.probe.tasks import (
    CorpusTreeDepthTask,
    DepthTask,
    DistanceTask,
    PosTask,
    RootTask,
    scores,
)
from synrob.probe.tasks.base import load_gold
from synrob.probe.tasks.control import control_task


@pytest.fixture(scope="module")
def gold():
    return load_gold(sample_path("test"))


def _random_preds(task, gold, rng):
    out = []
    for i, n in enumerate(gold.lengths.tolist()):
        if task.kind == "distance":
            x = rng.normal(size=(n, 3))
            out.append(np.linalg.norm(x[:, None] - x[None], axis=-1) * 2)
        elif task.kind == "depth":
            out.append(gold.depths(i) + rng.normal(scale=1.0, size=n))
        elif task.kind == "tag":
            t = task.targets(gold)[i]
            out.append(np.where(rng.random(n) < 0.7, t, rng.integers(0, len(task.labels), n)))
        elif task.kind == "select":
            out.append(np.array(rng.integers(0, n), dtype=np.int64))
        else:
            out.append(np.array(rng.integers(0, len(task.labels)), dtype=np.int64))
    return out


@pytest.mark.parametrize("make", [PosTask, RootTask, CorpusTreeDepthTask, DistanceTask, DepthTask])
def test_sentence_stats_reproduce_evaluate(make, gold):
    task = make()
    task.fit(load_gold(sample_path("train")))
    preds = _random_preds(task, gold, np.random.default_rng(0))
    expected = task.evaluate(gold, preds)
    got = scores.sentence_stats(task, gold, preds)
    assert set(got) == set(expected) - {"sentences"}
    for k, s in got.items():
        assert s.value() == pytest.approx(expected[k], rel=1e-12, abs=1e-12), k


def test_control_stats_use_the_control_corpus(gold):
    ctrl = control_task(DistanceTask(), 0)
    ctrl.fit(gold)
    preds = _random_preds(ctrl, gold, np.random.default_rng(1))
    expected = ctrl.evaluate(gold, preds)
    for k, s in scores.sentence_stats(ctrl, gold, preds).items():
        assert s.value() == pytest.approx(expected[k], rel=1e-12, abs=1e-12), k


def test_ratio_resample_is_sum_over_sum():
    s = st.SentenceStats("ratio", np.array([1.0, 2.0, 3.0]), np.array([2.0, 2.0, 4.0]))
    idx = np.array([[0, 0, 2], [1, 1, 1]])
    assert s.values(idx).tolist() == [5 / 8, 1.0]
    assert s.value() == 6 / 8


def test_by_length_resample_matches_definition():
    s = st.SentenceStats("by_length", np.array([0.2, 0.4, 0.9, np.nan]), np.array([5, 5, 7, -1.0]))
    assert s.value() == pytest.approx(np.mean([0.3, 0.9]))
    assert s.value(np.array([0, 0, 2])) == pytest.approx(np.mean([0.2, 0.9]))


def test_percentile_interval_covers_the_true_mean_at_about_95_percent():
    rng = np.random.default_rng(123)
    hits, n_sets = 0, 200
    for _ in range(n_sets):
        data = rng.exponential(scale=2.0, size=80)  # true mean 2, skewed
        s = st.SentenceStats("ratio", data, np.ones_like(data))
        low, high = st.percentile_interval(s.values(st.resample_indices(80, 500, rng)))
        hits += low <= 2.0 <= high
    assert 0.90 <= hits / n_sets <= 0.99


def test_identical_files_drop_zero_p_one(gold):
    task = PosTask()
    task.fit(gold)
    stats = scores.sentence_stats(task, gold, _random_preds(task, gold, np.random.default_rng(2)))
    ci, pi, how = st.align_pairs(gold.path, gold.path, len(gold), len(gold))
    assert how == "position" and np.array_equal(ci, pi)  # no synrob.source comment
    idx = st.resample_indices(ci.size, 300, np.random.default_rng(0))
    drops = (st.bootstrap_values([stats["acc"]], ci[idx])
             - st.bootstrap_values([stats["acc"]], pi[idx]))
    assert np.all(drops == 0)
    assert st.percentile_interval(drops) == [0.0, 0.0]
    assert st.one_sided_p(drops) == 1.0


def test_one_sided_p_of_a_clear_drop():
    assert st.one_sided_p(np.full(999, 0.1)) == pytest.approx(1 / 1000)
    assert st.one_sided_p(np.array([-1.0, 1.0, 1.0, 1.0])) == pytest.approx(2 / 5)


def _conllu(sentences):
    out = []
    for sid, source, words in sentences:
        lines = [f"# sent_id = {sid}"] + ([f"# synrob.source = {source}"] if source else [])
        for k, w in enumerate(words, 1):
            lines.append(f"{k}\t{w}\t{w}\tNOUN\t_\t_\t{0 if k == 1 else 1}\t_\t_\t_")
        out.append("\n".join(lines))
    return "\n\n".join(out) + "\n\n"


def test_align_by_source_position_or_none(tmp_path):
    clean, pert, plain = tmp_path / "c.conllu", tmp_path / "p.conllu", tmp_path / "q.conllu"
    clean.write_text(_conllu([("a", None, ["x", "y"]), ("b", None, ["z"]), ("c", None, ["u"])]))
    pert.write_text(_conllu([("c.v0", "c", ["u"]), ("a.v0", "a", ["y", "x"]),
                             ("a.v1", "a", ["x", "x"])]))
    plain.write_text(_conllu([("x1", None, ["p"]), ("x2", None, ["q"])]))
    ci, pi, how = st.align_pairs(str(clean), str(pert), 3, 3)
    assert how == "source" and ci.tolist() == [2, 0, 0] and pi.tolist() == [0, 1, 2]
    assert st.align_pairs(str(clean), str(plain), 3, 2) is None
    assert st.align_pairs(str(clean), str(plain), 2, 2)[2] == "position"


def _hard_distance_preds(gold, rng):
    """float32 predictions with ties (rounded), negatives, and a NaN row in every 7th sentence."""
    out = []
    for k, n in enumerate(gold.lengths.tolist()):
        x = rng.normal(size=(n, 2))
        d = np.round(np.linalg.norm(x[:, None] - x[None], axis=-1) * 2, 0) - 0.5
        if k % 7 == 0 and n > 1:
            d[0, :] = d[:, 0] = np.nan
        out.append(d.astype(np.float32))
    return out


@pytest.mark.parametrize("seed", [0, 1])
def test_distance_evaluate_is_the_corpus_metric_functions(gold, seed):
    """DistanceTask.evaluate, now from per-sentence counts, gives exactly the values of
    metrics.uuas / dspr / sdr on the whole corpus (ties, negative and NaN distances)."""
    from synrob.probe.metrics import trees as metrics

    preds = _hard_distance_preds(gold, np.random.default_rng(seed))
    gd = [gold.distances(i) for i in range(len(gold))]
    heads = gold.head_lists()
    punct = [gold.punct(i) for i in range(len(gold))]
    with pytest.warns(RuntimeWarning):  # nanmean of the NaN rows
        expected = {"uuas": metrics.uuas(preds, heads, punct, gd),
                    "uuas_punct": metrics.uuas(preds, heads), "dspr": metrics.dspr(preds, gd),
                    "sdr": metrics.sdr(preds, gd), "sentences": float(len(gold))}
    with pytest.warns(RuntimeWarning):
        got = DistanceTask().evaluate(gold, preds)
    assert list(got) == list(expected)
    for k in expected:
        assert got[k] == expected[k] or (np.isnan(got[k]) and np.isnan(expected[k])), k


@pytest.mark.parametrize("make", [DistanceTask, DepthTask, PosTask])
def test_score_is_evaluate_and_sentence_stats(make, gold):
    """stats.score computes a distance task's per-sentence trees once; its metrics and
    statistics equal evaluate() and sentence_stats() computed apart, bit for bit."""
    task = make()
    task.fit(load_gold(sample_path("train")))
    preds = _random_preds(task, gold, np.random.default_rng(3))
    metrics, stats = scores.score(task, gold, preds)
    assert metrics == task.evaluate(gold, preds)
    apart = scores.sentence_stats(task, gold, preds)
    assert list(stats) == list(apart)
    for k, s in stats.items():
        assert s.form == apart[k].form
        np.testing.assert_array_equal(s.a, apart[k].a)
        np.testing.assert_array_equal(s.b, apart[k].b)


def test_score_keeps_an_overridden_evaluate(gold):
    """A distance task that overrides evaluate is scored by its own evaluate."""

    class Shifted(DistanceTask):
        name = "shifted-test"

        def evaluate(self, gold, predictions):
            return {"uuas": 0.5}

    metrics, stats = scores.score(Shifted(), gold, _random_preds(DistanceTask(), gold,
                                                             np.random.default_rng(4)))
    assert metrics == {"uuas": 0.5}
    assert set(stats) == {"uuas", "uuas_punct", "dspr", "sdr"}


def test_gold_tree_edges_are_kept_and_match_gold_edges(gold):
    from synrob.probe.metrics import trees as metrics

    for i in range(len(gold)):
        keep = ~gold.punct(i)
        heads = gold.heads[i].tolist()
        assert gold.tree_edges(i) == metrics.gold_edges(heads)
        assert gold.tree_edges(i, punct=False) == metrics.gold_edges(heads, gold.distances(i), keep)
        assert gold.tree_edges(i, punct=False) is gold.tree_edges(i, punct=False)


def test_run_probe_keeps_the_stats_of_one_scoring_pass():
    """run_probe(keep_stats=True) scores each test file once: its metrics are evaluate()'s and
    its kept statistics are sentence_stats() of its predictions, exactly."""
    from synrob.probe.probes.inputs import Features
    from synrob.probe.probes.structural import StructuralProbe
    from synrob.probe.training.probing import run_probe

    rng = np.random.default_rng(0)
    tables: dict[str, Features] = {}

    def features(path, layer):
        if path not in tables:
            lens = load_gold(path).lengths
            tables[path] = Features.from_sentences([rng.normal(size=(n, 8)) for n in lens])
        return tables[path]

    test, train, dev = (str(sample_path(s)) for s in ("test", "train", "dev"))
    task = DistanceTask()
    run = run_probe(encoder="random", task=task, probe=StructuralProbe(epochs=2), layers=[0],
                    tests=[test], features=features, train=train, dev=dev,
                    keep_predictions=True, keep_stats=True, baselines=False)
    res = run.layers[0]
    gold = load_gold(test)
    assert res.results[test] == task.evaluate(gold, res.predictions[test])
    apart = scores.sentence_stats(task, gold, res.predictions[test])
    assert list(res.stats[test]) == list(apart)
    for k, s in res.stats[test].items():
        np.testing.assert_array_equal(s.a, apart[k].a)
        np.testing.assert_array_equal(s.b, apart[k].b)
