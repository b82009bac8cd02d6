"""tasks.base.tree_distances: the ancestor-matrix formula equals perturb's breadth-first search."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from synrob.perturb.io.tree import distances
from synrob.probe.tasks.base import load_gold, tree_distances


@st.composite
def _trees(draw: st.DrawFn) -> list[int]:
    """A random single-rooted tree: each word after the first attaches to an earlier one, then
    the positions are shuffled (so heads point left and right)."""
    n = draw(st.integers(1, 40))
    attach = [0] + [draw(st.integers(0, i - 1)) + 1 for i in range(1, n)]  # 1-based, in order
    perm = draw(st.permutations(range(n)))  # word k of the ordered tree sits at perm[k]
    heads = [0] * n
    for k, h in enumerate(attach):
        heads[perm[k]] = 0 if h == 0 else perm[h - 1] + 1
    return heads


@settings(max_examples=300, deadline=None)
@given(_trees())
def test_trees_equal_breadth_first_search(heads: list[int]) -> None:
    got = tree_distances(np.array(heads))
    assert got.dtype == np.float32
    assert np.array_equal(got, np.asarray(distances(heads), dtype=np.float32))


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 12).flatmap(lambda n: st.lists(st.integers(0, n), min_size=n, max_size=n)))
def test_any_head_vector_equals_breadth_first_search(heads: list[int]) -> None:
    """Cycles, several roots and no root (malformed input) give perturb's values too."""
    assert np.array_equal(tree_distances(np.array(heads)),
                          np.asarray(distances(heads), dtype=np.float32))


def test_ewt_dev_equals_breadth_first_search(ewt_dir) -> None:
    gold = load_gold(ewt_dir / "en_ewt-ud-dev.conllu")
    for i in range(len(gold)):
        want = np.asarray(distances(gold.heads[i].tolist()), dtype=np.float32)
        assert np.array_equal(gold.distances(i), want)
