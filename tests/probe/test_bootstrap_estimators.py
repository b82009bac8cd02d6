"""The bootstrap resamples the same estimator as the point estimate (issue 27, items 2 and 3b):
length-averaged metrics are resampled within each sentence length (stratified), and the
variants of one source sentence are resampled together (cluster bootstrap: ``synrob probe``'s
drops and ``synrob score``'s preference interval)."""

from __future__ import annotations

import copy

import numpy as np
import pytest
from synrob.perturb.errors import SynrobError
from synrob.probe.causal.behaviour import PairScore, SentencePair, preference_summary
from synrob.probe.experiments.data import perturbed_file
from synrob.probe.experiments.intervals import annotate, boot_indices, boots, strata_indices
from synrob.probe.metrics import bootstrap as st
from synrob.probe.tasks import DistanceTask, scores
from synrob.probe.tasks.base import load_gold
from synrob.probe.tasks.baselines import baseline_predictions
from synrob.probe.training.analysis import _add_deltas, _add_intervals, paired_drops
from synrob.probe.training.probing import LayerResult

N_BOOT = 1000


# ---------------------------------------------------------------- stratified resamples
def test_stratified_indices_keep_every_stratum_and_follow_the_documented_draws() -> None:
    strata = np.array([7, -1, 5, 7, 5, 7, 9, -1], dtype=float)
    idx = st.stratified_indices(strata, 200, np.random.default_rng(4))
    assert idx.shape == (200, 8)
    assert np.array_equal(strata[idx], np.broadcast_to(strata, idx.shape))  # same stratum
    rng, ref = np.random.default_rng(4), np.zeros((200, 8), dtype=np.int64)
    for value in (-1, 5, 7, 9):  # increasing stratum order, members in index order
        members = np.flatnonzero(strata == value)
        ref[:, members] = members[rng.integers(0, members.size, size=(200, members.size))]
    assert np.array_equal(idx, ref)


def test_a_length_averaged_resample_averages_over_the_point_estimates_lengths() -> None:
    # length 9 has one sentence: a plain resample misses it about 37 % of the time
    s = st.SentenceStats("by_length", np.array([0.1, 0.3, 0.5, 0.7, 0.9, 0.2]),
                         np.array([5, 5, 5, 6, 6, 9], dtype=float))
    idx = st.stratified_indices(s.strata, 300, np.random.default_rng(0))
    by_hand = [np.mean([s.a[r[:3]].mean(), s.a[r[3:5]].mean(), s.a[r[5]]]) for r in idx]
    assert np.allclose(s.values(idx), by_hand)
    plain = st.resample_indices(6, 300, np.random.default_rng(0))
    assert any(5 not in r for r in plain)  # the plain bootstrap does drop the rare length
    assert st.SentenceStats("ratio", s.a, s.b).strata is None


def test_experiment_rows_use_stratified_resamples_for_length_averaged_metrics_only() -> None:
    lengths = np.array([5, 5, 6, -1, 6, 5], dtype=float)
    stats = {"dspr": st.SentenceStats("by_length", np.linspace(0, 1, 6), lengths),
             "uuas": st.SentenceStats("ratio", np.ones(6), np.full(6, 2.0))}
    rows = annotate([{"metric": "dspr", "value": 0.0}, {"metric": "uuas", "value": 0.5}],
                    stats, seed=3, n_boot=50)
    strat = strata_indices(3, lengths, 50)
    assert not strat.flags.writeable and strata_indices(3, lengths.copy(), 50) is strat
    assert np.allclose(rows[0]["_boot"], np.round(stats["dspr"].values(strat), 6))
    assert np.allclose(rows[1]["_boot"], stats["uuas"].values(boot_indices(3, 6, 50)))


# ---------------------------------------------------------------- item 2 on EWT test
@pytest.fixture(scope="module")
def ewt_baselines(ewt_train, ewt_test):
    """Per-sentence statistics of the path and majority tree baselines on EWT test."""
    task = DistanceTask()
    train, test = load_gold(str(ewt_train)), load_gold(str(ewt_test))
    task.fit(train)
    out = {}
    for name in ("majority", "path"):
        out[name] = scores.score(task, test, baseline_predictions(name, task, train, test))
    return test, out


def _share_below(values: np.ndarray, point: float) -> float:
    return float(np.mean(values < point))


def test_experiment_difference_of_dspr_is_centred_on_ewt(ewt_baselines) -> None:
    """Majority - path DSpr as the jabberwocky report pairs two rows (annotate, then boots)."""
    _, scored = ewt_baselines
    rows = {}
    for name, (m, stats) in scored.items():
        metric_rows = [{"metric": k, "value": float(v)} for k, v in m.items()]
        rows[name] = {r["metric"]: r for r in annotate(metric_rows, stats, 0, N_BOOT)}
    for metric in ("dspr", "uuas"):
        a, b = rows["majority"][metric], rows["path"][metric]
        share = _share_below(boots([a]) - boots([b]), a["value"] - b["value"])
        assert 0.4 <= share <= 0.6, (metric, share)
    # the plain resample that the rows used before is off-centre (70 %+ above the point)
    dspr = {k: v[1]["dspr"] for k, v in scored.items()}
    plain = boot_indices(0, dspr["path"].a.size, N_BOOT)
    d = dspr["majority"].values(plain) - dspr["path"].values(plain)
    assert _share_below(d, dspr["majority"].value() - dspr["path"].value()) < 0.35


def test_probe_intervals_and_drops_of_dspr_are_centred_on_ewt(ewt_baselines) -> None:
    """``synrob probe --bootstrap``'s code: majority as the task, path as its "control" (the
    selectivity interval) and as a "perturbed" file (the drop), aligned by position."""
    test, scored = ewt_baselines
    (m_maj, s_maj), (m_path, s_path) = scored["majority"], scored["path"]
    strata = s_maj["dspr"].strata
    point = m_maj["dspr"] - m_path["dspr"]

    res = LayerResult(0, {"t": {**m_maj, "control": dict(m_path), "selectivity": {
        k: m_maj[k] - m_path[k] for k in m_maj if k != "sentences"}}}, {}, None,
        stats={"t": s_maj})
    ctrl = LayerResult(0, {"t": dict(m_path)}, {}, None, stats={"t": s_path})
    _add_intervals(res, DistanceTask(), {"t": test}, N_BOOT, 0, [ctrl], [DistanceTask()])
    idx = st.stratified_indices(strata, N_BOOT, np.random.default_rng([0, 2]))
    diff = s_maj["dspr"].values(idx) - s_path["dspr"].values(idx)
    assert res.results["t"]["selectivity"]["dspr_ci95"] == st.percentile_interval(diff)
    assert 0.4 <= _share_below(diff, point) <= 0.6

    n = len(test)
    drops = paired_drops([s_maj], [s_path], np.arange(n), np.arange(n), N_BOOT,
                         (np.random.default_rng([0, 1]), np.random.default_rng([0, 3])),
                         ["dspr", "uuas"])
    idx = st.stratified_indices(strata, N_BOOT, np.random.default_rng([0, 3]))
    diff = s_maj["dspr"].values(idx) - s_path["dspr"].values(idx)
    assert drops["dspr"] == pytest.approx(point, abs=1e-15)
    assert drops["dspr_ci95"] == st.percentile_interval(diff)
    assert 0.4 <= _share_below(diff, point) <= 0.6
    # UUAS keeps the plain resample of the pairs (as before)
    plain = st.resample_indices(n, N_BOOT, np.random.default_rng([0, 1]))
    assert drops["uuas_ci95"] == st.percentile_interval(
        s_maj["uuas"].values(plain) - s_path["uuas"].values(plain))


# ---------------------------------------------------------------- item 3b: clusters
def test_source_clusters_and_their_expansion() -> None:
    clusters = st.source_clusters(np.array([4, 2, 4, 2, 7, 4]))
    assert [c.tolist() for c in clusters] == [[0, 2, 5], [1, 3], [4]]
    idx = st.cluster_indices(clusters, 5, np.random.default_rng(1))
    drawn = np.random.default_rng(1).integers(0, 3, size=(5, 3))
    assert [r.tolist() for r in idx] == [
        np.concatenate([clusters[j] for j in row]).tolist() for row in drawn]
    singles = st.source_clusters(np.arange(6))
    assert np.array_equal(st.cluster_indices(singles, 7, np.random.default_rng(2)),
                          st.resample_indices(6, 7, np.random.default_rng(2)))


def _random_distances(gold, rng) -> list[np.ndarray]:
    out = []
    for i in range(len(gold)):
        d = gold.distances(i) + rng.normal(0, 1.2, gold.distances(i).shape)
        out.append((d + d.T) / 2)
    return out


@pytest.fixture(scope="module")
def three_variants(tmp_path_factory, sample_slice):
    """A clean slice of the EWT sample, a jabberwocky file with 3 variants of each sentence
    (``synrob.source`` comments, as ``synrob perturb`` writes them), and both files' scores."""
    dest = tmp_path_factory.mktemp("variants")
    clean = sample_slice("test", 40, dest)
    pert = str(perturbed_file(clean, "jabberwocky", {}, seed=0, dest=dest, variants=3))
    golds = {clean: load_gold(clean), pert: load_gold(pert)}
    task, rng = DistanceTask(), np.random.default_rng(7)
    res = LayerResult(0, {}, {}, None)
    for f, gold in golds.items():
        res.results[f], res.stats[f] = scores.score(task, gold, _random_distances(gold, rng))
    return clean, pert, golds, res


def test_three_variants_per_source_give_the_source_level_resample(three_variants) -> None:
    clean, pert, golds, res = three_variants
    _add_deltas(res, DistanceTask(), golds, 400, 5)
    out = res.extras["deltas"][pert]
    ci, pi, how = st.align_pairs(clean, pert, len(golds[clean]), len(golds[pert]))
    assert how == "source" and out["pairs"] == 120 and out["sources"] == 40
    sources = [ci[pi == j][0] for j in range(120)]
    assert all(sources[3 * s] == sources[3 * s + 1] == sources[3 * s + 2] for s in range(40))

    # by hand: draw 40 sources per resample, take all 3 variants of each
    c, p = res.stats[clean]["uuas"], res.stats[pert]["uuas"]
    drawn = np.random.default_rng([5, 1]).integers(0, 40, size=(400, 40))
    pairs = (3 * drawn[:, :, None] + np.arange(3)).reshape(400, 120)  # pairs in file order
    by_hand = (c.a[ci[pairs]].sum(1) / c.b[ci[pairs]].sum(1)
               - p.a[pi[pairs]].sum(1) / p.b[pi[pairs]].sum(1))
    assert out["uuas_ci95"] == st.percentile_interval(by_hand)
    assert out["uuas_p_value"] == st.one_sided_p(by_hand)
    naive = st.resample_indices(120, 400, np.random.default_rng([5, 1]))
    naive_drops = c.values(ci[naive]) - p.values(pi[naive])
    assert out["uuas_ci95"] != st.percentile_interval(naive_drops)

    # DSpr: the sources are drawn within their clean length (the rng of [seed, 3])
    c, p = res.stats[clean]["dspr"], res.stats[pert]["dspr"]
    src_strata = c.b[ci[::3]]
    rng, drawn = np.random.default_rng([5, 3]), np.zeros((400, 40), dtype=np.int64)
    for value in np.unique(src_strata):
        members = np.flatnonzero(src_strata == value)
        drawn[:, members] = members[rng.integers(0, members.size, size=(400, members.size))]
    pairs = (3 * drawn[:, :, None] + np.arange(3)).reshape(400, 120)
    by_hand = np.array([c.value(ci[r]) - p.value(pi[r]) for r in pairs])
    assert out["dspr_ci95"] == st.percentile_interval(by_hand)


def test_a_file_of_three_variants_per_source_has_the_source_level_interval(
        three_variants) -> None:
    """``synrob probe --bootstrap``'s own interval of the perturbed file resamples its 40
    source sentences with their 3 variants each; the clean file keeps the plain resample."""
    clean, pert, golds, res = three_variants
    res = copy.deepcopy(res)
    _add_intervals(res, DistanceTask(), golds, 400, 5, [], [])
    assert [c.tolist() for c in st.file_clusters(pert, 120)] == [
        [3 * s, 3 * s + 1, 3 * s + 2] for s in range(40)]
    assert [c.tolist() for c in st.file_clusters(clean, 40)] == [[k] for k in range(40)]
    with pytest.raises(SynrobError, match="40 sentences read for the bootstrap, 41 scored"):
        st.file_clusters(clean, 41)
    rng = np.random.default_rng(5)
    plain = rng.integers(0, 40, size=(400, 40))  # the clean file, drawn first
    drawn = rng.integers(0, 40, size=(400, 40))
    pairs = (3 * drawn[:, :, None] + np.arange(3)).reshape(400, 120)
    c, p = res.stats[clean]["uuas"], res.stats[pert]["uuas"]
    assert res.results[clean]["uuas_ci95"] == st.percentile_interval(c.values(plain))
    assert res.results[pert]["uuas_ci95"] == st.percentile_interval(
        p.a[pairs].sum(1) / p.b[pairs].sum(1))
    old = np.random.default_rng(5)  # before: the 120 variants resampled as independent
    old.integers(0, 40, size=(400, 40))
    naive = old.integers(0, 120, size=(400, 120))
    assert res.results[pert]["uuas_ci95"] != st.percentile_interval(p.values(naive))


def test_the_cluster_bootstrap_is_wider_than_resampling_variants_as_independent(
        three_variants) -> None:
    """Variants of a sentence share its difficulty: resampling them as independent pairs
    understates the spread of the drop."""
    clean, pert, golds, res = three_variants
    ci, pi, _ = st.align_pairs(clean, pert, len(golds[clean]), len(golds[pert]))
    c, p = res.stats[clean]["uuas"], res.stats[pert]["uuas"]
    clustered = st.cluster_indices(st.source_clusters(ci), 2000, np.random.default_rng(0))
    naive = st.resample_indices(ci.size, 2000, np.random.default_rng(0))
    width = {name: np.diff(st.percentile_interval(c.values(ci[i]) - p.values(pi[i])))[0]
             for name, i in (("cluster", clustered), ("naive", naive))}
    assert width["cluster"] > width["naive"]


def _pair_scores(sources: list[str], rng: np.random.Generator) -> list[PairScore]:
    return [PairScore(SentencePair(src, f"{src}.v{k}", "a b", "b a"), float(rng.normal()),
                      float(rng.normal()), 2, 2) for k, src in enumerate(sources)]


def test_preference_interval_resamples_sources_with_all_their_variants() -> None:
    """``synrob score``'s interval: 3 variants per source give the source-level resample."""
    scores = _pair_scores([f"s{i}" for i in range(30) for _ in range(3)],
                          np.random.default_rng(3))
    prefers = np.array([s.prefers_original for s in scores], dtype=float)
    drawn = np.random.default_rng(9).integers(0, 30, size=(500, 30))
    pairs = (3 * drawn[:, :, None] + np.arange(3)).reshape(500, 90)
    summary = preference_summary(scores, n_boot=500, seed=9)
    assert summary["accuracy_ci95"] == st.percentile_interval(prefers[pairs].mean(axis=1))
    naive = st.resample_indices(90, 500, np.random.default_rng(9))
    assert summary["accuracy_ci95"] != st.percentile_interval(prefers[naive].mean(axis=1))
    # one pair per source: the plain resample of the pairs, as before
    single = _pair_scores([f"s{i}" for i in range(40)], np.random.default_rng(4))
    plain = st.resample_indices(40, 500, np.random.default_rng(9))
    one = np.array([s.prefers_original for s in single], dtype=float)
    assert (preference_summary(single, n_boot=500, seed=9)["accuracy_ci95"]
            == st.percentile_interval(one[plain].mean(axis=1)))
