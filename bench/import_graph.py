"""The import graph of packages/*/src, read from the code: modules, arrows, circles, top-level files.

    python bench/import_graph.py            name: value lines (modules, arrows, circles, levels, ...)
    python bench/import_graph.py --circles  also each circle, one line each (module <-> module ...)
    python bench/import_graph.py --root DIR  another checkout (say, a ``git worktree`` of main)

Every import counts: at module level, inside functions and under ``if TYPE_CHECKING:``. An
arrow joins two synrob modules; ``from pkg import name`` points at ``pkg.name`` when that is a
module, else at ``pkg``. A circle is a strongly connected component of two or more modules
(or a module importing itself). ``levels`` is the longest path of the graph once its circles
are contracted. Shims of moved module paths (a few lines that hand out another module's names)
are counted apart and left out of the graph. import-linter's contracts (root pyproject.toml) are the rule; this script is
the independent measurement that the issue's "no circle at any depth" asks for.
"""

from __future__ import annotations

import argparse
import ast
import sys
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SOURCES = sorted(ROOT.glob("packages/*/src"))


def module_files(sources: list[Path] = SOURCES) -> dict[str, Path]:
    """Module name -> file, for every ``.py`` under the given ``src`` folders (packages as ``pkg``)."""
    out: dict[str, Path] = {}
    for src in sources:
        for path in sorted(src.rglob("*.py")):
            if "templates" in path.relative_to(src).parts:
                continue
            parts = list(path.relative_to(src).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            out[".".join(parts)] = path
    return out


def _absolute(module: str, is_package: bool, node: ast.ImportFrom) -> str:
    if node.level == 0:
        return node.module or ""
    base = module.split(".") if is_package else module.split(".")[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def imports_of(module: str, path: Path, known: set[str]) -> Iterator[str]:
    """The synrob modules ``module`` imports, anywhere in its file."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    is_package = path.name == "__init__.py"
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield from _known_prefix(alias.name, known)
        elif isinstance(node, ast.ImportFrom):
            target = _absolute(module, is_package, node)
            for alias in node.names:
                sub = f"{target}.{alias.name}"
                yield from _known_prefix(sub if sub in known else target, known)


def _known_prefix(name: str, known: set[str]) -> Iterator[str]:
    parts = name.split(".")
    for i in range(len(parts), 0, -1):
        candidate = ".".join(parts[:i])
        if candidate in known:
            yield candidate
            return


def import_graph(files: dict[str, Path]) -> dict[str, set[str]]:
    """Module -> the modules it imports (no self-arrows from a package to its own ``__init__``)."""
    known = set(files)
    return {m: {t for t in imports_of(m, p, known) if t != m} for m, p in files.items()}


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with two or more modules (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []
    counter = 0
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    out.append(sorted(component))
    return out


def levels(graph: dict[str, set[str]]) -> int:
    """The longest chain of arrows, counted in modules, once each circle is one node."""
    rep = {m: m for m in graph}
    for component in circles(graph):
        for m in component:
            rep[m] = component[0]
    dag: dict[str, set[str]] = {}
    for m, targets in graph.items():
        dag.setdefault(rep[m], set()).update(rep[t] for t in targets if rep[t] != rep[m])
    depth: dict[str, int] = {}

    def visit(node: str) -> int:
        if node not in depth:
            depth[node] = 0  # guards a (contracted) loop
            depth[node] = 1 + max((visit(t) for t in dag.get(node, ())), default=0)
        return depth[node]

    sys.setrecursionlimit(10_000)
    return max((visit(n) for n in dag), default=0)


def top_level_files(package_dir: Path) -> tuple[int, int]:
    """(``.py`` files directly in a package, of them neither ``__init__`` nor a shim)."""
    files = list(package_dir.glob("*.py"))
    counted = [p for p in files if p.name != "__init__.py" and not is_shim(p)]
    return len(files), len(counted)


def is_shim(path: Path, most: int = 15) -> bool:
    """A moved path's shim: at most ``most`` lines handing out another module's names."""
    text = path.read_text(encoding="utf-8")
    return len(text.splitlines()) <= most and "moved(__name__" in text


def report(files: dict[str, Path], sources: list[Path] = SOURCES) -> dict[str, int]:
    """The measures, over the modules that are not shims (their count apart)."""
    shims = {m for m, p in files.items() if is_shim(p)}
    real = {m: p for m, p in files.items() if m not in shims}
    graph = import_graph(real)
    found = circles(graph)
    probe = next(p for p in sources if p.parent.name == "probe") / "synrob" / "probe"
    perturb = next(p for p in sources if p.parent.name == "perturb") / "synrob" / "perturb"
    return {
        "modules": len(real),
        "shims": len(shims),
        "arrows": sum(len(t) for t in graph.values()),
        "circles": len(found),
        "modules_in_circles": sum(len(c) for c in found),
        "levels": levels(graph),
        "probe_top_level_files": top_level_files(probe)[0],
        "probe_top_level_counted": top_level_files(probe)[1],
        "perturb_top_level_files": top_level_files(perturb)[0],
        "perturb_top_level_counted": top_level_files(perturb)[1],
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--circles", action="store_true", help="print each circle too")
    parser.add_argument("--root", type=Path, default=ROOT, help="the checkout to measure")
    args = parser.parse_args(argv)
    sources = sorted(args.root.resolve().glob("packages/*/src"))
    files = module_files(sources)
    for name, value in report(files, sources).items():
        print(f"{name}: {value}")
    if args.circles:
        for component in circles(import_graph(files)):  # shims included
            print("circle: " + " <-> ".join(component))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
