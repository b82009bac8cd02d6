"""The hooks synrob.perturb owns: perturbers, and the hook that lets a higher layer add its own.

A plugin is a module (named by an entry point in the ``synrob`` group) or, in-process, any
object passed to :func:`synrob.perturb.plugins.register_plugin`. Its functions named after a
hook are called once, when the registry is built. A *component hook* (declared with
:func:`component_hookspec`) returns a list of classes (or None), and each class is registered
under its ``name`` attribute for the hook's kind.

This layer declares only what it owns. A layer above it (or any plugin) that brings new
component kinds ships its own hookspec module and adds it from its plugin through
:func:`synrob_add_hookspecs`, as pytest-xdist does with ``pytest_addhooks``; the plugin manager
learns the new kinds from the ``component_hookspec`` marks in that module. docs/plugins.md
documents each hook.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, TypeVar

import pluggy

if TYPE_CHECKING:  # type hints only: loading the specs imports nothing heavy
    from synrob.perturb.base import Perturber

hookspec = pluggy.HookspecMarker("synrob")
hookimpl = pluggy.HookimplMarker("synrob")

#: Attribute set on a component hook spec: the kind of component it registers.
KIND_ATTRIBUTE = "synrob_component_kind"

_F = TypeVar("_F", bound=Callable[..., object])


def component_hookspec(kind: str) -> Callable[[_F], _F]:
    """Declare a hook spec whose implementations return classes of component ``kind``."""

    def mark(function: _F) -> _F:
        setattr(function, KIND_ATTRIBUTE, kind)
        return hookspec(function)

    return mark


@hookspec(historic=True)
def synrob_add_hookspecs(pluginmanager: pluggy.PluginManager) -> None:
    """Add another layer's hook specs: call ``pluginmanager.add_hookspecs(module)``."""


@component_hookspec("perturber")
def synrob_register_perturbers() -> Sequence[type[Perturber]]:
    """Return perturber classes (subclasses of synrob.perturb.base.Perturber)."""
