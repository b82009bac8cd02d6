"""docs/python.md runs as a notebook: every ```python block is a cell, in order, in a Jupyter
kernel of this environment (nbclient, ipykernel from the ``notebook`` extra), in a fresh
directory, so the walk-through cannot go stale and is checked where its readers run it.

Between the page's cells the test adds its own: they record the plotting backend and check that
no synrob call changed it (``run_experiment``, ``write_comparison``: inline plots keep
working), and that the page's pivot holds the model's test values. Progress must show in the
output of each long call's cell, with no ``IProgress not found`` warning.
"""

from __future__ import annotations

import json
import re
import sys
import time
from pathlib import Path
from typing import Any

import nbformat
import pytest
from nbclient import NotebookClient

DOC = Path(__file__).resolve().parents[1] / "docs" / "python.md"

pytestmark = [pytest.mark.slow, pytest.mark.model]

#: Calls whose cell must show synrob's progress (a bar or line whose text has the fragment),
#: and those after whose cell the backend must be the same.
LONG_CALLS = {"pr.probe(": " probe on minilm, seed 0: layers",
              "pr.score_pairs(": "scoring 40 pairs (smollm2)", "pr.erase(": "amnesic probing",
              "pr.run_experiment(": "jabberwocky: runs"}
PLOTTING_CALLS = ("pr.run_experiment(", "pr.write_comparison(")
#: What the test reads back from its own cells: one JSON line after this marker.
MARK = "synrob-test:"

FIRST = f"""
import json, matplotlib
_backend = matplotlib.get_backend()
print({MARK!r}, json.dumps({{"backend": _backend}}))
"""

BACKEND = f"""
import json, matplotlib
import matplotlib.pyplot as plt
_now = matplotlib.get_backend()
plt.plot([0, 1], [1, 0])
plt.show()            # an inline image, unless a library switched the backend off
print({MARK!r}, json.dumps({{"backend": _now, "after": %r}}))
"""

PIVOT = f"""
import json
def _model_test_uuas(res):
    return {{(r["train_on"], r["test_on"]): r["value"] for r in res.rows
             if r.get("role") == "model" and r.get("split") == "test"
             and r.get("metric") == "uuas" and r.get("draw") in (None, 0)}}
_expected = {{res.label: _model_test_uuas(res) for res in (a, b)}}
_got = {{src: {{"|".join(k): float(v) for k, v in wide[src].items()}} for src in wide.columns}}
print({MARK!r}, json.dumps({{"expected": {{s: {{"|".join(k): v for k, v in d.items()}}
                                           for s, d in _expected.items()}}, "got": _got}}))
"""


def blocks() -> list[str]:
    return re.findall(r"^```python\n(.*?)^```", DOC.read_text(encoding="utf-8"), re.S | re.M)


def notebook() -> tuple[Any, list[int], list[int]]:
    """The page as a notebook with the test's cells; the indices of the page's cells and of
    the backend checks."""
    cells = [nbformat.v4.new_code_cell(FIRST)]
    page, checks = [], []
    for block in blocks():
        page.append(len(cells))
        cells.append(nbformat.v4.new_code_cell(block.rstrip("\n")))
        for call in PLOTTING_CALLS:
            if call in block:
                checks.append(len(cells))
                cells.append(nbformat.v4.new_code_cell(BACKEND % call))
    cells.append(nbformat.v4.new_code_cell(PIVOT))
    nb = nbformat.v4.new_notebook(cells=cells)
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    return nb, page, checks


def _text(cell: Any) -> str:
    """Everything a cell showed: streams, and the text/plain of its displays and results."""
    parts = []
    for out in cell.get("outputs", []):
        if out["output_type"] == "stream":
            parts.append(out["text"])
        elif "data" in out:
            parts.append(str(out["data"].get("text/plain", "")))
    return "\n".join(parts)


def _marked(cell: Any) -> dict[str, Any]:
    line = next(x for x in _text(cell).splitlines() if x.startswith(MARK))
    return json.loads(line[len(MARK):])


def _shows_progress(cell: Any, fragment: str) -> bool:
    """A tqdm widget (ipywidgets) whose text has ``fragment``, or synrob's plain progress line
    of it as the loop ended, in the cell's output (a dependency's own bar does not count)."""
    for out in cell.get("outputs", []):
        data = out.get("data", {})
        if ("application/vnd.jupyter.widget-view+json" in data
                and fragment in str(data.get("text/plain", ""))):
            return True
    return bool(re.search(rf"^synrob: .*{re.escape(fragment)}.*: \d+(/\d+)? done in ",
                          _text(cell), re.M))


def _has_image(cell: Any) -> bool:
    return any("image/png" in out.get("data", {}) for out in cell.get("outputs", []))


def _progress_problems(cells: list[Any], page: list[int]) -> list[str]:
    """Long calls whose cell shows no progress, and cells with tqdm's IProgress warning."""
    problems = []
    for i in page:
        head = cells[i].source.splitlines()[0]
        if "IProgress not found" in _text(cells[i]):
            problems.append(f"IProgress warning in the cell of {head!r}")
        for call, fragment in LONG_CALLS.items():
            if call in cells[i].source and not _shows_progress(cells[i], fragment):
                problems.append(f"no progress of {call}) ({fragment!r}) in the cell of {head!r}")
    return problems


def _backend_problems(cells: list[Any], checks: list[int]) -> list[str]:
    """Plotting-backend checks that found another backend, or no inline image."""
    backend = _marked(cells[0])["backend"]
    problems = []
    for cell in (cells[i] for i in checks):
        seen = _marked(cell)
        if seen["backend"] != backend:
            problems.append(f"{seen['after']} switched the backend to {seen['backend']} "
                            f"(was {backend})")
        if not _has_image(cell):
            problems.append(f"plt.show() showed no image after {seen['after']}")
    return problems


def test_the_walk_through_runs_as_a_notebook(tmp_path: Path) -> None:
    nb, page, checks = notebook()
    assert len(page) >= 6 and len(checks) == len(PLOTTING_CALLS)
    t0 = time.perf_counter()
    NotebookClient(nb, timeout=1200, kernel_name="python3",
                   resources={"metadata": {"path": str(tmp_path)}}).execute()
    print(f"walk-through as a notebook: {time.perf_counter() - t0:.1f} s "
          f"({sys.executable})")
    cells = nb.cells
    problems = _progress_problems(cells, page) + _backend_problems(cells, checks)
    pivot = _marked(cells[-1])
    if pivot["got"] != pivot["expected"]:
        problems.append(f"the documented pivot shows {pivot['got']}, not the model's test UUAS "
                        f"{pivot['expected']}")
    assert not problems, "\n".join(problems)
    assert len(pivot["got"]) == 2 and all(len(v) == 4 for v in pivot["got"].values())

    for name in ("jabberwocky.conllu", "agreement.conllu", "number.safetensors",
                 "number.random.safetensors", "jab-seed0/report.html",
                 "jab-compare/report.html", "jab-compare/results.csv"):
        assert (tmp_path / name).is_file(), name
    joined = json.loads((tmp_path / "jab-compare" / "results.json").read_text())
    sources = {r["source"] for r in joined["rows"]}
    assert sources == {"minilm en seed 0", "minilm en seed 1"}
    assert list((tmp_path / "jab-compare").glob("compare-*.png"))
