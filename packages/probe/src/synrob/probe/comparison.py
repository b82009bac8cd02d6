"""Join results directories of one experiment (models, languages, seeds) into one table.

:func:`compare` refuses directories of different experiments, and, within one language, test
data that differ by content (the SHA-256 of the treebank test files the runs read; files synrob
derived, such as perturbed test sets, are not compared, since they depend on the seed). It draws
one layer-curve figure per metric (:func:`plot_metric`) and writes ``results.csv``,
``results.json``, the figures and ``report.html`` with :func:`write_comparison`.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from synrob.perturb.errors import ParameterError
from synrob.perturb.table import ResultTable

from .results import ExperimentResults, load_results

__all__ = ["Comparison", "compare", "plot_metric", "write_comparison"]

#: Columns that tell the curves of one figure apart (those present in the rows).
SERIES_COLUMNS = ("source", "probe", "task", "role", "train_on", "test_on", "condition",
                  "perturbation", "draw")
#: Counts, not scores: never plotted.
COUNT_METRICS = frozenset({"sentences", "pairs", "words", "words_right", "n", "sources"})


@dataclass(repr=False)
class Comparison(ResultTable):
    """Rows of several :class:`ExperimentResults` (``source`` tells them apart)."""

    experiment: str
    results: list[ExperimentResults]
    rows: list[dict[str, Any]] = field(default_factory=list)

    def metrics(self) -> list[str]:
        """The metrics with a layer curve (rows with a layer, not derived), first-seen order."""
        seen: dict[str, None] = {}
        for r in _curve_rows(self.rows):
            seen.setdefault(str(r["metric"]), None)
        return [m for m in seen if m not in COUNT_METRICS]


def _check(results: Sequence[ExperimentResults]) -> None:
    names = {r.experiment for r in results}
    if len(names) > 1:
        raise ParameterError("cannot compare different experiments: "
                             + ", ".join(f"{r.path} is {r.experiment}" for r in results))
    by_lang: dict[str, ExperimentResults] = {}
    for r in results:
        first = by_lang.setdefault(r.lang, r)
        if r.test_keys() != first.test_keys():
            raise ParameterError(f"{r.path} and {first.path} were tested on different {r.lang} "
                                 "data (test files differ by content); compare runs on the "
                                 "same treebank")
    labels = [r.label for r in results]
    if len(set(labels)) < len(labels):
        for r in results:  # two runs of one model/language/seed: add the path
            r.rows = [{**row, "source": f"{r.label} ({r.path.name})"} for row in r.rows]


def compare(paths: Sequence[str | os.PathLike[str]]) -> Comparison:
    """Load and join the results directories ``paths`` (at least two) of one experiment."""
    if len(paths) < 2:
        raise ParameterError("compare needs at least two results directories")
    results = [load_results(p) for p in paths]
    _check(results)
    rows = [row for r in results for row in r.rows]
    out = Comparison(results[0].experiment, results, rows)
    out.title = f"{out.experiment}: " + "; ".join(r.label for r in results)
    return out


def _curve_rows(rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Rows of a model's layer curve: a numeric layer, role ``model`` (where rows have roles),
    a test split (or none), not derived."""
    return [r for r in rows if isinstance(r.get("layer"), int) and not r.get("derived")
            and r.get("role", "model") == "model" and r.get("split") in (None, "test")
            and isinstance(r.get("value"), (int, float))]


def _series(rows: Sequence[dict[str, Any]], metric: str) -> dict[str, list[dict[str, Any]]]:
    """The curve rows of ``metric`` (perturbed sets: their first draw), by series label: the
    values of those SERIES_COLUMNS that differ between the rows."""
    picked = [r for r in _curve_rows(rows) if r["metric"] == metric
              and r.get("draw") in (None, 0)]
    varying = [c for c in SERIES_COLUMNS if c != "draw"
               and len({str(r.get(c)) for r in picked}) > 1]
    out: dict[str, list[dict[str, Any]]] = {}
    for r in picked:
        label = ", ".join(f"{c}={r[c]}" if c not in ("source", "probe") else str(r[c])
                          for c in varying if r.get(c) is not None)
        out.setdefault(label or str(r.get("source", "")), []).append(r)
    return out


def plot_metric(comparison: Comparison, metric: str, dest: Path) -> Path:
    """One figure: ``metric`` against the layer, a line per series (the model's rows, test
    split; perturbed test sets: their first draw), 95 % intervals as error bars."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator
    from synrob.perturb.atomic import atomic_path

    series = _series(comparison.rows, metric)
    fig, ax = plt.subplots(figsize=(8, 4.5 + 0.2 * len(series)))
    for label, rows in sorted(series.items()):
        rows = sorted(rows, key=lambda r: r["layer"])
        xs, ys = [r["layer"] for r in rows], [r["value"] for r in rows]
        lo = [r["value"] - r.get("ci_low", r["value"]) for r in rows]
        hi = [r.get("ci_high", r["value"]) - r["value"] for r in rows]
        ax.errorbar(xs, ys, yerr=[lo, hi], marker="o", capsize=3, label=label)
    ax.set_xlabel("layer")
    ax.set_ylabel(metric)
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_title(f"{comparison.experiment}: {metric} by layer (test; bars: 95% intervals)")
    ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.14), ncol=1)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    with atomic_path(dest) as tmp:
        fig.savefig(tmp, format="png", dpi=110, bbox_inches="tight")
    plt.close(fig)
    return dest


def write_comparison(comparison: Comparison, outdir: str | os.PathLike[str]) -> list[Path]:
    """Write ``results.json``, ``results.csv``, ``compare-METRIC.png`` per plotted metric and
    a self-contained ``report.html`` into ``outdir``; returns the files."""
    from synrob.perturb.atomic import write_text_atomic

    from .experiments.report import write_csv
    from .html_report import html_page

    out = Path(outdir)
    out.mkdir(parents=True, exist_ok=True)
    meta = {"experiment": comparison.experiment,
            "sources": [{"label": r.label, "path": str(r.path), "lang": r.lang,
                         "options": r.options, "seed": r.meta.get("seed"),
                         "versions": r.meta.get("versions", {}), "written": r.meta.get("written")}
                        for r in comparison.results]}
    files = [write_text_atomic(out / "results.json", json.dumps(
        {**meta, "rows": comparison.rows}, indent=1, ensure_ascii=False, default=str) + "\n")]
    files.append(write_csv(out / "results.csv", comparison.rows))
    images = [plot_metric(comparison, m, out / f"compare-{m}.png") for m in comparison.metrics()]
    page = html_page(comparison.title, provenance=meta, images=images,
                     tables=[("every row of the compared directories", comparison.rows)])
    files += images
    files.append(write_text_atomic(out / "report.html", page))
    return files
