"""The plugin manager and the component registry.

Built-in components are *default plugins* (modules in :data:`DEFAULT_PLUGINS`, skipped when
their distribution is not installed); third-party ones are modules named by entry points in the
``synrob`` group. Each plugin's hooks run once, when the registry is first built; the registry
then maps ``(kind, name) -> class``. Two components of one kind with the same name are an error
naming both sources. A plugin that fails to import is a :class:`PluginWarning` naming it, or a
:class:`PluginError` when ``SYNROB_STRICT_PLUGINS=1``. ``SYNROB_LOAD_PLUGINS`` (comma-separated
entry-point or distribution names; empty for none) restricts which entry points load.
"""

from __future__ import annotations

import importlib
import os
import warnings
from dataclasses import dataclass
from importlib.metadata import entry_points
from types import ModuleType
from typing import Any

import pluggy

from . import hookspecs
from .errors import PluginError, UnknownComponentError

ENTRY_POINT_GROUP = "synrob"

#: Hook name for each component kind.
KINDS: dict[str, str] = {
    "perturber": "synrob_register_perturbers",
    "encoder": "synrob_register_encoders",
    "task": "synrob_register_tasks",
    "probe": "synrob_register_probes",
}

#: Built-in plugins: (module, distribution). A module whose distribution is absent is skipped.
DEFAULT_PLUGINS: tuple[tuple[str, str], ...] = (
    ("synrob.perturb.builtins", "synrob-perturb"),
    ("synrob.probe.builtins", "synrob-probe"),
)


class PluginWarning(UserWarning):
    """A third-party plugin could not be loaded; the rest of synrob keeps working."""


@dataclass(frozen=True)
class Component:
    """A registered component: its kind, name, class, version and where it came from."""

    kind: str
    name: str
    cls: type
    version: str
    distribution: str
    plugin: str


def strict_mode() -> bool:
    return os.environ.get("SYNROB_STRICT_PLUGINS", "").lower() in {"1", "true", "yes"}


class Registry:
    """Name -> component class, per kind; refuses duplicates."""

    def __init__(self) -> None:
        self._components: dict[str, dict[str, Component]] = {kind: {} for kind in KINDS}

    def add(self, kind: str, cls: type, *, distribution: str, version: str, plugin: str) -> None:
        name = getattr(cls, "name", None)
        if not isinstance(cls, type) or not isinstance(name, str) or not name:
            raise PluginError(
                f"plugin {plugin!r} ({distribution}) returned {cls!r} from {KINDS[kind]}: "
                "expected a class with a non-empty string attribute 'name'"
            )
        existing = self._components[kind].get(name)
        if existing is not None:
            raise PluginError(
                f"duplicate {kind} name {name!r}: registered by plugin {existing.plugin!r} "
                f"({existing.distribution}) and by plugin {plugin!r} ({distribution})"
            )
        self._components[kind][name] = Component(
            kind=kind,
            name=name,
            cls=cls,
            version=str(getattr(cls, "version", None) or version),
            distribution=distribution,
            plugin=plugin,
        )

    def remove_plugin(self, plugin: str) -> None:
        for comps in self._components.values():
            for name in [n for n, c in comps.items() if c.plugin == plugin]:
                del comps[name]

    def get(self, kind: str, name: str) -> type:
        """The class registered as ``name``; the error lists what exists."""
        try:
            return self._components[kind][name].cls
        except KeyError:
            known = ", ".join(sorted(self._components[kind])) or "(none)"
            raise UnknownComponentError(f"unknown {kind} {name!r}; available: {known}") from None

    def info(self, kind: str, name: str) -> Component:
        self.get(kind, name)
        return self._components[kind][name]

    def names(self, kind: str) -> list[str]:
        return sorted(self._components[kind])

    def components(self, kind: str | None = None) -> list[Component]:
        kinds = [kind] if kind else list(KINDS)
        return [c for k in kinds for _, c in sorted(self._components[k].items())]


def _dist_version(dist: str) -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(dist)
    except PackageNotFoundError:
        return "0+unknown"


def _collect(
    pm: pluggy.PluginManager, registry: Registry, plugin: Any, name: str, dist: str
) -> None:
    """Call each registration hook of one plugin and add what it returns."""
    version = _dist_version(dist)
    for kind, hook_name in KINDS.items():
        caller = getattr(pm.hook, hook_name)
        for impl in caller.get_hookimpls():
            if impl.plugin is not plugin:
                continue
            for cls in impl.function() or ():
                registry.add(kind, cls, distribution=dist, version=version, plugin=name)


def _allowed() -> set[str] | None:
    raw = os.environ.get("SYNROB_LOAD_PLUGINS")
    if raw is None:
        return None
    return {x.strip() for x in raw.split(",") if x.strip()}


def _fail(message: str, strict: bool) -> None:
    if strict:
        raise PluginError(message)
    warnings.warn(message, PluginWarning, stacklevel=3)


def build(strict: bool | None = None, extra: list[tuple[ModuleType | object, str]] | None = None
          ) -> tuple[pluggy.PluginManager, Registry]:
    """A fresh plugin manager and registry: built-ins, entry points, then ``extra`` plugins."""
    strict = strict_mode() if strict is None else strict
    pm = pluggy.PluginManager("synrob")
    pm.add_hookspecs(hookspecs)
    registry = Registry()

    for module_name, dist in DEFAULT_PLUGINS:
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if exc.name and module_name.startswith(exc.name):
                continue  # the distribution providing it is not installed
            raise
        pm.register(module, name=module_name)
        pm.check_pending()
        _collect(pm, registry, module, module_name, dist)

    allowed = _allowed()
    for ep in sorted(entry_points(group=ENTRY_POINT_GROUP), key=lambda e: e.name):
        dist = ep.dist.name if ep.dist is not None else "unknown"
        if allowed is not None and ep.name not in allowed and dist not in allowed:
            continue
        if pm.get_plugin(ep.name) is not None:
            _fail(f"plugin {ep.name!r} ({dist}) skipped: a plugin of that name is loaded", strict)
            continue
        try:
            plugin = ep.load()
            pm.register(plugin, name=ep.name)
            try:
                pm.check_pending()
                _collect(pm, registry, plugin, ep.name, dist)
            except Exception:
                pm.unregister(plugin)
                registry.remove_plugin(ep.name)
                raise
        except PluginError as exc:
            if "duplicate" in str(exc):
                raise
            _fail(f"plugin {ep.name!r} ({dist}) failed to load: {exc}", strict)
        except Exception as exc:  # a broken third-party plugin must not kill the CLI
            _fail(
                f"plugin {ep.name!r} ({dist}) failed to load: {type(exc).__name__}: {exc}", strict
            )

    for plugin, name in extra or []:
        pm.register(plugin, name=name)
        pm.check_pending()
        _collect(pm, registry, plugin, name, "local")
    return pm, registry


_STATE: tuple[pluggy.PluginManager, Registry] | None = None
_EXTRA: list[tuple[object, str]] = []


def get_registry() -> Registry:
    """The process-wide registry, built on first use."""
    global _STATE
    if _STATE is None:
        _STATE = build(extra=list(_EXTRA))
    return _STATE[1]


def get_plugin_manager() -> pluggy.PluginManager:
    get_registry()
    assert _STATE is not None
    return _STATE[0]


def register_plugin(plugin: object, name: str) -> None:
    """Register an in-process plugin object (tests, notebooks); rebuilds the registry."""
    _EXTRA.append((plugin, name))
    reset()


def unregister_plugin(name: str) -> None:
    _EXTRA[:] = [(p, n) for p, n in _EXTRA if n != name]
    reset()


def reset() -> None:
    """Forget the registry so the next :func:`get_registry` rebuilds it."""
    global _STATE
    _STATE = None


def get_component(kind: str, name: str) -> type:
    """Shortcut: ``get_registry().get(kind, name)``."""
    return get_registry().get(kind, name)
