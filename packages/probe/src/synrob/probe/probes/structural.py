"""Structural probes of Hewitt & Manning (2019) and the perceptron probe of Hall Maudslay et al.

Both learn a linear map ``B`` (dim -> rank). Squared distances use the Gram trick on the projected
batch ``t = h B`` (b, L, k): ``d(i, j) = |t_i|^2 + |t_j|^2 - 2 t_i.t_j``; depths are ``|t_i|^2``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from synrob.perturb.params import Param

from .base import TRAIN_PARAMS, Probe

if TYPE_CHECKING:
    import torch

    from ..training import Batch

__all__ = ["StructuralProbe", "PerceptronProbe", "pairwise_sq_distances"]


def pairwise_sq_distances(t: torch.Tensor) -> torch.Tensor:
    """Squared Euclidean distances within each sentence: (b, L, k) -> (b, L, L), >= 0."""
    sq = (t * t).sum(-1)
    d = sq[:, :, None] + sq[:, None, :] - 2.0 * (t @ t.transpose(1, 2))
    return d.clamp_min(0.0)


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

    def build(self, dim: int, n_classes: int, kind: str) -> torch.nn.Module:
        rank = self.options["rank"] or dim
        return _projection_module(dim, rank, kind)

    def loss(self, module: torch.nn.Module, x: torch.Tensor, batch: Batch) -> torch.Tensor:
        assert batch.mask is not None and batch.y is not None
        t = module(x)
        n = batch.lengths.to(t.dtype)
        if module.kind == "distance":  # distances, normalised by the squared length
            mask = (batch.mask[:, :, None] & batch.mask[:, None, :]).to(t.dtype)
            err = (pairwise_sq_distances(t) - batch.y).abs() * mask
            return (err.sum((1, 2)) / (n * n)).mean()
        err = ((t * t).sum(-1) - batch.y).abs() * batch.mask.to(t.dtype)
        return (err.sum(1) / n).mean()

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

    def loss(self, module: torch.nn.Module, x: torch.Tensor, batch: Batch) -> torch.Tensor:
        import torch

        from ..metrics import mst_pairs

        assert batch.y is not None
        d = pairwise_sq_distances(module(x))
        dn = d.detach().cpu().numpy()
        margin = self.options["margin"]
        losses = []
        for r, n in enumerate(batch.lengths.tolist()):
            if n < 2:
                continue
            gold = batch.y[r, :n, :n] == 1  # gold tree edges: distance exactly 1
            gold_np = gold.cpu().numpy()
            aug = dn[r, :n, :n] - margin * (~gold_np)
            tree_rows, tree_cols = mst_pairs(aug - aug.min() + 1.0)
            rows = torch.as_tensor(tree_rows, dtype=torch.long, device=d.device)
            cols = torch.as_tensor(tree_cols, dtype=torch.long, device=d.device)
            mst_score = (d[r, rows, cols] - margin * (~gold[rows, cols]).to(d.dtype)).sum()
            gold_score = torch.triu(d[r, :n, :n] * gold.to(d.dtype), diagonal=1).sum()
            losses.append(torch.relu(gold_score - mst_score) / n)
        if not losses:
            return d.sum() * 0.0
        return torch.stack(losses).mean()


PROBES = (StructuralProbe, PerceptronProbe)
