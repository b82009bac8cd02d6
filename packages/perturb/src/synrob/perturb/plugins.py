"""The plugin manager and the component registry.

Built-in components are *default plugins* (modules in :data:`DEFAULT_PLUGINS`, skipped when
their distribution is not installed); third-party ones are modules named by entry points in the
``synrob`` group. Each plugin's hooks run once, when the registry is first built; the registry
then maps ``(kind, name) -> class``. Two components of one kind with the same name are an error
naming both sources. A plugin that fails to import (or implements a misspelled hook, or no hook)
is a :class:`PluginWarning` naming it, or a :class:`PluginError` when
``SYNROB_STRICT_PLUGINS=1``. ``SYNROB_LOAD_PLUGINS`` (comma-separated entry-point or
distribution names; empty for none) restricts which entry points load; built-ins always load.

Every module-level function of a plugin whose name starts with ``synrob_`` is taken as a hook
implementation, marked with ``@hookimpl`` or not, so a misspelled hook name is reported instead
of silently ignored.
"""

from __future__ import annotations

import difflib
import importlib
import inspect
import os
import re
import warnings
from collections.abc import Iterable
from dataclasses import dataclass
from importlib.metadata import entry_points
from types import ModuleType
from typing import Any

import pluggy

from . import hookspecs
from .errors import PluginError, SynrobWarning, UnknownComponentError

__all__ = [
    "DEFAULT_PLUGINS",
    "ENTRY_POINT_GROUP",
    "KINDS",
    "Component",
    "DuplicateComponentError",
    "PluginWarning",
    "Registry",
    "build",
    "get_component",
    "get_plugin_manager",
    "get_registry",
    "register_plugin",
    "reset",
    "unregister_plugin",
]

ENTRY_POINT_GROUP = "synrob"
HOOK_PREFIX = "synrob_"

#: Hook name for each component kind.
KINDS: dict[str, str] = {
    "perturber": "synrob_register_perturbers",
    "encoder": "synrob_register_encoders",
    "task": "synrob_register_tasks",
    "probe": "synrob_register_probes",
    "experiment": "synrob_register_experiments",
}

#: Built-in plugins: (module, distribution). A module whose distribution is absent is skipped.
DEFAULT_PLUGINS: tuple[tuple[str, str], ...] = (
    ("synrob.perturb.builtins", "synrob-perturb"),
    ("synrob.probe.builtins", "synrob-probe"),
)

#: Distribution recorded for plugins registered in-process with :func:`register_plugin`.
LOCAL_DISTRIBUTION = "local"


class PluginWarning(SynrobWarning):
    """A third-party plugin could not be loaded; the rest of synrob keeps working."""


class DuplicateComponentError(PluginError):
    """Two plugins registered a component of the same kind under the same name."""


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
    return os.environ.get("SYNROB_STRICT_PLUGINS", "").strip().lower() in {"1", "true", "yes", "on"}


class Registry:
    """Name -> component class, per kind; refuses duplicates."""

    def __init__(self) -> None:
        self._components: dict[str, dict[str, Component]] = {kind: {} for kind in KINDS}

    def add(self, kind: str, cls: type, *, distribution: str, version: str, plugin: str) -> None:
        """Register ``cls`` under ``cls.name``; a taken name raises :class:`DuplicateComponentError`."""
        if kind not in KINDS:
            raise PluginError(f"unknown component kind {kind!r}; kinds: {', '.join(KINDS)}")
        name = getattr(cls, "name", None)
        if not isinstance(cls, type) or not isinstance(name, str) or not name:
            raise PluginError(
                f"plugin {plugin!r} ({distribution}) returned {cls!r} from {KINDS[kind]}: "
                "expected a class with a non-empty string attribute 'name'"
            )
        existing = self._components[kind].get(name)
        if existing is not None:
            raise DuplicateComponentError(
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
        """Forget every component that ``plugin`` registered."""
        for comps in self._components.values():
            for name in [n for n, c in comps.items() if c.plugin == plugin]:
                del comps[name]

    def get(self, kind: str, name: str) -> type:
        """The class registered as ``name``; the error lists what exists."""
        if kind not in KINDS:
            raise UnknownComponentError(f"unknown component kind {kind!r}; kinds: {', '.join(KINDS)}")
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
        """Every component (of one kind, or of all kinds in :data:`KINDS` order), by name."""
        if kind is not None and kind not in KINDS:
            raise UnknownComponentError(f"unknown component kind {kind!r}; kinds: {', '.join(KINDS)}")
        kinds = [kind] if kind else list(KINDS)
        return [c for k in kinds for _, c in sorted(self._components[k].items())]


class _PluginManager(pluggy.PluginManager):
    """Takes every ``synrob_*`` routine of a plugin as a hook implementation (marked or not)."""

    def parse_hookimpl_opts(self, plugin: Any, name: str) -> Any:
        opts = super().parse_hookimpl_opts(plugin, name)
        if opts is None and name.startswith(HOOK_PREFIX):
            member = inspect.getattr_static(plugin, name, None)
            if inspect.isfunction(member) or isinstance(member, (staticmethod, classmethod)):
                opts = {"wrapper": False, "hookwrapper": False, "optionalhook": False,
                        "tryfirst": False, "trylast": False, "specname": None}
        return opts


def _dist_version(dist: str) -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(dist)
    except PackageNotFoundError:
        return "0+unknown"


def _normalize(name: str) -> str:
    """PEP 503 normalisation, so ``synrob_typo`` and ``Synrob-Typo`` name one distribution."""
    return re.sub(r"[-_.]+", "-", name).lower()


def _check_hooks(pm: pluggy.PluginManager, plugin: object, label: str) -> None:
    """Raise PluginError when ``plugin`` implements an unknown hook, or no synrob hook at all."""
    callers = pm.get_hookcallers(plugin) or []
    unknown = sorted(c.name for c in callers if not c.has_spec())
    if unknown:
        known = [n for n in dir(hookspecs) if n.startswith(HOOK_PREFIX)]
        hints = []
        for name in unknown:
            close = difflib.get_close_matches(name, known, n=1)
            hints.append(f"{name!r}" + (f" (did you mean {close[0]!r}?)" if close else ""))
        raise PluginError(
            f"plugin {label} implements unknown hook {', '.join(hints)}; "
            f"known hooks: {', '.join(sorted(known))}"
        )
    if not callers:
        raise PluginError(f"plugin {label} implements no synrob hook")


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
            result = impl.function()
            if result is None:
                continue
            if isinstance(result, type) or not isinstance(result, Iterable):
                raise PluginError(
                    f"plugin {name!r} ({dist}): {hook_name} returned {result!r}; "
                    "expected a list of classes"
                )
            for cls in result:
                registry.add(kind, cls, distribution=dist, version=version, plugin=name)


def _add_plugin(
    pm: pluggy.PluginManager, registry: Registry, plugin: object, name: str, dist: str
) -> None:
    """Register one plugin and its components; on any failure leave no trace of it."""
    label = f"{name!r} ({dist})"
    if pm.get_plugin(name) is not None:
        raise PluginError(f"plugin {label} skipped: a plugin named {name!r} is already loaded")
    if pm.is_registered(plugin):
        other = pm.get_name(plugin)
        raise PluginError(f"plugin {label} skipped: the same object is loaded as {other!r}")
    try:
        pm.register(plugin, name=name)
    except pluggy.PluginValidationError as exc:
        raise PluginError(f"plugin {label} is invalid: {exc}") from None
    try:
        _check_hooks(pm, plugin, label)
        _collect(pm, registry, plugin, name, dist)
    except BaseException:
        pm.unregister(plugin)
        registry.remove_plugin(name)
        raise


def _allowed() -> set[str] | None:
    raw = os.environ.get("SYNROB_LOAD_PLUGINS")
    if raw is None:
        return None
    return {_normalize(x.strip()) for x in raw.split(",") if x.strip()}


def _fail(message: str, strict: bool) -> None:
    if strict:
        raise PluginError(message)
    warnings.warn(message, PluginWarning, stacklevel=3)


def _load_entry_points(
    pm: pluggy.PluginManager, registry: Registry, strict: bool
) -> None:
    allowed = _allowed()
    seen: set[str] = set()
    for ep in sorted(entry_points(group=ENTRY_POINT_GROUP), key=lambda e: e.name):
        dist = ep.dist.name if ep.dist is not None else "unknown"
        seen |= {_normalize(ep.name), _normalize(dist)}
        if allowed is not None and not {_normalize(ep.name), _normalize(dist)} & allowed:
            continue
        try:
            plugin = ep.load()
            _add_plugin(pm, registry, plugin, ep.name, dist)
        except DuplicateComponentError:
            raise  # two sources claim one name: always an error
        except PluginError as exc:
            _fail(str(exc), strict)
        except Exception as exc:  # a broken third-party plugin must not kill the CLI
            _fail(
                f"plugin {ep.name!r} ({dist}) failed to load: {type(exc).__name__}: {exc}", strict
            )
    for missing in sorted((allowed or set()) - seen):
        _fail(
            f"SYNROB_LOAD_PLUGINS names {missing!r}, but no installed plugin has that entry-point "
            "or distribution name",
            strict,
        )


def build(
    strict: bool | None = None, extra: list[tuple[ModuleType | object, str]] | None = None
) -> tuple[pluggy.PluginManager, Registry]:
    """A fresh plugin manager and registry: built-ins, entry points, then ``extra`` plugins.

    Errors in built-ins and in ``extra`` (in-process) plugins always raise; a broken entry
    point warns (:class:`PluginWarning`) unless ``strict`` (default: ``SYNROB_STRICT_PLUGINS``).
    """
    strict = strict_mode() if strict is None else strict
    pm = _PluginManager("synrob")
    pm.add_hookspecs(hookspecs)
    registry = Registry()

    for module_name, dist in DEFAULT_PLUGINS:
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if exc.name and module_name.startswith(exc.name):
                continue  # the distribution providing it is not installed
            raise
        _add_plugin(pm, registry, module, module_name, dist)

    _load_entry_points(pm, registry, strict)

    for plugin, name in extra or []:
        _add_plugin(pm, registry, plugin, name, LOCAL_DISTRIBUTION)
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
    """Register an in-process plugin object (tests, notebooks) and rebuild the registry now.

    Errors (unknown hook, duplicate name, bad return value) raise here and leave the plugin
    unregistered. Pair with :func:`unregister_plugin` (in a ``finally``).
    """
    if any(n == name for _, n in _EXTRA):
        raise PluginError(f"an in-process plugin named {name!r} is already registered")
    _EXTRA.append((plugin, name))
    reset()
    try:
        get_registry()
    except BaseException:
        _EXTRA[:] = [(p, n) for p, n in _EXTRA if n != name]
        reset()
        raise


def unregister_plugin(name: str) -> None:
    """Remove an in-process plugin registered with :func:`register_plugin` (no-op if absent)."""
    _EXTRA[:] = [(p, n) for p, n in _EXTRA if n != name]
    reset()


def reset() -> None:
    """Forget the registry so the next :func:`get_registry` rebuilds it."""
    global _STATE
    _STATE = None


def get_component(kind: str, name: str) -> type:
    """Shortcut: ``get_registry().get(kind, name)``."""
    return get_registry().get(kind, name)
