"""La Malfa et al.'s released UUAS/SDR (synrob.probe.metrics.lamalfa) on hand-built matrices whose
values are worked out by hand from their code (data.py conll2matrix/floyd, p1_metrics.py
same_distance/UUAS)."""

from __future__ import annotations

import numpy as np
import pytest
from synrob.probe.metrics import trees as metrics
from synrob.probe.metrics.lamalfa import (
    LAMALFA_MAX_LENGTH,
    lamalfa_gold_matrix,
    lamalfa_pred_matrix,
    sdr_lamalfa,
    sdr_lamalfa_counts,
    uuas_lamalfa,
    uuas_lamalfa_counts,
)


def test_gold_matrix_of_a_chain() -> None:
    # w1 -> w2 (root) <- w3 <- w4 : no edge touches word 1 as a head, so nothing is dropped
    m = lamalfa_gold_matrix([2, 0, 2, 3], max_length=4)
    assert np.array_equal(m, [[0, 1, 2, 3], [1, 0, 1, 2], [2, 1, 0, 1], [3, 2, 1, 0]])
    # padded with zeros up to max_length
    padded = lamalfa_gold_matrix([2, 0], max_length=3)
    assert np.array_equal(padded, [[0, 1, 0], [1, 0, 0], [0, 0, 0]])
    assert lamalfa_gold_matrix([2, 0]).shape == (LAMALFA_MAX_LENGTH, LAMALFA_MAX_LENGTH)


def test_gold_matrix_drops_edges_to_the_first_word_and_past_max_length() -> None:
    # word 1 is the root and heads words 2 and 3: `0 < head` (head = HEAD - 1 = 0) drops both
    assert not lamalfa_gold_matrix([0, 1, 1], max_length=3).any()
    # w1 <- w2 (root) <- w3, w4 -> w1 : the edge w4-w1 is dropped, w4 is unreachable -> 0
    m = lamalfa_gold_matrix([2, 0, 2, 1], max_length=4)
    assert np.array_equal(m, [[0, 1, 2, 0], [1, 0, 1, 0], [2, 1, 0, 0], [0, 0, 0, 0]])
    # only the first max_length words are read; heads past it are dropped
    cut = lamalfa_gold_matrix([3, 3, 0], max_length=2)
    assert not cut.any() and cut.shape == (2, 2)


def test_pred_matrix_truncates_and_pads() -> None:
    p = np.arange(9, dtype=float).reshape(3, 3)
    assert np.array_equal(lamalfa_pred_matrix(p, max_length=2), [[0, 1], [3, 4]])
    assert np.array_equal(lamalfa_pred_matrix(p[:1, :1] + 5, max_length=2), [[5, 0], [0, 0]])


def test_sdr_lamalfa_counts_every_cell_with_half_to_even_rounding() -> None:
    gold = np.array([[0, 1], [1, 0]])
    # np.round: 0.4 -> 0, 1.5 -> 2 (half to even), 0.6 -> 1, 0.2 -> 0: 3 of 4 cells equal
    pred = np.array([[0.4, 1.5], [0.6, 0.2]])
    assert sdr_lamalfa_counts(gold, pred) == (3, 4)
    assert sdr_lamalfa([gold], [pred]) == pytest.approx(0.75)
    assert sdr_lamalfa_counts(np.array([[2]]), np.array([[2.5]])) == (1, 1)  # 2.5 -> 2
    # pooled over cells, not averaged per sentence: (3 + 1) / (4 + 1)
    assert sdr_lamalfa([gold, np.array([[0]])], [pred, np.array([[0.3]])]) == pytest.approx(0.8)
    assert sdr_lamalfa([], []) == 0.0
    # ours counts the i < j cells only: round(1.5) = 2 != 1 -> 0 of 1 pair
    assert metrics.sdr([pred], [gold]) == pytest.approx(0.0)


def test_uuas_lamalfa_cells_rounded_to_one_without_mst() -> None:
    gold = np.array([[0, 1, 2], [1, 0, 1], [2, 1, 0]])  # chain w1 - w2 - w3
    pred = np.array([[0.0, 1.2, 1.4], [0.9, 0.0, 2.6], [1.1, 2.4, 0.0]])
    # gold cells == 1: (0,1) (1,0) (1,2) (2,1); rounded prediction 1 at (0,1) (1,0) only
    # (the false edge (0,2)/(2,0), rounded to 1, costs nothing)
    assert uuas_lamalfa_counts(gold, pred) == (2, 4)
    assert uuas_lamalfa([gold], [pred]) == pytest.approx(0.5)
    # a sentence without a gold edge adds nothing to the pooled ratio and scores 0 alone
    empty_g, empty_p = np.zeros((1, 1)), np.zeros((1, 1))
    assert uuas_lamalfa([gold, empty_g], [pred, empty_p]) == pytest.approx(0.5)
    assert uuas_lamalfa([empty_g], [empty_p]) == 0.0
    # ours decodes the MST of the symmetrised prediction: edges (0,1) and (0,2) -> 1 of 2
    sym = (pred + pred.T) / 2
    assert metrics.uuas([sym], [[2, 0, 2]]) == pytest.approx(0.5)
    # pooled, not averaged per sentence: (2 + 2) / (4 + 2) with a perfect 2-word sentence
    g2 = np.array([[0, 1], [1, 0]])
    assert uuas_lamalfa([gold, g2], [pred, g2.astype(float)]) == pytest.approx(4 / 6)
