"""A task's metrics on predictions, with the per-sentence statistics the bootstrap resamples.

:func:`score` gives ``task.evaluate``'s metrics and :func:`sentence_stats`'s
:class:`~synrob.probe.metrics.bootstrap.SentenceStats` for the kinds of the built-in tasks
(:mod:`synrob.probe.metrics.bootstrap` says how each form is resampled).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..metrics import trees as metrics
from ..metrics.bootstrap import SentenceStats
from .base import EXCLUDED, GoldCorpus, Task
from .structural import DistanceTask, distance_metrics, distance_scores

__all__ = ["sentence_stats", "score"]


def _ratio(a: Sequence[float], b: Sequence[float]) -> SentenceStats:
    return SentenceStats("ratio", np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64))


def _in_range(n: int, value: float, lo: int = 5, hi: int = 50) -> tuple[float, float]:
    return (value, float(n)) if lo <= n <= hi else (float("nan"), -1.0)


def _distance_stats(scores: metrics.DistanceScores) -> dict[str, SentenceStats]:
    """The distance metrics' per-sentence statistics, from the task's per-sentence counts."""
    return {"uuas": _ratio(scores.right, scores.edges),
            "uuas_punct": _ratio(scores.right_punct, scores.edges_punct),
            "dspr": SentenceStats("by_length", scores.rho, scores.lengths),
            "sdr": _ratio(scores.sdr_right, scores.sdr_pairs)}


def _depth_stats(gold: GoldCorpus, preds: list[np.ndarray]) -> dict[str, SentenceStats]:
    nspr, root = [], []
    for i, p in enumerate(preds):
        g = gold.depths(i)
        nspr.append(_in_range(len(g), metrics.spearman(p, g) if 5 <= len(g) <= 50 else np.nan))
        root.append(metrics.root_accuracy_from_depths([p], [gold.root(i)], [gold.punct(i)]))
    a, b = zip(*nspr, strict=True) if nspr else ((), ())
    return {"nspr": SentenceStats("by_length", np.asarray(a, float), np.asarray(b, float)),
            "root_acc": _ratio(root, np.ones(len(root)))}


def sentence_stats(task: Task, gold: GoldCorpus, preds: list[np.ndarray]
                   ) -> dict[str, SentenceStats]:
    """Metric name -> :class:`SentenceStats` for the metrics of the built-in tasks' kinds
    (a control task is scored on its control corpus); metrics of other tasks get none."""
    control = getattr(task, "control_corpus", None)
    if control is not None:
        gold, task = control(gold), task.base  # type: ignore[attr-defined]
    ones = np.ones(len(gold))
    if task.kind == "tag":  # a word outside the task (EXCLUDED) is neither right nor counted
        targets = task.targets(gold)
        right = [float(np.sum(np.asarray(p) == t)) for p, t in zip(preds, targets, strict=True)]
        counted = [float(np.sum(t != EXCLUDED)) for t in targets]
        return {"acc": _ratio(right, counted), "words_right": _ratio(right, ones)}
    if task.kind == "select":
        right = [float(int(p) == int(t)) for p, t in zip(preds, task.targets(gold), strict=True)]
        return {"root_acc": _ratio(right, ones)}
    if task.kind == "sentence":
        pred = np.array([float(task.labels[int(p)]) for p in preds])
        real = np.array([float(gold.max_depth(i)) for i in range(len(gold))])
        return {"acc": _ratio((pred == real).astype(float), ones),
                "spearman": SentenceStats("spearman", pred, real)}
    if task.kind == "distance":
        return _distance_stats(distance_scores(gold, preds))
    if task.kind == "depth":
        return _depth_stats(gold, preds)
    return {}


def score(task: Task, gold: GoldCorpus, preds: list[np.ndarray]
          ) -> tuple[dict[str, float], dict[str, SentenceStats]]:
    """``task.evaluate(gold, preds)`` and :func:`sentence_stats` together. For a distance task
    that scores with :class:`DistanceTask`'s own ``evaluate``, each sentence's trees and
    Spearman are computed once for both (the same values as computing them apart)."""
    if isinstance(task, DistanceTask) and type(task).evaluate is DistanceTask.evaluate:
        scores = distance_scores(gold, preds)
        return distance_metrics(gold, scores), _distance_stats(scores)
    return task.evaluate(gold, preds), sentence_stats(task, gold, preds)
