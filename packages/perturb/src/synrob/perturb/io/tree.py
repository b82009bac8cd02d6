"""Tree utilities over a HEAD vector.

A tree is given as ``heads``: a list of length n where ``heads[i]`` is the 1-based index of the
head of word ``i + 1`` and 0 marks the root. All functions return 0-based positions unless they
say otherwise. They are pure Python (perturb stays light); the probe layer converts to arrays.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence


def children(heads: Sequence[int]) -> list[list[int]]:
    """0-based child lists: ``children(heads)[i]`` are the dependents of word ``i``."""
    kids: list[list[int]] = [[] for _ in heads]
    for i, h in enumerate(heads):
        if h > 0:
            kids[h - 1].append(i)
    return kids


def root(heads: Sequence[int]) -> int:
    """0-based position of the (first) word whose head is 0."""
    for i, h in enumerate(heads):
        if h == 0:
            return i
    raise ValueError("tree has no root")


def depths(heads: Sequence[int]) -> list[int]:
    """Depth of every word in edges; the root has depth 0. Shape: (n,)."""
    kids = children(heads)
    out = [-1] * len(heads)
    r = root(heads)
    out[r] = 0
    queue = deque([r])
    while queue:
        node = queue.popleft()
        for c in kids[node]:
            out[c] = out[node] + 1
            queue.append(c)
    return out


def max_depth(heads: Sequence[int]) -> int:
    """Largest root-to-leaf depth in edges (0 for a one-word sentence)."""
    return max(depths(heads)) if heads else 0


def undirected_edges(heads: Sequence[int]) -> set[tuple[int, int]]:
    """The tree's edges as 0-based pairs ``(i, j)`` with ``i < j`` (the root edge is excluded)."""
    return {(min(i, h - 1), max(i, h - 1)) for i, h in enumerate(heads) if h > 0}


def distances(heads: Sequence[int]) -> list[list[int]]:
    """Undirected path length between every pair of words. Shape: (n, n), symmetric, 0 diagonal."""
    n = len(heads)
    adj: list[list[int]] = [[] for _ in range(n)]
    for i, h in enumerate(heads):
        if h > 0:
            adj[i].append(h - 1)
            adj[h - 1].append(i)
    out = []
    for s in range(n):
        row = [-1] * n
        row[s] = 0
        queue = deque([s])
        while queue:
            u = queue.popleft()
            for v in adj[u]:
                if row[v] < 0:
                    row[v] = row[u] + 1
                    queue.append(v)
        out.append(row)
    return out


def find_cycle(heads: Sequence[int]) -> list[int] | None:
    """1-based ids of a cycle in the HEAD graph, or None when every word reaches the root."""
    n = len(heads)
    state = [0] * (n + 1)  # 0 unvisited, 1 on current path, 2 done (reaches root)
    for start in range(1, n + 1):
        path: list[int] = []
        node = start
        while node != 0 and state[node] == 0:
            state[node] = 1
            path.append(node)
            node = heads[node - 1]
        if node != 0 and state[node] == 1:
            return path[path.index(node):]
        for p in path:
            state[p] = 2
    return None
