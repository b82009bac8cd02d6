"""Classification tasks: ``pos`` (per word), ``root`` (one word per sentence), ``tree-depth``.

``tree-depth`` (:class:`CorpusTreeDepthTask`) is not SentEval's ``TreeDepth``: it labels every
sentence of the CoNLL-U files it is given with that sentence's maximum depth, as the corpus has
them, while SentEval's task file (:func:`synrob.perturb.senteval.tasks.tree_depth_task`) is a
balanced, length-stratified sample. See docs/senteval.md, "TreeDepth vs the tree-depth probe".
"""

from __future__ import annotations

from collections import Counter

import numpy as np
from synrob.perturb.params import Param

from .. import metrics
from .base import GoldCorpus, Task


class PosTask(Task):
    """Part of speech of every word: UPOS, or XPOS with ``tagset=xpos``."""

    name = "pos"
    kind = "tag"
    summary = "part-of-speech tag of every word (accuracy, words right per sentence)"
    paper = "Belinkov et al. 2017; Tenney et al. 2019"
    default_probe = "linear"
    primary_metric = "acc"
    params = (Param("tagset", str, "upos", "which CoNLL-U column to predict", ("upos", "xpos")),)

    def _tags(self, gold: GoldCorpus) -> list[list[str]]:
        return gold.upos if self.options["tagset"] == "upos" else gold.xpos

    def fit(self, train: GoldCorpus) -> None:
        self.labels = sorted({t for sent in self._tags(train) for t in sent})

    def targets(self, gold: GoldCorpus) -> list[np.ndarray]:
        """Class ids, -1 for a tag unseen in training (always counted wrong)."""
        index = {t: k for k, t in enumerate(self.labels)}
        return [np.array([index.get(t, -1) for t in sent], dtype=np.int64)
                for sent in self._tags(gold)]

    def evaluate(self, gold: GoldCorpus, predictions: list[np.ndarray]) -> dict[str, float]:
        tg = self.targets(gold)
        flat_p = np.concatenate([np.asarray(p) for p in predictions]) if predictions else []
        flat_g = np.concatenate(tg) if tg else []
        return {"acc": metrics.accuracy(flat_p, flat_g),
                "words_right": metrics.words_right_per_sentence(predictions, tg),
                "sentences": float(len(gold))}


class RootTask(Task):
    """Which word is the root: a score per word, softmax over the sentence."""

    name = "root"
    kind = "select"
    summary = "which word is the root of the sentence (root accuracy)"
    paper = "Hewitt & Manning 2019 (root accuracy)"
    default_probe = "linear"
    primary_metric = "root_acc"

    def targets(self, gold: GoldCorpus) -> list[np.ndarray]:
        return [np.array(gold.root(i), dtype=np.int64) for i in range(len(gold))]

    def evaluate(self, gold: GoldCorpus, predictions: list[np.ndarray]) -> dict[str, float]:
        tg = [int(t) for t in self.targets(gold)]
        return {"root_acc": metrics.accuracy([int(p) for p in predictions], tg),
                "sentences": float(len(gold))}


class CorpusTreeDepthTask(Task):
    """The sentence's maximum tree depth, predicted from a pooled sentence vector.

    Labels come straight from the gold corpus: every sentence of each file is labelled with
    its own maximum depth (edges, root 0), and the classes are all the depths seen in
    training (a depth unseen in training is always wrong). Nothing is filtered, balanced or
    decorrelated from length, unlike SentEval's ``TreeDepth`` task file
    (:func:`synrob.perturb.senteval.tasks.tree_depth_task`: 5-28-word sentences, a contiguous
    range of at least 4 depths, the same length distribution for every class).
    """

    name = "tree-depth"
    kind = "sentence"
    summary = "maximum depth of the sentence's tree, from a pooled vector (accuracy, Spearman)"
    paper = "Conneau et al. 2018, What you can cram into a single vector (TreeDepth)"
    default_probe = "linear"
    primary_metric = "acc"
    params = (Param("pooling", str, "mean", "how word vectors become a sentence vector",
                    ("mean", "max")),)

    def fit(self, train: GoldCorpus) -> None:
        depths = Counter(train.max_depth(i) for i in range(len(train)))
        self.labels = [str(d) for d in sorted(depths)]

    def targets(self, gold: GoldCorpus) -> list[np.ndarray]:
        index = {int(t): k for k, t in enumerate(self.labels)}
        return [np.array(index.get(gold.max_depth(i), -1), dtype=np.int64)
                for i in range(len(gold))]

    def evaluate(self, gold: GoldCorpus, predictions: list[np.ndarray]) -> dict[str, float]:
        gold_depth = [gold.max_depth(i) for i in range(len(gold))]
        pred_depth = [int(self.labels[int(p)]) for p in predictions]
        return {"acc": metrics.accuracy(pred_depth, gold_depth),
                "spearman": metrics.spearman(pred_depth, gold_depth),
                "sentences": float(len(gold))}


TASKS = (PosTask, RootTask, CorpusTreeDepthTask)
