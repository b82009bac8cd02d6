"""The plugin of synrob-probe: this layer's hook specs and its built-in components.

Found through this distribution's own ``synrob`` entry point, exactly like a third-party plugin
(the base layer never names it). It adds :mod:`synrob.probe.hookspecs` to the plugin manager,
then registers the built-in encoders, tasks, probes and experiments through those hooks. Module
imports stay light: the encoder modules import numpy only; torch, transformers and gensim load
inside their methods.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence

import pluggy
from synrob.perturb.hookspecs import hookimpl

from . import hookspecs
from .encoders import ENCODERS
from .encoders.base import Encoder


@hookimpl
def synrob_add_hookspecs(pluginmanager: pluggy.PluginManager) -> None:
    """Declare the encoder, task, probe and experiment hooks."""
    pluginmanager.add_hookspecs(hookspecs)


@hookimpl
def synrob_register_encoders() -> Sequence[type[Encoder]]:
    """Return the built-in encoder classes."""
    return [
        getattr(importlib.import_module(f"{__package__}.encoders.{mod}"), cls)
        for mod, cls in ENCODERS
    ]


@hookimpl
def synrob_register_tasks() -> Sequence[type]:
    """Return the built-in probing tasks (distance, parse, depth, pos, root, tree-depth)."""
    from .tasks import TASKS

    return list(TASKS)


@hookimpl
def synrob_register_probes() -> Sequence[type]:
    """Return the built-in probes (structural, perceptron, linear, mlp, fc3)."""
    from .probes import PROBES

    return list(PROBES)


@hookimpl
def synrob_register_experiments() -> Sequence[type]:
    """Return the built-in experiments (robustness, jabberwocky, local-structure, senteval, amnesic)."""
    from .experiments import EXPERIMENTS

    return [getattr(importlib.import_module(f"{__package__}.experiments.{mod}"), cls)
            for mod, cls in EXPERIMENTS]
