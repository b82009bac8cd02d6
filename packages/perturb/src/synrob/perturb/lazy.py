"""Lazy names for a package's ``__init__`` (PEP 562), and the old module paths kept for a while.

:func:`lazy_exports`: the API modules are imported on first use, so importing the package stays
light (no torch, pandas or matplotlib). :func:`moved`: a module path that moved to another
module lives on as a shim of a few lines that warns with a :class:`DeprecationWarning` when it
is imported and hands out the new module's names (docs/architecture.md lists each old path,
its new one and the version in which the shim goes).
"""

from __future__ import annotations

import sys
import warnings
from collections.abc import Callable, Mapping
from importlib import import_module
from typing import Any

__all__ = ["lazy_exports", "moved", "REMOVED_IN"]

#: The release in which the shims of moved module paths are removed.
REMOVED_IN = "0.2.0"


def lazy_exports(package: str, exports: Mapping[str, str], namespace: dict[str, Any],
                 version: bool = True
                 ) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``(__getattr__, __dir__)`` for ``package``: name ``n`` comes from submodule
    ``exports[n]`` when first read, and is then kept in ``namespace`` (the package's globals).
    ``dir()`` (and so tab completion, IPython's and jedi's) lists the public names only: the
    exports and, with ``version``, ``__version__``; not the helpers the package imported nor
    its submodules."""

    def getattr_(name: str) -> Any:
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(import_module(f"{package}.{module}"), name)
        namespace[name] = value
        return value

    def dir_() -> list[str]:
        return sorted({*exports, *(["__version__"] if version else [])})

    return getattr_, dir_


def moved(old: str, *new: str) -> Callable[[str], Any]:
    """The ``__getattr__`` of the shim at module path ``old``, whose code now lives in the
    modules ``new`` (several when it was split: a name is looked up in each, in order).
    Warns once, as the shim is imported, with a :class:`DeprecationWarning` that names the
    new path and the release that removes the old one, attributed to the importing code."""
    targets = ", ".join(new)
    warnings.warn(f"{old} is deprecated: import from {targets} (the old path goes in synrob "
                  f"{REMOVED_IN})", DeprecationWarning, stacklevel=_importer_level())

    def getattr_(name: str) -> Any:
        for module in new:
            target = import_module(module)
            if hasattr(target, name):
                return getattr(target, name)
        raise AttributeError(f"module {old!r} (now {targets}) has no attribute {name!r}")

    return getattr_


def _importer_level() -> int:
    """The ``stacklevel`` of the first frame outside this module, the shim and the import
    machinery: the code that imported the old path."""
    frame = sys._getframe(2)  # the shim's module body
    shim = frame.f_code.co_filename
    level = 3
    frame = frame.f_back
    while frame is not None and (frame.f_code.co_filename.startswith("<frozen importlib")
                                 or frame.f_code.co_filename == shim):
        frame = frame.f_back
        level += 1
    return level
