"""Fitting erasers on a classification task's training words: LEACE and its random control.

* :func:`fit_leace`: LEACE (Belrose et al. 2023) through ``concept_erasure.LeaceFitter`` on the
  raw word vectors ``x`` (n, d) of the training words the task labels and their one-hot labels
  (n, C). The statistics are accumulated in float64 (a causal LM's massive activations make the
  covariance badly conditioned in float32). Two settings differ from the library's defaults,
  both to keep the guarantee that the erased training vectors have **equal class means** (zero
  cross-covariance with the labels, so no linear classifier beats the constant one on them):
  ``constrain_cov_trace=False`` (the trace constraint mixes in an orthogonal projection, which
  does not zero the cross-covariance) and ``svd_tol=1e-6`` (the default ``0.01`` leaves the
  directions of rare classes, e.g. a deprel seen a few dozen times, un-erased). The shrinkage
  estimate of the covariance is kept: it only changes the whitening, and the cross-covariance
  is zeroed for any invertible whitening. The removed subspace keeps the kept singular
  directions only, so ``proj_left`` is (d, k), ``proj_right`` (k, d) with ``k`` the rank
  (at most C - 1).
* :func:`random_eraser`: the control (Elazar et al. 2021): the orthogonal projection off a random
  ``k``-dimensional subspace, ``Q`` (d, k) from the QR decomposition of a Gaussian matrix drawn
  from ``torch.Generator().manual_seed(seed)`` (float64, on the CPU), ``proj_left = Q``,
  ``proj_right = Q.T``. Its ``bias`` is the training mean, like LEACE's: both erasers keep the
  training mean where it is and differ only in the subspace they remove (with a bias of 0 the
  control would also move every vector towards the origin). :func:`random_control` builds it
  from a fitted eraser (same rank, bias, class means, labels).
* :func:`matched_control`: the control matched in rank **and** in size: a random oblique
  projection of the same rank whose mean displacement ``mean_i ||x_i - E(x_i)||`` over the
  training vectors equals LEACE's (:func:`mean_displacement`). The rank-matched control moves
  the vectors 2-3x less than LEACE (an orthogonal projection removes only the variance that
  happens to lie in a random subspace; LEACE's projection is oblique), so "LEACE hurts more
  than random" could be a size effect. Construction, with ``Q`` (d, k) the rank-matched
  control's subspace (the same seed, so the two controls share it) and ``c = Q^T (x - bias)``::

      E(x) = x - (Q + t N) c       proj_left = Q + t N (d, k),   proj_right = Q^T (k, d)

  ``N`` (d, k): a second Gaussian draw of the same generator, projected off ``Q`` (orthonormal
  columns when ``2k <= d``, else unit columns), so ``Q^T N = 0`` and ``proj_right @ proj_left =
  I``: like LEACE and the rank-matched control, ``E`` is a projection (idempotent) of rank
  ``k`` that keeps the training mean; its kernel, the information it removes, is the random
  subspace ``span(Q + t N)``, and every vector moves by ``sqrt(||c||^2 + t^2 ||N c||^2)``
  (``t = 0``: the orthogonal, rank-matched control). ``t >= 0`` is solved (bisection, to a
  relative 1e-9) so that the mean displacement over the training vectors equals LEACE's. If
  LEACE moves the vectors *less* than the orthogonal projection (no oblique projection moves
  them less), the control is the shrunk projection ``E(x) = x - s Q c`` with ``s`` the ratio
  of the two mean displacements (it only shrinks the random subspace, removing no
  information), with a :class:`~synrob.perturb.errors.SynrobWarning`; ``meta["construction"]``
  says which (``oblique`` or ``shrunk``).

``class_means`` (C, d) is the training mean of each class's raw vectors (the counterfactual's
targets); a class with no training word gets the overall training mean. Stored in float32.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from synrob.perturb.errors import SynrobError, SynrobWarning

from .eraser import Eraser

__all__ = ["SVD_TOL", "labelled_rows", "fit_leace", "random_eraser", "random_control",
           "matched_control", "mean_displacement", "class_means", "apply_rows",
           "class_mean_gap"]

#: Singular values of the whitened cross-covariance below this are not erased (see above).
SVD_TOL = 1e-6
_CHUNK = 32768


def labelled_rows(matrix: np.ndarray, targets: Sequence[np.ndarray]
                  ) -> tuple[np.ndarray, np.ndarray]:
    """The rows of ``matrix`` (n_words, d) whose target is a class (``>= 0``), and those targets:
    ``(x (m, d), y (m,) int64)``. Words outside the task and labels unseen in training are
    left out."""
    y = np.concatenate([np.asarray(t, dtype=np.int64) for t in targets]) if len(targets) else (
        np.zeros(0, dtype=np.int64))
    if y.size != matrix.shape[0]:
        raise SynrobError(f"{y.size} targets for {matrix.shape[0]} word vectors")
    keep = np.flatnonzero(y >= 0)
    return np.asarray(matrix)[keep], y[keep]


def _chunks(n: int) -> range:
    return range(0, n, _CHUNK)


def class_means(x: np.ndarray, y: np.ndarray, n_classes: int) -> Any:
    """Mean raw vector of each class: torch float32 (n_classes, d); an absent class gets the
    overall mean."""
    import torch

    return torch.from_numpy(_means(x, y, n_classes)).float()


def _means(x: np.ndarray, y: np.ndarray, n_classes: int) -> np.ndarray:
    """:func:`class_means` in float64 numpy (n_classes, d)."""
    d = x.shape[1]
    sums = np.zeros((n_classes, d))
    for a in _chunks(x.shape[0]):
        np.add.at(sums, y[a:a + _CHUNK], np.asarray(x[a:a + _CHUNK], dtype=np.float64))
    counts = np.bincount(y, minlength=n_classes).astype(np.float64)
    overall = sums.sum(axis=0) / max(counts.sum(), 1.0)
    return np.where(counts[:, None] > 0, sums / np.maximum(counts, 1.0)[:, None], overall)


def fit_leace(x: np.ndarray, y: np.ndarray, labels: Sequence[str], *,
              meta: dict[str, Any] | None = None, svd_tol: float = SVD_TOL) -> Eraser:
    """LEACE fitted on raw training vectors ``x`` (m, d) and class ids ``y`` (m,) in
    ``range(len(labels))``; see the module docstring. ``meta`` goes into the eraser."""
    import torch
    from concept_erasure import LeaceFitter

    n_classes = len(labels)
    if x.shape[0] < 2 or n_classes < 2 or np.unique(y).size < 2:
        raise SynrobError(f"LEACE needs training words of at least two classes; got "
                          f"{x.shape[0]} words of {np.unique(y).size} class(es)")
    fitter = LeaceFitter(x.shape[1], n_classes, dtype=torch.float64, constrain_cov_trace=False,
                         svd_tol=svd_tol)
    eye = torch.eye(n_classes, dtype=torch.float64)
    for a in _chunks(x.shape[0]):
        xs = torch.from_numpy(np.asarray(x[a:a + _CHUNK], dtype=np.float64))
        fitter.update(xs, eye[torch.from_numpy(y[a:a + _CHUNK])])
    eraser = fitter.eraser
    keep = eraser.proj_right.norm(dim=1) > 0  # the kept singular directions (rows of u.T W)
    left, right = eraser.proj_left[:, keep], eraser.proj_right[keep]
    info = {"rank": int(keep.sum()), "svd_tol": svd_tol, "train_words": int(x.shape[0])}
    return Eraser("leace", left.float().contiguous(), right.float().contiguous(),
                  eraser.bias.float().contiguous(), class_means(x, y, n_classes), list(labels),
                  {**(meta or {}), **info})


def random_eraser(dim: int, rank: int, *, seed: int, bias: Any, class_means: Any,
                  labels: Sequence[str], meta: dict[str, Any] | None = None) -> Eraser:
    """The orthogonal projection off a random ``rank``-dimensional subspace of R^dim (seeded;
    see the module docstring), with ``bias`` (dim,) and ``class_means`` (C, dim)."""
    import torch

    if not 0 <= rank <= dim:
        raise SynrobError(f"a random eraser of rank {rank} in dimension {dim}")
    q = _random_basis(dim, rank, seed)[0].float().contiguous()
    return Eraser("random", q, q.T.contiguous(), torch.as_tensor(bias).float().clone(),
                  torch.as_tensor(class_means).float().clone(), list(labels),
                  {**(meta or {}), "rank": int(rank), "seed": int(seed)})


def random_control(eraser: Eraser, seed: int) -> Eraser:
    """The random control of a fitted eraser: :func:`random_eraser` of its rank, with its
    bias, class means, labels and provenance (``kind`` random, ``control_of`` its kind)."""
    rank = int(eraser.meta.get("rank", eraser.rank))
    meta = {**eraser.meta, "control_of": eraser.kind}
    return random_eraser(eraser.dim, rank, seed=seed, bias=eraser.bias,
                         class_means=eraser.class_means, labels=eraser.labels, meta=meta)


def _random_basis(dim: int, rank: int, seed: int) -> tuple[Any, Any]:
    """``Q`` (dim, rank), orthonormal columns from the QR decomposition of a Gaussian draw of
    ``torch.Generator().manual_seed(seed)``, and ``N`` (dim, rank) from that generator's next
    draw, projected off ``Q`` (orthonormal columns when ``2 rank <= dim``, else unit columns;
    zero columns stay 0); both float64."""
    import torch

    gen = torch.Generator().manual_seed(int(seed))
    q, _ = torch.linalg.qr(torch.randn(dim, rank, generator=gen, dtype=torch.float64))
    g = torch.randn(dim, rank, generator=gen, dtype=torch.float64)
    g = g - q @ (q.T @ g)
    if 2 * rank <= dim:
        n, _ = torch.linalg.qr(g)
        n = n - q @ (q.T @ n)  # QR's round-off, back off Q
    else:
        norms = g.norm(dim=0, keepdim=True)
        n = torch.where(norms > 1e-12, g / norms.clamp_min(1e-12), torch.zeros_like(g))
    return q, n


def mean_displacement(eraser: Eraser, x: np.ndarray) -> float:
    """Mean Euclidean length of the change ``||x_i - E(x_i)||`` over the rows of ``x`` (m, d),
    computed in float64 by chunks; NaN for no row."""
    import torch

    if x.shape[0] == 0:
        return float("nan")
    total = 0.0
    for a in _chunks(x.shape[0]):
        block = torch.from_numpy(np.asarray(x[a:a + _CHUNK], dtype=np.float64))
        total += float(eraser.component(block).norm(dim=1).sum())
    return total / x.shape[0]


def _coordinates(x: np.ndarray, bias: Any, q: Any) -> np.ndarray:
    """``c = (x - bias) @ q`` for the rows of ``x`` (m, d): (m, k) float64."""
    import torch

    out = np.empty((x.shape[0], q.shape[1]))
    for a in _chunks(x.shape[0]):
        block = torch.from_numpy(np.asarray(x[a:a + _CHUNK], dtype=np.float64))
        out[a:a + _CHUNK] = ((block - bias) @ q).numpy()
    return out


def _solve_oblique(c: np.ndarray, gram: np.ndarray, target: float) -> float:
    """``t >= 0`` with ``mean_i sqrt(||c_i||^2 + t^2 c_i^T gram c_i) = target`` (bisection on
    an increasing function; ``target`` at least its value at 0)."""
    a = np.einsum("ij,ij->i", c, c)
    b = np.einsum("ij,ij->i", c @ gram, c)

    def f(t: float) -> float:
        return float(np.sqrt(a + t * t * b).mean())

    if target <= f(0.0) * (1 + 1e-9):  # the orthogonal projection moves them as far
        return 0.0
    lo, hi = 0.0, 1.0
    while f(hi) < target:
        if hi > 1e12:
            raise SynrobError("no oblique projection reaches LEACE's displacement (the random "
                              "subspace's complement is empty)")
        lo, hi = hi, 2.0 * hi
    while hi - lo > 1e-9 * hi:
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if f(mid) < target else (lo, mid)
    return 0.5 * (lo + hi)


def matched_control(eraser: Eraser, x: np.ndarray, seed: int) -> Eraser:
    """The displacement-matched random control of a fitted eraser (kind ``random_matched``):
    see the module docstring. ``x`` (m, d): the raw training vectors the eraser was fitted on,
    over which the mean displacements are matched. ``meta`` adds ``construction``, ``oblique``
    (``t``) or ``scale`` (``s``), and the three mean displacements on ``x``."""
    import warnings

    import torch

    rank = int(eraser.meta.get("rank", eraser.rank))
    q, n = _random_basis(eraser.dim, rank, seed)
    c = _coordinates(x, eraser.bias.double(), q)
    target, base = mean_displacement(eraser, x), float(np.linalg.norm(c, axis=1).mean())
    if not base > 0:
        raise SynrobError("the training vectors do not move under a random projection of rank "
                          f"{rank}; no displacement-matched control")
    if target >= base:
        t = _solve_oblique(c, (n.T @ n).numpy(), target)
        left, how = q + t * n, {"construction": "oblique", "oblique": t}
    else:
        s = target / base
        warnings.warn(f"LEACE moves the training vectors less than a random projection of the "
                      f"same rank ({target:.4g} against {base:.4g}); the displacement-matched "
                      f"control shrinks a random subspace by {s:.3f} instead of removing it",
                      SynrobWarning, stacklevel=2)
        left, how = s * q, {"construction": "shrunk", "scale": s}
    meta = {**eraser.meta, "control_of": eraser.kind, "rank": rank, "seed": int(seed),
            "matched": "mean displacement on the training vectors", **how}
    control = Eraser("random_matched", left.float().contiguous(), q.T.float().contiguous(),
                     torch.as_tensor(eraser.bias).float().clone(),
                     torch.as_tensor(eraser.class_means).float().clone(), list(eraser.labels),
                     meta)
    control.meta.update({"displacement_target": target, "displacement_rank_matched": base,
                         "displacement": mean_displacement(control, x)})
    return control


def apply_rows(eraser: Eraser | None, matrix: np.ndarray) -> np.ndarray:
    """``eraser`` applied to every row of ``matrix`` (n, d), computed in float64 by chunks;
    float32 (n, d). ``None`` is the identity (a float32 copy)."""
    import torch

    out = np.empty(matrix.shape, dtype=np.float32)
    for a in _chunks(matrix.shape[0]):
        block = np.asarray(matrix[a:a + _CHUNK], dtype=np.float64)
        if eraser is not None:
            block = eraser(torch.from_numpy(block)).numpy()
        out[a:a + _CHUNK] = block
    return out


def class_mean_gap(x: np.ndarray, y: np.ndarray, n_classes: int) -> float:
    """Largest distance of a class mean from the overall mean of ``x`` (m, d), relative to the
    root mean square norm of the centred vectors: 0 when the class means are equal (what LEACE
    guarantees on its training words)."""
    means = _means(x, y, n_classes)
    counts = np.bincount(y, minlength=n_classes)
    overall = (means * counts[:, None]).sum(axis=0) / max(int(counts.sum()), 1)
    sq = sum(float(np.square(np.asarray(x[a:a + _CHUNK], dtype=np.float64) - overall).sum())
             for a in _chunks(x.shape[0]))
    spread = np.sqrt(sq / max(x.shape[0], 1))
    gaps = np.linalg.norm(means[counts > 0] - overall, axis=1)
    return float(gaps.max() / spread) if spread > 0 and gaps.size else 0.0
