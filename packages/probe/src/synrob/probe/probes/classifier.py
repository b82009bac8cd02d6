"""Classifier probes for ``tag`` (per word), ``select`` (a score per word, softmax over the
sentence) and ``sentence`` (pooled vector) tasks: linear, MLP, and the 3-layer fully connected
probe of La Malfa et al. with linear or ReLU activations."""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any

import numpy as np
from synrob.perturb.params import Param

from ..runtime.precision import fp32_region
from .base import TRAIN_PARAMS, Probe

if TYPE_CHECKING:
    from collections.abc import Sequence

    import torch

    from .inputs import Batch

__all__ = ["ClassifierProbe", "LinearProbe", "MLPProbe", "FC3Probe"]


class ClassifierProbe(Probe):
    """Shared loss and decoding; subclasses build the layers (:meth:`layers`)."""

    kinds = frozenset({"tag", "select", "sentence"})
    bf16_table = True  # every built-in classifier starts with a torch.nn.Linear

    def layers(self, dim: int, out: int) -> list[torch.nn.Module]:
        raise NotImplementedError

    def build(self, dim: int, n_classes: int, kind: str) -> torch.nn.Module:
        import torch

        out = 1 if kind == "select" else n_classes
        module = torch.nn.Sequential(*self.layers(dim, out))
        module.kind = kind  # type: ignore[assignment]
        return module

    def _scores(self, module: torch.nn.Module, x: torch.Tensor, batch: Batch,
                s: torch.Tensor | None = None) -> torch.Tensor:
        """tag: (b, L, C) logits; select: (b, L) scores, padding -inf; sentence: (b, C).
        ``s``: the module's outputs on ``x`` when already computed."""
        s = module(x) if s is None else s
        if module.kind == "select":
            assert batch.mask is not None
            s = s.squeeze(-1).masked_fill(~batch.mask, float("-inf"))
        return s

    def loss(self, module: torch.nn.Module, x: torch.Tensor, batch: Batch,
             s: torch.Tensor | None = None) -> torch.Tensor:
        import torch.nn.functional as F

        assert batch.y is not None
        s = self._scores(module, x, batch, s)
        if module.kind == "tag":
            return F.cross_entropy(s.reshape(-1, s.shape[-1]), batch.y.reshape(-1),
                                   ignore_index=-100)
        if module.kind == "sentence":
            return F.cross_entropy(s, batch.y, ignore_index=-1)
        return F.cross_entropy(s, batch.y)

    def predict(self, module: torch.nn.Module, x: torch.Tensor, batch: Batch) -> list[np.ndarray]:
        s = self._scores(module, x, batch)
        best = s.argmax(-1).cpu().numpy()
        if module.kind == "tag":
            return [best[r, :n].copy() for r, n in enumerate(batch.lengths.tolist())]
        return [np.array(v, dtype=np.int64) for v in best]


class LinearProbe(ClassifierProbe):
    name = "linear"
    summary = "linear classifier (softmax regression)"
    paper = "Alain & Bengio 2017; Belinkov et al. 2017"
    train_defaults = {"lr": 0.003, "batch_size": 32}
    fused_kinds = frozenset({"tag", "select", "sentence"})

    def fused_loss(self, modules: Sequence[torch.nn.Module], x: torch.Tensor,
                   batch: Batch) -> torch.Tensor:
        """:meth:`loss` of each module on its layer: the logits of all layers from one
        ``baddbmm`` of ``x`` (n, b, [L,] dim) with the stacked weights (n, C, dim); the
        cross-entropy of each layer as :meth:`loss` takes it. The weight gradient is computed
        as ``torch.nn.Linear``'s (``grad.T @ x``, :func:`_stacked_linear`), so each layer's
        loss and gradients are bit-identical to :meth:`loss` on it alone with the CPU kernels
        (tests/probe/test_fused.py)."""
        import torch

        n, dim = x.shape[0], x.shape[-1]
        weight = torch.stack([m[0].weight for m in modules])  # (n, C, dim)
        bias = torch.stack([m[0].bias for m in modules])  # (n, C)
        inputs = (x.reshape(n, -1, dim), weight, bias)
        if torch.is_autocast_enabled(x.device.type):  # a bf16 step: Linear's casts, done here
            low = torch.get_autocast_dtype(x.device.type)
            inputs = tuple(v.to(low) for v in inputs)
        with fp32_region(x.device):  # the autograd Function sees its inputs' dtype only
            s = _stacked_linear()(*inputs)
        s = s.reshape(*x.shape[:-1], -1)
        return torch.stack([self.loss(m, x[i], batch, s[i]) for i, m in enumerate(modules)])

    def layers(self, dim: int, out: int) -> list[torch.nn.Module]:
        import torch

        return [torch.nn.Linear(dim, out)]


@functools.cache
def _stacked_linear() -> Any:
    """``torch.nn.Linear`` of n layers in one autograd node: (n, N, dim) x weights (n, C, dim)
    + biases (n, C) -> (n, N, C), each layer's product and gradients with the very calls
    ``torch.nn.Linear`` makes (``addmm(bias, x, W.T)``; ``grad.T @ x``, ``grad.sum(0)``): the
    batched ``baddbmm`` and its backward sum in another order for a few classes."""
    import torch

    class StackedLinear(torch.autograd.Function):
        @staticmethod
        def forward(ctx: Any, x: torch.Tensor, weight: torch.Tensor,
                    bias: torch.Tensor) -> torch.Tensor:
            ctx.save_for_backward(x)
            return torch.stack([torch.addmm(bias[i], x[i], weight[i].t())
                                for i in range(x.shape[0])])

        @staticmethod
        def backward(ctx: Any, grad: torch.Tensor) -> tuple[None, torch.Tensor, torch.Tensor]:
            (x,) = ctx.saved_tensors
            n = x.shape[0]
            return (None, torch.stack([grad[i].t().mm(x[i]) for i in range(n)]),
                    torch.stack([grad[i].sum(0) for i in range(n)]))

    return StackedLinear.apply


class MLPProbe(ClassifierProbe):
    name = "mlp"
    summary = "one hidden ReLU layer, then a linear classifier"
    paper = "Hewitt & Liang 2019, Designing and Interpreting Probes with Control Tasks"
    params = (*TRAIN_PARAMS, Param("hidden", int, 256, "hidden layer size"),
              Param("dropout", float, 0.1, "dropout after the hidden layer"))
    train_defaults = {"lr": 0.001, "batch_size": 32}

    def layers(self, dim: int, out: int) -> list[torch.nn.Module]:
        import torch

        h = self.options["hidden"]
        return [torch.nn.Linear(dim, h), torch.nn.ReLU(), torch.nn.Dropout(self.options["dropout"]),
                torch.nn.Linear(h, out)]


class FC3Probe(ClassifierProbe):
    name = "fc3"
    summary = "La Malfa et al.'s 3-layer fully connected probe, linear or ReLU activations"
    paper = "La Malfa et al. 2024, Emergent Linguistic Structures in Neural Networks are Fragile"
    params = (*TRAIN_PARAMS, Param("hidden", int, 256, "size of both hidden layers"),
              Param("activation", str, "relu", "activation between layers", ("relu", "linear")))
    train_defaults = {"lr": 0.001, "batch_size": 32}

    def layers(self, dim: int, out: int) -> list[torch.nn.Module]:
        import torch

        h = self.options["hidden"]

        def act() -> torch.nn.Module:
            return torch.nn.ReLU() if self.options["activation"] == "relu" else torch.nn.Identity()

        return [torch.nn.Linear(dim, h), act(), torch.nn.Linear(h, h), act(),
                torch.nn.Linear(h, out)]


PROBES = (LinearProbe, MLPProbe, FC3Probe)
