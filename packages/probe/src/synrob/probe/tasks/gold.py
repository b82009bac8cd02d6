"""The gold annotations of a CoNLL-U file, as probing tasks read them.

A :class:`GoldCorpus` holds, for every sentence of a file, the syntactic words' forms, tags,
heads, relations and features (read once with :func:`synrob.perturb.corpus.read_conllu`, by
:func:`read_gold`); :func:`synrob.probe.tasks.gold_cache.load_gold` reads it through the caches.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from synrob.perturb.corpus import read_conllu

__all__ = ["GoldCorpus", "read_gold", "tree_distances", "PTB_PUNCT_XPOS", "is_punct",
           "punct_mask"]

#: The Penn Treebank tags Hewitt & Manning's scorer leaves out as punctuation (the list in
#: ``prims_matrix_to_edges`` and ``get_nopunct_argmin`` of ``structural-probes/reporter.py``).
PTB_PUNCT_XPOS = frozenset({"''", ",", ".", ":", "``", "-LRB-", "-RRB-"})


def is_punct(upos: str, xpos: str) -> bool:
    """Whether a word is punctuation for scoring: UPOS ``PUNCT``, or an XPOS in
    :data:`PTB_PUNCT_XPOS` (Hewitt & Manning's PTB punctuation tags). The XPOS test matters
    where XPOS holds PTB tags (EWT); no word of the Turkish BOUN or Czech PUD test excerpts
    has one of those XPOS strings, so there UPOS alone decides (docs/metrics.md)."""
    return upos == "PUNCT" or xpos in PTB_PUNCT_XPOS


def punct_mask(upos: list[str], xpos: list[str]) -> np.ndarray:
    """:func:`is_punct` of every word of a sentence. Shape: (n,) bool."""
    return np.fromiter((is_punct(u, x) for u, x in zip(upos, xpos, strict=True)), dtype=bool,
                       count=len(upos))


@dataclass
class GoldCorpus:
    """Gold syntax of one CoNLL-U file, one entry per sentence (syntactic words only).

    ``deprel`` and ``feats`` hold the DEPREL and raw FEATS columns (``_`` without features);
    they are empty lists in a corpus built without them (then no task may read them)."""

    path: str
    sent_ids: list[str] = field(default_factory=list)
    forms: list[list[str]] = field(default_factory=list)
    upos: list[list[str]] = field(default_factory=list)
    xpos: list[list[str]] = field(default_factory=list)
    heads: list[np.ndarray] = field(default_factory=list)  # (n,) int64, 1-based, 0 = root
    deprel: list[list[str]] = field(default_factory=list)
    feats: list[list[str]] = field(default_factory=list)
    _distances: dict[int, np.ndarray] = field(default_factory=dict, repr=False, compare=False)
    _edges: dict[tuple[int, bool], frozenset[tuple[int, int]]] = field(
        default_factory=dict, repr=False, compare=False)

    def __len__(self) -> int:
        return len(self.heads)

    @property
    def lengths(self) -> np.ndarray:
        """Words per sentence. Shape: (n_sentences,)."""
        return np.fromiter((h.size for h in self.heads), dtype=np.int64, count=len(self.heads))

    def punct(self, i: int) -> np.ndarray:
        """Punctuation mask of sentence ``i`` (:func:`is_punct`: UPOS ``PUNCT`` or a PTB
        punctuation XPOS), the one every score that leaves punctuation out uses. Shape: (n,)
        bool."""
        return punct_mask(self.upos[i], self.xpos[i])

    def distances(self, i: int) -> np.ndarray:
        """Gold undirected tree distances of sentence ``i``. Shape: (n, n) float32, read-only.

        Computed once per sentence and kept (every test set is scored by several runs)."""
        cached = self._distances.get(i)
        if cached is None:
            cached = tree_distances(self.heads[i])
            cached.flags.writeable = False
            self._distances[i] = cached
        return cached

    def tree_edges(self, i: int, punct: bool = True) -> frozenset[tuple[int, int]]:
        """Gold undirected edges ``(a, b)``, ``a < b``, of sentence ``i``; with ``punct=False``
        over its non-punctuation words (:func:`synrob.probe.metrics.trees.gold_edges`: the MST of the
        gold distances restricted to them). Computed once per sentence and kept."""
        cached = self._edges.get((i, punct))
        if cached is None:
            from ..metrics.trees import gold_edges

            heads = self.heads[i].tolist()
            keep = None if punct else ~self.punct(i)
            cached = frozenset(gold_edges(heads, None if punct else self.distances(i), keep))
            self._edges[(i, punct)] = cached
        return cached

    def depths(self, i: int) -> np.ndarray:
        """Gold depths of sentence ``i`` (root 0). Shape: (n,) float32."""
        from synrob.perturb.io.tree import depths

        return np.asarray(depths(self.heads[i].tolist()), dtype=np.float32)

    def root(self, i: int) -> int:
        return int(np.flatnonzero(self.heads[i] == 0)[0])

    def max_depth(self, i: int) -> int:
        return int(self.depths(i).max())

    def head_lists(self) -> list[list[int]]:
        return [h.tolist() for h in self.heads]

    def subset(self, n: int) -> GoldCorpus:
        """The first ``n`` sentences."""
        return self.select(range(min(n, len(self))))

    def select(self, idx: Sequence[int] | np.ndarray) -> GoldCorpus:
        """Sentences ``idx`` (m,), in that order, with every column (fresh caches)."""
        pick = [int(i) for i in idx]

        def cut(col: list[Any]) -> list[Any]:
            return [col[i] for i in pick] if col else []

        return GoldCorpus(self.path, cut(self.sent_ids), cut(self.forms), cut(self.upos),
                          cut(self.xpos), cut(self.heads), cut(self.deprel), cut(self.feats))

    def with_columns(self, **columns: Any) -> GoldCorpus:
        """A copy with some columns replaced (``upos=...``, ``heads=...``, ...); the copy's
        distance and edge caches start empty, since new heads change them."""
        cols = {k: getattr(self, k) for k in ("sent_ids", "forms", "upos", "xpos", "heads",
                                              "deprel", "feats")}
        unknown = set(columns) - set(cols)
        if unknown:
            raise TypeError(f"unknown GoldCorpus columns: {sorted(unknown)}")
        return GoldCorpus(self.path, **{**cols, **columns})


def tree_distances(heads: np.ndarray) -> np.ndarray:
    """Undirected path lengths between the words of a tree given by its 1-based HEAD vector
    (n,): :func:`synrob.perturb.io.tree.distances` (its values, -1 between words that share no
    root), as float32 (n, n).

    With one root and no cycle, from the ancestor matrix ``A`` (``A[i, k] = 1`` when ``k`` is
    ``i`` or above it): ``d(i, j) = a_i + a_j - 2 (A A^T)_ij`` with ``a = A.sum(1)``, the common
    ancestors counting the lowest one's depth; exact in float32 (small integers). Any other
    graph goes to the breadth-first search of :mod:`synrob.perturb.io.tree`."""
    n = int(heads.size)
    parent = np.asarray(heads, dtype=np.int64) - 1  # -1 above the root
    anc = np.zeros((n, n), dtype=np.float32)
    rows, node = np.arange(n), np.arange(n)
    for _ in range(n):  # walk every word up one level per pass; depth < n in a tree
        anc[rows, node] = 1.0
        up = parent[node]
        rows, node = rows[up >= 0], up[up >= 0]
        if not rows.size:
            break
    if rows.size or np.count_nonzero(parent < 0) != 1:  # a cycle, or no single root
        from synrob.perturb.io.tree import distances

        return np.asarray(distances(heads.tolist()), dtype=np.float32)
    a = anc.sum(1)
    return a[:, None] + a[None, :] - 2.0 * (anc @ anc.T)


def read_gold(shown: str, limit: int | None) -> GoldCorpus:
    gold = GoldCorpus(shown)
    for k, s in enumerate(read_conllu(shown)):
        if limit is not None and k >= limit:
            break
        words = s.words()
        gold.sent_ids.append(s.sent_id or f"{k + 1}")
        gold.forms.append([w.form for w in words])
        gold.upos.append([w.upos for w in words])
        gold.xpos.append([w.xpos for w in words])
        gold.heads.append(np.fromiter((w.head for w in words), dtype=np.int64, count=len(words)))
        gold.deprel.append([w.deprel for w in words])
        gold.feats.append([w.feats for w in words])
    return gold
