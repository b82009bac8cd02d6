"""The structure docs/architecture.md promises: layers import only downwards, short functions."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ROOT / "packages"
MAX_FUNCTION_LINES = 80

#: package -> the layers above it, which it must never name.
LAYERS_ABOVE = {
    "perturb": ("synrob.probe", "synrob.cli"),
    "probe": ("synrob.cli",),
}


def _sources(package: str) -> list[Path]:
    return sorted((PACKAGES / package / "src").rglob("*.py"))


def _imported_modules(tree: ast.Module) -> set[str]:
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


@pytest.mark.parametrize("package", sorted(LAYERS_ABOVE))
def test_layers_import_only_downwards(package: str) -> None:
    """No import, string or docstring of a layer names a layer above it."""
    offenders = []
    for path in _sources(package):
        text = path.read_text(encoding="utf-8")
        imported = _imported_modules(ast.parse(text))
        for above in LAYERS_ABOVE[package]:
            if any(m == above or m.startswith(above + ".") for m in imported) or above in text:
                offenders.append(f"{path.relative_to(ROOT)} names {above}")
    assert offenders == []


def _long_functions(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    out = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            length = node.end_lineno - node.lineno + 1
            if length > MAX_FUNCTION_LINES:
                out.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.name} ({length} lines)")
    return out


def test_no_function_over_80_lines() -> None:
    """Functions short enough to read at once: none in packages/*/src over 80 lines."""
    offenders = [f for pkg in ("perturb", "probe", "cli") for p in _sources(pkg)
                 for f in _long_functions(p)]
    assert offenders == []


STUDIES = ("jabberwocky", "robustness", "local_structure", "senteval")
EXPERIMENTS = PACKAGES / "probe" / "src" / "synrob" / "probe" / "experiments"


@pytest.mark.parametrize("study", STUDIES)
def test_each_study_has_the_same_modules_and_imports_no_other(study: str) -> None:
    folder = EXPERIMENTS / study
    assert {"__init__.py", "experiment.py", "stats.py", "report.py"} <= {
        p.name for p in folder.glob("*.py")}
    others = [s for s in STUDIES if s != study]
    for path in folder.glob("*.py"):
        imported = _imported_modules(ast.parse(path.read_text(encoding="utf-8")))
        relative = {n.module for n in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
                    if isinstance(n, ast.ImportFrom) and n.level == 2 and n.module}
        for other in others:
            assert not any(m.startswith(f"synrob.probe.experiments.{other}") for m in imported)
            assert not any(m == other or m.startswith(other + ".") for m in relative), path
