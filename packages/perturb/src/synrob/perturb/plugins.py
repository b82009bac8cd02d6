"""The plugin manager and the component registry.

Plugins come in three kinds, all registered through the same hooks:

* the base layer's built-ins, :data:`DEFAULT_PLUGINS` (this distribution's own perturbers);
* *built-in entry points*: entry points of the ``synrob`` group whose module lives in the
  ``synrob.`` namespace (:data:`BUILTIN_NAMESPACE`), i.e. synrob's own higher layers, such as
  synrob-probe's plugin. This module never names them: they are found like any plugin, always
  load, and register before third-party ones, since they may add hook specs
  (``synrob_add_hookspecs``) and so new component kinds;
* third-party entry points (their own top-level module name), and in-process plugins
  (:func:`register_plugin`).

Each plugin's hooks run once, when the registry is first built; the registry then maps
``(kind, name) -> class``. The kinds are those of the component hook specs the plugin manager
holds (:func:`synrob.perturb.hookspecs.component_hookspec`): ``perturber`` alone with only
synrob-perturb installed. Two components of one kind with the same name are an error naming both
sources. A plugin that fails to import (or implements a misspelled hook, or no hook) is a
:class:`PluginWarning` naming it, or a :class:`PluginError` when ``SYNROB_STRICT_PLUGINS=1``.
``SYNROB_LOAD_PLUGINS`` (comma-separated entry-point or distribution names; empty for none)
restricts which third-party entry points load; built-ins always load.

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
from importlib.metadata import EntryPoint, entry_points
from types import ModuleType
from typing import Any

import pluggy

from . import hookspecs
from .errors import PluginError, SynrobWarning, UnknownComponentError, did_you_mean

__all__ = [
    "BUILTIN_COMPONENTS",
    "BUILTIN_NAMESPACE",
    "DEFAULT_PLUGINS",
    "ENTRY_POINT_GROUP",
    "Component",
    "DuplicateComponentError",
    "PluginWarning",
    "Registry",
    "build",
    "get_component",
    "get_plugin_manager",
    "get_registry",
    "kinds",
    "register_plugin",
    "reset",
    "unregister_plugin",
]

ENTRY_POINT_GROUP = "synrob"
HOOK_PREFIX = "synrob_"

#: The base layer's built-in plugins: (module, distribution). Skipped when absent.
DEFAULT_PLUGINS: tuple[tuple[str, str], ...] = (
    ("synrob.perturb.builtins", "synrob-perturb"),
)

#: An entry point whose module starts with this prefix belongs to synrob's own distributions
#: (third-party plugins use their own top-level name): it always loads, and registers first.
BUILTIN_NAMESPACE = "synrob."

#: When False, built-in plugins still add their hook specs but register no component (tests
#: use it to exercise the mechanism alone).
BUILTIN_COMPONENTS = True

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
    """Name -> component class, per kind; refuses duplicates.

    ``kinds`` (kind -> hook name, in declaration order) is the plugin manager's live table: a
    kind added by a later hookspec module appears here too.
    """

    def __init__(self, kinds: dict[str, str] | None = None) -> None:
        self.kinds: dict[str, str] = {} if kinds is None else kinds
        self._components: dict[str, dict[str, Component]] = {}

    def _check_kind(self, kind: str, error: type[Exception]) -> None:
        if kind not in self.kinds:
            raise error(f"unknown component kind {kind!r}; kinds: {', '.join(self.kinds)}")

    def add(self, kind: str, cls: type, *, distribution: str, version: str, plugin: str) -> None:
        """Register ``cls`` under ``cls.name``; a taken name raises :class:`DuplicateComponentError`."""
        self._check_kind(kind, PluginError)
        name = getattr(cls, "name", None)
        if not isinstance(cls, type) or not isinstance(name, str) or not name:
            raise PluginError(
                f"plugin {plugin!r} ({distribution}) returned {cls!r} from {self.kinds[kind]}: "
                "expected a class with a non-empty string attribute 'name'"
            )
        comps = self._components.setdefault(kind, {})
        existing = comps.get(name)
        if existing is not None:
            raise DuplicateComponentError(
                f"duplicate {kind} name {name!r}: registered by plugin {existing.plugin!r} "
                f"({existing.distribution}) and by plugin {plugin!r} ({distribution})"
            )
        comps[name] = Component(
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
        self._check_kind(kind, UnknownComponentError)
        try:
            return self._components[kind][name].cls
        except KeyError:
            known = ", ".join(self.names(kind)) or "(none)"
            hint = did_you_mean(name, self.names(kind))
            raise UnknownComponentError(f"unknown {kind} {name!r}{hint}; available: {known}"
                                        ) from None

    def info(self, kind: str, name: str) -> Component:
        self.get(kind, name)
        return self._components[kind][name]

    def names(self, kind: str) -> list[str]:
        return sorted(self._components.get(kind, {}))

    def components(self, kind: str | None = None) -> list[Component]:
        """Every component (of one kind, or of all kinds in declaration order), by name."""
        if kind is not None:
            self._check_kind(kind, UnknownComponentError)
        chosen = [kind] if kind else list(self.kinds)
        return [c for k in chosen for _, c in sorted(self._components.get(k, {}).items())]


class _PluginManager(pluggy.PluginManager):
    """Takes every ``synrob_*`` routine of a plugin as a hook implementation (marked or not),
    and records the component kinds of the hook specs it is given (:attr:`kinds`)."""

    def __init__(self, project_name: str) -> None:
        super().__init__(project_name)
        self.kinds: dict[str, str] = {}

    def add_hookspecs(self, module_or_class: Any) -> None:
        super().add_hookspecs(module_or_class)
        for name in list(vars(module_or_class)):  # declaration order
            member = getattr(module_or_class, name)
            kind = getattr(member, hookspecs.KIND_ATTRIBUTE, None)
            if kind is None or not name.startswith(HOOK_PREFIX):
                continue
            if self.kinds.get(kind, name) != name:
                raise PluginError(f"component kind {kind!r} is declared by two hooks: "
                                  f"{self.kinds[kind]!r} and {name!r}")
            self.kinds[kind] = name

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


def _known_hooks(pm: pluggy.PluginManager) -> list[str]:
    return sorted(n for n, c in vars(pm.hook).items()
                  if n.startswith(HOOK_PREFIX) and c.has_spec())


def _check_hooks(pm: pluggy.PluginManager, plugin: object, label: str) -> None:
    """Raise PluginError when ``plugin`` implements an unknown hook, or no synrob hook at all."""
    callers = pm.get_hookcallers(plugin) or []
    unknown = sorted(c.name for c in callers if not c.has_spec())
    if unknown:
        known = _known_hooks(pm)
        hints = []
        for name in unknown:
            close = difflib.get_close_matches(name, known, n=1)
            hints.append(f"{name!r}" + (f" (did you mean {close[0]!r}?)" if close else ""))
        raise PluginError(
            f"plugin {label} implements unknown hook {', '.join(hints)}; "
            f"known hooks: {', '.join(known)}"
        )
    if not callers:
        raise PluginError(f"plugin {label} implements no synrob hook")


def _collect(
    pm: _PluginManager, registry: Registry, plugin: Any, name: str, dist: str
) -> None:
    """Call each component hook of one plugin and add what it returns."""
    version = _dist_version(dist)
    for kind, hook_name in list(pm.kinds.items()):
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
    pm: _PluginManager, registry: Registry, plugin: object, name: str, dist: str,
    components: bool = True,
) -> None:
    """Register one plugin and (unless ``components`` is False) its components; on any
    failure leave no trace of it."""
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
        if components:
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


def _is_builtin(ep: EntryPoint) -> bool:
    return ep.value.startswith(BUILTIN_NAMESPACE)


def _dist_name(ep: EntryPoint) -> str:
    return ep.dist.name if ep.dist is not None else "unknown"


def _selected_entry_points(strict: bool) -> list[EntryPoint]:
    """The entry points to load, built-ins first, each group sorted by name."""
    allowed = _allowed()
    seen: set[str] = set()
    chosen = []
    for ep in sorted(entry_points(group=ENTRY_POINT_GROUP), key=lambda e: e.name):
        names = {_normalize(ep.name), _normalize(_dist_name(ep))}
        seen |= names
        if _is_builtin(ep) or allowed is None or names & allowed:
            chosen.append(ep)
    for missing in sorted((allowed or set()) - seen):
        _fail(
            f"SYNROB_LOAD_PLUGINS names {missing!r}, but no installed plugin has that entry-point "
            "or distribution name",
            strict,
        )
    return sorted(chosen, key=lambda e: not _is_builtin(e))


def _load_entry_point(
    pm: _PluginManager, registry: Registry, ep: EntryPoint, strict: bool
) -> None:
    dist = _dist_name(ep)
    builtin = _is_builtin(ep)
    try:
        plugin = ep.load()
        _add_plugin(pm, registry, plugin, ep.name, dist, components=BUILTIN_COMPONENTS or not builtin)
    except DuplicateComponentError:
        raise  # two sources claim one name: always an error
    except PluginError as exc:
        _fail(str(exc), strict)
    except Exception as exc:  # a broken third-party plugin must not kill the CLI
        _fail(f"plugin {ep.name!r} ({dist}) failed to load: {type(exc).__name__}: {exc}", strict)


def _add_default_plugins(pm: _PluginManager, registry: Registry) -> None:
    for module_name, dist in DEFAULT_PLUGINS:
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if exc.name and module_name.startswith(exc.name):
                continue  # the distribution providing it is not installed
            raise
        _add_plugin(pm, registry, module, module_name, dist, components=BUILTIN_COMPONENTS)


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
    pm.hook.synrob_add_hookspecs.call_historic(kwargs={"pluginmanager": pm})
    registry = Registry(pm.kinds)
    _add_default_plugins(pm, registry)
    for ep in _selected_entry_points(strict):
        _load_entry_point(pm, registry, ep, strict)
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


def kinds() -> dict[str, str]:
    """Component kind -> hook name, for the installed layers (``perturber`` first)."""
    return dict(get_registry().kinds)

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
