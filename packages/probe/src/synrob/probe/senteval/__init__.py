"""SentEval probing (Conneau et al. 2018) over frozen encoders: the classifiers (logistic
regression, the sigmoid MLP), the Table 2 baselines, and sentence vectors of task files through
the representation cache. The task files themselves are built by :mod:`synrob.perturb.senteval`.
"""

from __future__ import annotations

from .classifiers import CLASSIFIERS, ClassifierResult, TrainConfig, fit_select
from .features import parse_layer_spec, sentence_vectors, task_corpus
from .text_baselines import BASELINES, BaselineResult, split_examples

__all__ = ["BASELINES", "BaselineResult", "split_examples", "CLASSIFIERS", "ClassifierResult",
           "TrainConfig", "fit_select", "parse_layer_spec", "sentence_vectors", "task_corpus"]
