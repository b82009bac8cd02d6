"""An affine concept eraser and its counterfactual: the one object every erasure step shares.

An :class:`Eraser` removes a rank-``k`` subspace from ``d``-dimensional vectors, in the form
LEACE (Belrose et al. 2023, ``concept_erasure.LeaceEraser``) stores its projection::

    E(x) = x - ((x - bias) @ proj_right.T) @ proj_left.T      x: (..., d)
    proj_left: (d, k)    proj_right: (k, d)    bias: (d,)

``E`` is affine, so it commutes with mean (and first-subword) pooling: erasing every token of a
word inside the model gives the erased word vector a probe sees. The concept component of ``x``
is ``x - E(x)``; the **counterfactual** towards class ``c`` (AlterRep, Ravfogel et al. 2021)
replaces it with the class mean's::

    C_c(x) = E(x) + (mu_c - E(mu_c)) = x + ((mu_c - x) @ proj_right.T) @ proj_left.T

with ``mu_c = class_means[c]`` (training mean of class ``c``, shape ``(n_classes, d)``).
``kind`` is ``leace``, ``random`` (the rank-matched control: the orthogonal projection off a
random subspace of the same rank, Elazar et al. 2021) or ``random_matched`` (the control
matched in rank and in mean displacement: a random oblique projection of the same rank,
:func:`synrob.probe.causal.erasure.fit.matched_control`). torch is imported inside the methods.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["KINDS", "Eraser"]

#: The kinds of eraser (see the module docstring).
KINDS = ("leace", "random", "random_matched")


@dataclass
class Eraser:
    """A fitted affine eraser (see the module docstring for the formulas and shapes).

    ``meta`` holds provenance: encoder identity, layer, task and its options, labels, rank, seed,
    the training data's content key, and the synrob version; it is written into the
    safetensors header.
    """

    kind: str
    proj_left: Any  # torch.Tensor (d, k)
    proj_right: Any  # torch.Tensor (k, d)
    bias: Any  # torch.Tensor (d,)
    class_means: Any  # torch.Tensor (n_classes, d)
    labels: list[str]
    meta: dict[str, Any] = field(default_factory=dict)

    @property
    def dim(self) -> int:
        return int(self.proj_left.shape[0])

    @property
    def rank(self) -> int:
        """Numerical rank of the removed map ``proj_left @ proj_right``: singular values above
        ``1e-4`` of the largest (float32 round-off of an SVD stays far below that)."""
        import torch

        s = torch.linalg.svdvals((self.proj_left @ self.proj_right).double())
        return int((s > 1e-4 * s.max()).sum()) if s.numel() and s.max() > 0 else 0

    def _to(self, x: Any) -> tuple[Any, Any, Any]:
        return (self.proj_left.to(x.device, x.dtype), self.proj_right.to(x.device, x.dtype),
                self.bias.to(x.device, x.dtype))

    def component(self, x: Any) -> Any:
        """The concept component ``x - E(x)``, shape of ``x`` (..., d)."""
        left, right, bias = self._to(x)
        return ((x - bias) @ right.T) @ left.T

    def __call__(self, x: Any) -> Any:
        """``E(x)``: the erased vectors, shape and dtype of ``x`` (..., d)."""
        return x - self.component(x)

    def counterfactual(self, x: Any, target: Any) -> Any:
        """``C_c(x)`` per row: ``x`` (..., d), ``target`` class ids broadcastable to ``x[..., 0]``
        (int64); the rows moved to their target class's mean along the erased subspace."""
        import torch

        left, right, _ = self._to(x)
        mu = self.class_means.to(x.device, x.dtype)[torch.as_tensor(target, device=x.device)]
        return x + ((mu - x) @ right.T) @ left.T
