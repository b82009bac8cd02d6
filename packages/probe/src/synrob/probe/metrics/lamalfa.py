"""UUAS and SDR exactly as La Malfa et al.'s released code computes them.

La Malfa, Wicker & Kwiatkowska (2022), "Emergent linguistic structures in neural networks are
fragile", released their experiments in ``EmanueleLM/emergent-linguistic-structures``. Their
structural-probe metrics differ from Hewitt & Manning's (:func:`synrob.probe.metrics.trees.uuas`) and
from ours (:func:`synrob.probe.metrics.trees.sdr`); this module re-implements them under distinct
names so a result can be compared with their cells. Every function names the file and function
it follows (paths inside that repository, commit ``d8e7102577af1f6909a419aa77bc59b7eb2f5e97``).
docs/metrics.md lists the differences.

Their matrices are ``(L, L)`` with ``L = max_length`` (``-ml``, default 20, never overridden by
their ``probing_robustness_*.sh`` scripts): a sentence is cut to its first ``L`` words and padded
with zeros. :func:`lamalfa_gold_matrix` builds the gold matrix as their data loader does;
:func:`lamalfa_pred_matrix` lays out one of our predicted ``(n, n)`` distance matrices the same
way. The metrics themselves accept matrices of any (matching) shape.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

__all__ = ["LAMALFA_MAX_LENGTH", "lamalfa_gold_matrix", "lamalfa_pred_matrix", "uuas_lamalfa",
           "sdr_lamalfa", "uuas_lamalfa_counts", "sdr_lamalfa_counts"]

#: ``--max-length`` default of ``verify/MLM_internals/syntax-integrity/probing_robustness.py``.
LAMALFA_MAX_LENGTH = 20

_VINF = 999  # their "no connection" value (``conll2matrix(..., vinf=999)``)


def lamalfa_gold_matrix(heads: Sequence[int], max_length: int = LAMALFA_MAX_LENGTH) -> np.ndarray:
    """Gold distance matrix ``(max_length, max_length)`` as La Malfa et al.'s loader builds it.

    Follows ``verify/MLM_internals/data.py``: ``conll2matrix`` (with ``floyd``) as called by
    ``get_trees_from_conlldatasets``, then ``M[M==999] = 0`` in
    ``syntax-integrity/probing_robustness.py``. ``heads`` are the CoNLL-U HEADs (1-based, 0 =
    root) of the syntactic words.

    * Only the first ``max_length`` words are read.
    * Word ``i`` (0-based) with HEAD ``h`` gets an edge to word ``h - 1`` only when
      ``0 < h - 1 < max_length`` (their ``if 0 < head < maxlen``): edges to a head past
      ``max_length`` are dropped, and so are edges to the **first word** (``h == 1``).
    * Floyd-Warshall path lengths over those edges; the diagonal is 0; pairs left unconnected
      (padding, and words cut off by a dropped edge) are 999, then set to 0.
    """
    L = int(max_length)
    m = np.full((L, L), float(_VINF))
    for i, h in enumerate(list(heads)[:L]):
        head = int(h) - 1
        if 0 < head < L:
            m[i, head] = m[head, i] = 1.0
    np.fill_diagonal(m, 0.0)
    for r in range(L):  # floyd(G, nV): min(d[p][q], d[p][r] + d[r][q])
        m = np.minimum(m, m[:, r:r + 1] + m[r:r + 1, :])
    np.fill_diagonal(m, 0.0)
    m[m >= _VINF] = 0.0
    return m


def lamalfa_pred_matrix(pred: np.ndarray, max_length: int = LAMALFA_MAX_LENGTH,
                        pad: float = 0.0) -> np.ndarray:
    """One predicted ``(n, n)`` distance matrix in La Malfa et al.'s ``(L, L)`` layout.

    The first ``min(n, L)`` words are kept; the padding cells (which their probe network fills
    with its own output and ours has no value for) are set to ``pad``.
    """
    L = int(max_length)
    p = np.asarray(pred, dtype=np.float64)
    k = min(p.shape[0], L)
    out = np.full((L, L), float(pad))
    out[:k, :k] = p[:k, :k]
    return out


def sdr_lamalfa_counts(gold: np.ndarray, pred: np.ndarray) -> tuple[int, int]:
    """``(cells whose rounded prediction equals the gold value, cells)`` of one matrix.

    ``verify/MLM_internals/syntax-integrity/p1_metrics.py``, ``same_distance``: ``diff =
    np.round(m_hat) - m.astype(int)`` over **every** cell (both triangles, the diagonal and the
    padding), ``np.round`` rounding halves to even.
    """
    g = np.asarray(gold)
    diff = (np.round(np.asarray(pred, dtype=np.float64)) - g.astype(int)).ravel()
    return int(np.count_nonzero(diff == 0)), int(diff.size)


def sdr_lamalfa(golds: Sequence[np.ndarray], preds: Sequence[np.ndarray]) -> float:
    """SDR of ``p1_metrics.same_distance``: pooled ``Σ equal cells / Σ cells``; 0.0 when empty.

    With their fixed ``(L, L)`` matrices every sentence has ``L²`` cells, so the pooled ratio is
    also the mean of the per-sentence ratios.
    """
    eq = tot = 0
    for g, p in zip(golds, preds, strict=True):
        e, t = sdr_lamalfa_counts(g, p)
        eq, tot = eq + e, tot + t
    return eq / tot if tot > 0 else 0.0


def uuas_lamalfa_counts(gold: np.ndarray, pred: np.ndarray) -> tuple[int, int]:
    """``(gold edges predicted, gold edges)`` of one matrix, counted over ordered cells.

    ``verify/MLM_internals/syntax-integrity/p1_metrics.py``, ``UUAS``: the gold edges are the
    cells where the gold matrix is 1, the predicted edges the cells where ``np.round`` of the
    prediction is 1 - no spanning tree is decoded, punctuation is not removed, and each
    undirected edge is counted in both triangles.
    """
    g = np.asarray(gold).ravel()
    p = np.round(np.asarray(pred, dtype=np.float64)).ravel()
    gold_cells = g == 1
    return int(np.count_nonzero(gold_cells & (p == 1))), int(np.count_nonzero(gold_cells))


def uuas_lamalfa(golds: Sequence[np.ndarray], preds: Sequence[np.ndarray]) -> float:
    """UUAS of ``p1_metrics.UUAS``: pooled ``Σ hits / Σ gold edge cells``; 0.0 when none.

    On one sentence (``[gold], [pred]``) this is the per-sentence value their worst-case loop
    in ``probing_robustness.py`` takes the minimum of; a sentence without a gold edge scores 0.
    """
    hit = tot = 0
    for g, p in zip(golds, preds, strict=True):
        h, t = uuas_lamalfa_counts(g, p)
        hit, tot = hit + h, tot + t
    return hit / tot if tot > 0 else 0.0
