"""The hooks synrob.probe owns: encoders, probing tasks, probes and experiments.

Added to the plugin manager by this layer's own plugin (:mod:`synrob.probe.builtins`, found
through its ``synrob`` entry point like any third-party plugin) from the base layer's
``synrob_add_hookspecs`` hook, so that synrob.perturb never names this layer. Each hook returns
classes that are registered under their ``name`` for the hook's kind; docs/plugins.md documents
each hook.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from synrob.perturb.hookspecs import component_hookspec

if TYPE_CHECKING:  # type hints only: loading the specs imports nothing heavy
    from synrob.probe.encoders.base import Encoder
    from synrob.probe.experiments.base import Experiment
    from synrob.probe.probes.base import Probe
    from synrob.probe.tasks.base import Task


@component_hookspec("encoder")
def synrob_register_encoders() -> Sequence[type[Encoder]]:
    """Return encoder classes (subclasses of synrob.probe.encoders.base.Encoder)."""


@component_hookspec("task")
def synrob_register_tasks() -> Sequence[type[Task]]:
    """Return probing-task classes (subclasses of synrob.probe.tasks.base.Task)."""


@component_hookspec("probe")
def synrob_register_probes() -> Sequence[type[Probe]]:
    """Return probe classes (subclasses of synrob.probe.probes.base.Probe)."""


@component_hookspec("experiment")
def synrob_register_experiments() -> Sequence[type[Experiment]]:
    """Return experiment classes (subclasses of synrob.probe.experiments.base.Experiment)."""
