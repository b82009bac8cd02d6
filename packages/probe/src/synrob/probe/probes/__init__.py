"""Probes: structural (Hewitt & Manning), perceptron (Hall Maudslay et al.), classifiers."""

from __future__ import annotations

from .base import TRAIN_PARAMS, Probe, SavedProbe, load_probe, save_probe
from .classifier import FC3Probe, LinearProbe, MLPProbe
from .structural import PerceptronProbe, StructuralProbe

#: Built-in probe classes, registered by :mod:`synrob.probe.builtins`.
PROBES: tuple[type[Probe], ...] = (StructuralProbe, PerceptronProbe, LinearProbe, MLPProbe,
                                   FC3Probe)

__all__ = ["Probe", "TRAIN_PARAMS", "SavedProbe", "save_probe", "load_probe", "PROBES",
           "StructuralProbe", "PerceptronProbe", "LinearProbe", "MLPProbe", "FC3Probe"]
