"""The training regimen shared by every probe: length-bucketed batches, Adam, learning-rate
decay on plateau, early stopping on the dev loss, deterministic given a seed.

Representations travel as one float32 matrix ``(total_words, dim)`` plus sentence offsets
``(n_sentences + 1,)``; a batch holds only indices into it ``(b, max_len)`` (padding points to
an extra zero row), so words are never copied per epoch.
"""

from __future__ import annotations

import copy
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    import torch

    from .probes.base import Probe

__all__ = ["Features", "Batch", "BatchSet", "make_batches", "fit", "predict", "TrainLog"]


@dataclass
class Features:
    """Word vectors of a corpus: ``matrix`` (total_words, dim) and ``offsets`` (n_sentences + 1,)."""

    matrix: np.ndarray
    offsets: np.ndarray

    @property
    def n_sentences(self) -> int:
        return int(self.offsets.size - 1)

    @property
    def dim(self) -> int:
        return int(self.matrix.shape[1])

    @property
    def lengths(self) -> np.ndarray:
        return np.diff(self.offsets)

    def sentence(self, i: int) -> np.ndarray:
        """Word vectors of sentence ``i``. Shape: (n_i, dim)."""
        return self.matrix[self.offsets[i]:self.offsets[i + 1]]

    def pooled(self, how: str = "mean") -> np.ndarray:
        """One vector per sentence (mean or max over its words). Shape: (n_sentences, dim)."""
        starts = self.offsets[:-1]
        if how == "max":
            return np.maximum.reduceat(self.matrix, starts, axis=0).astype(np.float32)
        sums = np.add.reduceat(self.matrix.astype(np.float64), starts, axis=0)
        return (sums / self.lengths[:, None]).astype(np.float32)

    @classmethod
    def from_sentences(cls, sentences: Sequence[np.ndarray]) -> Features:
        """From one (n_i, dim) array per sentence."""
        offsets = np.zeros(len(sentences) + 1, dtype=np.int64)
        offsets[1:] = np.cumsum([len(s) for s in sentences])
        matrix = np.concatenate([np.asarray(s, dtype=np.float32) for s in sentences], axis=0)
        return cls(np.ascontiguousarray(matrix, dtype=np.float32), offsets)


@dataclass
class Batch:
    """Sentences ``ids`` (b,) of one length bucket.

    ``index`` (b, L) rows of the table (padding = the zero row), ``mask`` (b, L) bool,
    ``lengths`` (b,), ``y`` the padded targets: distance (b, L, L) float, depth (b, L) float,
    tag (b, L) long with -100 padding, select / sentence (b,) long. For sentence-level tasks
    ``index`` is (b,) rows of the pooled table and ``mask`` is None.
    """

    ids: np.ndarray
    index: torch.Tensor
    mask: torch.Tensor | None
    lengths: torch.Tensor
    y: torch.Tensor | None
    heads: list[np.ndarray] = field(default_factory=list)


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
                 pooling: str = "mean", device: str = "cpu") -> BatchSet:
    """Group sentences of similar length into batches of at most ``batch_size`` sentences."""
    import torch

    n = features.n_sentences
    lengths = features.lengths
    order = np.argsort(lengths, kind="stable")
    if kind == "sentence":
        table = torch.from_numpy(features.pooled(pooling)).to(device)
    else:
        mat = np.asarray(features.matrix, dtype=np.float32)
        table = torch.cat([torch.from_numpy(np.ascontiguousarray(mat)),
                           torch.zeros(1, features.dim)]).to(device)
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
    return BatchSet(table, batches, n)


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


@dataclass
class TrainLog:
    """What happened during training: per-epoch losses, the best epoch, wall time."""

    train_loss: list[float] = field(default_factory=list)
    dev_loss: list[float] = field(default_factory=list)
    lr: list[float] = field(default_factory=list)
    best_epoch: int = -1
    seconds: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        return {"train_loss": self.train_loss, "dev_loss": self.dev_loss, "lr": self.lr,
                "best_epoch": self.best_epoch, "seconds": round(self.seconds, 3)}


def _dev_loss(probe: Probe, module: torch.nn.Module, data: BatchSet) -> float:
    import torch

    total = weight = 0.0
    with torch.no_grad():
        for b in data.batches:
            total += float(probe.loss(module, data.x(b), b)) * len(b.ids)
            weight += len(b.ids)
    return total / max(weight, 1.0)


def fit(probe: Probe, module: torch.nn.Module, train: BatchSet, dev: BatchSet, *, seed: int = 0,
        on_epoch: Callable[[int, float, float], None] | None = None) -> TrainLog:
    """Train ``module`` in place with ``probe``'s loss and options; keep the best dev epoch.

    Options used (from ``probe.options``): ``lr``, ``epochs``, ``patience`` (epochs without dev
    improvement before stopping), ``lr_decay`` (factor applied on a dev plateau), ``weight_decay``.
    """
    import torch

    opts = probe.options
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    optim = torch.optim.Adam(module.parameters(), lr=opts["lr"], weight_decay=opts["weight_decay"])
    sched = torch.optim.lr_scheduler.ReduceLROnPlateau(optim, mode="min", factor=opts["lr_decay"],
                                                       patience=0)
    log = TrainLog()
    best = math.inf
    best_state = copy.deepcopy(module.state_dict())
    stale = 0
    t0 = time.perf_counter()
    for epoch in range(opts["epochs"]):
        module.train()
        total = weight = 0.0
        for k in rng.permutation(len(train.batches)):
            b = train.batches[k]
            optim.zero_grad(set_to_none=True)
            loss = probe.loss(module, train.x(b), b)
            if loss.requires_grad:
                loss.backward()
                optim.step()
            total += float(loss.detach()) * len(b.ids)
            weight += len(b.ids)
        module.eval()
        dev_loss = _dev_loss(probe, module, dev)
        log.train_loss.append(total / max(weight, 1.0))
        log.dev_loss.append(dev_loss)
        log.lr.append(optim.param_groups[0]["lr"])
        if on_epoch is not None:
            on_epoch(epoch, log.train_loss[-1], dev_loss)
        if dev_loss < best - 1e-4 * abs(best if math.isfinite(best) else 0.0):
            best, stale, log.best_epoch = dev_loss, 0, epoch
            best_state = copy.deepcopy(module.state_dict())
        else:
            stale += 1
            if stale > opts["patience"]:
                break
        sched.step(dev_loss)
    module.load_state_dict(best_state)
    module.eval()
    log.seconds = time.perf_counter() - t0
    return log


def predict(probe: Probe, module: torch.nn.Module, data: BatchSet) -> list[np.ndarray]:
    """One prediction per sentence, in corpus order (see :mod:`synrob.probe.tasks.base`)."""
    import torch

    out: list[np.ndarray | None] = [None] * data.n_sentences
    module.eval()
    with torch.no_grad():
        for b in data.batches:
            for s, p in zip(b.ids, probe.predict(module, data.x(b), b), strict=True):
                out[int(s)] = p
    return out  # type: ignore[return-value]
