"""The training regimen shared by every probe: Adam, learning-rate decay on plateau, early
stopping on the dev loss, deterministic given a seed, in the precision the probe trains in
(:mod:`.precision`), over the length-bucketed batches of :mod:`.batches`.

:func:`fit_layers` trains the probes of several layers (same task, same probe, same sentences)
as one batched computation: the batches index a stacked table ``(n_layers, rows + 1, dim)``,
the probe's :meth:`~synrob.probe.probes.base.Probe.fused_loss` gives one loss per layer, and
each layer keeps its own Adam, learning-rate schedule and early stopping, so each layer's
result equals :func:`fit`'s on that layer alone (tests/probe/test_fused.py).
"""

from __future__ import annotations

import copy
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from ..runtime import clock
from ..runtime.precision import fp32_region
from .batches import BatchSet, LayerBatches
from .optim import Adam, Plateau
from .precision import autocast, backward

if TYPE_CHECKING:
    import torch

    from ..probes.base import Probe

__all__ = ["fit", "fit_layers", "predict", "TrainLog"]


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
    layer has its own :class:`~synrob.probe.training.optim.Adam` and :class:`~synrob.probe.training.optim.Plateau`
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
