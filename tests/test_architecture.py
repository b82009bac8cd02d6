"""The structure docs/architecture.md promises.

Who may import whom is import-linter's job: the contracts of the root pyproject.toml, which
``bash dev.sh lint`` checks and ``bash dev.sh test`` runs before pytest. This file checks them
once more from pytest, and what import-linter cannot: no circle even between a package and its
own modules (``bench/import_graph.py``), short functions, perturb never *naming* a higher layer
(not even in a string), the size of each package's top level, each wing's stated job, and the
old module paths that live on as shims.
"""

from __future__ import annotations

import ast
import importlib
import re
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

from .bench_script import load_bench

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ROOT / "packages"
MAX_FUNCTION_LINES = 80
SHIM_MAX_LINES = 15

#: package -> the layers above it, which it must never name.
LAYERS_ABOVE = {
    "perturb": ("synrob.probe", "synrob.cli"),
    "probe": ("synrob.cli",),
}


def _sources(package: str) -> list[Path]:
    return sorted((PACKAGES / package / "src").rglob("*.py"))


def test_import_contracts_are_kept() -> None:
    """import-linter's contracts (layers, wings, no circle between siblings, independent studies
    and perturbers) hold: what ``bash dev.sh lint`` runs."""
    code = ("import sys, synrob; from importlinter.cli import lint_imports_command; "
            "sys.argv = ['lint-imports', '--no-cache']; lint_imports_command()")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert "0 broken" in done.stdout


def test_no_import_circle_at_any_depth() -> None:
    """The import graph of packages/*/src, every import counted (inside functions and under
    TYPE_CHECKING too), has no strongly connected component: not even a package and one of its
    own modules, which import-linter's sibling contract does not compare."""
    graph = load_bench("import_graph")
    assert graph.circles(graph.import_graph(graph.module_files())) == []


@pytest.mark.parametrize("package", sorted(LAYERS_ABOVE))
def test_perturb_never_names_a_layer_above(package: str) -> None:
    """No module of a layer names a layer above it, even in a string or a docstring."""
    offenders = []
    for path in _sources(package):
        text = path.read_text(encoding="utf-8")
        for above in LAYERS_ABOVE[package]:
            if above in text:
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


STUDIES = ("amnesic", "jabberwocky", "robustness", "local_structure", "senteval")
PROBE = PACKAGES / "probe" / "src" / "synrob" / "probe"
PERTURB = PACKAGES / "perturb" / "src" / "synrob" / "perturb"


@pytest.mark.parametrize("study", STUDIES)
def test_each_study_has_the_same_modules(study: str) -> None:
    """A study is a folder with its experiment, its statistics and its report (docs)."""
    assert {"__init__.py", "experiment.py", "report.py"} <= {
        p.name for p in (PROBE / "experiments" / study).glob("*.py")}


def _is_shim(path: Path) -> bool:
    text = path.read_text(encoding="utf-8")
    return len(text.splitlines()) <= SHIM_MAX_LINES and "moved(__name__" in text


@pytest.mark.parametrize(("folder", "most"), [(PROBE, 8), (PERTURB, 16)])
def test_top_level_holds_few_modules(folder: Path, most: int) -> None:
    """At most 8 ``.py`` files directly in synrob/probe and 16 in synrob/perturb, besides
    ``__init__.py`` and the shims of moved paths: the rest lives in wings."""
    counted = [p.name for p in folder.glob("*.py")
               if p.name != "__init__.py" and not _is_shim(p)]
    assert len(counted) <= most, counted


def _wings() -> list[Path]:
    return sorted(p.parent for base in (PROBE, PERTURB) for p in base.rglob("__init__.py")
                  if p.parent not in (PROBE, PERTURB) and not _is_shim(p))


@pytest.mark.parametrize("wing", _wings(), ids=lambda p: str(p.relative_to(PACKAGES)))
def test_each_wing_states_its_job(wing: Path) -> None:
    """Each subpackage's ``__init__.py`` opens with a docstring whose first line says its job."""
    doc = ast.get_docstring(ast.parse((wing / "__init__.py").read_text(encoding="utf-8")))
    assert doc and len(doc.splitlines()[0]) > 20, wing


# ---------------------------------------------------------------------------- moved paths
_TABLE_ROW = re.compile(r"^\| `(synrob\.[\w.]+)` \| ([^|]+) \| ([^|]+) \|$")


def moved_paths() -> list[tuple[str, list[str], str]]:
    """(old path, new paths, how it lives on) from docs/architecture.md's table."""
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    rows = []
    for line in text.splitlines():
        m = _TABLE_ROW.match(line.strip())
        if m:
            new = re.findall(r"`(synrob\.[\w.]+)`", m.group(2))
            rows.append((m.group(1), new, m.group(3).strip()))
    return rows


def _module_file(name: str) -> Path:
    top = name.split(".")[1]
    base = PACKAGES / top / "src" / Path(*name.split("."))
    return base.with_suffix(".py") if base.with_suffix(".py").is_file() else base / "__init__.py"


def test_the_moved_paths_table_lists_every_shim() -> None:
    """Every shim in the tree has its row, and every row's old path is a shim or a package of
    the same name that re-exports the old names."""
    rows = {old: how for old, _, how in moved_paths()}
    assert len(rows) >= 40
    shims = {".".join(p.relative_to(PACKAGES / p.relative_to(PACKAGES).parts[0] / "src")
                      .with_suffix("").parts).removesuffix(".__init__")
             for pkg in ("perturb", "probe") for p in (PACKAGES / pkg / "src").rglob("*.py")
             if _is_shim(p)}
    assert shims == {old for old, how in rows.items() if how.startswith("shim")}
    for old, how in rows.items():
        assert how.startswith(("shim", "package")), (old, how)
        assert _module_file(old).is_file(), old


@pytest.mark.parametrize(("old", "new", "how"), moved_paths(), ids=lambda v: str(v))
def test_a_moved_path_still_imports(old: str, new: list[str], how: str) -> None:
    """An old path gives the new module's names; a shim warns with a DeprecationWarning that
    names the new path and the release that removes it, a same-name package does not."""
    # a shim warns as it is imported: import it afresh (only the shims, never a real module,
    # whose identity other tests' state relies on), and put back what was there
    kept = {m: sys.modules.pop(m) for m in list(sys.modules)
            if how.startswith("shim") and (m == old or m.startswith(old + "."))}
    try:
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            module = importlib.import_module(old)
    finally:
        sys.modules.update(kept)
    ours = [w for w in seen if issubclass(w.category, DeprecationWarning)
            and str(w.message).startswith(old + " is deprecated")]
    if how.startswith("shim"):
        assert len(ours) == 1 and all(n in str(ours[0].message) for n in new), how
        assert "0.2.0" in str(ours[0].message)
    else:
        assert ours == []
    target = importlib.import_module(new[0])
    public = [n for n in getattr(target, "__all__", ()) if hasattr(target, n)][:3]
    for name in public:
        assert getattr(module, name) is getattr(target, name)


def test_gold_cache_hashes_the_real_reader_modules_not_shims() -> None:
    """The gold cache keys on its readers' source: those are real modules, never shims."""
    from synrob.probe.tasks.gold_cache import READER_MODULES

    for name in READER_MODULES:
        path = _module_file(name)
        assert path.is_file() and not _is_shim(path), name
