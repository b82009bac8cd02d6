"""The perceptron probe's batched spanning trees computed on the distances' own device (torch).

On an accelerator the perceptron loss used to copy every step's distances to the host and run
:func:`synrob.probe.metrics.trees.mst_pairs_batch` in numpy, one synchronisation and one CPU pass per
step and layer. :func:`mst_pairs_batch_torch` computes the same trees where the tensors are:
the same cost-augmented weights (:func:`tree_weights_torch`, float64), the same stable ranks,
the same minimax rule, so the same edges in the same order (``tests/probe/test_mst_torch.py``
checks it against the numpy functions on the CPU; ``tests/test_cuda.py`` on a GPU).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import torch

__all__ = ["tree_weights_torch", "mst_pairs_batch_torch"]


def _blocks(lengths: torch.Tensor, width: int) -> torch.Tensor:
    """(b, L, L) bool: True inside each sentence's (n_r, n_r) block."""
    import torch

    real = torch.arange(width, device=lengths.device)[None, :] < lengths[:, None]
    return real[:, :, None] & real[:, None, :]


def tree_weights_torch(d: torch.Tensor, gold: torch.Tensor, lengths: torch.Tensor,
                       margin: float) -> torch.Tensor:
    """:func:`synrob.probe.probes.structural._tree_weights` on ``d``'s device, bit for bit:
    ``d`` (b, L, L) float32 predicted distances, ``gold`` (b, L, L) bool, ``lengths`` (b,).
    Returns (b, L, L) float64: each block less ``margin`` off its gold pairs, shifted by its
    own minimum to start at 1; 0 outside the blocks."""
    import torch

    aug = d.double() - margin * (~gold).double()
    block = _blocks(lengths, d.shape[1])
    inf = torch.full((), float("inf"), dtype=torch.float64, device=d.device)
    low = torch.where(block, aug, inf).amin((1, 2)) if d.shape[1] else aug.new_zeros(d.shape[0])
    low = torch.where(torch.isinf(low), torch.zeros_like(low), low)[:, None, None]
    return torch.where(block, aug - low + 1.0, torch.zeros_like(aug))


def mst_pairs_batch_torch(weights: torch.Tensor, lengths: torch.Tensor
                          ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor] | None:
    """:func:`synrob.probe.metrics.trees.mst_pairs_batch` on ``weights``' device: ``weights``
    (b, L, L) float64, sentence ``r``'s block its top-left (n_r, n_r), ``lengths`` (b,) long.
    Returns ``(sentence, row, col)`` long tensors (the same edges in the same order), or None
    when a block holds a non-finite weight (the caller then runs the numpy function, whose
    per-sentence Kruskal skips such pairs).

    Each sentence's upper-triangle pairs are ranked by a stable sort (ties in row-major order,
    padding pairs last); a pair is in the tree iff its rank equals the minimax rank between its
    words, from ``L`` steps of ``M = min(M, max(M[:, k], M[k, :]))`` over the whole batch.
    """
    import torch

    b, width = weights.shape[0], weights.shape[1]
    dev = weights.device
    empty = torch.zeros(0, dtype=torch.long, device=dev)
    block = _blocks(lengths, width)
    if not bool(torch.isfinite(weights[block]).all()):
        return None
    if width < 2:
        return empty, empty, empty
    iu, ju = torch.triu_indices(width, width, 1, device=dev)
    inf = torch.full((), float("inf"), dtype=weights.dtype, device=dev)
    flat = torch.where(block[:, iu, ju], weights[:, iu, ju], inf)  # (b, E)
    order = torch.argsort(flat, dim=1, stable=True)
    ranks = torch.empty_like(order, dtype=torch.int32)
    ranks.scatter_(1, order, torch.arange(iu.numel(), dtype=torch.int32, device=dev)
                   .expand(b, -1).contiguous())
    rank = torch.full((b, width, width), -1, dtype=torch.int32, device=dev)  # diagonal: -1
    rank[:, iu, ju] = ranks
    rank[:, ju, iu] = ranks
    mm = rank.clone()
    for k in range(width):
        torch.minimum(mm, torch.maximum(mm[:, :, k, None], mm[:, None, k, :]), out=mm)
    upper = torch.ones(width, width, dtype=torch.bool, device=dev).triu(1)
    return torch.nonzero((rank == mm) & upper[None] & block, as_tuple=True)
