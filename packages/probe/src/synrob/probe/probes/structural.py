"""Structural probes of Hewitt & Manning (2019) and the perceptron probe of Hall Maudslay et al.

Both learn a linear map ``B`` (dim -> rank). Squared distances use the Gram trick on the projected
batch ``t = h B`` (b, L, k): ``d(i, j) = |t_i|^2 + |t_j|^2 - 2 t_i.t_j``; depths are ``|t_i|^2``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from synrob.perturb.params import Param

from ..runtime.precision import fp32_region
from .base import TRAIN_PARAMS, Probe

if TYPE_CHECKING:
    from collections.abc import Sequence

    import torch

    from .inputs import Batch

__all__ = ["StructuralProbe", "PerceptronProbe", "pairwise_sq_distances"]


def pairwise_sq_distances(t: torch.Tensor) -> torch.Tensor:
    """Squared Euclidean distances within each sentence: (b, L, k) -> (b, L, L), >= 0."""
    sq = (t * t).sum(-1)
    d = sq[:, :, None] + sq[:, None, :] - 2.0 * (t @ t.transpose(1, 2))
    return d.clamp_min(0.0)


def _l1_loss(kind: str, t: torch.Tensor, batch: Batch) -> torch.Tensor:
    """The structural probe's L1 loss from the projected words ``t`` (..., b, L, k), fp32: each
    sentence's absolute error of the squared distances (``kind`` distance, over the squared
    length) or of the squared norms (depth, over the length) against the gold, the mean over
    the batch's sentences. Shape: (...) (one loss per layer for (n, b, L, k))."""
    assert batch.mask is not None and batch.y is not None
    n = batch.lengths.to(t.dtype)
    if kind == "distance":
        width, rank = t.shape[-2], t.shape[-1]
        d = pairwise_sq_distances(t.reshape(-1, width, rank)).reshape(*t.shape[:-1], width)
        mask = (batch.mask[:, :, None] & batch.mask[:, None, :]).to(t.dtype)
        err = (d - batch.y).abs() * mask
        return (err.sum((-2, -1)) / (n * n)).mean(-1)
    err = ((t * t).sum(-1) - batch.y).abs() * batch.mask.to(t.dtype)
    return (err.sum(-1) / n).mean(-1)


def _projection_module(dim: int, rank: int, kind: str) -> torch.nn.Module:
    import torch

    class ProjectionModule(torch.nn.Module):
        """``proj`` (dim, rank), initialised uniformly in [-0.05, 0.05] as in H&M's code;
            ``kind`` says whether it predicts distances or depths."""

        def __init__(self) -> None:
            super().__init__()
            self.kind = kind
            self.proj = torch.nn.Parameter(torch.empty(dim, rank))
            torch.nn.init.uniform_(self.proj, -0.05, 0.05)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return x @ self.proj

    return ProjectionModule()




class StructuralProbe(Probe):
    """Distance probe ||B(h_i - h_j)||^2 and depth probe ||B h_i||^2, L1 loss."""

    name = "structural"
    summary = "Hewitt & Manning structural probe: squared distances / norms after a linear map"
    paper = "Hewitt & Manning 2019, A Structural Probe for Finding Syntax in Word Representations"
    kinds = frozenset({"distance", "depth"})
    params = (*TRAIN_PARAMS,
              Param("rank", int, 0, "rank k of B (0 = full: the representation size)"))
    train_defaults = {"lr": 0.003, "batch_size": 20}  # 20 sentences as in Hewitt & Manning
    fused_kinds = frozenset({"distance", "depth"})
    bf16_table = True  # x @ B first

    def build(self, dim: int, n_classes: int, kind: str) -> torch.nn.Module:
        rank = self.options["rank"] or dim
        return _projection_module(dim, rank, kind)

    def loss(self, module: torch.nn.Module, x: torch.Tensor, batch: Batch) -> torch.Tensor:
        assert batch.mask is not None and batch.y is not None
        t = module(x)  # bf16 under a bf16 training step (synrob.probe.training.precision)
        with fp32_region(t.device):  # distances and norms in fp32 (no Gram cancellation)
            return _l1_loss(module.kind, t.float(), batch)

    def fused_loss(self, modules: Sequence[torch.nn.Module], x: torch.Tensor,
                   batch: Batch) -> torch.Tensor:
        """:meth:`loss` of each module on its layer. On the CPU: ``x`` (n, b, L, dim) times the
        stacked maps (n, dim, rank) in one ``bmm``, the distances of all n * b sentences in
        another; each layer's loss and gradient are bit-identical to :meth:`loss` on it alone
        with these kernels (tests/probe/test_fused.py). On other devices each layer's loss is
        :meth:`loss` on its slice (one step, one synchronisation for all layers): cuBLAS's
        batched products round differently from one layer's (on an H100, weights apart by up to
        0.018 after training and one early stop two epochs sooner, on synthetic data)."""
        import torch

        assert batch.mask is not None and batch.y is not None
        if x.device.type != "cpu":
            return torch.stack([self.loss(m, x[i], batch) for i, m in enumerate(modules)])
        n, b, width, dim = x.shape
        proj = torch.stack([m.proj for m in modules])  # (n, dim, rank)
        t = torch.bmm(x.reshape(n, b * width, dim), proj).reshape(n, b, width, -1)
        with fp32_region(t.device):  # as in loss
            return self._layer_losses(modules[0].kind, t.float(), batch)

    def _layer_losses(self, kind: str, t: torch.Tensor, batch: Batch) -> torch.Tensor:
        """Each layer's loss (n,) from its projected words ``t`` (n, b, L, k), fp32."""
        return _l1_loss(kind, t, batch)

    def predict(self, module: torch.nn.Module, x: torch.Tensor, batch: Batch) -> list[np.ndarray]:
        t = module(x)
        lens = batch.lengths.tolist()
        if module.kind == "depth":
            d = (t * t).sum(-1).float().cpu().numpy()
            return [d[r, :n].copy() for r, n in enumerate(lens)]
        d = pairwise_sq_distances(t).float().cpu().numpy()
        out = []
        for r, n in enumerate(lens):
            m = d[r, :n, :n].copy()
            np.fill_diagonal(m, 0.0)
            out.append(m)
        return out


def _tree_weights(dn: np.ndarray, gold: np.ndarray, lens: list[int], margin: float
                  ) -> np.ndarray:
    """The cost-augmented weights (b, L, L) float64 whose trees the hinge loss scores: each
    sentence's predicted distances ``dn`` (b, L, L) less ``margin`` on its non-gold pairs
    (``gold`` (b, L, L) bool), shifted by the block's own minimum to start at 1, as
    :func:`~synrob.probe.metrics.trees.mst_pairs` wants; 0 outside the blocks."""
    aug = dn.astype(np.float64) - margin * (~gold)
    real = np.arange(dn.shape[1])[None, :] < np.asarray(lens)[:, None]
    block = real[:, :, None] & real[:, None, :]
    low = np.where(block, aug, np.inf).min((1, 2), initial=np.inf)  # (b,)
    low = np.where(np.isinf(low), 0.0, low)[:, None, None]  # empty: no shift; NaN stays NaN
    return np.where(block, aug - low + 1.0, 0.0)


def _batch_trees(d: torch.Tensor, gold: torch.Tensor, lens: list[int], margin: float
                 ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """The cost-augmented trees of the batch's predicted distances ``d`` (b, L, L) as
    ``(sentence, row, col)`` long tensors on ``d``'s device. On the CPU numpy computes them
    (:func:`_tree_weights`, :func:`~synrob.probe.metrics.trees.mst_pairs_batch`); elsewhere torch
    does, on the device, without a copy to the host (:mod:`synrob.probe.metrics.mst_torch`: the same
    edges in the same order), unless a block holds a non-finite distance."""
    import torch

    if d.device.type != "cpu":
        from ..metrics.mst_torch import mst_pairs_batch_torch, tree_weights_torch

        lengths = torch.as_tensor(lens, dtype=torch.long, device=d.device)
        trees = mst_pairs_batch_torch(tree_weights_torch(d, gold, lengths, margin), lengths)
        if trees is not None:
            return trees
    from ..metrics.trees import mst_pairs_batch

    weights = _tree_weights(d.cpu().numpy(), gold.cpu().numpy(), lens, margin)
    return tuple(torch.as_tensor(v, dtype=torch.long, device=d.device)  # type: ignore[return-value]
                 for v in mst_pairs_batch(weights, lens))


def _tree_scores(edge: torch.Tensor, tree: tuple[torch.Tensor, torch.Tensor, torch.Tensor],
                 shape: torch.Size, *, in_order: bool) -> torch.Tensor:
    """Each sentence's tree score: the sum of its edges' weights ``edge`` (E,), the edges
    ``tree`` = ``(sentence, row, col)`` (each cell at most once) of a ``shape`` (b, L, L) batch.
    Shape: (b,).

    ``in_order`` (the CPU): ``index_add_``, which adds each sentence's edges in the trees'
    order. Elsewhere ``index_add_`` adds with atomics in no fixed order (CUDA), so the same seed
    could train other weights from run to run; there each edge goes to its own cell of a
    (b, L, L) matrix, which is summed per sentence: the same sum every run (a reduction in a
    fixed order), equal to the ordered sum up to float rounding.
    """
    if in_order:
        return edge.new_zeros(shape[0]).index_add_(0, tree[0], edge)
    return edge.new_zeros(shape).index_put(tree, edge).sum((1, 2))


class PerceptronProbe(StructuralProbe):
    """Distance probe trained with a structured hinge loss: the MST of the predicted distances
    should be the gold tree (cost-augmented with a Hamming cost of 1 per non-gold edge)."""

    name = "perceptron"
    summary = "Hall Maudslay et al. perceptron probe: structured hinge loss on the MST"
    paper = "Hall Maudslay et al. 2020, A Tale of a Probe and a Parser"
    kinds = frozenset({"distance"})
    params = (*TRAIN_PARAMS,
              Param("rank", int, 0, "rank k of B (0 = full: the representation size)"),
              Param("margin", float, 1.0, "cost added for each non-gold edge"))
    train_defaults = {"lr": 0.003, "batch_size": 40}
    #: its steps are spent in the spanning trees (numpy, one core): fused on the CPU it ran at
    #: 1.02x of one layer after the other on EWT, 0.89-0.99x on synthetic vectors
    #: (docs/experiments.md)
    cpu_fusion_pays = False

    def loss(self, module: torch.nn.Module, x: torch.Tensor, batch: Batch) -> torch.Tensor:
        """Mean over sentences of ``relu(gold tree score - cost-augmented MST score) / n``,
        with one gather and one sum per sentence for the whole batch (:func:`_tree_scores`;
        x: (b, L, dim)), and the batch's trees from
        :func:`~synrob.probe.metrics.trees.mst_pairs_batch` (each sentence's
        :func:`~synrob.probe.metrics.trees.mst_pairs` tree, its edges in the same row-major order).
        Loss and gradient are a per-sentence loop's up to float summation order
        (tests/probe/test_perceptron_loss.py); trained on EWT (MiniLM L3, default
        training) the weights were byte-identical to the loop's, 2.6x faster, and again
        byte-identical when the trees were batched (1.29x faster)."""
        assert batch.y is not None
        t = module(x)  # bf16 under a bf16 training step: distances in fp32, as in loss
        with fp32_region(t.device):
            return self._hinge(pairwise_sq_distances(t.float()), batch)

    def _layer_losses(self, kind: str, t: torch.Tensor, batch: Batch) -> torch.Tensor:
        """Each layer's loss (n,) from :meth:`StructuralProbe.fused_loss`'s one ``bmm``
        ``t`` (n, b, L, k): the distances, the trees and the hinge of all n * b sentences at
        once (one :func:`mst_pairs_batch` call), each layer's loss and gradient bit-identical
        to :meth:`loss` (tests/probe/test_fused.py)."""
        n, b, width, rank = t.shape
        return self._hinge(pairwise_sq_distances(t.reshape(n * b, width, rank)), batch,
                           layers=n)

    def _hinge(self, d: torch.Tensor, batch: Batch, layers: int | None = None) -> torch.Tensor:
        """:meth:`loss` from the predicted squared distances ``d`` (b, L, L); with ``layers``
        n, ``d`` is (n * b, L, L), the batch's distances in n layers one after the other, and
        the result each layer's loss (n,)."""
        import torch

        assert batch.y is not None
        gold = batch.y == 1  # gold tree edges: distance exactly 1 (padding is 0)
        copies = 1 if layers is None else layers
        if copies > 1:
            gold = gold.repeat(copies, 1, 1)
        margin = self.options["margin"]
        lens = batch.lengths.tolist() * copies
        keep = [r for r, n in enumerate(lens) if n >= 2]
        if not keep:
            zero = d.sum() if layers is None else d.sum((1, 2)).reshape(copies, -1).sum(1)
            return zero * 0.0
        b_i, r_i, c_i = _batch_trees(d.detach(), gold, lens, margin)
        edge = d[b_i, r_i, c_i] - margin * (~gold[b_i, r_i, c_i]).to(d.dtype)
        mst_score = _tree_scores(edge, (b_i, r_i, c_i), d.shape,
                                 in_order=d.device.type == "cpu")  # (b,)
        gold_score = torch.triu(d * gold.to(d.dtype), diagonal=1).sum((1, 2))  # (b,)
        k = torch.as_tensor(keep, dtype=torch.long, device=d.device)
        n_k = torch.as_tensor(lens, device=d.device)[k].to(d.dtype)
        per = torch.relu(gold_score[k] - mst_score[k]) / n_k
        return per.mean() if layers is None else per.reshape(copies, -1).mean(1)


PROBES = (StructuralProbe, PerceptronProbe)
