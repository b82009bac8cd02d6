"""Metrics on hand-computed cases (docs/metrics.md gives each formula)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import spearmanr
from synrob.probe.metrics import trees as metrics

PATH3 = np.array([[0, 1, 2], [1, 0, 1], [2, 1, 0]], dtype=float)


def path_dist(n: int) -> np.ndarray:
    i = np.arange(n)
    return np.abs(i[:, None] - i[None, :]).astype(float)


def test_mst_edges_picks_the_cheapest_tree_and_handles_zero_distances():
    d = np.array([[0, 1, 5], [1, 0, 2], [5, 2, 0]], dtype=float)
    assert metrics.mst_edges(d) == {(0, 1), (1, 2)}
    # a zero distance is an edge too (scipy would read it as "no edge" without the shift)
    z = np.array([[0, 0, 3], [0, 0, 0.5], [3, 0.5, 0]], dtype=float)
    assert metrics.mst_edges(z) == {(0, 1), (1, 2)}
    # restricted to words 0 and 2, indices stay those of the sentence
    assert metrics.mst_edges(d, np.array([True, False, True])) == {(0, 2)}


def _scipy_mst(dist: np.ndarray, keep: np.ndarray | None = None) -> set[tuple[int, int]]:
    """The reference: scipy's Kruskal on the upper triangle shifted by 1 (0 is "no edge")."""
    from scipy.sparse.csgraph import minimum_spanning_tree

    idx = np.arange(dist.shape[0]) if keep is None else np.flatnonzero(keep)
    if idx.size < 2:
        return set()
    sub = np.maximum(np.asarray(dist, dtype=np.float64)[np.ix_(idx, idx)], 0.0)
    tree = minimum_spanning_tree(np.triu(sub + 1.0, k=1)).tocoo()
    return {(int(min(idx[a], idx[b])), int(max(idx[a], idx[b])))
            for a, b in zip(tree.row, tree.col, strict=True)}


def _tie_heavy_matrices(seed: int, count: int):
    """Random float, small-integer (many ties), gold tree and negative distance matrices."""
    from synrob.perturb.io.tree import distances

    rng = np.random.default_rng(seed)
    for trial in range(count):
        n = int(rng.integers(1, 45))
        kind = trial % 4
        if kind == 0:
            d = rng.random((n, n))
            d = d + d.T
        elif kind == 1:
            d = rng.integers(0, 4, (n, n)).astype(float)
            d = np.minimum(d, d.T)
        else:
            heads = [0] + [int(rng.integers(1, i + 1)) for i in range(1, n)]
            d = np.asarray(distances(heads), dtype=float) - (0.5 if kind == 3 else 0.0)
        np.fill_diagonal(d, 0.0)
        keep = rng.random(n) < 0.75 if trial % 2 else None
        yield d, keep


def test_mst_edges_is_scipys_tree_including_its_tie_breaking():
    # ties (integer distances, a gold tree with words left out) are where MST algorithms differ
    checked = 0
    for d, keep in _tie_heavy_matrices(seed=0, count=4000):
        assert metrics.mst_edges(d, keep) == _scipy_mst(d, keep)
        checked += 1
    assert checked == 4000


def test_mst_pairs_are_scipys_tree_in_scipys_order():
    # the perceptron probe sums its tree's scores in this order: the same order keeps its
    # training bit-identical to the scipy version
    from scipy.sparse.csgraph import minimum_spanning_tree

    for d, _ in _tie_heavy_matrices(seed=2, count=1500):
        w = d - d.min() + 1.0 if d.size else d
        tree = minimum_spanning_tree(np.triu(w, k=1)).tocoo()
        rows, cols = metrics.mst_pairs(w)
        assert rows == tree.row.tolist() and cols == tree.col.tolist()


@settings(max_examples=200, deadline=None)
@given(st.integers(2, 25).flatmap(lambda n: st.lists(
    st.sampled_from([0.0, 0.5, 1.0, 1.0, 2.0, 3.0, -1.0]), min_size=n * n, max_size=n * n)))
def test_mst_edges_matches_scipy_on_any_small_matrix(values):
    n = int(round(len(values) ** 0.5))
    d = np.asarray(values, dtype=float).reshape(n, n)
    d = np.minimum(d, d.T)
    assert metrics.mst_edges(d) == _scipy_mst(d)


def test_mst_edges_treats_nan_as_no_edge_like_scipy():
    d = np.array([[0, np.nan, 2], [np.nan, 0, 1], [2, 1, 0]], dtype=float)
    assert metrics.mst_edges(d) == _scipy_mst(d) == {(0, 2), (1, 2)}


def test_rank_rows_are_scipys_average_ranks_with_ties_and_nan():
    from scipy.stats import rankdata

    rng = np.random.default_rng(1)
    for trial in range(500):
        m, n = int(rng.integers(1, 6)), int(rng.integers(1, 40))
        a = rng.integers(0, 5, (m, n)).astype(float) if trial % 2 else rng.random((m, n))
        if trial % 7 == 0:
            a[0, int(rng.integers(0, n))] = np.nan
        np.testing.assert_array_equal(metrics.rank_rows(a), rankdata(a, axis=1))


def test_uuas_is_corpus_level_correct_over_gold_edges():
    heads = [[2, 0, 2], [2, 0, 2]]  # gold edges {(0,1), (1,2)} twice
    good = np.array([[0, 1, 5], [1, 0, 2], [5, 2, 0]], dtype=float)
    half = np.array([[0, 1, 1.5], [1, 0, 5], [1.5, 5, 0]], dtype=float)  # MST {(0,1),(0,2)}
    assert metrics.uuas([good], heads[:1]) == 1.0
    assert metrics.uuas([half], heads[:1]) == 0.5
    assert metrics.uuas([good, half], heads) == 0.75


def test_uuas_without_punctuation_drops_punct_words_from_both_trees():
    heads = [2, 0, 2, 2]  # word 3 (index 3) is punctuation attached to the root
    punct = np.array([False, False, False, True])
    pred = np.array([[0, 1, 9, 9], [1, 0, 9, 9], [9, 9, 0, 0.5], [9, 9, 0.5, 0]], dtype=float)
    # with punctuation: MST edges (0,1), (2,3), and one 9-edge -> only (0,1) is gold: 1/3
    assert metrics.uuas([pred], [heads]) == pytest.approx(1 / 3)
    # without: words 0-2, MST (0,1) + a 9-edge (0,2) or (1,2); gold (0,1), (1,2)
    edges = metrics.mst_edges(pred, ~punct)
    assert (0, 1) in edges and len(edges) == 2
    expected = len(edges & {(0, 1), (1, 2)}) / 2
    assert metrics.uuas([pred], [heads], [punct]) == expected


def test_row_spearman_matches_scipy_including_ties():
    rng = np.random.default_rng(0)
    pred = rng.normal(size=(4, 7))
    gold = rng.integers(0, 3, size=(4, 7)).astype(float)
    ours = metrics.row_spearman(pred, gold)
    for r in range(4):
        assert ours[r] == pytest.approx(spearmanr(pred[r], gold[r]).statistic)
    # one swap of adjacent ranks in 5 items: rho = 1 - 6*2/(5*24) = 0.9
    assert metrics.spearman([0, 2, 1, 3, 4], [0, 1, 2, 3, 4]) == pytest.approx(0.9)
    assert np.isnan(metrics.spearman([1, 1, 1], [1, 2, 3]))


def test_dspr_averages_rows_then_sentences_of_a_length_then_lengths_5_to_50():
    g5, g6, g4 = path_dist(5), path_dist(6), path_dist(4)
    preds = [g5, -g5, g6 ** 2, -g4]  # rows: +1 (len 5), -1 (len 5), +1 (len 6), ignored (len 4)
    golds = [g5, g5, g6, g4]
    # length 5: mean(+1, -1) = 0; length 6: 1; over lengths: 0.5
    assert metrics.dspr(preds, golds) == pytest.approx(0.5)
    assert np.isnan(metrics.dspr([-g4], [g4]))
    assert metrics.dspr([-g4], [g4], lo=2) == pytest.approx(-1.0)


def test_nspr_and_root_accuracy_from_depths():
    gold = [np.array([1, 0, 1, 2, 2.0]), np.array([0, 1, 2, 3, 4.0])]
    pred = [np.array([1.2, 0.1, 0.9, 2.5, 2.4]), np.array([4, 3, 2, 1, 0.0])]
    # sentence 1: ranks pred (3,1,2,5,4) vs gold (2.5,1,2.5,4.5,4.5) -> scipy; sentence 2: -1
    s1 = spearmanr(pred[0], gold[0]).statistic
    assert metrics.nspr(pred, gold) == pytest.approx((s1 + -1.0) / 2)
    roots = [1, 0]
    assert metrics.root_accuracy_from_depths(pred, roots) == 0.5
    # punctuation cannot be the root: word 4 of sentence 2 is punct, the next least deep is 3
    punct = [np.zeros(5, bool), np.array([False, False, False, False, True])]
    assert metrics.root_accuracy_from_depths(pred, [1, 3], punct) == 1.0


def test_sdr_counts_pairs_whose_rounded_distance_is_gold():
    pred = np.array([[0, 1.4, 2.6], [1.4, 0, 0.4], [2.6, 0.4, 0]])
    # pairs (0,1): 1 ok; (0,2): 3 vs 2; (1,2): 0 vs 1 -> 1/3
    assert metrics.sdr([pred], [PATH3]) == pytest.approx(1 / 3)
    assert metrics.sdr([PATH3, pred], [PATH3, PATH3]) == pytest.approx(4 / 6)


def test_accuracy_and_words_right_per_sentence():
    pred = [np.array([1, 2, 3]), np.array([1, 1])]
    gold = [np.array([1, 2, 0]), np.array([0, 1])]
    assert metrics.accuracy(np.concatenate(pred), np.concatenate(gold)) == pytest.approx(3 / 5)
    assert metrics.words_right_per_sentence(pred, gold) == pytest.approx(1.5)


def test_gold_edges_without_punct_equal_tree_edges_among_kept_leaves():
    heads = [2, 0, 2, 3, 2]  # words: 0<-1, 2<-1, 3<-2, 4<-1
    keep = np.array([True, True, True, True, False])
    assert metrics.gold_edges(heads, keep=keep) == {(0, 1), (1, 2), (2, 3)}
    assert metrics.gold_edges(heads) == {(0, 1), (1, 2), (2, 3), (1, 4)}


def _per_sentence_pairs(w: np.ndarray, lens: list[int]) -> tuple[list[int], list[int], list[int]]:
    out: tuple[list[int], list[int], list[int]] = ([], [], [])
    for r, n in enumerate(lens):
        if n >= 2:
            rows, cols = metrics.mst_pairs(w[r, :n, :n])
            out[0].extend([r] * len(rows))
            out[1].extend(rows)
            out[2].extend(cols)
    return out


@settings(max_examples=300, deadline=None)
@given(lens=st.lists(st.integers(0, 45), min_size=1, max_size=9), seed=st.integers(0, 10_000),
       ties=st.booleans())
def test_mst_pairs_batch_is_mst_pairs_per_sentence_in_the_same_order(lens, seed, ties):
    # the perceptron probe's loss sums its trees' scores in this order: same edges, same order
    rng = np.random.default_rng(seed)
    width = max(lens)
    w = (rng.integers(1, 4, size=(len(lens), width, width)).astype(float) if ties
         else rng.random((len(lens), width, width)) + 0.5)
    got = metrics.mst_pairs_batch(w, lens)
    assert [a.tolist() for a in got] == list(_per_sentence_pairs(w, lens))
    assert all(a.dtype == np.int64 for a in got)


def test_mst_pairs_batch_uses_all_paths_and_keeps_their_trees(monkeypatch):
    rng = np.random.default_rng(3)
    lens = [12, 1, 0, 9, 12]
    w = rng.integers(1, 3, size=(5, 12, 12)).astype(float)
    w[3, 9:, :] = np.nan  # outside sentence 3's block: ignored
    calls = []
    per_sentence, prim = metrics._per_sentence, metrics._prim_batch
    monkeypatch.setattr(metrics, "_per_sentence", lambda *a: calls.append("k") or per_sentence(*a))
    monkeypatch.setattr(metrics, "_prim_batch", lambda *a: calls.append("p") or prim(*a))
    minimax = metrics.mst_pairs_batch(w, lens)
    assert not calls  # short and finite: the minimax ranks
    monkeypatch.setattr(metrics, "MINIMAX_MAX_LEN", 8)
    prims = metrics.mst_pairs_batch(w, lens)
    assert calls == ["p"]  # longer than the limit: Prim on the whole batch
    assert [a.tolist() for a in minimax] == [a.tolist() for a in prims]
    assert [a.tolist() for a in minimax] == list(_per_sentence_pairs(w, lens))
    w[0, 2, 5] = np.nan  # a missing edge inside a block: per sentence (a forest may result)
    calls.clear()
    got = metrics.mst_pairs_batch(w, lens)
    assert calls == ["k"] and [a.tolist() for a in got] == list(_per_sentence_pairs(w, lens))


@settings(max_examples=60, deadline=None)
@given(lens=st.lists(st.integers(0, 130), min_size=1, max_size=5), seed=st.integers(0, 10_000),
       ties=st.sampled_from(["none", "few", "many"]), symmetric=st.booleans())
def test_mst_pairs_batch_on_long_sentences_is_kruskal(lens, seed, ties, symmetric):
    # past MINIMAX_MAX_LEN: Prim with Kruskal's tie order; only the upper triangle counts
    rng = np.random.default_rng(seed)
    width = max(max(lens), metrics.MINIMAX_MAX_LEN + 1)
    shape = (len(lens), width, width)
    w = {"none": lambda: rng.random(shape) + 0.5,
         "few": lambda: rng.integers(1, 50, size=shape).astype(float),
         "many": lambda: rng.integers(1, 3, size=shape).astype(float)}[ties]()
    if symmetric:
        w = np.triu(w) + np.triu(w, 1).transpose(0, 2, 1)
    got = metrics.mst_pairs_batch(w, lens)
    assert [a.tolist() for a in got] == list(_per_sentence_pairs(w, lens))
    assert all(a.dtype == np.int64 for a in got)


def test_dspr_columns_batched_by_length_equal_sentence_by_sentence() -> None:
    """The length-batched row Spearman gives, bit for bit, each sentence's own mean (ties in
    gold and predictions, a constant prediction, lengths outside 5..50)."""
    import warnings

    from synrob.probe.metrics.trees import _dspr_columns, row_spearman

    rng = np.random.default_rng(1)
    preds, golds = [], []
    for n in [3, 5, 5, 7, 7, 7, 12, 51, 9, 9]:
        g = np.abs(np.subtract.outer(rng.integers(0, 4, n), rng.integers(0, 4, n))).astype(float)
        g = np.triu(g, 1) + np.triu(g, 1).T
        p = g + rng.normal(size=(n, n))
        preds.append(np.rint(p) if n == 9 else p)
        golds.append(g)
    preds[4] = np.zeros_like(preds[4])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # the constant sentence's nanmean
        values, lengths = _dspr_columns(preds, golds, 5, 50)
    for i, (p, g) in enumerate(zip(preds, golds, strict=True)):
        n = g.shape[0]
        if not 5 <= n <= 50:
            assert np.isnan(values[i]) and lengths[i] == -1
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            alone = float(np.nanmean(row_spearman(p, g)))
        assert lengths[i] == n
        assert (np.isnan(alone) and np.isnan(values[i])) or alone == values[i]



def test_distance_scores_count_the_trees_of_mst_edges_sentence_by_sentence():
    rng = np.random.default_rng(11)
    from synrob.perturb.io.tree import distances

    preds, golds, kept, every, puncts = [], [], [], [], []
    for n in rng.integers(1, 60, size=150).tolist():
        heads = [0] + [int(rng.integers(1, i + 1)) for i in range(1, n)]
        gold = np.asarray(distances(heads), dtype=float)
        pred = np.rint(gold + rng.normal(0, 1.0, (n, n)))  # integer: ties everywhere
        pred = np.minimum(pred, pred.T)
        np.fill_diagonal(pred, 0.0)
        punct = rng.random(n) < 0.15
        preds.append(pred)
        golds.append(gold)
        puncts.append(punct)
        kept.append(metrics.gold_edges(heads, gold, ~punct))
        every.append(metrics.gold_edges(heads))
    got = metrics.distance_scores(preds, golds, kept, every, puncts)
    right = [len(kept[i] & metrics.mst_edges(p, ~puncts[i])) for i, p in enumerate(preds)]
    right_punct = [len(every[i] & metrics.mst_edges(p)) for i, p in enumerate(preds)]
    assert got.right.tolist() == right and got.right_punct.tolist() == right_punct
    assert got.corpus()["uuas"] == metrics.uuas(preds, _heads_of(golds), puncts, golds)


def _heads_of(golds):
    """Heads (1-based, 0 root) of gold distance matrices: word 0 is the root of these trees."""
    out = []
    for g in golds:
        n = g.shape[0]
        heads = [0] * n
        for i in range(1, n):
            # the parent is the neighbour one step closer to word 0
            heads[i] = int(np.flatnonzero((g[i] == 1) & (g[0] == g[0, i] - 1))[0]) + 1
        out.append(heads)
    return out
