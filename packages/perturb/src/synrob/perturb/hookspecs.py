"""Every synrob hook. Each returns component classes once, registered under their ``name``.

A plugin is a module (named by an entry point in the ``synrob`` group) or, in-process, any
object passed to :func:`synrob.perturb.plugins.register_plugin`. Its functions named after a
hook below are called once, when the registry is built; each returns a list of classes (or
None), and each class is registered under its ``name`` attribute for its kind. The kinds and
hooks are listed in :data:`synrob.perturb.plugins.KINDS`; docs/plugins.md documents each hook.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import pluggy

if TYPE_CHECKING:  # type hints only: loading the specs imports nothing heavy
    from synrob.perturb.base import Perturber

hookspec = pluggy.HookspecMarker("synrob")
hookimpl = pluggy.HookimplMarker("synrob")


@hookspec
def synrob_register_perturbers() -> Sequence[type[Perturber]]:
    """Return perturber classes (subclasses of synrob.perturb.base.Perturber)."""


@hookspec
def synrob_register_encoders() -> Sequence[type]:
    """Return encoder classes (subclasses of synrob.probe.encoders.base.Encoder)."""


@hookspec
def synrob_register_tasks() -> Sequence[type]:
    """Return probing-task classes (subclasses of synrob.probe.tasks.base.Task)."""


@hookspec
def synrob_register_probes() -> Sequence[type]:
    """Return probe classes (subclasses of synrob.probe.probes.base.Probe)."""


@hookspec
def synrob_register_experiments() -> Sequence[type]:
    """Return experiment classes (subclasses of synrob.probe.experiments.base.Experiment)."""
