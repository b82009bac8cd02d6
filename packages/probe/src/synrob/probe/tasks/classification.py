"""Classification tasks: ``pos``, ``deprel`` and ``feats`` (a label per word), ``root`` (one word
per sentence), ``tree-depth``.

``tree-depth`` (:class:`CorpusTreeDepthTask`) is not SentEval's ``TreeDepth``: it labels every
sentence of the CoNLL-U files it is given with that sentence's maximum depth, as the corpus has
them, while SentEval's task file (:func:`synrob.perturb.senteval.tasks.tree_depth_task`) is a
balanced, length-stratified sample. See docs/senteval.md, "TreeDepth vs the tree-depth probe".
"""

from __future__ import annotations

from abc import abstractmethod
from collections import Counter

import numpy as np
from synrob.perturb.errors import SynrobError
from synrob.perturb.io.feats import parse_feats
from synrob.perturb.params import Param

from ..metrics import trees as metrics
from .base import EXCLUDED, GoldCorpus, Task


class WordLabelTask(Task):
    """A label per word (a ``tag`` task) read from a column of the gold corpus.

    Subclasses give each word's label with :meth:`word_labels` (``None``: the word is not part
    of the task, target :data:`EXCLUDED`: never trained on, never scored) and put labels back
    into a corpus with :meth:`relabel` (what a control task scores on). The classes are the
    labels seen in training, sorted; a label unseen in training is target ``-1``, always wrong.
    ``acc`` is over the task's words; ``words_right`` the mean number right per sentence.
    """

    kind = "tag"
    default_probe = "linear"
    primary_metric = "acc"

    @abstractmethod
    def word_labels(self, gold: GoldCorpus) -> list[list[str | None]]:
        """Each word's label, ``None`` for a word outside the task; one list per sentence."""

    @abstractmethod
    def relabel(self, gold: GoldCorpus, labels: list[list[str]]) -> GoldCorpus:
        """``gold`` with ``labels`` (one per word) where :meth:`word_labels` reads them; words
        outside the task stay outside."""

    def fit(self, train: GoldCorpus) -> None:
        self.labels = sorted({t for sent in self.word_labels(train) for t in sent if t is not None})

    def targets(self, gold: GoldCorpus) -> list[np.ndarray]:
        """Class ids: ``-1`` for a label unseen in training, :data:`EXCLUDED` outside the task."""
        index = {t: k for k, t in enumerate(self.labels)}
        return [np.array([EXCLUDED if t is None else index.get(t, -1) for t in sent],
                         dtype=np.int64) for sent in self.word_labels(gold)]

    def evaluate(self, gold: GoldCorpus, predictions: list[np.ndarray]) -> dict[str, float]:
        tg = self.targets(gold)
        flat_p = (np.concatenate([np.asarray(p) for p in predictions]) if predictions
                  else np.zeros(0, dtype=np.int64))
        flat_g = np.concatenate(tg) if tg else np.zeros(0, dtype=np.int64)
        keep = flat_g != EXCLUDED
        return {"acc": metrics.accuracy(flat_p[keep], flat_g[keep]),
                "words_right": metrics.words_right_per_sentence(predictions, tg),
                "sentences": float(len(gold))}


class PosTask(WordLabelTask):
    """Part of speech of every word: UPOS, or XPOS with ``tagset=xpos``."""

    name = "pos"
    summary = "part-of-speech tag of every word (accuracy, words right per sentence)"
    paper = "Belinkov et al. 2017; Tenney et al. 2019"
    params = (Param("tagset", str, "upos", "which CoNLL-U column to predict", ("upos", "xpos")),)

    def word_labels(self, gold: GoldCorpus) -> list[list[str | None]]:
        tags = gold.upos if self.options["tagset"] == "upos" else gold.xpos
        return tags  # type: ignore[return-value]

    def relabel(self, gold: GoldCorpus, labels: list[list[str]]) -> GoldCorpus:
        """Both tag columns carry ``labels`` (whichever ``tagset`` reads)."""
        return gold.with_columns(upos=labels, xpos=labels)


class DeprelTask(WordLabelTask):
    """The relation of every word to its head (DEPREL), with or without its subtype."""

    name = "deprel"
    summary = "dependency relation of every word to its head (accuracy)"
    paper = "Tenney et al. 2019 (dependency labelling); Elazar et al. 2021 (amnesic probing)"
    params = (Param("subtype", str, "keep", "keep the relation's subtype (nsubj:pass) or strip "
                    "it to the universal relation (nsubj)", ("keep", "strip")),)

    def word_labels(self, gold: GoldCorpus) -> list[list[str | None]]:
        _needs(gold.deprel, gold, "DEPREL")
        if self.options["subtype"] == "keep":
            return gold.deprel  # type: ignore[return-value]
        return [[d.split(":", 1)[0] for d in sent] for sent in gold.deprel]

    def relabel(self, gold: GoldCorpus, labels: list[list[str]]) -> GoldCorpus:
        return gold.with_columns(deprel=labels)


#: The label of a word without the feature under ``feats``' ``missing=label``.
NO_FEATURE = "_none"


class FeatsTask(WordLabelTask):
    """The value of one morphological feature (FEATS ``Name=Value``) of every word.

    Words without the feature are left out of the task with ``missing=exclude`` (the default:
    not trained on, not scored, and not part of an eraser's fit), so the task asks only what
    its name says: for ``feature=Number``, singular or plural, among the words that have a
    number. With ``missing=label`` they are the class ``_none`` instead, which mixes the
    feature with which words carry it (nouns, verbs, pronouns: largely the part of speech).
    """

    name = "feats"
    summary = "value of one FEATS feature (feature=Number) of the words that have it (accuracy)"
    paper = "Elazar et al. 2021 (amnesic probing of Number)"
    params = (Param("feature", str, "Number", "the FEATS name whose value is predicted"),
              Param("missing", str, "exclude", f"words without the feature: exclude them, or "
                    f"label them {NO_FEATURE!r}", ("exclude", "label")))

    def word_labels(self, gold: GoldCorpus) -> list[list[str | None]]:
        _needs(gold.feats, gold, "FEATS")
        name, missing = self.options["feature"], self.options["missing"]
        none = None if missing == "exclude" else NO_FEATURE
        return [[_feature(f, name) or none for f in sent] for sent in gold.feats]

    def relabel(self, gold: GoldCorpus, labels: list[list[str]]) -> GoldCorpus:
        """FEATS become ``Name=label`` on the task's words (``_`` for ``_none``); the words
        outside the task keep their FEATS (so they stay outside)."""
        name = self.options["feature"]
        current = self.word_labels(gold)
        feats = [[f if cur is None else ("_" if lab == NO_FEATURE else f"{name}={lab}")
                  for f, cur, lab in zip(fs, cs, ls, strict=True)]
                 for fs, cs, ls in zip(gold.feats, current, labels, strict=True)]
        return gold.with_columns(feats=feats)


def _feature(feats: str, name: str) -> str | None:
    """The value of FEATS ``name`` in a raw FEATS string, or None."""
    return parse_feats(feats, strict=False).get(name) if feats != "_" else None


def _needs(column: list[list[str]], gold: GoldCorpus, what: str) -> None:
    if len(column) != len(gold):
        raise SynrobError(f"{gold.path}: this corpus was built without its {what} column")


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


TASKS = (PosTask, DeprelTask, FeatsTask, RootTask, CorpusTreeDepthTask)
