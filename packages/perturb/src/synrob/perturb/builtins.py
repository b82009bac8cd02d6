"""The built-in perturbers, registered through the same hook a third-party plugin uses."""

from __future__ import annotations

import importlib
from collections.abc import Sequence

from .base import Perturber
from .hookspecs import hookimpl

#: Modules of :mod:`synrob.perturb.perturbers`; each exposes ``PERTURBERS``.
MODULES = ("order", "senteval", "copos", "jabberwocky", "coco", "agreement")


@hookimpl
def synrob_register_perturbers() -> Sequence[type[Perturber]]:
    """Return the built-in perturber classes."""
    out: list[type[Perturber]] = []
    for mod in MODULES:
        out.extend(importlib.import_module(f"{__package__}.perturbers.{mod}").PERTURBERS)
    return out
