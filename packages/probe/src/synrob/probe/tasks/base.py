"""Gold annotations of a CoNLL-U file and the probing-task interface.

A :class:`GoldCorpus` holds, for every sentence of a file, the syntactic words' forms, tags,
heads, relations and features (read once with :func:`synrob.perturb.corpus.read_conllu`). A
:class:`Task` turns it into per-sentence targets for a probe, and scores predictions of its
kind:

============  =====================================  ==================================
kind          target per sentence of n words         prediction per sentence
============  =====================================  ==================================
distance      gold tree distances, float32 (n, n)    predicted distances (n, n)
depth         gold depths, float32 (n,)              predicted depths (n,)
tag           class id per word, int64 (n,)          class id per word (n,)
select        position of one word, int64 ()         chosen position ()
sentence      class id of the sentence, int64 ()     class id ()
============  =====================================  ==================================

A ``tag`` target is ``-1`` for a label unseen in training (always scored wrong) and
:data:`EXCLUDED` (``-2``) for a word that is not part of the task (not trained on, not scored).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any, ClassVar

import numpy as np
from synrob.perturb.params import Param, describe_params, parse_params

from .gold import PTB_PUNCT_XPOS, GoldCorpus, is_punct, punct_mask, tree_distances
from .gold_cache import load_gold

__all__ = ["GoldCorpus", "Task", "load_gold", "tree_distances", "KINDS", "EXCLUDED",
           "PTB_PUNCT_XPOS", "is_punct", "punct_mask"]

KINDS = ("distance", "depth", "tag", "select", "sentence")

#: The target of a word that is not part of a ``tag`` task (a ``feats`` task's word without the
#: feature): never trained on, never scored. ``-1`` is a label unseen in training (scored wrong).
EXCLUDED = -2

class Task(ABC):
    """A probing task: gold targets from a :class:`GoldCorpus`, and its metrics.

    Subclasses set ``name``, ``kind`` (one of :data:`KINDS`), ``default_probe`` and implement
    :meth:`targets` and :meth:`evaluate`. Classification tasks learn their label set with
    :meth:`fit` on the training corpus; :meth:`state` / :meth:`load_state` save it with a probe.
    """

    name: ClassVar[str]
    version: ClassVar[str] = "1.0"
    summary: ClassVar[str] = ""
    paper: ClassVar[str] = ""
    params: ClassVar[tuple[Param, ...]] = ()
    kind: ClassVar[str]
    default_probe: ClassVar[str]
    #: metric used to choose the best layer / report first (higher is better)
    primary_metric: ClassVar[str]

    def __init__(self, **params: Any) -> None:
        self.options: dict[str, Any] = parse_params(self.params, params, f"task {self.name!r}")
        self.labels: list[str] = []

    # ------------------------------------------------------------------ labels
    def fit(self, train: GoldCorpus) -> None:  # noqa: B027 - optional hook
        """Learn what depends on the training data (label sets); structural tasks need nothing."""

    @property
    def n_classes(self) -> int:
        """Output size of a classifier for this task (1 for select, 0 for regression kinds)."""
        return len(self.labels) if self.kind in ("tag", "sentence") else int(self.kind == "select")

    def state(self) -> dict[str, Any]:
        return {"labels": list(self.labels)}

    def load_state(self, state: dict[str, Any]) -> None:
        self.labels = list(state.get("labels", []))

    # ------------------------------------------------------------------ targets and scores
    @abstractmethod
    def targets(self, gold: GoldCorpus) -> list[np.ndarray]:
        """One target per sentence (see the module table for shapes)."""

    @abstractmethod
    def evaluate(self, gold: GoldCorpus, predictions: list[np.ndarray]) -> dict[str, float]:
        """Metric name -> value over the corpus."""

    def record(self, prediction: np.ndarray) -> dict[str, Any]:
        """The prediction part of a ``--predictions`` JSON line."""
        if self.kind == "distance":
            return {"pred_distances": np.round(np.asarray(prediction, dtype=np.float64), 4).tolist()}
        if self.kind == "depth":
            return {"pred_depths": np.round(np.asarray(prediction, dtype=np.float64), 4).tolist()}
        value = np.asarray(prediction)
        if self.kind == "select":
            return {"pred_labels": int(value)}
        names = [self.labels[int(c)] for c in np.atleast_1d(value)]
        return {"pred_labels": names if self.kind == "tag" else names[0]}

    @classmethod
    def describe(cls) -> dict[str, Any]:
        return {"kind": cls.kind, "version": cls.version, "summary": cls.summary,
                "paper": cls.paper, "default_probe": cls.default_probe,
                "params": describe_params(cls.params)}
