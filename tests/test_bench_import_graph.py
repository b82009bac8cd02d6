"""bench/import_graph.py: the pure parts of the import-graph measure (circles, levels, imports)."""

from __future__ import annotations

from pathlib import Path

import pytest

from .bench_script import load_bench


@pytest.fixture(scope="module")
def graph():
    return load_bench("import_graph")


def test_circles_are_the_strongly_connected_components(graph) -> None:
    g = {"a": {"b"}, "b": {"c"}, "c": {"a", "d"}, "d": set(), "e": {"e2"}, "e2": {"e"}}
    assert sorted(graph.circles(g)) == [["a", "b", "c"], ["e", "e2"]]
    assert graph.circles({"a": {"b"}, "b": set()}) == []


def test_levels_count_the_longest_chain_with_circles_contracted(graph) -> None:
    assert graph.levels({"a": {"b"}, "b": {"c"}, "c": set()}) == 3
    assert graph.levels({"a": {"b"}, "b": {"a", "c"}, "c": set()}) == 2


def test_every_import_counts_and_from_imports_point_at_modules(graph, tmp_path: Path) -> None:
    """Inside functions and under TYPE_CHECKING too; ``from pkg import mod`` is an arrow to the
    module, ``from pkg import name`` one to the package; relative imports resolved."""
    src = tmp_path / "src"
    pkg = src / "p"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text("X = 1\n")
    (pkg / "sub" / "leaf.py").write_text("")
    (pkg / "a.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .sub import leaf\n"
        "def f():\n    from p.sub import X\n    import p.b\n")
    (pkg / "b.py").write_text("from . import a\n")
    files = graph.module_files([src])
    g = graph.import_graph(files)
    assert g["p.a"] == {"p.sub.leaf", "p.sub", "p.b"}
    assert graph.circles(g) == [["p.a", "p.b"]]


def test_shims_are_counted_apart(graph, tmp_path: Path) -> None:
    shim = tmp_path / "old.py"
    shim.write_text('"""Moved."""\n\nfrom synrob.perturb.lazy import moved\n\n'
                    '__getattr__ = moved(__name__, "new")\n')
    real = tmp_path / "new.py"
    real.write_text("def moved(__name__):\n    pass\n" + "x = 1\n" * 20)
    assert graph.is_shim(shim) and not graph.is_shim(real)
