"""The perceptron probe's batched structured hinge loss against the per-sentence loop it
replaced (kept here as the reference): same loss and same gradient, on random trees,
including sentences of one word, padding, margins and projections that already parse."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from synrob.probe.metrics.trees import mst_pairs
from synrob.probe.probes import PerceptronProbe
from synrob.probe.probes.inputs import Batch
from synrob.probe.probes.structural import pairwise_sq_distances
from synrob.probe.tasks.baselines import tree_distances


def _loop_loss(probe: PerceptronProbe, module, x: torch.Tensor, batch: Batch) -> torch.Tensor:
    """The per-sentence loss of synrob before the batched version (verbatim)."""
    d = pairwise_sq_distances(module(x))
    dn = d.detach().cpu().numpy()
    margin = probe.options["margin"]
    losses = []
    for r, n in enumerate(batch.lengths.tolist()):
        if n < 2:
            continue
        gold = batch.y[r, :n, :n] == 1
        gold_np = gold.cpu().numpy()
        aug = dn[r, :n, :n] - margin * (~gold_np)
        tree_rows, tree_cols = mst_pairs(aug - aug.min() + 1.0)
        rows = torch.as_tensor(tree_rows, dtype=torch.long)
        cols = torch.as_tensor(tree_cols, dtype=torch.long)
        mst_score = (d[r, rows, cols] - margin * (~gold[rows, cols]).to(d.dtype)).sum()
        gold_score = torch.triu(d[r, :n, :n] * gold.to(d.dtype), diagonal=1).sum()
        losses.append(torch.relu(gold_score - mst_score) / n)
    if not losses:
        return d.sum() * 0.0
    return torch.stack(losses).mean()


def _random_batch(rng: np.random.Generator, lengths: list[int], dim: int) -> tuple[torch.Tensor,
                                                                                   Batch]:
    """x (b, L, dim) random vectors, y (b, L, L) gold tree distances of random trees, zero
    padded."""
    b, width = len(lengths), max(lengths)
    x = torch.from_numpy(rng.normal(size=(b, width, dim)).astype(np.float32))
    y = np.zeros((b, width, width), dtype=np.float32)
    mask = np.zeros((b, width), dtype=bool)
    for r, n in enumerate(lengths):
        edges = {(int(rng.integers(0, i)), i) for i in range(1, n)}  # a random tree
        y[r, :n, :n] = tree_distances(n, edges)
        mask[r, :n] = True
        x[r, n:] = 0.0
    batch = Batch(ids=np.arange(b), index=torch.zeros((b, width), dtype=torch.long),
                  mask=torch.from_numpy(mask), lengths=torch.tensor(lengths),
                  y=torch.from_numpy(y))
    return x, batch


def _loss_and_grad(fn, probe: PerceptronProbe, module, x: torch.Tensor, batch: Batch):
    module.zero_grad()
    loss = fn(module, x, batch)
    loss.backward()
    return loss.item(), module.proj.grad.clone()


@settings(max_examples=40, deadline=None)
@given(lengths=st.lists(st.integers(1, 30), min_size=1, max_size=12),
       margin=st.sampled_from([0.0, 0.5, 1.0, 2.0]), seed=st.integers(0, 10_000))
def test_batched_loss_equals_the_per_sentence_loop(lengths, margin, seed):
    rng = np.random.default_rng(seed)
    probe = PerceptronProbe(rank=8, margin=margin)
    torch.manual_seed(seed)
    module = probe.build(16, 0, "distance")
    x, batch = _random_batch(rng, lengths, 16)
    new, g_new = _loss_and_grad(probe.loss, probe, module, x, batch)
    old, g_old = _loss_and_grad(lambda m, a, b: _loop_loss(probe, m, a, b), probe, module, x,
                                batch)
    assert new == pytest.approx(old, rel=1e-5, abs=1e-6)
    torch.testing.assert_close(g_new, g_old, rtol=1e-5, atol=1e-6)
    if all(n < 2 for n in lengths):
        assert new == 0.0


def test_a_probe_that_parses_every_sentence_has_zero_loss_and_gradient():
    """Word i placed at the sum of one orthogonal unit vector per edge on its path from the
    root: squared distances are exactly the tree distances, so (margin 0.5) the
    cost-augmented MST is the gold tree and loss and gradient are exactly 0, as in the loop."""
    rng = np.random.default_rng(0)
    lengths = [5, 9, 2, 1, 12]
    dim = max(lengths) - 1
    x = torch.zeros((len(lengths), max(lengths), dim))
    y = torch.zeros((len(lengths), max(lengths), max(lengths)))
    for r, n in enumerate(lengths):
        parent = [0] + [int(rng.integers(0, i)) for i in range(1, n)]
        for i in range(1, n):  # edge (parent[i], i) gets unit vector i - 1
            x[r, i] = x[r, parent[i]]
            x[r, i, i - 1] = 1.0
        y[r, :n, :n] = torch.from_numpy(tree_distances(n, {(parent[i], i) for i in range(1, n)}))
    mask = torch.arange(max(lengths))[None, :] < torch.tensor(lengths)[:, None]
    batch = Batch(ids=np.arange(len(lengths)), index=torch.zeros(mask.shape, dtype=torch.long),
                  mask=mask, lengths=torch.tensor(lengths), y=y)
    probe = PerceptronProbe(rank=dim, margin=0.5)
    module = probe.build(dim, 0, "distance")
    with torch.no_grad():
        module.proj.copy_(torch.eye(dim))
    assert torch.equal(pairwise_sq_distances(module(x)) * mask[:, :, None] * mask[:, None], y)
    for fn in (probe.loss, lambda m, a, b: _loop_loss(probe, m, a, b)):
        loss, grad = _loss_and_grad(fn, probe, module, x, batch)
        assert loss == 0.0
        assert torch.count_nonzero(grad) == 0


def test_batched_loss_equals_the_loop_on_long_sentences():
    """Batches past the minimax length limit take the per-sentence trees: same loss."""
    from synrob.probe.metrics.trees import MINIMAX_MAX_LEN

    rng = np.random.default_rng(7)
    probe = PerceptronProbe(rank=8, margin=1.0)
    torch.manual_seed(7)
    module = probe.build(16, 0, "distance")
    x, batch = _random_batch(rng, [MINIMAX_MAX_LEN + 9, 3, MINIMAX_MAX_LEN + 2], 16)
    new, g_new = _loss_and_grad(probe.loss, probe, module, x, batch)
    old, g_old = _loss_and_grad(lambda m, a, b: _loop_loss(probe, m, a, b), probe, module, x,
                                batch)
    assert new == pytest.approx(old, rel=1e-5, abs=1e-6) and new > 0
    torch.testing.assert_close(g_new, g_old, rtol=1e-5, atol=1e-6)


@settings(max_examples=100, deadline=None)
@given(lens=st.lists(st.integers(0, 30), min_size=1, max_size=6), seed=st.integers(0, 10_000),
       margin=st.sampled_from([0.0, 0.5, 1.0, 2.5]), nan=st.booleans())
def test_tree_weights_are_the_per_sentence_loops_bit_for_bit(lens, seed, margin, nan):
    """The vectorised cost-augmented weights equal the loop they replaced (each block less the
    margin off the gold pairs, shifted by its own minimum to start at 1), bit for bit, with
    empty and one-word sentences and a NaN distance (which makes its whole block NaN)."""
    from synrob.probe.probes.structural import _tree_weights

    rng = np.random.default_rng(seed)
    width = max(max(lens), 1)
    dn = rng.random((len(lens), width, width), dtype=np.float32) * 5
    gold = rng.random((len(lens), width, width)) < 0.2
    if nan and lens[0] >= 2:
        dn[0, 0, 1] = np.nan
    want = np.zeros(dn.shape, dtype=np.float64)
    for r, n in enumerate(lens):
        if n >= 2:  # the loop's sentences (the others' blocks are never read)
            aug = dn[r, :n, :n] - margin * (~gold[r, :n, :n])
            want[r, :n, :n] = aug - aug.min() + 1.0
    got = _tree_weights(dn, gold, lens, margin)
    keep = np.array([n >= 2 for n in lens])
    np.testing.assert_array_equal(got[keep], want[keep])
    assert got.dtype == np.float64 and got.shape == dn.shape


@settings(max_examples=60, deadline=None)
@given(lengths=st.lists(st.integers(0, 25), min_size=1, max_size=8), seed=st.integers(0, 10_000))
def test_tree_scores_off_the_cpu_are_the_ordered_sums_up_to_rounding(lengths, seed):
    """Off the CPU the tree scores are summed per sentence from a (b, L, L) matrix instead of
    CUDA's unordered ``index_add_``: the same sums up to float rounding, the same gradient for
    the edge weights, and the same bits when computed twice."""
    from synrob.probe.metrics.trees import mst_pairs_batch
    from synrob.probe.probes.structural import _tree_scores

    rng = np.random.default_rng(seed)
    width = max(max(lengths), 1)
    w = rng.random((len(lengths), width, width)) + 1.0
    w = w + w.transpose(0, 2, 1)
    tree = tuple(torch.as_tensor(v, dtype=torch.long) for v in mst_pairs_batch(w, lengths))
    d = torch.from_numpy(w.astype(np.float32))
    scores, grads = [], []
    for in_order in (True, False, False):
        edge = d[tree].clone().requires_grad_(True)
        s = _tree_scores(edge, tree, d.shape, in_order=in_order)
        (s * torch.arange(1.0, len(lengths) + 1)).sum().backward()
        scores.append(s.detach())
        grads.append(edge.grad)
    assert scores[0].shape == (len(lengths),)
    torch.testing.assert_close(scores[1], scores[0], rtol=1e-6, atol=1e-6)
    assert torch.equal(scores[1], scores[2])
    assert torch.equal(grads[1], grads[0])  # each edge's gradient is its sentence's weight
    assert scores[0][torch.tensor(lengths) < 2].eq(0).all()
