"""Baselines reported beside every probe result.

* ``path``: each word linked to its neighbour (the tree 1-2-3-...-n). Predicted distances are
  ``|i - j|``; for depths the root is put at the most frequent root position of that length in
  training and depths are path distances from it.
* ``majority``: per sentence length n, the maximum spanning tree of the counts of the edges
  ``(i, j)`` seen in training trees of length n; ``path`` beyond ``max_length`` (40) or for a
  length never seen. For classification tasks, the majority label: per word form for ``pos``
  (the overall majority for unseen forms), per length for ``root`` and ``tree-depth``.

Predictions have the shapes of :mod:`synrob.probe.tasks.base`, so the task's own metrics score them.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import TYPE_CHECKING

import numpy as np
from scipy.sparse.csgraph import minimum_spanning_tree, shortest_path

if TYPE_CHECKING:
    from .base import GoldCorpus, Task

__all__ = ["path_tree", "tree_distances", "MajorityTrees", "baseline_predictions", "BASELINES"]

BASELINES = ("path", "majority")


def path_tree(n: int) -> set[tuple[int, int]]:
    """Edges of the path 0-1-...-(n-1)."""
    return {(i, i + 1) for i in range(n - 1)}


def tree_distances(n: int, edges: set[tuple[int, int]]) -> np.ndarray:
    """Path lengths in an undirected tree over ``n`` nodes. Shape: (n, n) float32."""
    if n == 1:
        return np.zeros((1, 1), dtype=np.float32)
    adj = np.zeros((n, n))
    for i, j in edges:
        adj[i, j] = adj[j, i] = 1
    return shortest_path(adj, unweighted=True, directed=False).astype(np.float32)


class MajorityTrees:
    """Per length, the maximum spanning tree of training edge counts (path beyond ``max_length``)."""

    def __init__(self, max_length: int = 40) -> None:
        self.max_length = max_length
        self.counts: dict[int, np.ndarray] = {}
        self.root_counts: dict[int, Counter[int]] = defaultdict(Counter)
        self._trees: dict[int, set[tuple[int, int]]] = {}

    def fit(self, train: GoldCorpus) -> MajorityTrees:
        for heads in train.heads:
            n = heads.size
            self.root_counts[n][int(np.flatnonzero(heads == 0)[0])] += 1
            if n > self.max_length:
                continue
            c = self.counts.setdefault(n, np.zeros((n, n)))
            for i, h in enumerate(heads.tolist()):
                if h > 0:
                    a, b = min(i, h - 1), max(i, h - 1)
                    c[a, b] += 1
        return self

    def tree(self, n: int) -> set[tuple[int, int]]:
        """Undirected edges of the majority tree for length ``n``."""
        if n in self._trees:
            return self._trees[n]
        if n > self.max_length or n not in self.counts or n < 2:
            edges = path_tree(n)
        else:
            # maximum spanning tree of counts = minimum spanning tree of (max + 1 - count);
            # path edges get a tiny bonus so ties and unseen pairs prefer neighbours
            c = self.counts[n]
            bonus = np.zeros_like(c)
            idx = np.arange(n - 1)
            bonus[idx, idx + 1] = 1e-3
            weight = np.triu(c.max() + 1.0 - c - bonus, k=1)
            t = minimum_spanning_tree(weight).tocoo()
            edges = {(int(min(a, b)), int(max(a, b))) for a, b in zip(t.row, t.col, strict=True)}
        self._trees[n] = edges
        return edges

    def root_position(self, n: int) -> int:
        """Most frequent root position for length ``n`` (else the nearest seen length's, scaled)."""
        if self.root_counts.get(n):
            return self.root_counts[n].most_common(1)[0][0]
        if not self.root_counts:
            return 0
        near = min(self.root_counts, key=lambda m: (abs(m - n), m))
        pos = self.root_counts[near].most_common(1)[0][0]
        return min(n - 1, round(pos * n / near))


def _depths_from(dist: np.ndarray, root: int) -> np.ndarray:
    return dist[root].astype(np.float32)


def baseline_predictions(name: str, task: Task, train: GoldCorpus, test: GoldCorpus
                         ) -> list[np.ndarray] | None:
    """Predictions of baseline ``name`` on ``test`` for ``task`` (None when not applicable)."""
    if name not in BASELINES:
        raise ValueError(f"unknown baseline {name!r}")
    lengths = test.lengths.tolist()
    majority = MajorityTrees().fit(train)
    if task.kind in ("distance", "depth"):
        by_length: dict[int, np.ndarray] = {}  # one tree per length: computed once, copied
        for n in set(lengths):
            dist = tree_distances(n, path_tree(n) if name == "path" else majority.tree(n))
            by_length[n] = (dist if task.kind == "distance"
                            else _depths_from(dist, majority.root_position(n)))
        return [by_length[n].copy() for n in lengths]
    if name == "path":
        return None
    train_targets = task.targets(train)
    if task.kind == "tag":  # words outside the task (EXCLUDED, -2) teach nothing
        overall = Counter(int(t) for sent in train_targets for t in sent if t >= 0
                          ).most_common(1)[0][0]
        by_form: dict[str, Counter[int]] = defaultdict(Counter)
        for forms, sent in zip(train.forms, train_targets, strict=True):
            for f, t in zip(forms, sent.tolist(), strict=True):
                if t >= 0:
                    by_form[f.lower()][t] += 1
        return [np.array([by_form[f.lower()].most_common(1)[0][0] if f.lower() in by_form
                          else overall for f in forms], dtype=np.int64) for forms in test.forms]
    if task.kind == "select":
        return [np.array(majority.root_position(n), dtype=np.int64) for n in lengths]
    by_len: dict[int, Counter[int]] = defaultdict(Counter)
    for n, t in zip(train.lengths.tolist(), train_targets, strict=True):
        by_len[n][int(t)] += 1
    overall_c = Counter(int(t) for t in train_targets).most_common(1)[0][0]
    return [np.array(by_len[n].most_common(1)[0][0] if n in by_len else overall_c,
                     dtype=np.int64) for n in lengths]
