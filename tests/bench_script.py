"""A ``bench/`` script imported by file path, as the tests of its pure parts use it."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[1]


def load_bench(name: str, module: str | None = None) -> ModuleType:
    """``bench/{name}.py`` as the module ``module`` (default ``name``), registered in
    ``sys.modules`` first: its dataclasses look their module up by name."""
    module = module or name
    spec = importlib.util.spec_from_file_location(module, ROOT / "bench" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[module] = mod
    spec.loader.exec_module(mod)
    return mod
