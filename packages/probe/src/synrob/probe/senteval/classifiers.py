"""The classifiers of Conneau et al. (2018) over fixed sentence vectors: logistic regression and
the MLP with one sigmoid hidden layer; hyperparameters (L2 penalty; hidden size and dropout)
chosen on dev accuracy. Logistic regression is fitted to convergence by full-batch L-BFGS (as
SentEval's scikit-learn path does); the MLP by Adam on mini-batches of 64 with early stopping on
dev accuracy (SentEval's PyTorch path, tenacity 5).

Inputs are ``(n, dim)`` float arrays and ``(n,)`` int64 labels in ``0..n_classes-1`` (``-1`` for a
dev/test label never seen in training: always counted wrong). Features are standardised with the
training mean and standard deviation (an affine map, so the hypothesis class is unchanged; it
only conditions the optimisation). Everything is deterministic given ``seed``.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from synrob.perturb.errors import ParameterError

from ..runtime.clock import TRAINING, timed
from ..runtime.threads import torch_threads

__all__ = ["CLASSIFIERS", "ClassifierResult", "TrainConfig", "fit_select", "grid", "encode_labels",
           "accuracy"]

#: The classifier names and their default hyperparameter grids (the paper's MLP grid).
CLASSIFIERS: dict[str, dict[str, tuple[Any, ...]]] = {
    "logreg": {"l2": (1e-5, 1e-4, 1e-3, 1e-2)},
    "mlp": {"hidden": (50, 100, 200), "dropout": (0.0, 0.1, 0.2)},
}


@dataclass(frozen=True)
class TrainConfig:
    """Optimisation settings shared by every grid point (SentEval's defaults: Adam, batch 64,
    tenacity 5)."""

    lr: float = 1e-3
    batch_size: int = 64
    max_epochs: int = 200
    patience: int = 5
    lbfgs_iterations: int = 500  # logistic regression: full-batch L-BFGS to convergence
    threads: int = 1  # torch intra-op threads while training (small models: 1 is fastest)


@dataclass
class ClassifierResult:
    """The grid point chosen on dev and its accuracies (fractions in [0, 1])."""

    classifier: str
    chosen: dict[str, Any]
    dev_accuracy: float
    test_accuracy: float
    epochs: int
    grid: list[dict[str, Any]] = field(default_factory=list)  # every point: params, dev, epochs
    test_predictions: np.ndarray | None = field(default=None, repr=False)


def encode_labels(train: Sequence[str], *others: Sequence[str]
                  ) -> tuple[list[str], list[np.ndarray]]:
    """(classes sorted, one (n,) int64 array per argument); labels unseen in ``train`` are -1."""
    classes = sorted(set(train))
    index = {c: i for i, c in enumerate(classes)}
    arrays = [np.array([index.get(y, -1) for y in ys], dtype=np.int64) for ys in (train, *others)]
    return classes, arrays


def accuracy(pred: np.ndarray, gold: np.ndarray) -> float:
    """Fraction of ``pred == gold`` (0.0 for no examples)."""
    return float(np.mean(pred == gold)) if gold.size else 0.0


def grid(classifier: str, overrides: dict[str, Sequence[Any]] | None = None
         ) -> list[dict[str, Any]]:
    """Every hyperparameter combination of ``classifier`` (``overrides`` replace axes)."""
    if classifier not in CLASSIFIERS:
        raise ParameterError(f"unknown classifier {classifier!r}; known: {', '.join(CLASSIFIERS)}")
    axes = {**CLASSIFIERS[classifier], **(overrides or {})}
    names = sorted(axes)
    return [dict(zip(names, combo, strict=True))
            for combo in itertools.product(*(axes[n] for n in names))]


def _module(classifier: str, dim: int, n_classes: int, point: dict[str, Any]) -> Any:
    import torch

    if classifier == "logreg":
        return torch.nn.Linear(dim, n_classes)
    hidden = int(point["hidden"])
    return torch.nn.Sequential(
        torch.nn.Linear(dim, hidden), torch.nn.Sigmoid(),
        torch.nn.Dropout(float(point["dropout"])), torch.nn.Linear(hidden, n_classes))


def _predict(module: Any, x: Any, batch: int = 4096) -> np.ndarray:
    import torch

    module.eval()
    out = []
    with torch.no_grad():
        for a in range(0, x.shape[0], batch):
            out.append(module(x[a:a + batch]).argmax(-1))
    return torch.cat(out).numpy() if out else np.zeros(0, dtype=np.int64)


def _train_logreg(point: dict[str, Any], x_tr: Any, y_tr: Any, x_va: Any, y_va: np.ndarray,
                  n_classes: int, cfg: TrainConfig) -> tuple[Any, float, int]:
    """Full-batch L-BFGS on mean cross-entropy + ``l2``/2 * ||W||^2 (zero init: the convex
    optimum, no randomness); returns (module, dev accuracy, L-BFGS iterations)."""
    import torch
    import torch.nn.functional as F

    module = torch.nn.Linear(x_tr.shape[1], n_classes)
    torch.nn.init.zeros_(module.weight)
    torch.nn.init.zeros_(module.bias)
    l2 = float(point["l2"])
    opt = torch.optim.LBFGS(module.parameters(), lr=1.0, max_iter=cfg.lbfgs_iterations,
                            tolerance_grad=1e-6, tolerance_change=1e-9, history_size=20,
                            line_search_fn="strong_wolfe")

    def closure() -> Any:
        opt.zero_grad()
        loss = F.cross_entropy(module(x_tr), y_tr) + 0.5 * l2 * module.weight.pow(2).sum()
        loss.backward()
        return loss

    opt.step(closure)
    iterations = int(opt.state[opt._params[0]].get("n_iter", 0))
    return module, accuracy(_predict(module, x_va), y_va), iterations


def _train_one(classifier: str, point: dict[str, Any], x_tr: Any, y_tr: Any, x_va: Any,
               y_va: np.ndarray, n_classes: int, cfg: TrainConfig, seed: int
               ) -> tuple[Any, float, int]:
    """(best module by dev accuracy, its dev accuracy, epochs run)."""
    import torch

    gen = torch.Generator().manual_seed(seed)
    with torch.random.fork_rng(devices=[]):  # weight init and dropout masks; global RNG untouched
        torch.manual_seed(seed)
        return _loop(classifier, point, x_tr, y_tr, x_va, y_va, n_classes, cfg, gen)


def _loop(classifier: str, point: dict[str, Any], x_tr: Any, y_tr: Any, x_va: Any,
          y_va: np.ndarray, n_classes: int, cfg: TrainConfig, gen: Any) -> tuple[Any, float, int]:
    import copy

    import torch
    import torch.nn.functional as F

    module = _module(classifier, x_tr.shape[1], n_classes, point)
    opt = torch.optim.Adam(module.parameters(), lr=cfg.lr, weight_decay=float(point.get("l2", 0.0)))
    n = x_tr.shape[0]
    best_acc, best_state, bad, ran = -1.0, None, 0, 0
    for epoch in range(1, cfg.max_epochs + 1):
        ran = epoch
        module.train()
        for idx in torch.randperm(n, generator=gen).split(cfg.batch_size):
            opt.zero_grad()
            F.cross_entropy(module(x_tr[idx]), y_tr[idx]).backward()
            opt.step()
        acc = accuracy(_predict(module, x_va), y_va)
        if acc > best_acc:
            best_acc, best_state, bad = acc, copy.deepcopy(module.state_dict()), 0
        else:
            bad += 1
            if bad >= cfg.patience:
                break
    assert best_state is not None
    module.load_state_dict(best_state)
    return module, best_acc, ran


def fit_select(classifier: str, x_train: np.ndarray, y_train: np.ndarray, x_dev: np.ndarray,
               y_dev: np.ndarray, x_test: np.ndarray, y_test: np.ndarray, *, n_classes: int,
               seed: int = 0, config: TrainConfig | None = None,
               grid_overrides: dict[str, Sequence[Any]] | None = None) -> ClassifierResult:
    """Train ``classifier`` (``logreg`` | ``mlp``) at every grid point, keep the best on dev
    accuracy (ties: the first point in grid order), and score it on test.

    ``x_*``: (n_split, dim) float; ``y_*``: (n_split,) int64 (``-1`` = unseen label, never right).
    """
    import torch

    cfg = config or TrainConfig()
    if x_train.shape[0] == 0 or x_dev.shape[0] == 0:
        raise ParameterError("a classifier needs training and dev examples")
    if np.any(y_train < 0) or np.any(y_train >= n_classes):
        raise ParameterError("training labels must lie in 0..n_classes-1")
    mean = x_train.mean(axis=0, dtype=np.float64)
    std = x_train.std(axis=0, dtype=np.float64)
    std[std < 1e-8] = 1.0

    def tensor(x: np.ndarray) -> Any:
        return torch.from_numpy(((np.asarray(x, dtype=np.float64) - mean) / std).astype(np.float32))

    x_tr, x_va, x_te = tensor(x_train), tensor(x_dev), tensor(x_test)
    y_tr = torch.from_numpy(np.asarray(y_train, dtype=np.int64))
    points = grid(classifier, grid_overrides)
    best: tuple[float, int, Any, int] | None = None
    tried: list[dict[str, Any]] = []
    for i, point in enumerate(points):
        with torch_threads(cfg.threads), timed(TRAINING):  # the run's training share
            if classifier == "logreg":
                module, dev_acc, epochs = _train_logreg(point, x_tr, y_tr, x_va, y_dev,
                                                        n_classes, cfg)
            else:
                module, dev_acc, epochs = _train_one(classifier, point, x_tr, y_tr, x_va,
                                                     y_dev, n_classes, cfg, seed)
        tried.append({"params": point, "dev_accuracy": dev_acc, "epochs": epochs})
        if best is None or dev_acc > best[0]:
            best = (dev_acc, i, module, epochs)
    assert best is not None
    dev_acc, i, module, epochs = best
    pred = _predict(module, x_te)
    return ClassifierResult(classifier, dict(points[i]), dev_acc, accuracy(pred, y_test), epochs,
                            tried, pred)
