"""Paired bootstrap over sentences: 95 % intervals for test metrics, and clean -> perturbed drops.

Every metric of the built-in tasks is recomputed on a resample from **per-sentence sufficient
statistics** (:class:`SentenceStats`), never by averaging per-sentence ratios unless the metric
itself is defined that way:

=============  ============================================  ================================
form           per sentence ``i``                            metric on sentences ``S``
=============  ============================================  ================================
``ratio``      ``a_i`` (e.g. correct edges), ``b_i`` (edges)  sum_S a / sum_S b
``by_length``  ``a_i`` value, ``b_i`` length (-1: left out)   mean over lengths of the mean
                                                              value of S's sentences of that
                                                              length (DSpr, NSpr, as
                                                              :mod:`synrob.probe.metrics.trees`)
``spearman``   ``a_i`` predicted, ``b_i`` gold value           Spearman over S (tree-depth)
=============  ============================================  ================================

A resample is ``n`` sentence indices drawn with replacement (``idx`` (B, n) for B resamples).
Intervals are percentile intervals (2.5 %, 97.5 %). Resampling is *paired*: the task and its
control, and a clean file and its perturbed version, are scored on the same drawn indices.

Two refinements make every resampled statistic the same estimator as the point one:

* **stratified** (:func:`stratified_indices`): a ``by_length`` metric averages over the lengths
  present, so a plain resample that misses a rare length averages over fewer lengths than the
  point estimate (off-centre: docs/metrics.md measures it on EWT test). Its sentences are
  resampled within each length (:attr:`SentenceStats.strata`): every resample keeps each
  length's count, so it averages over the same lengths;
* **cluster** (:func:`cluster_indices`): several variants of one source sentence are not
  independent, so a file's intervals resample its source sentences, each with all its variants
  (:func:`file_clusters`), and drops resample the source sentences with all their pairs.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from synrob.perturb.errors import SynrobError

from . import trees as metrics

__all__ = ["SentenceStats", "Resamples", "resample_indices",
           "stratified_indices", "source_clusters", "file_clusters", "cluster_indices", "take",
           "bootstrap_values", "seed_draws", "percentile_interval", "one_sided_p", "align_pairs",
           "read_sources"]

#: B resamples of sentence (or pair) indices: a (B, n) array, or B 1-D arrays of varying
#: size (a cluster bootstrap over clusters of unequal size).
Resamples = np.ndarray | Sequence[np.ndarray]


@dataclass
class SentenceStats:
    """Per-sentence statistics of one metric on one file: ``a``, ``b`` (n_sentences,) float64."""

    form: str  # "ratio", "by_length" or "spearman"
    a: np.ndarray
    b: np.ndarray

    def value(self, idx: np.ndarray | None = None) -> float:
        """The metric over sentences ``idx`` (n,) (all sentences when None)."""
        i = np.arange(self.a.size) if idx is None else np.asarray(idx)
        return float(self.values(i[None, :])[0])

    @property
    def strata(self) -> np.ndarray | None:
        """Per sentence (n,), the stratum a resample keeps the count of: for a ``by_length``
        metric its length (-1 for every sentence outside the lengths averaged); None for the
        other forms (a plain resample is already their point estimator)."""
        return self.b if self.form == "by_length" else None

    def values(self, idx: Resamples) -> np.ndarray:
        """The metric on each resample of ``idx`` ((B, n), or B 1-D arrays). Shape: (B,)."""
        if self.form == "ratio":
            if isinstance(idx, np.ndarray) and idx.ndim == 2:
                num, den = self.a[idx].sum(axis=1), self.b[idx].sum(axis=1)
            else:
                num = np.array([self.a[r].sum() for r in idx], dtype=np.float64)
                den = np.array([self.b[r].sum() for r in idx], dtype=np.float64)
            with np.errstate(invalid="ignore", divide="ignore"):
                return np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)
        if self.form == "spearman":
            return np.array([metrics.spearman(self.a[r], self.b[r]) for r in idx])
        return np.array([_by_length(self.a[r], self.b[r]) for r in idx])


def _by_length(values: np.ndarray, lengths: np.ndarray) -> float:
    ok = (lengths >= 0) & ~np.isnan(values)
    if not ok.any():
        return float("nan")
    lens = lengths[ok].astype(np.int64)
    counts = np.bincount(lens)
    sums = np.bincount(lens, weights=values[ok])
    present = counts > 0
    return float(np.mean(sums[present] / counts[present]))


def resample_indices(n: int, n_boot: int, rng: np.random.Generator) -> np.ndarray:
    """``n_boot`` resamples of ``n`` sentence indices with replacement. Shape: (n_boot, n)."""
    return rng.integers(0, n, size=(n_boot, n)) if n else np.zeros((n_boot, 0), dtype=np.int64)


def stratified_indices(strata: np.ndarray, n_boot: int, rng: np.random.Generator) -> np.ndarray:
    """``n_boot`` resamples of the ``n`` items of ``strata`` (n,), each drawn with replacement
    within its stratum: column ``j`` of a resample holds an item of ``strata[j]``'s stratum, so
    every resample has each stratum's count. The strata are drawn in increasing order of their
    value, each as ``rng.integers(0, k, size=(n_boot, k))`` over its ``k`` items (in index
    order). Shape: (n_boot, n)."""
    s = np.asarray(strata)
    idx = np.zeros((n_boot, s.size), dtype=np.int64)
    for value in np.unique(s):
        members = np.flatnonzero(s == value)
        idx[:, members] = members[rng.integers(0, members.size, size=(n_boot, members.size))]
    return idx


def source_clusters(sources: np.ndarray) -> list[np.ndarray]:
    """The pairs of each source: for ``sources`` (m,) (pair -> its source, e.g. the clean
    sentence index of :func:`align_pairs`), one array of pair positions per distinct source,
    sources in order of first appearance, pairs in order."""
    src = np.asarray(sources)
    _, first, inverse = np.unique(src, return_index=True, return_inverse=True)
    order = np.argsort(first, kind="stable")  # cluster k = the k-th source to appear
    rank = np.empty_like(order)
    rank[order] = np.arange(order.size)
    key = rank[inverse.ravel()]
    grouped = np.argsort(key, kind="stable")  # cluster by cluster, each in index order
    return np.split(grouped, np.flatnonzero(np.diff(key[grouped])) + 1) if key.size else []


def file_clusters(path: str, n: int) -> list[np.ndarray]:
    """The first ``n`` sentences of the CoNLL-U file ``path`` grouped by their
    ``# synrob.source`` comment (the variants of one source sentence make one group); a sentence
    without that comment is a group of its own. Groups in order of first appearance, each
    listing its sentence indices in order (:func:`source_clusters`)."""
    from itertools import islice

    from synrob.perturb.corpus import read_conllu

    ids: dict[tuple[str, Any], int] = {}
    labels = []
    for k, sent in enumerate(islice(read_conllu(path), n)):
        src = sent.metadata.get("synrob.source")
        labels.append(ids.setdefault(("source", src) if src is not None else ("sentence", k),
                                     len(ids)))
    if len(labels) != n:
        raise SynrobError(f"{path}: {len(labels)} sentences read for the bootstrap, {n} scored")
    return source_clusters(np.asarray(labels, dtype=np.int64))


def cluster_indices(clusters: Sequence[np.ndarray], n_boot: int, rng: np.random.Generator,
                    strata: np.ndarray | None = None) -> Resamples:
    """A cluster bootstrap: each resample draws ``c = len(clusters)`` clusters with replacement
    (:func:`resample_indices` over the clusters; :func:`stratified_indices` of ``strata`` (c,)
    when given) and lists the pair positions of every drawn cluster, in draw order. With
    clusters of one pair each, ``[[0], [1], ...]``, this is :func:`resample_indices` (or
    :func:`stratified_indices`) itself. A (B, m) array when every resample has the same size
    (clusters of equal size), else B 1-D arrays."""
    drawn = (resample_indices(len(clusters), n_boot, rng) if strata is None
             else stratified_indices(strata, n_boot, rng))
    sizes = np.array([c.size for c in clusters], dtype=np.int64)
    if sizes.size and np.all(sizes == 1):
        return np.concatenate(clusters)[drawn]
    flat = np.concatenate(clusters) if clusters else np.zeros(0, dtype=np.int64)
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)
    out = [_expand(flat, starts[r], sizes[r]) for r in drawn]
    return np.stack(out) if len({o.size for o in out}) <= 1 else out


def _expand(flat: np.ndarray, starts: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    """``flat[starts[0]:starts[0]+sizes[0]]``, then the next slice, ... concatenated."""
    total = int(sizes.sum())
    offsets = np.repeat(starts - np.concatenate([[0], np.cumsum(sizes)[:-1]]), sizes)
    return flat[offsets + np.arange(total)]


def take(values: np.ndarray, idx: Resamples) -> Resamples:
    """``values`` (m,) at each resample of ``idx``: ``values[idx]`` for a (B, m) array."""
    if isinstance(idx, np.ndarray):
        return np.asarray(values)[idx]
    return [np.asarray(values)[r] for r in idx]


def bootstrap_values(stats: Sequence[SentenceStats], idx: Resamples,
                     seeds: np.ndarray | None = None) -> np.ndarray:
    """The metric on each resample ``idx`` ((B, n) or B 1-D arrays), averaged over ``stats``
    (one per training seed, all of the same file). With ``seeds`` (B, S) (:func:`seed_draws`),
    resample ``b`` averages the seeds drawn for it instead of all of them, so the values vary
    with the seeds as with the sentences. Shape: (B,)."""
    per_seed = np.array([s.values(idx) for s in stats])  # (S, B)
    if seeds is None:
        return np.mean(per_seed, axis=0)
    return per_seed[seeds, np.arange(per_seed.shape[1])[:, None]].mean(axis=1)


def seed_draws(n_seeds: int, n_boot: int, rng: np.random.Generator) -> np.ndarray | None:
    """Training seeds drawn with replacement for each of ``n_boot`` resamples, ``n_seeds``
    per resample (B, S) (the multi-bootstrap of Sellam et al. 2022, *The MultiBERTs*, §3:
    seeds and sentences resampled together, so an interval holds the seed variance); None
    for a single seed (nothing to draw)."""
    if n_seeds <= 1:
        return None
    return rng.integers(0, n_seeds, size=(n_boot, n_seeds))


def percentile_interval(values: np.ndarray, level: float = 0.95) -> list[float]:
    """``[low, high]`` percentile interval of bootstrap values (B,), NaN resamples ignored."""
    v = np.asarray(values, dtype=np.float64)
    v = v[~np.isnan(v)]
    if not v.size:
        return [float("nan"), float("nan")]
    tail = (1.0 - level) / 2.0 * 100.0
    return [float(np.percentile(v, tail)), float(np.percentile(v, 100.0 - tail))]


def one_sided_p(drops: np.ndarray) -> float:
    """Bootstrap p-value for "the drop is > 0": ``(1 + #{drop* <= 0}) / (1 + B)`` over the
    B resampled drops (B,). A drop that is 0 in every resample (identical files) gives 1."""
    d = np.asarray(drops, dtype=np.float64)
    d = d[~np.isnan(d)]
    return float((1 + np.sum(d <= 0)) / (1 + d.size))


def read_sources(path: str) -> list[str]:
    """Per sentence, the ``# synrob.source`` comment, else its ``sent_id``, else ``s{k+1}``
    (what ``synrob perturb`` writes as the source of an unnamed sentence)."""
    from synrob.perturb.corpus import read_conllu

    out = []
    for k, s in enumerate(read_conllu(path)):
        out.append(s.metadata.get("synrob.source") or s.sent_id or f"s{k + 1}")
    return out


def align_pairs(clean: str, perturbed: str, n_clean: int, n_perturbed: int
                ) -> tuple[np.ndarray, np.ndarray, str] | None:
    """Aligned sentence pairs ``(clean idx (m,), perturbed idx (m,), how)``, or None.

    The perturbed file's sentences are matched by their ``# synrob.source`` to the clean file's
    source keys (:func:`read_sources`; several variants of a sentence make several pairs). With
    no ``synrob.source`` comment in the perturbed file, sentences are paired by position when
    both files have as many sentences; otherwise there is no alignment (None).
    """
    from synrob.perturb.corpus import read_conllu

    has_source = any("synrob.source" in s.metadata for s in read_conllu(perturbed))
    if has_source:
        index = {key: k for k, key in enumerate(read_sources(clean))}
        pairs = [(index[key], j) for j, key in enumerate(read_sources(perturbed)) if key in index]
        if not pairs:
            return None
        c, p = zip(*pairs, strict=True)
        return np.asarray(c, dtype=np.int64), np.asarray(p, dtype=np.int64), "source"
    if n_clean == n_perturbed:
        return np.arange(n_clean), np.arange(n_clean), "position"
    return None
