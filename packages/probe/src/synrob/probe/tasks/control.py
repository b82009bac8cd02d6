"""Control tasks (Hewitt & Liang 2019): the same outputs, determined by word types only.

A control task answers "could the probe score this well by memorising word types?". Its
targets are a fixed function of each word's type (its FORM, case-sensitive), so a probe can
only learn them by memorising types; **selectivity** = task metric - control metric.

:func:`control_task` builds the control of any :class:`Task` by its ``kind``:

* ``tag`` (``pos``): each word type gets one label, drawn from the task's empirical training
  label distribution (token counts of the training targets). The draw is a pure function of the
  run's seed and the type string (:func:`type_uniform`, a BLAKE2b hash), so the same type gets
  the same label in train, dev and test, and a type unseen in training gets one the same way.
  The control corpus carries the control label where the base task reads its labels (its
  ``relabel``: both tag columns for ``pos``, DEPREL for ``deprel``, the feature in FEATS for
  ``feats``; a task without ``relabel``: UPOS and XPOS); the words outside the base task
  (``feats``' words without the feature) stay outside.
* ``distance`` / ``depth`` (``distance``, ``parse``, ``depth``): a control tree
  (:func:`control_heads`), built from word types only. Its *anchors* are the sentence's
  non-punctuation words (:meth:`GoldCorpus.punct`; all words when every one is punctuation).
  The root is the anchor whose type has the highest root score (a second hash of seed and
  type; the leftmost on a tie, which only two words of the same type can make). Every other
  word's type has one behaviour, uniformly from {attach to the root, attach to the first
  anchor, attach to the last anchor} (Hewitt & Liang's {itself, first word, last word}, with
  "itself" read as the root, since a tree has no self-loop). A word whose behaviour points to
  itself attaches to the root, and so does each of the first and last anchors when they point
  at each other. So heads are the root, the first or the last anchor, and the two ends' heads
  are the root or the other end (whose head is then the root): always a tree, at most 3 deep.
  Punctuation words are never a head, and never the root unless the sentence is all
  punctuation, so the tree among the anchors is the tree that scoring (which leaves
  punctuation out) recovers, and a probe that predicts it exactly scores 1 on every metric.
  No edge is fixed by position alone: each one follows from the types' behaviours and root
  scores. Distances, depths and the root come from that tree; the punctuation masks are
  gold's.
* ``select`` / ``sentence`` (``root``, ``tree-depth``) have no control task: Hewitt & Liang
  define controls for word-level outputs, where memorising types is the confound; any function
  of a sentence's types chosen as a sentence label would be arbitrary. :func:`control_task`
  refuses them with a :class:`ParameterError`.

The control task scores predictions with the base task's own ``evaluate`` on the control corpus,
so its metrics have the same keys.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any

import numpy as np
from synrob.perturb.errors import ParameterError

from .base import GoldCorpus, Task

__all__ = ["ControlTask", "control_task", "control_heads", "behaviour", "type_uniform",
           "BEHAVIOURS", "CONTROL_KINDS"]

#: Task kinds that have a control task.
CONTROL_KINDS = ("tag", "distance", "depth")
#: Behaviours of a word type in the control tree, drawn uniformly: attach to the root, to the
#: first anchor or to the last anchor (non-punctuation words).
BEHAVIOURS = ("root", "first", "last")


def type_uniform(seed: int, word_type: str, salt: str = "") -> float:
    """A number in [0, 1) determined by ``seed``, ``salt`` and the type string (no state)."""
    key = f"{int(seed)}\x1f{salt}\x1f{word_type}".encode()
    digest = hashlib.blake2b(key, digest_size=8).digest()
    return int.from_bytes(digest, "big") / 2.0**64


def behaviour(seed: int, word_type: str) -> str:
    """The control-tree behaviour of a word type (one of :data:`BEHAVIOURS`)."""
    return BEHAVIOURS[int(type_uniform(seed, word_type, "tree") * len(BEHAVIOURS))]


def control_heads(forms: Sequence[str], seed: int,
                  punct: np.ndarray | None = None) -> np.ndarray:
    """The control tree of a sentence: heads (n,) int64, 1-based, 0 = root.

    ``punct`` (n,) bool marks the punctuation words (none when omitted); the others are the
    anchors (all words when every word is punctuation). The root is the anchor of highest
    ``type_uniform(seed, type, "root")`` (leftmost on a tie); word ``i``'s type behaviour
    (:func:`behaviour`) names its head: the root, the first or the last anchor. A word named as
    its own head, and the first and last anchors when each names the other, attach to the
    root (see the module docstring).
    """
    n = len(forms)
    mask = np.zeros(n, dtype=bool) if punct is None else np.asarray(punct, dtype=bool)
    anchors = np.flatnonzero(~mask) if not mask.all() else np.arange(n)
    scores = [type_uniform(seed, forms[int(a)], "root") for a in anchors]
    root = int(anchors[int(np.argmax(scores))])
    ends = {"root": root, "first": int(anchors[0]), "last": int(anchors[-1])}
    target = [ends[behaviour(seed, f)] for f in forms]
    heads = np.zeros(n, dtype=np.int64)
    for i in range(n):
        if i != root:
            t = target[i]
            mutual = t != root and target[t] == i
            heads[i] = root + 1 if t == i or mutual else t + 1
    return heads


class ControlTask(Task):
    """The control task of ``base`` (same kind, metrics and probe); see the module docstring."""

    name = "control"
    kind = "tag"
    default_probe = "linear"
    primary_metric = "acc"

    def __init__(self, base: Task, seed: int = 0) -> None:
        if base.kind not in CONTROL_KINDS:
            raise ParameterError(_no_control(base.name))
        self.base = base
        self.seed = int(seed)
        self.options = base.options
        self.labels = base.labels
        self.name = f"{base.name}-control"  # type: ignore[misc]
        self.kind = base.kind  # type: ignore[misc]
        self.default_probe = base.default_probe  # type: ignore[misc]
        self.primary_metric = base.primary_metric  # type: ignore[misc]
        self.cdf = np.zeros(0)  # cumulative empirical label distribution (tag kind)
        self._memo: dict[str, str] = {}

    def fit(self, train: GoldCorpus) -> None:
        """Fit the base task, then (tag kind) the empirical label distribution of ``train``."""
        self.base.fit(train)
        self.labels = self.base.labels
        if self.kind == "tag":
            ids = np.concatenate(self.base.targets(train)) if len(train) else np.zeros(0, int)
            counts = np.bincount(ids[ids >= 0], minlength=len(self.labels)).astype(np.float64)
            self.cdf = np.cumsum(counts / max(counts.sum(), 1.0))
            self._memo = {}

    def label_of(self, word_type: str) -> str:
        """The control label of a word type (inverse CDF of the empirical distribution)."""
        if word_type not in self._memo:
            u = type_uniform(self.seed, word_type, "tag")
            k = int(np.searchsorted(self.cdf, u, side="right"))
            self._memo[word_type] = self.labels[min(k, len(self.labels) - 1)]
        return self._memo[word_type]

    def control_corpus(self, gold: GoldCorpus) -> GoldCorpus:
        """``gold`` with control labels (tag) or control heads (structural) in place of gold's."""
        if self.kind == "tag":
            tags = [[self.label_of(f) for f in sent] for sent in gold.forms]
            relabel = getattr(self.base, "relabel", None)
            return relabel(gold, tags) if relabel is not None else gold.with_columns(
                upos=tags, xpos=tags)
        heads = [control_heads(sent, self.seed, gold.punct(i)) for i, sent in enumerate(gold.forms)]
        return gold.with_columns(heads=heads)

    def targets(self, gold: GoldCorpus) -> list[np.ndarray]:
        return self.base.targets(self.control_corpus(gold))

    def evaluate(self, gold: GoldCorpus, predictions: list[np.ndarray]) -> dict[str, float]:
        return self.base.evaluate(self.control_corpus(gold), predictions)

    def state(self) -> dict[str, Any]:
        return {**self.base.state(), "control_seed": self.seed, "control_cdf": self.cdf.tolist()}


def _no_control(name: str) -> str:
    return (f"task {name!r} has no control task; control tasks exist for word-level and "
            "structural tasks (pos, deprel, feats, distance, depth, parse)")


def control_task(task: Task, seed: int = 0) -> ControlTask:
    """The control task of ``task`` (seeded); :class:`ParameterError` for kinds without one."""
    return ControlTask(task, seed)
