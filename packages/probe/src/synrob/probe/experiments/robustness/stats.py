"""Per-sentence probe metrics and worst-case aggregation for the ``robustness`` experiment.

La Malfa et al. (2022, "Emergent linguistic structures in neural networks are fragile") measure
robustness per sentence: for each test sentence, ``k`` syntax-preserving perturbations are drawn
and the *worst* one counts (their Algorithm 1 for representations, Algorithm 2 for a probe's
metric); the per-sentence worst cases are then averaged over the test set. The functions here
score one sentence at a time with the same definitions as :mod:`synrob.probe.metrics.trees`' corpus
metrics (and La Malfa et al.'s own, :func:`lamalfa_counts`), give each sentence's probe loss
(:func:`sentence_losses`, which picks the one adversarial variant per sentence) and take the
worst cases: on that one variant (:func:`adversary_drop`) or per metric
(:func:`worst_case_drop`).

Shapes: ``clean`` per-sentence values are ``(n,)``; perturbed values ``(n, k)`` (variant ``j`` of
sentence ``i`` at ``[i, j]``); NaN marks an undefined value (e.g. UUAS of a sentence without a
non-punctuation edge), ignored by the averages.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from ...metrics import trees as metrics
from ...metrics.lamalfa import (
    LAMALFA_MAX_LENGTH,
    lamalfa_gold_matrix,
    lamalfa_pred_matrix,
    sdr_lamalfa_counts,
    uuas_lamalfa_counts,
)
from ...tasks.base import GoldCorpus, Task
from ..stats import finite_mean

if TYPE_CHECKING:
    import torch

    from ...probes.base import Probe
    from ...probes.inputs import Features

__all__ = ["sentence_metrics", "worst_case_drop", "worst_case_distance", "adversarial_choice",
           "adversary_drop", "sentence_losses", "lamalfa_counts", "TASK_METRICS"]

#: The per-sentence metrics of each task kind (higher is better for all of them).
TASK_METRICS: dict[str, tuple[str, ...]] = {
    "distance": ("sdr", "uuas", "dspr"),
    "depth": ("nspr", "root_acc"),
    "tag": ("words_right", "acc"),
    "select": ("root_acc",),
    "sentence": ("acc",),
}


def _uuas_one(pred: np.ndarray, gold: GoldCorpus, i: int) -> float:
    """Sentence ``i``'s UUAS without punctuation, against the gold tree ``gold`` keeps."""
    edges = gold.tree_edges(i, punct=False)
    if not edges:
        return float("nan")
    return len(edges & metrics.mst_edges(pred, ~gold.punct(i))) / len(edges)


def sentence_metrics(task: Task, gold: GoldCorpus, predictions: Sequence[np.ndarray]
                     ) -> dict[str, np.ndarray]:
    """Metric name -> ``(n_sentences,)`` float64 per-sentence values for ``task``'s kind.

    * distance: ``sdr`` (share of word pairs whose rounded predicted distance is the gold one),
      ``uuas`` (gold edges recovered by the MST of predicted distances, punctuation excluded),
      ``dspr`` (Spearman of each word's predicted vs gold distance row, averaged over words);
    * depth: ``nspr`` (Spearman of predicted vs gold depths), ``root_acc`` (least deep
      non-punctuation word is the root: 0/1);
    * tag: ``words_right`` (correctly tagged words), ``acc`` (their share);
    * select: ``root_acc`` (the selected word is the root: 0/1);
    * sentence: ``acc`` (the predicted class is right: 0/1).
    """
    n = len(gold)
    kind = task.kind
    out = {m: np.full(n, np.nan) for m in TASK_METRICS[kind]}
    if kind == "distance":
        for i, pred in enumerate(predictions):
            gd = gold.distances(i)
            pd = np.asarray(pred, dtype=np.float64)
            m = gd.shape[0]
            if m >= 2:
                iu = np.triu_indices(m, k=1)
                out["sdr"][i] = float(np.mean(np.rint(pd[iu]) == gd[iu]))
                out["dspr"][i] = finite_mean(metrics.row_spearman(pd, gd.astype(np.float64)))
            out["uuas"][i] = _uuas_one(pd, gold, i)
    elif kind == "depth":
        for i, pred in enumerate(predictions):
            gd = gold.depths(i)
            out["nspr"][i] = metrics.spearman(np.asarray(pred, float), gd) if gd.size > 1 else np.nan
            out["root_acc"][i] = metrics.root_accuracy_from_depths(
                [pred], [gold.root(i)], [gold.punct(i)])
    elif kind == "tag":
        targets = task.targets(gold)
        for i, (pred, tg) in enumerate(zip(predictions, targets, strict=True)):
            right = np.asarray(pred) == tg
            out["words_right"][i] = float(right.sum())
            out["acc"][i] = float(right.mean()) if right.size else np.nan
    elif kind in ("select", "sentence"):
        targets = task.targets(gold)
        name = "root_acc" if kind == "select" else "acc"
        out[name][:] = [float(int(p) == int(t)) for p, t in zip(predictions, targets, strict=True)]
    else:  # pragma: no cover - every Task kind is handled above
        raise ValueError(f"no per-sentence metrics for task kind {kind!r}")
    return out


def worst_case_drop(clean: np.ndarray, perturbed: np.ndarray) -> np.ndarray:
    """Per sentence, the largest drop ``clean[i] - perturbed[i, j]`` over its variants ``j``.

    ``clean`` (n,), ``perturbed`` (n, k) -> (n,); NaN where no variant (or the clean value) is
    defined. A negative value means every variant scored better than the clean sentence.
    """
    drops = np.asarray(clean, float)[:, None] - np.asarray(perturbed, float)
    out = np.full(drops.shape[0], np.nan)
    ok = np.isfinite(drops).any(axis=1)
    out[ok] = np.nanmax(drops[ok], axis=1)
    return out


def worst_case_distance(clean: np.ndarray, perturbed: np.ndarray) -> dict[str, np.ndarray]:
    """Algorithm 1: per sentence, the largest l2 distance and the smallest cosine similarity
    between the clean sentence vector and those of its variants.

    ``clean`` (n, d), ``perturbed`` (n, k, d) -> ``{"l2": (n,), "cosine": (n,)}`` float64.
    """
    c = np.asarray(clean, np.float64)[:, None, :]
    p = np.asarray(perturbed, np.float64)
    l2 = np.linalg.norm(p - c, axis=-1)
    denom = np.linalg.norm(c, axis=-1) * np.linalg.norm(p, axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        cos = np.where(denom > 0, (c * p).sum(-1) / np.where(denom > 0, denom, 1.0), np.nan)
    worst_cos = np.where(np.isnan(cos), np.inf, cos).min(axis=1)
    worst_cos[np.isinf(worst_cos)] = np.nan
    return {"l2": l2.max(axis=1), "cosine": worst_cos}


def adversarial_choice(errors: np.ndarray) -> np.ndarray:
    """Per sentence, the variant with the largest error (first on ties). (n, k) -> (n,) int."""
    e = np.where(np.isfinite(errors), errors, -np.inf)
    return np.argmax(e, axis=1)


def adversary_drop(clean: np.ndarray, perturbed: np.ndarray, pick: np.ndarray) -> np.ndarray:
    """Per sentence, ``clean[i] - perturbed[i, pick[i]]``: the drop on one chosen variant.

    ``clean`` (n,), ``perturbed`` (n, k), ``pick`` (n,) int -> (n,); NaN where either value is.
    """
    p = np.asarray(perturbed, float)
    return np.asarray(clean, float) - p[np.arange(p.shape[0]), np.asarray(pick, dtype=np.int64)]


def sentence_losses(task: Task, probe: Probe, module: torch.nn.Module, feats: Features,
                    gold: GoldCorpus, device: str = "cpu") -> np.ndarray:
    """The probe's own training loss on each sentence alone: ``(n_sentences,)`` float64.

    Each sentence is a batch of one, scored by ``probe.loss`` - for the structural probe the L1
    distance (or depth) error normalised by the squared (or plain) length, for classifier probes
    the cross-entropy (mean over the sentence's tagged words for ``tag`` tasks). NaN where the
    loss is undefined (e.g. a sentence whose every target is ignored).
    """
    import torch

    from ...probes.normalize import inputs_for
    from ...training.batches import make_batches

    feats = inputs_for(module, feats)
    targets = task.targets(gold)
    data = make_batches(feats, task.kind, targets, batch_size=1, heads=gold.heads,
                        pooling=task.options.get("pooling", "mean"), device=device)
    out = np.full(data.n_sentences, np.nan)
    module.eval()
    with torch.no_grad():
        for b in data.batches:
            out[int(b.ids[0])] = float(probe.loss(module, data.x(b), b))
    return out


def lamalfa_counts(gold: GoldCorpus, predictions: Sequence[np.ndarray],
                   max_length: int = LAMALFA_MAX_LENGTH) -> dict[str, np.ndarray]:
    """Per-sentence counts of La Malfa et al.'s UUAS and SDR (:mod:`synrob.probe.metrics.lamalfa`).

    Returns ``(n, 2)`` int arrays ``uuas_lamalfa`` (hits, gold edge cells) and ``sdr_lamalfa``
    (equal cells, cells) on their ``(max_length, max_length)`` matrices (padding cells of the
    prediction set to 0). A per-sentence value is ``hits / total`` (0 when ``total`` is 0, as in
    their code); a corpus value sums both columns first.
    """
    n = len(predictions)
    out = {"uuas_lamalfa": np.zeros((n, 2), np.int64), "sdr_lamalfa": np.zeros((n, 2), np.int64)}
    for i, pred in enumerate(predictions):
        g = lamalfa_gold_matrix(gold.heads[i].tolist(), max_length)
        p = lamalfa_pred_matrix(pred, max_length)
        out["uuas_lamalfa"][i] = uuas_lamalfa_counts(g, p)
        out["sdr_lamalfa"][i] = sdr_lamalfa_counts(g, p)
    return out
