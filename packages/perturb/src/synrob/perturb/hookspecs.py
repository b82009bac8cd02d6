"""Every synrob hook. Each returns component classes once, registered under their ``name``."""

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
