"""Adam and a plateau learning-rate schedule for probe training, without ``torch.optim``.

The arithmetic is ``torch.optim.Adam``'s single-tensor path (the one it takes on the CPU; L2
weight decay, no AMSGrad) and ``torch.optim.lr_scheduler.ReduceLROnPlateau``'s (mode ``min``,
relative threshold 1e-4, no cooldown, no minimum), op for op, so on the CPU the weights equal
``torch.optim``'s bit for bit (tests/probe/test_optim.py checks it against the installed torch).
On CUDA ``torch.optim.Adam`` defaults to its multi-tensor kernels, which compute the same
formula in other kernels; these updates are this module's there too.

Why not ``torch.optim`` itself: the first optimiser a process builds imports ``torch._dynamo``
(1.5 s on the 2-core development CPU, by cProfile), which every ``synrob probe`` and every
experiment worker paid before its first epoch, and each ``Optimizer.step`` adds about 0.1 ms of
bookkeeping, paid once per layer per batch when several layers train together
(:func:`synrob.probe.training.loop.fit_layers`).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import torch

__all__ = ["Adam", "Plateau"]


class Adam:
    """Adam (Kingma & Ba) with L2 weight decay added to the gradient, as ``torch.optim.Adam``.

    ``lr`` is an attribute the schedule lowers; the moments and the step count start at the
    first :meth:`step` a parameter has a gradient in, as in torch.
    """

    def __init__(self, params: Iterable[torch.Tensor], *, lr: float, weight_decay: float = 0.0,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8) -> None:
        self.params = list(params)
        self.lr = float(lr)
        self.weight_decay = float(weight_decay)
        self.beta1, self.beta2 = (float(b) for b in betas)
        self.eps = float(eps)
        self._state: dict[int, tuple[torch.Tensor, torch.Tensor, list[int]]] = {}

    def zero_grad(self) -> None:
        """Drop every parameter's gradient (``set_to_none``)."""
        for p in self.params:
            p.grad = None

    def step(self) -> None:
        """One update of every parameter that has a gradient."""
        import torch

        with torch.no_grad():
            for i, p in enumerate(self.params):
                if p.grad is not None:
                    self._update(i, p, p.grad)

    def _update(self, i: int, param: torch.Tensor, grad: torch.Tensor) -> None:
        """torch.optim.adam._single_tensor_adam for one parameter (not capturable)."""
        import torch

        if i not in self._state:
            self._state[i] = (torch.zeros_like(param, memory_format=torch.preserve_format),
                              torch.zeros_like(param, memory_format=torch.preserve_format), [0])
        exp_avg, exp_avg_sq, count = self._state[i]
        count[0] += 1
        step = float(count[0])
        if self.weight_decay != 0:
            grad = grad.add(param, alpha=self.weight_decay)
        exp_avg.lerp_(grad, 1 - self.beta1)
        exp_avg_sq.mul_(self.beta2).addcmul_(grad, grad, value=1 - self.beta2)
        bias_correction1 = 1 - self.beta1**step
        bias_correction2 = 1 - self.beta2**step
        step_size = self.lr / bias_correction1
        denom = (exp_avg_sq.sqrt() / bias_correction2**0.5).add_(self.eps)
        param.addcdiv_(exp_avg, denom, value=-step_size)


class Plateau:
    """Multiply ``optim.lr`` by ``factor`` when the metric has not improved (relative threshold
    1e-4) for more than ``patience`` steps, as ``ReduceLROnPlateau(optim, mode="min",
    factor=factor, patience=patience)``."""

    threshold = 1e-4
    eps = 1e-8

    def __init__(self, optim: Adam, *, factor: float, patience: int = 0) -> None:
        if not factor < 1.0:
            raise ValueError("Plateau: factor should be < 1.0")
        self.optim = optim
        self.factor = float(factor)
        self.patience = int(patience)
        self.best = math.inf
        self.bad_steps = 0

    def step(self, metric: float) -> None:
        """Record one epoch's metric (lower is better); lower the rate on a plateau."""
        current = float(metric)
        if current < self.best * (1.0 - self.threshold):
            self.best, self.bad_steps = current, 0
        else:
            self.bad_steps += 1
        if self.bad_steps > self.patience:
            old = self.optim.lr
            new = max(old * self.factor, 0.0)
            if old - new > self.eps:
                self.optim.lr = new
            self.bad_steps = 0
