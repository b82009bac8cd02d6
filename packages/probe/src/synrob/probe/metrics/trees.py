"""Probing metrics (numpy/scipy only). Each is documented with its source in docs/metrics.md.

Conventions: a sentence of ``n`` words has predicted distances ``(n, n)`` (symmetric, 0 diagonal),
gold distances ``(n, n)`` (integers), gold ``heads`` ``(n,)`` (1-based, 0 = root), predicted and gold
depths ``(n,)`` and a boolean ``punct`` mask ``(n,)``. Corpus metrics take lists of those.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

__all__ = [
    "mst_edges",
    "gold_edges",
    "uuas",
    "dspr",
    "nspr",
    "root_accuracy_from_depths",
    "sdr",
    "accuracy",
    "words_right_per_sentence",
    "spearman",
    "row_spearman",
    "rank_rows",
    "mst_pairs",
    "mst_pairs_batch",
    "DistanceScores",
    "distance_scores",
]

Edge = tuple[int, int]


def mst_edges(dist: np.ndarray, keep: np.ndarray | None = None) -> set[Edge]:
    """Undirected edges ``(i, j)``, ``i < j``, of the minimum spanning tree of ``dist`` (n, n).

    ``keep`` (n,) bool restricts the tree to those words (indices stay those of the full
    sentence). Negative distances are clipped to 0; NaN distances are no edge (a forest may
    result). Ties as in :func:`mst_pairs`.
    """
    idx = np.arange(dist.shape[0]) if keep is None else np.flatnonzero(keep)
    sub = np.asarray(dist, dtype=np.float64)
    if keep is not None:
        sub = sub[np.ix_(idx, idx)]
    # + 1 as the scipy call had it (0 is "no edge" there): values closer than the float
    # resolution at 1 + d stay tied, exactly as before
    ids = idx.tolist()
    return {(ids[a], ids[b]) for a, b in _mst_upper(np.maximum(sub, 0.0) + 1.0)}


def mst_pairs(weights: np.ndarray) -> tuple[list[int], list[int]]:
    """Rows and columns (``row < col``, row-major order) of the minimum spanning tree of the
    upper triangle of ``weights`` (n, n), all > 0 (NaN: no edge).

    Kruskal's algorithm with the edges in a stable sort of their weights, so a tie goes to the
    pair first in row-major order: the tree, and the order, of
    ``scipy.sparse.csgraph.minimum_spanning_tree(np.triu(weights, 1)).tocoo()`` (checked on
    tie-heavy inputs in ``tests/probe/test_metrics.py``), without scipy's per-call sparse
    validation (about 10x faster on sentence-sized matrices).
    """
    edges = sorted(_mst_upper(weights))
    return [a for a, _ in edges], [b for _, b in edges]


#: Longest padded sentence for which :func:`mst_pairs_batch` uses the minimax recurrence
#: (L steps over the whole (b, L, L) batch, O(L^3)); longer batches run Prim's algorithm
#: on all sentences at once (O(L^2)), faster than Kruskal per sentence there (1.2x at 60
#: words, 1.6x at 100: bench/mst.py). All give the same trees.
MINIMAX_MAX_LEN = 40


def mst_pairs_batch(weights: np.ndarray, lengths: Sequence[int]
                    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`mst_pairs` of every sentence of a padded batch at once.

    ``weights`` (b, L, L): sentence ``r``'s matrix in its top-left ``(n_r, n_r)`` block, all
    finite and > 0 there (what lies outside is ignored). Returns ``(sentence, row, col)``
    int64 arrays: sentence by sentence in increasing order, each sentence's edges in
    :func:`mst_pairs`'s order - the same edges in the same order as calling it per sentence.

    Each sentence's upper-triangle pairs are ranked by a stable sort of their weights (row-major
    order breaks ties, as Kruskal's stable sort does), which makes the ranks distinct; the
    tree of distinct weights is unique, and a pair is in it iff no path between its two words
    uses only lower ranks, i.e. iff its rank equals the minimax rank between them. The minimax
    ranks come from the recurrence ``M = min(M, max(M[:, k], M[k, :]))`` over ``k``, for all
    sentences at once. Batches longer than :data:`MINIMAX_MAX_LEN` run :func:`_prim_batch`;
    a batch with a non-finite weight in a block runs :func:`mst_pairs` per sentence.
    """
    w = np.asarray(weights, dtype=np.float64)
    lens = np.asarray(lengths, dtype=np.int64)
    b, width = w.shape[0], w.shape[1]
    real = np.arange(width)[None, :] < lens[:, None]  # (b, L)
    block = real[:, :, None] & real[:, None, :]
    if not np.isfinite(w[block]).all():
        return _per_sentence(w, lens)
    if width > MINIMAX_MAX_LEN:
        tree = _prim_batch(w, lens)
        return np.nonzero(tree & _upper_mask(width)[None])
    iu, ju = _upper_pairs(width)
    flat = np.where(block[:, iu, ju], w[:, iu, ju], np.inf)  # (b, E), padding pairs last
    order = np.argsort(flat, axis=1, kind="stable")
    ranks = np.empty_like(order)
    np.put_along_axis(ranks, order, np.arange(len(iu))[None, :], axis=1)
    # int16 holds every rank (E < 32,768 pairs up to L = 256) and quarters the memory traffic
    rank = np.full((b, width, width), -1, dtype=np.int16)  # diagonal: -1, below every pair
    rank[:, iu, ju] = ranks
    rank[:, ju, iu] = ranks
    mm, tmp = rank.copy(), np.empty_like(rank)
    for k in range(width):
        np.maximum(mm[:, :, k, None], mm[:, None, k, :], out=tmp)
        np.minimum(mm, tmp, out=mm)
    return np.nonzero((rank == mm) & _upper_mask(width)[None] & block)


def _prim_batch(w: np.ndarray, lens: np.ndarray) -> np.ndarray:
    """Prim's algorithm from word 0 on every sentence's block of the upper triangle of ``w``
    (b, L, L) at once; returns the trees as symmetric (b, L, L) bool adjacencies.

    Pairs compare by weight, then by row-major position: a strict total order, the order of
    Kruskal's stable sort, so the tree is unique and is :func:`mst_pairs`'s. Step ``s`` adds to
    every sentence of more than ``s + 1`` words its word outside the tree with the least pair
    into it (``best`` weight, ``code`` = row * L + col of that pair, ``parent`` its other word).
    """
    b, width = w.shape[0], w.shape[1]
    col = np.arange(width)
    w = np.where(_upper_mask(width)[None], w, w.transpose(0, 2, 1))  # the upper triangle's
    outside = col[None, :] < lens[:, None]  # (b, L), padding never enters
    outside[:, 0] = False
    best, code = w[:, 0, :].copy(), np.repeat(col[None, :], b, 0)  # pairs (0, j)
    parent = np.zeros((b, width), dtype=np.int64)
    tree = np.zeros((b, width, width), dtype=bool)
    for step in range(width - 1):
        r = np.flatnonzero(lens > step + 1)  # sentences still growing
        if not r.size:
            break
        bw, bc = best[r], code[r]
        key = np.where(outside[r], bw, np.inf)
        tied = key == key.min(1)[:, None]
        v = np.where(tied, bc, np.iinfo(np.int64).max).argmin(1)  # (live,)
        tree[r, parent[r, v], v] = tree[r, v, parent[r, v]] = True
        outside[r, v] = False
        cw = w[r, v, :]  # (live, L): pairs (v, j)
        cc = np.where(col[None, :] > v[:, None], v[:, None] * width + col[None, :],
                      col[None, :] * width + v[:, None])
        closer = (cw < bw) | ((cw == bw) & (cc < bc))
        best[r], code[r] = np.where(closer, cw, bw), np.where(closer, cc, bc)
        parent[r] = np.where(closer, v[:, None], parent[r])
    return tree


def _per_sentence(w: np.ndarray, lens: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`mst_pairs_batch` by calling :func:`mst_pairs` on each sentence's block."""
    parts = []
    for r, n in enumerate(lens.tolist()):
        rows, cols = mst_pairs(w[r, :n, :n]) if n >= 2 else ([], [])
        parts.append((np.full(len(rows), r), np.asarray(rows, np.int64), np.asarray(cols, np.int64)))
    if not parts:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty, empty
    b_i, r_i, c_i = (np.concatenate(v).astype(np.int64) for v in zip(*parts, strict=True))
    return b_i, r_i, c_i


def _mst_upper(weights: np.ndarray) -> set[Edge]:
    """Kruskal over the strict upper triangle of ``weights`` (m, m), stable order, NaN skipped."""
    m = weights.shape[0]
    if m < 2:
        return set()
    iu, ju = _upper_pairs(m)
    w = weights[iu, ju]
    order = np.argsort(w, kind="stable")
    order = order[~np.isnan(w[order])]
    return _kruskal(iu[order].tolist(), ju[order].tolist(), m)


@lru_cache(maxsize=512)
def _upper_pairs(m: int) -> tuple[np.ndarray, np.ndarray]:
    """Row and column indices of the strict upper triangle of an (m, m) matrix, row-major."""
    return np.triu_indices(m, k=1)


@lru_cache(maxsize=512)
def _upper_mask(m: int) -> np.ndarray:
    """(m, m) bool, True on the strict upper triangle (read only: shared by every call)."""
    mask = np.triu(np.ones((m, m), dtype=bool), k=1)
    mask.flags.writeable = False
    return mask


def _kruskal(rows: list[int], cols: list[int], m: int) -> set[Edge]:
    """Edges ``(a, b)`` kept by Kruskal from candidate pairs of ``m`` nodes in increasing order."""
    parent = list(range(m))

    def root(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    edges: set[Edge] = set()
    need = m - 1
    for a, b in zip(rows, cols, strict=True):
        ra, rb = root(a), root(b)
        if ra != rb:
            parent[rb] = ra
            edges.add((a, b))
            need -= 1
            if not need:
                break
    return edges


def gold_edges(heads: Sequence[int], gold_dist: np.ndarray | None = None,
               keep: np.ndarray | None = None) -> set[Edge]:
    """Gold undirected edges; with ``keep``, the MST of gold distances over the kept words.

    Without ``keep`` these are the tree's edges. With it (punctuation left out) they are, as in
    Hewitt & Manning's reporter, the minimum spanning tree of the gold distance matrix restricted
    to the kept words, which equals the tree's edges among kept words when the removed words
    are leaves.
    """
    if keep is None or bool(np.all(keep)):
        return {(min(i, h - 1), max(i, h - 1)) for i, h in enumerate(heads) if h > 0}
    if gold_dist is None:
        from synrob.perturb.io.tree import distances

        gold_dist = np.asarray(distances(list(heads)), dtype=np.float64)
    return mst_edges(gold_dist, keep)


def uuas(pred_dists: Sequence[np.ndarray], heads: Sequence[Sequence[int]],
         punct: Sequence[np.ndarray] | None = None,
         gold_dists: Sequence[np.ndarray] | None = None) -> float:
    """Undirected unlabelled attachment score over a corpus: correct edges / gold edges.

    With ``punct`` (one bool mask per sentence), punctuation words are removed from both the
    predicted and the gold tree first (Hewitt & Manning 2019). Returns NaN for no gold edge.
    """
    correct = total = 0
    for k, (pd, hd) in enumerate(zip(pred_dists, heads, strict=True)):
        keep = None if punct is None else ~np.asarray(punct[k], dtype=bool)
        gd = None if gold_dists is None else gold_dists[k]
        gold = gold_edges(hd, gd, keep)
        pred = mst_edges(pd, keep)
        correct += len(gold & pred)
        total += len(gold)
    return correct / total if total else float("nan")


@dataclass
class DistanceScores:
    """Per-sentence counts behind the corpus distance metrics, each (n_sentences,) float64.

    ``right`` / ``edges``: correct and gold edges without punctuation (UUAS); ``right_punct`` /
    ``edges_punct``: with it; ``rho``: the sentence's mean row Spearman, NaN outside the DSpr
    lengths; ``lengths``: words, -1 outside them; ``sdr_right`` / ``sdr_pairs``: pairs whose
    rounded distance is right, and pairs. :meth:`corpus` gives the corpus values, equal to those
    of :func:`uuas`, :func:`dspr` and :func:`sdr` (tests/probe/test_stats.py).
    """

    right: np.ndarray
    edges: np.ndarray
    right_punct: np.ndarray
    edges_punct: np.ndarray
    rho: np.ndarray
    lengths: np.ndarray
    sdr_right: np.ndarray
    sdr_pairs: np.ndarray

    def corpus(self) -> dict[str, float]:
        """``uuas``, ``uuas_punct``, ``dspr`` and ``sdr`` over the whole corpus."""
        per = [(int(n), float(r)) for n, r in zip(self.lengths, self.rho, strict=True) if n >= 0]
        return {"uuas": _sum_ratio(self.right, self.edges),
                "uuas_punct": _sum_ratio(self.right_punct, self.edges_punct),
                "dspr": _length_averaged(per, 0, np.iinfo(np.int64).max),
                "sdr": _sum_ratio(self.sdr_right, self.sdr_pairs)}


def _sum_ratio(a: np.ndarray, b: np.ndarray) -> float:
    """sum(a) / sum(b) of integer counts, as Python integers (NaN for no b)."""
    num, den = int(a.sum()), int(b.sum())
    return num / den if den else float("nan")


def distance_scores(pred_dists: Sequence[np.ndarray], gold_dists: Sequence[np.ndarray],
                    gold_kept: Sequence[set[Edge] | frozenset[Edge]],
                    gold_all: Sequence[set[Edge] | frozenset[Edge]],
                    punct: Sequence[np.ndarray], lo: int = 5, hi: int = 50) -> DistanceScores:
    """:class:`DistanceScores` of a corpus: each sentence's predicted trees and row Spearman
    computed once. ``gold_kept`` / ``gold_all``: each sentence's gold edges without / with
    punctuation (:func:`gold_edges`); ``punct`` (n,) bool masks; DSpr lengths ``lo..hi``."""
    k = len(pred_dists)
    cols = np.zeros((8, k), dtype=np.float64)
    cols[4] = np.nan
    cols[5] = -1.0
    for i, (pd, gd) in enumerate(zip(pred_dists, gold_dists, strict=True)):
        pd = np.asarray(pd, dtype=np.float64)
        keep = ~np.asarray(punct[i], dtype=bool)
        cols[0, i] = len(gold_kept[i] & mst_edges(pd, keep))
        cols[1, i] = len(gold_kept[i])
        cols[2, i] = len(gold_all[i] & mst_edges(pd))
        cols[3, i] = len(gold_all[i])
        n = gd.shape[0]
        iu = _upper_pairs(n)
        cols[6, i] = np.sum(np.rint(pd[iu]) == np.asarray(gd)[iu])
        cols[7, i] = iu[0].size
    cols[4], cols[5] = _dspr_columns(pred_dists, gold_dists, lo, hi)
    return DistanceScores(*cols)


def _dspr_columns(pred_dists: Sequence[np.ndarray], gold_dists: Sequence[np.ndarray], lo: int,
                  hi: int) -> tuple[np.ndarray, np.ndarray]:
    """Each sentence's mean row Spearman (NaN outside ``lo..hi``) and its length (-1 outside),
    (k,) each. The rows of all sentences of one length go through :func:`row_spearman` at once;
    each row's value is the one computed alone (every step is per row)."""
    k = len(pred_dists)
    values, lengths = np.full(k, np.nan), np.full(k, -1.0)
    by_len: dict[int, list[int]] = defaultdict(list)
    for i, gd in enumerate(gold_dists):
        if lo <= gd.shape[0] <= hi:
            by_len[gd.shape[0]].append(i)
    for n, idx in by_len.items():
        pred = np.concatenate([np.asarray(pred_dists[i], dtype=np.float64) for i in idx])
        gold = np.concatenate([np.asarray(gold_dists[i], dtype=np.float64) for i in idx])
        rho = row_spearman(pred, gold).reshape(len(idx), n)  # (sentences, n)
        values[idx] = np.nanmean(rho, axis=1)  # an all-NaN sentence: NaN (and numpy's warning)
        lengths[idx] = n
    return values, lengths


def rank_rows(a: np.ndarray) -> np.ndarray:
    """1-based ranks within each row of ``a`` (m, n), ties averaged; a row with NaN is all NaN.

    The values of ``scipy.stats.rankdata(a, axis=1)`` (checked in ``tests/probe/test_metrics.py``)
    without its per-call overhead, which dominated DSpr on sentence-sized rows. Shape: (m, n).
    """
    a = np.asarray(a, dtype=np.float64)
    m, n = a.shape
    if n == 0:
        return np.empty((m, 0))
    order = np.argsort(a, axis=1, kind="stable")
    ordered = np.take_along_axis(a, order, axis=1)
    starts = np.ones((m, n), dtype=bool)
    starts[:, 1:] = ordered[:, 1:] != ordered[:, :-1]
    group = np.cumsum(starts.ravel()) - 1  # a tie group never spans two rows (row starts open one)
    position = np.tile(np.arange(1, n + 1, dtype=np.float64), m)
    mean_rank = np.bincount(group, weights=position) / np.bincount(group)
    ranks = np.empty((m, n))
    np.put_along_axis(ranks, order, mean_rank[group].reshape(m, n), axis=1)
    ranks[np.isnan(a).any(axis=1)] = np.nan
    return ranks


def row_spearman(pred: np.ndarray, gold: np.ndarray) -> np.ndarray:
    """Spearman correlation of each row of ``pred`` (m, n) with the same row of ``gold``. (m,)

    Ranks are averaged over ties (as :func:`scipy.stats.spearmanr`); a constant row gives NaN.
    """
    rp = rank_rows(pred)
    rg = rank_rows(gold)
    rp -= rp.mean(axis=1, keepdims=True)
    rg -= rg.mean(axis=1, keepdims=True)
    num = (rp * rg).sum(axis=1)
    den = np.sqrt((rp * rp).sum(axis=1) * (rg * rg).sum(axis=1))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)


def spearman(pred: Sequence[float], gold: Sequence[float]) -> float:
    """Spearman correlation of two vectors (NaN when either is constant)."""
    return float(row_spearman(np.asarray(pred, float)[None, :], np.asarray(gold, float)[None, :])[0])


def _length_averaged(per_sentence: Sequence[tuple[int, float]], lo: int, hi: int) -> float:
    by_len: dict[int, list[float]] = defaultdict(list)
    for n, value in per_sentence:
        if lo <= n <= hi and not np.isnan(value):
            by_len[n].append(value)
    if not by_len:
        return float("nan")
    return float(np.mean([np.mean(v) for v in by_len.values()]))


def dspr(pred_dists: Sequence[np.ndarray], gold_dists: Sequence[np.ndarray],
         lo: int = 5, hi: int = 50) -> float:
    """Distance Spearman (Hewitt & Manning 2019).

    For each sentence, the Spearman correlation between predicted and gold distances of each
    word's row, averaged over the words; averaged over sentences of each length; then averaged
    over the lengths ``lo..hi`` that occur. NaN when no sentence has such a length.
    """
    per = []
    for pd, gd in zip(pred_dists, gold_dists, strict=True):
        n = gd.shape[0]
        if lo <= n <= hi:
            per.append((n, float(np.nanmean(row_spearman(np.asarray(pd, float), np.asarray(gd, float))))))
    return _length_averaged(per, lo, hi)


def nspr(pred_depths: Sequence[np.ndarray], gold_depths: Sequence[np.ndarray],
         lo: int = 5, hi: int = 50) -> float:
    """Norm Spearman (Hewitt & Manning 2019): Spearman of predicted vs gold depths per sentence,
    averaged over sentences of each length, then over the lengths ``lo..hi``."""
    per = [(len(g), spearman(p, g)) for p, g in zip(pred_depths, gold_depths, strict=True)
           if lo <= len(g) <= hi]
    return _length_averaged(per, lo, hi)


def root_accuracy_from_depths(pred_depths: Sequence[np.ndarray], roots: Sequence[int],
                              punct: Sequence[np.ndarray] | None = None) -> float:
    """Share of sentences whose word of least predicted depth is the gold root.

    With ``punct``, punctuation words cannot be chosen (H&M exclude them).
    """
    right = 0
    for k, (pd, r) in enumerate(zip(pred_depths, roots, strict=True)):
        d = np.asarray(pd, dtype=np.float64).copy()
        if punct is not None and not np.all(punct[k]):
            d[np.asarray(punct[k], dtype=bool)] = np.inf
        right += int(int(np.argmin(d)) == int(r))
    return right / len(roots) if len(roots) else float("nan")


def sdr(pred_dists: Sequence[np.ndarray], gold_dists: Sequence[np.ndarray]) -> float:
    """Syntactic distance recovery (La Malfa et al.): share of word pairs ``i < j`` over the
    corpus whose predicted distance, rounded to the nearest integer, equals the gold distance."""
    right = total = 0
    for pd, gd in zip(pred_dists, gold_dists, strict=True):
        iu = np.triu_indices(gd.shape[0], k=1)
        right += int(np.sum(np.rint(np.asarray(pd)[iu]) == np.asarray(gd)[iu]))
        total += iu[0].size
    return right / total if total else float("nan")


def accuracy(pred: Sequence[int] | np.ndarray, gold: Sequence[int] | np.ndarray) -> float:
    """Share of equal items (flat sequences)."""
    p, g = np.asarray(pred), np.asarray(gold)
    return float(np.mean(p == g)) if g.size else float("nan")


def words_right_per_sentence(pred: Sequence[np.ndarray], gold: Sequence[np.ndarray]) -> float:
    """Mean number of correctly labelled words per sentence."""
    if not gold:
        return float("nan")
    return float(np.mean([np.sum(np.asarray(p) == np.asarray(g)) for p, g in zip(pred, gold, strict=True)]))
