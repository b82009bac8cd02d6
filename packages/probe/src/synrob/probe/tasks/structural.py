"""Tree-structure tasks: ``distance``, ``parse`` and ``depth`` (Hewitt & Manning 2019)."""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from ..metrics import trees as metrics
from .base import GoldCorpus, Task

HM_PAPER = "Hewitt & Manning 2019, A Structural Probe for Finding Syntax in Word Representations"


def distance_scores(gold: GoldCorpus, predictions: list[np.ndarray]) -> metrics.DistanceScores:
    """Per-sentence counts of the distance metrics (:class:`~synrob.probe.metrics.trees.DistanceScores`)
    of ``predictions`` (one (n, n) matrix per sentence), with the gold trees kept by ``gold``."""
    n = len(gold)
    return metrics.distance_scores(
        predictions, [gold.distances(i) for i in range(n)],
        [gold.tree_edges(i, punct=False) for i in range(n)],
        [gold.tree_edges(i) for i in range(n)], [gold.punct(i) for i in range(n)])


def distance_metrics(gold: GoldCorpus, scores: metrics.DistanceScores) -> dict[str, float]:
    """:meth:`DistanceTask.evaluate`'s dictionary from the corpus's per-sentence counts."""
    return {**scores.corpus(), "sentences": float(len(gold))}


class DistanceTask(Task):
    """Undirected tree distance of every word pair."""

    name = "distance"
    kind = "distance"
    summary = "tree distance of every word pair (UUAS, DSpr, SDR)"
    paper = HM_PAPER
    default_probe = "structural"
    primary_metric = "uuas"

    def targets(self, gold: GoldCorpus) -> list[np.ndarray]:
        return [gold.distances(i) for i in range(len(gold))]

    def evaluate(self, gold: GoldCorpus, predictions: list[np.ndarray]) -> dict[str, float]:
        """UUAS without and with punctuation, DSpr and SDR (the values of
        :func:`~synrob.probe.metrics.trees.uuas`, ``dspr`` and ``sdr``), and the sentence count."""
        return distance_metrics(gold, distance_scores(gold, predictions))


class ParseTask(DistanceTask):
    """The undirected tree itself, recovered as the MST of predicted distances."""

    name = "parse"
    summary = "the undirected tree as the MST of predicted distances (perceptron probe)"
    paper = "Hall Maudslay et al. 2020, A Tale of a Probe and a Parser"
    default_probe = "perceptron"


class DepthTask(Task):
    """Depth of every word in the tree (root 0)."""

    name = "depth"
    kind = "depth"
    summary = "depth of every word (NSpr, root accuracy)"
    paper = HM_PAPER
    default_probe = "structural"
    primary_metric: ClassVar[str] = "nspr"

    def targets(self, gold: GoldCorpus) -> list[np.ndarray]:
        return [gold.depths(i) for i in range(len(gold))]

    def evaluate(self, gold: GoldCorpus, predictions: list[np.ndarray]) -> dict[str, float]:
        punct = [gold.punct(i) for i in range(len(gold))]
        roots = [gold.root(i) for i in range(len(gold))]
        return {
            "nspr": metrics.nspr(predictions, self.targets(gold)),
            "root_acc": metrics.root_accuracy_from_depths(predictions, roots, punct),
            "sentences": float(len(gold)),
        }


TASKS = (DistanceTask, ParseTask, DepthTask)
