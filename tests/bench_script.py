"""A ``bench/`` script, or another file of the tests, imported by file path."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[1]


def load_file(path: Path, module: str, *, shared: bool = False) -> ModuleType:
    """The Python file ``path`` as the module ``module``, registered in ``sys.modules`` first
    (its dataclasses look their module up by name). ``shared``: the copy already loaded under
    that name, if any, so every test module shares one (and its state)."""
    if shared and module in sys.modules:
        return sys.modules[module]
    spec = importlib.util.spec_from_file_location(module, path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[module] = mod
    spec.loader.exec_module(mod)
    return mod


def load_bench(name: str, module: str | None = None) -> ModuleType:
    """``bench/{name}.py`` as the module ``module`` (default ``name``): :func:`load_file`."""
    return load_file(ROOT / "bench" / f"{name}.py", module or name)
