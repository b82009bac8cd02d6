"""Metrics on hand-computed cases (docs/metrics.md gives each formula)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import spearmanr
from synrob.probe import metrics

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
