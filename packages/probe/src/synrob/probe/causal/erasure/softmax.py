"""A linear softmax classifier fitted to convergence: the probe LEACE's guarantee is about.

LEACE makes the erased training vectors' class means equal, and then no linear classifier has a
lower *convex* loss (cross-entropy) on them than the constant one (Belrose et al. 2023, Thm 3.1).
It says nothing about a classifier stopped far from that optimum, and nothing about accuracy,
which is not convex: synrob's usual probe regimen (Adam from a random initialisation, early
stopping on dev) stops after a few epochs with cross-entropy above the constant predictor's and
an argmax that picks up the classes' different spreads (on the bundled EWT sample, MiniLM layer
3, UPOS: 0.27 test accuracy after LEACE against a majority rate of 0.14). So the amnesic probe is
fitted the way the theorem assumes:

* multinomial logistic regression ``softmax(x W + b)`` on every labelled training word at once
  (full batch), L-BFGS with strong-Wolfe line search, from ``W = 0`` and ``b = 0``;
* an L2 penalty ``l2 * ||W||^2`` on the mean cross-entropy, ``l2`` chosen on dev (lowest dev
  cross-entropy) from :data:`L2_GRID`, each fit warm-started from the previous (larger) one,
  at most ``60`` iterations each; the path stops at the first penalty whose dev cross-entropy
  is worse than the one before. The classifier kept is the chosen penalty's fit, and its
  ``iterations`` are that fit's L-BFGS iterations (warm-started from the previous penalty's
  solution); the rejected fits' are not counted. :data:`SETTINGS` lists every setting, as
  ``synrob erase --json`` records them.

On erased vectors (centred by the affine preprocessing), the gradient in ``W`` at ``W = 0`` is
the cross-covariance of labels and vectors, which LEACE zeroed: ``W`` stays 0, only ``b`` is
learnt, and the probe predicts the training majority class for every word. Computed in float32
on the given device.

On the CPU, L-BFGS's own steps (its two-loop recursion and line search) run on one torch
thread: they take dot products (``torch.dot``) whose sums depend on the thread count, so on two
threads the same data gave other weights (a POS probe's test accuracy moved in the fourth
digit), against the rule that a result does not depend on the thread count
(docs/architecture.md). The loss and its gradient, whose products give the same bits on any
thread count, run on the caller's threads.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["L2_GRID", "SETTINGS", "Softmax", "fit_softmax"]

#: L2 penalties tried, largest first (each fit starts from the previous one's solution).
L2_GRID = (1e-3, 1e-4, 1e-5)
#: L-BFGS iterations per penalty (the fits are warm-started along the grid).
_MAX_ITER = 60
_HISTORY = 20
_TOL_GRAD = 1e-7
_TOL_CHANGE = 1e-10

#: The fit's settings (see the module docstring), as recorded in ``synrob erase --json``.
SETTINGS = {"optimizer": "L-BFGS (torch.optim.LBFGS), full batch", "line_search": "strong_wolfe",
            "lr": 1.0, "max_iter_per_l2": _MAX_ITER, "history_size": _HISTORY,
            "tolerance_grad": _TOL_GRAD, "tolerance_change": _TOL_CHANGE,
            "init": "W = 0, b = 0", "l2_grid": list(L2_GRID),
            "l2_choice": "lowest dev cross-entropy along the grid, each fit warm-started from "
                         "the previous one, stopping at the first penalty that does worse",
            "dtype": "float32"}


@dataclass
class Softmax:
    """A fitted classifier: ``weight`` (d, C), ``bias`` (C,) torch tensors; the chosen ``l2``,
    its dev cross-entropy and the L-BFGS iterations of its fit (not of the rejected ones)."""

    weight: Any
    bias: Any
    l2: float
    dev_loss: float
    iterations: int

    def predict(self, x: np.ndarray) -> np.ndarray:
        """Class ids of the rows of ``x`` (n, d). Shape: (n,) int64."""
        import torch

        out = np.empty(x.shape[0], dtype=np.int64)
        with torch.no_grad():
            for a in range(0, x.shape[0], 65536):
                xs = torch.from_numpy(np.ascontiguousarray(x[a:a + 65536], dtype=np.float32))
                out[a:a + 65536] = (xs.to(self.weight.device) @ self.weight + self.bias
                                    ).argmax(-1).cpu().numpy()
        return out


def _lbfgs(x: Any, y: Any, w: Any, b: Any, l2: float) -> int:
    """Minimise mean cross-entropy + ``l2 * ||w||^2`` in place; returns the iterations. On the
    CPU L-BFGS's own steps run on one thread, the loss and its gradient on the caller's (see
    the module docstring)."""
    import torch
    import torch.nn.functional as F

    from ...runtime.threads import torch_threads

    opt = torch.optim.LBFGS([w, b], lr=1.0, max_iter=_MAX_ITER, history_size=_HISTORY,
                            tolerance_grad=_TOL_GRAD, tolerance_change=_TOL_CHANGE,
                            line_search_fn="strong_wolfe")

    threads = torch.get_num_threads()

    def closure() -> Any:
        with torch_threads(threads):  # the products: the same bits on any thread count
            opt.zero_grad()
            loss = F.cross_entropy(x @ w + b, y) + l2 * (w * w).sum()
            loss.backward()
        return loss

    with torch_threads(1 if x.device.type == "cpu" else 0):  # L-BFGS's own dot products
        opt.step(closure)
    return int(opt.state[opt._params[0]].get("n_iter", 0))


def fit_softmax(x: np.ndarray, y: np.ndarray, n_classes: int, dev: tuple[np.ndarray, np.ndarray],
                *, device: str = "cpu", grid: tuple[float, ...] = L2_GRID) -> Softmax:
    """Fit on ``x`` (n, d), ``y`` (n,) in ``range(n_classes)``; ``dev`` = (x, y) chooses ``l2``
    (see the module docstring)."""
    import torch
    import torch.nn.functional as F

    xt = torch.from_numpy(np.ascontiguousarray(x, dtype=np.float32)).to(device)
    yt = torch.from_numpy(np.asarray(y, dtype=np.int64)).to(device)
    xd = torch.from_numpy(np.ascontiguousarray(dev[0], dtype=np.float32)).to(device)
    yd = torch.from_numpy(np.asarray(dev[1], dtype=np.int64)).to(device)
    w = torch.zeros(x.shape[1], n_classes, device=device, requires_grad=True)
    b = torch.zeros(n_classes, device=device, requires_grad=True)
    best: Softmax | None = None
    for l2 in grid:
        iterations = _lbfgs(xt, yt, w, b, l2)
        with torch.no_grad():
            loss = float(F.cross_entropy(xd @ w + b, yd)) if yd.numel() else float("nan")
        if best is not None and not loss < best.dev_loss:
            break
        best = Softmax(w.detach().clone(), b.detach().clone(), l2, loss, iterations)
    assert best is not None
    return best
