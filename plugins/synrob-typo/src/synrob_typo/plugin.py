"""The module named by this distribution's ``synrob`` entry point: its hook returns the class."""

from __future__ import annotations

from collections.abc import Sequence

from synrob.perturb.base import Perturber
from synrob.perturb.hookspecs import hookimpl

from .perturber import Typo


@hookimpl
def synrob_register_perturbers() -> Sequence[type[Perturber]]:
    """Make ``typo`` available to ``synrob perturb`` and ``get_component("perturber", "typo")``."""
    return [Typo]
