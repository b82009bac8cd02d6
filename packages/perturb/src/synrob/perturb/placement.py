"""Deprecated path: moved to :mod:`synrob.perturb.lm.placement`; removed in synrob 0.2.0."""

from synrob.perturb.lazy import moved

__getattr__ = moved(__name__, "synrob.perturb.lm.placement")
