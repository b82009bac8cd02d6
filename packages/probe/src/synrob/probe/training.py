"""The training regimen shared by every probe: length-bucketed batches, Adam, learning-rate
decay on plateau, early stopping on the dev loss, deterministic given a seed.

Representations travel as one float32 matrix ``(total_words, dim)`` plus sentence offsets
``(n_sentences + 1,)``; a batch holds only indices into it ``(b, max_len)`` (padding points to
an extra zero row), so words are never copied per epoch.

:func:`fit_layers` trains the probes of several layers (same task, same probe, same sentences)
as one batched computation: the batches index a stacked table ``(n_layers, rows + 1, dim)``,
the probe's :meth:`~synrob.probe.probes.base.Probe.fused_loss` gives one loss per layer, and
each layer keeps its own Adam, learning-rate schedule and early stopping, so each layer's
result equals :func:`fit`'s on that layer alone (tests/probe/test_fused.py).
"""

from __future__ import annotations

import copy
import itertools
import math
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from . import clock
from .optim import Adam, Plateau
from .train_precision import autocast, backward, fp32_region

if TYPE_CHECKING:
    import torch

    from .probes.base import Probe

__all__ = ["Features", "Batch", "BatchSet", "LayerBatches", "make_batches", "make_layer_batches",
           "fit", "fit_layers", "predict", "TrainLog"]


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

    def head(self, n: int) -> Features:
        """The first ``n`` sentences (itself when it has no more): views, no copy."""
        if n >= self.n_sentences:
            return self
        return Features(self.matrix[: int(self.offsets[n])], self.offsets[: n + 1])

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


class _EarlyStop:
    """One module's best dev epoch and patience (shared by :func:`fit` and :func:`fit_layers`):
    :meth:`update` keeps the module's state when the dev loss beats the best by more than
    1e-4 of it and says whether training goes on; :meth:`restore` loads the best state."""

    def __init__(self, module: torch.nn.Module, patience: int) -> None:
        self.module, self.patience = module, patience
        self.best, self.stale = math.inf, 0
        self.state = copy.deepcopy(module.state_dict())

    def update(self, epoch: int, dev_loss: float, log: TrainLog) -> bool:
        best = self.best
        if dev_loss < best - 1e-4 * abs(best if math.isfinite(best) else 0.0):
            self.best, self.stale, log.best_epoch = dev_loss, 0, epoch
            self.state = copy.deepcopy(self.module.state_dict())
            return True
        self.stale += 1
        return self.stale <= self.patience

    def restore(self) -> None:
        self.module.load_state_dict(self.state)
        self.module.eval()


class _LossSum:
    """The sentence-weighted mean of an epoch's batch losses, summed where the losses are
    (float64, a GPU's memory), so a step never waits for the device to hand its loss to
    Python. The arithmetic is Python's float arithmetic op for op (``float(loss) * n`` added
    to a float), so the means are the same bits as summing ``float(loss)`` per step."""

    def __init__(self) -> None:
        self.total: torch.Tensor | None = None
        self.weight = 0.0

    def add(self, loss: torch.Tensor, sentences: int) -> None:
        """Add a batch's loss (a scalar, or one per layer (n,)) of ``sentences`` sentences."""
        term = loss.detach().double() * sentences
        self.total = term if self.total is None else self.total + term
        self.weight += sentences

    def means(self, n: int = 1) -> list[float]:
        """The mean (one per layer of ``n``); 0 for an epoch without batches."""
        if self.total is None:
            return [0.0] * n
        return [t / max(self.weight, 1.0) for t in self.total.reshape(-1).tolist()]


def _dev_loss(probe: Probe, module: torch.nn.Module, data: BatchSet) -> float:
    import torch

    acc = _LossSum()
    with torch.no_grad(), autocast(probe.options["train_precision"], data.table.device):
        for b in data.batches:
            acc.add(probe.loss(module, data.x(b), b), len(b.ids))
    return acc.means()[0]


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
    optim = Adam(module.parameters(), lr=opts["lr"], weight_decay=opts["weight_decay"])
    sched = Plateau(optim, factor=opts["lr_decay"])
    log = TrainLog()
    stop = _EarlyStop(module, opts["patience"])
    t0 = time.perf_counter()
    for epoch in range(opts["epochs"]):
        module.train()
        acc = _LossSum()
        for k in rng.permutation(len(train.batches)):
            b = train.batches[k]
            optim.zero_grad()
            with autocast(opts["train_precision"], train.table.device):
                loss = probe.loss(module, train.x(b), b)
            if loss.requires_grad:
                backward(loss, opts["train_precision"], train.table.device)
                optim.step()
            acc.add(loss, len(b.ids))
        module.eval()
        dev_loss = _dev_loss(probe, module, dev)
        log.train_loss.append(acc.means()[0])
        log.dev_loss.append(dev_loss)
        log.lr.append(optim.lr)
        if on_epoch is not None:
            on_epoch(epoch, log.train_loss[-1], dev_loss)
        if not stop.update(epoch, dev_loss, log):
            break
        sched.step(dev_loss)
    stop.restore()
    log.seconds = time.perf_counter() - t0
    clock.TRAINING.add(log.seconds)
    return log


def _dev_losses(probe: Probe, modules: Sequence[torch.nn.Module], data: LayerBatches,
                layers: torch.Tensor) -> list[float]:
    """:func:`_dev_loss` of each module, the modules reading the layers ``layers``."""
    import torch

    acc = _LossSum()
    with torch.no_grad(), autocast(probe.options["train_precision"], data.table.device):
        for b in data.batches:
            acc.add(probe.fused_loss(modules, data.x(b, layers), b), len(b.ids))
    return acc.means(len(modules))


def fit_layers(probe: Probe, modules: Sequence[torch.nn.Module], train: LayerBatches,
               dev: LayerBatches, *, seed: int = 0) -> list[TrainLog]:
    """:func:`fit` of ``modules[l]`` on layer ``l`` of ``train`` and ``dev``, all layers at once.

    Every step runs the probe's :meth:`~synrob.probe.probes.base.Probe.fused_loss` on the same
    batch of every layer still training (one batched product instead of one per layer); each
    layer has its own :class:`~synrob.probe.optim.Adam` and :class:`~synrob.probe.optim.Plateau`
    (so its own moments, step and learning rate), its own best epoch and patience; a layer
    that stops is restored to its best state and leaves the stack. The batch order is :func:`fit`'s (``seed``), and a layer's
    losses, gradients and updates are those :func:`fit` computes on it alone, so its weights
    and log are the same (bit for bit with the CPU kernels checked in tests/probe/test_fused.py).
    ``TrainLog.seconds`` of a layer is the wall time until it stopped (shared by the layers).
    """
    with clock.timed(clock.TRAINING):
        return _fit_layers(probe, modules, train, dev, seed)


def _fit_layers(probe: Probe, modules: Sequence[torch.nn.Module], train: LayerBatches,
                dev: LayerBatches, seed: int) -> list[TrainLog]:
    import torch

    n = len(modules)
    if train.n_layers != n or dev.n_layers != n:
        raise ValueError(f"fit_layers: {n} modules for {train.n_layers} train and "
                         f"{dev.n_layers} dev layers")
    opts = probe.options
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    optims = [Adam(m.parameters(), lr=opts["lr"], weight_decay=opts["weight_decay"])
              for m in modules]
    scheds = [Plateau(o, factor=opts["lr_decay"]) for o in optims]
    logs = [TrainLog() for _ in modules]
    stops = [_EarlyStop(m, opts["patience"]) for m in modules]
    active = list(range(n))
    device = train.table.device
    t0 = time.perf_counter()
    for epoch in range(opts["epochs"]):
        if not active:
            break
        act = [modules[i] for i in active]
        index = torch.tensor(active, dtype=torch.long, device=device)
        for m in act:
            m.train()
        acc = _LossSum()
        for k in rng.permutation(len(train.batches)):
            b = train.batches[k]
            for i in active:
                optims[i].zero_grad()
            with autocast(opts["train_precision"], device):
                losses = probe.fused_loss(act, train.x(b, index), b)  # (n_active,)
            if losses.requires_grad:
                # each layer's gradient is its own loss's
                backward(losses.sum(), opts["train_precision"], device)
                for i in active:
                    optims[i].step()
            acc.add(losses, len(b.ids))
        for m in act:
            m.eval()
        dev_losses = _dev_losses(probe, act, dev, index)
        totals = acc.means(len(active))
        still = []
        for j, i in enumerate(active):
            log, dev_loss = logs[i], dev_losses[j]
            log.train_loss.append(totals[j])
            log.dev_loss.append(dev_loss)
            log.lr.append(optims[i].lr)
            if not stops[i].update(epoch, dev_loss, log):
                log.seconds = time.perf_counter() - t0
                continue
            scheds[i].step(dev_loss)
            still.append(i)
        active = still
    for i, stop in enumerate(stops):
        stop.restore()
        if i in active:
            logs[i].seconds = time.perf_counter() - t0
    return logs


def predict(probe: Probe, module: torch.nn.Module, data: BatchSet) -> list[np.ndarray]:
    """One prediction per sentence, in corpus order (see :mod:`synrob.probe.tasks.base`)."""
    import torch

    out: list[np.ndarray | None] = [None] * data.n_sentences
    module.eval()
    with torch.no_grad(), fp32_region(data.table.device):  # scores in fp32 (IEEE on a GPU)
        for b in data.batches:
            for s, p in zip(b.ids, probe.predict(module, data.x(b), b), strict=True):
                out[int(s)] = p
    return out  # type: ignore[return-value]
