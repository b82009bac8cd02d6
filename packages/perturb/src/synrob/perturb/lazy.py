"""Lazy public names for a package's ``__init__`` (PEP 562): the API modules are imported on
first use, so importing the package stays light (no torch, pandas or matplotlib)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from importlib import import_module
from typing import Any

__all__ = ["lazy_exports"]


def lazy_exports(package: str, exports: Mapping[str, str], namespace: dict[str, Any]
                 ) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``(__getattr__, __dir__)`` for ``package``: name ``n`` comes from submodule
    ``exports[n]`` when first read, and is then kept in ``namespace`` (the package's globals).
    ``dir()`` (and so tab completion, IPython's and jedi's) lists the public names only: the
    exports and ``__version__``, not the helpers the package imported nor its submodules."""

    def getattr_(name: str) -> Any:
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(import_module(f"{package}.{module}"), name)
        namespace[name] = value
        return value

    def dir_() -> list[str]:
        return sorted({*exports, "__version__"})

    return getattr_, dir_
