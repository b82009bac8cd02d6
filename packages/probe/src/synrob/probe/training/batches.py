"""Length-bucketed batches of a corpus's word vectors, for one layer or several stacked.

A :class:`BatchSet` is one table of vectors ``(rows + 1, dim)`` (the last row zero, for padding)
and the batches that index it; a :class:`LayerBatches` stacks several layers' tables
``(n_layers, rows + 1, dim)`` under one list of batches, for
:func:`synrob.probe.training.loop.fit_layers`.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from ..probes.inputs import Batch, Features

if TYPE_CHECKING:
    import torch

__all__ = ["BatchSet", "LayerBatches", "make_batches", "make_layer_batches"]


@dataclass
class BatchSet:
    """A table of vectors (rows + 1 zero row) and the batches that index it."""

    table: torch.Tensor
    batches: list[Batch]
    n_sentences: int

    def x(self, batch: Batch) -> torch.Tensor:
        """Vectors of a batch: (b, L, dim), or (b, dim) for sentence-level tasks."""
        return self.table[batch.index]


def make_batches(features: Features, kind: str, targets: Sequence[np.ndarray] | None = None,
                 *, batch_size: int = 32, heads: Sequence[np.ndarray] | None = None,
                 pooling: str = "mean", device: str = "cpu", dtype: Any = None) -> BatchSet:
    """Group sentences of similar length into batches of at most ``batch_size`` sentences.
    The table is float32, or ``dtype`` (a torch dtype) when given."""
    import torch

    table = torch.empty((_rows(features, kind), features.dim), dtype=dtype or torch.float32,
                        device=device)
    _fill_table(table, features, kind, pooling)
    return BatchSet(table, _batches(features, kind, targets, batch_size, heads, device),
                    features.n_sentences)


def _batches(features: Features, kind: str, targets: Sequence[np.ndarray] | None,
             batch_size: int, heads: Sequence[np.ndarray] | None, device: str) -> list[Batch]:
    """:func:`make_batches`' batches of ``features`` (indices into its table, no vectors)."""
    import torch

    n = features.n_sentences
    lengths = features.lengths
    order = np.argsort(lengths, kind="stable")
    pad_row = int(features.offsets[-1])
    batches = []
    for start in range(0, n, batch_size):
        ids = order[start:start + batch_size]
        lens = lengths[ids]
        width = int(lens.max())
        if kind == "sentence":
            index = torch.from_numpy(ids.astype(np.int64))
            mask = None
        else:
            idx = np.full((len(ids), width), pad_row, dtype=np.int64)
            for r, s in enumerate(ids):
                idx[r, : lens[r]] = np.arange(features.offsets[s], features.offsets[s + 1])
            index = torch.from_numpy(idx)
            mask = torch.from_numpy(np.arange(width)[None, :] < lens[:, None])
        y = None if targets is None else _pad_targets([targets[s] for s in ids], kind, width)
        batches.append(Batch(
            ids=ids,
            index=index.to(device),
            mask=None if mask is None else mask.to(device),
            lengths=torch.from_numpy(lens.astype(np.int64)).to(device),
            y=None if y is None else y.to(device),
            heads=[heads[s] for s in ids] if heads is not None else [],
        ))
    return batches


def _rows(features: Features, kind: str) -> int:
    """Rows of a batch table: the pooled sentences (``sentence`` tasks), else the words plus
    one zero row for padding."""
    return features.n_sentences if kind == "sentence" else int(features.offsets[-1]) + 1


@dataclass
class LayerBatches:
    """Several layers' vectors of one corpus and the batches (one list, as
    :func:`make_batches` makes it) that index every layer's table alike.

    ``table`` is (n_layers, rows, dim): layer ``l``'s table of :func:`make_batches` is
    ``table[l]``.
    """

    table: torch.Tensor
    batches: list[Batch]
    n_sentences: int

    @property
    def n_layers(self) -> int:
        return int(self.table.shape[0])

    def x(self, batch: Batch, layers: torch.Tensor) -> torch.Tensor:
        """Vectors of a batch in the layers ``layers`` (n,) (positions in the stack):
        (n, b, L, dim), or (n, b, dim) for sentence-level tasks."""
        shape = (-1,) + (1,) * batch.index.dim()
        return self.table[layers.view(shape), batch.index.unsqueeze(0)]

    def layer(self, i: int) -> BatchSet:
        """The :class:`BatchSet` of the ``i``-th layer alone (its table is a view)."""
        return BatchSet(self.table[i], self.batches, self.n_sentences)


def make_layer_batches(layers: Iterable[Features], kind: str,
                       targets: Sequence[np.ndarray] | None = None, *, batch_size: int = 32,
                       heads: Sequence[np.ndarray] | None = None, pooling: str = "mean",
                       device: str = "cpu", n_layers: int | None = None,
                       dtype: Any = None) -> LayerBatches:
    """:func:`make_batches` for several layers of one corpus (same sentences and lengths, same
    dim): one list of batches, the layers' tables stacked. ``layers`` may be a generator (with
    ``n_layers``): each layer is written into the stack as it comes and need not stay loaded."""
    import torch

    it = iter(layers)
    n = len(layers) if n_layers is None else n_layers  # type: ignore[arg-type]
    first = next(it)
    batches = _batches(first, kind, targets, batch_size, heads, device)
    table = torch.empty((n, _rows(first, kind), first.dim), dtype=dtype or torch.float32,
                        device=device)
    count = 0
    for f in itertools.chain([first], it):
        if not np.array_equal(f.offsets, first.offsets) or f.dim != first.dim:
            raise ValueError("make_layer_batches: the layers' sentences or dims differ")
        if count == n:
            raise ValueError(f"make_layer_batches: more than {n} layers")
        _fill_table(table[count], f, kind, pooling)
        count += 1
    if count != n:
        raise ValueError(f"make_layer_batches: {count} layers, expected {n}")
    return LayerBatches(table, batches, first.n_sentences)


def _fill_table(out: torch.Tensor, features: Features, kind: str, pooling: str) -> None:
    """Write a batch table into ``out`` (:func:`_rows`, dim), of any dtype and device: the
    pooled sentences (``sentence`` tasks), else the words and a last zero row for padding. No
    float32 copy of the whole table in between (the same values: one cast per element)."""
    import torch

    if kind == "sentence":
        out.copy_(torch.from_numpy(features.pooled(pooling)))
        return
    mat = np.asarray(features.matrix, dtype=np.float32)
    out[:-1].copy_(torch.from_numpy(np.ascontiguousarray(mat)))
    out[-1].zero_()


def _pad_targets(items: list[np.ndarray], kind: str, width: int) -> torch.Tensor:
    import torch

    b = len(items)
    if kind == "distance":
        out = np.zeros((b, width, width), dtype=np.float32)
        for r, t in enumerate(items):
            out[r, : t.shape[0], : t.shape[0]] = t
        return torch.from_numpy(out)
    if kind == "depth":
        out = np.zeros((b, width), dtype=np.float32)
        for r, t in enumerate(items):
            out[r, : t.shape[0]] = t
        return torch.from_numpy(out)
    if kind == "tag":
        out = np.full((b, width), -100, dtype=np.int64)
        for r, t in enumerate(items):
            out[r, : t.shape[0]] = np.where(t < 0, -100, t)
        return torch.from_numpy(out)
    return torch.from_numpy(np.array([int(t) for t in items], dtype=np.int64))
