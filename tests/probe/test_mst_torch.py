"""synrob.probe.metrics.mst_torch: the perceptron probe's trees computed by torch (for accelerators)
are the numpy functions' trees, edge for edge and in their order, and its weights are theirs
bit for bit. Checked here on the CPU; tests/test_cuda.py checks the CUDA path."""

from __future__ import annotations

import numpy as np
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from synrob.probe.metrics import trees as metrics
from synrob.probe.metrics.mst_torch import mst_pairs_batch_torch, tree_weights_torch
from synrob.probe.probes.structural import _tree_weights


@settings(max_examples=200, deadline=None)
@given(lens=st.lists(st.integers(0, 70), min_size=1, max_size=7), seed=st.integers(0, 10_000),
       ties=st.sampled_from(["none", "few", "many"]))
def test_torch_trees_are_mst_pairs_batch(lens, seed, ties):
    rng = np.random.default_rng(seed)
    width = max(lens)
    shape = (len(lens), width, width)
    w = {"none": lambda: rng.random(shape) + 0.5,
         "few": lambda: rng.integers(1, 50, size=shape).astype(float),
         "many": lambda: rng.integers(1, 3, size=shape).astype(float)}[ties]()
    got = mst_pairs_batch_torch(torch.from_numpy(w), torch.tensor(lens, dtype=torch.long))
    want = metrics.mst_pairs_batch(w, lens)  # minimax up to 40 words, Prim past them
    assert got is not None
    assert [g.tolist() for g in got] == [v.tolist() for v in want]
    assert all(g.dtype == torch.long for g in got)


def test_a_non_finite_weight_leaves_the_trees_to_numpy():
    w = np.ones((2, 4, 4))
    w[1, 0, 2] = np.nan
    assert mst_pairs_batch_torch(torch.from_numpy(w), torch.tensor([4, 4])) is None
    w[1, 0, 2] = 1.0
    w[1, 3, :] = np.inf  # outside sentence 1's block (3 words): ignored
    assert mst_pairs_batch_torch(torch.from_numpy(w), torch.tensor([4, 3])) is not None


@settings(max_examples=100, deadline=None)
@given(lens=st.lists(st.integers(0, 30), min_size=1, max_size=6), seed=st.integers(0, 10_000),
       margin=st.sampled_from([0.0, 0.5, 1.0, 2.5]), nan=st.booleans())
def test_torch_weights_are_the_numpy_weights_bit_for_bit(lens, seed, margin, nan):
    rng = np.random.default_rng(seed)
    width = max(lens)
    dn = rng.random((len(lens), width, width), dtype=np.float32) * 5
    gold = rng.random((len(lens), width, width)) < 0.2
    if nan and lens[0] >= 2:
        dn[0, 0, 1] = np.nan
    got = tree_weights_torch(torch.from_numpy(dn), torch.from_numpy(gold),
                             torch.tensor(lens, dtype=torch.long), margin)
    assert got.dtype == torch.float64
    np.testing.assert_array_equal(got.numpy(), _tree_weights(dn, gold, lens, margin))
