"""Deprecated path: moved to :mod:`synrob.probe.metrics.bootstrap` and :mod:`synrob.probe.tasks.scores`; removed in synrob 0.2.0."""

from synrob.perturb.lazy import moved

__getattr__ = moved(__name__, "synrob.probe.metrics.bootstrap", "synrob.probe.tasks.scores")
