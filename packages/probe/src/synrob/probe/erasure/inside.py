"""Deprecated path: moved to :mod:`synrob.probe.causal.erasure.inside`; removed in synrob 0.2.0."""

from synrob.perturb.lazy import moved

__getattr__ = moved(__name__, "synrob.probe.causal.erasure.inside")
