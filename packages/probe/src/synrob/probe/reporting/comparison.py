"""Join results directories of one experiment (models, languages, seeds) into one table.

:func:`compare` refuses directories of different experiments, and, within one language, test
data that differ by content (the SHA-256 of the treebank test files the runs read; files synrob
derived, such as perturbed test sets, are not compared, since they depend on the seed). It draws
one figure per metric (:meth:`Comparison.plot`, :mod:`.comparison_plot`: the layer curves, or
categories when every series has one layer), sums each metric up in a table of one row per
probe and condition and one column per source (:meth:`Comparison.summary`,
:mod:`.comparison_summary`), and writes ``results.csv``, ``results.json``, the figures and
``report.html`` (the summary tables first, every row below, collapsed and sortable) with
:func:`write_comparison`.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# the lazy package: `_public.Figure` (a return type) imports matplotlib only when read
import synrob.probe as _public
from synrob.perturb.errors import ParameterError
from synrob.perturb.io.table import ResultTable

from .comparison_plot import curve_rows
from .results import ExperimentResults, load_results

__all__ = ["Comparison", "compare", "plot_metric", "write_comparison"]

#: What the summary tables of report.html show.
SUMMARY_NOTE = ("Per metric, the test score of each probe and condition (rows) in each compared "
                "directory (columns), with its 95% interval in brackets. Where a directory "
                "probed several layers, the layer with the best dev score is shown, its number "
                "as (L…); a perturbed test set is its first draw, as in the figures. Every row "
                "of every directory is in the table below the figures.")
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
        for r in curve_rows(self.rows):
            seen.setdefault(str(r["metric"]), None)
        return [m for m in seen if m not in COUNT_METRICS]

    def plot(self, metric: str | None = None) -> _public.Figure:
        """The figure of ``metric`` (default: the first of :meth:`metrics`): the model's test
        score against the layer, a line per source, probe and condition, or, when every series
        has one layer, a dot per source at each probe and condition; 95 % intervals. A
        :class:`synrob.probe.render.figures.Figure`, shown inline in a notebook, outside pyplot."""
        from .comparison_plot import metric_figure

        return metric_figure(self.rows, self.experiment, self._metric(metric))

    def summary(self, metric: str | None = None) -> ResultTable:
        """``metric``'s summary (default: the first of :meth:`metrics`): one row per probe and
        condition, one column per source, each cell the test score with its 95 % interval
        (a model's layer chosen on dev, in brackets); see :mod:`.comparison_summary`."""
        from synrob.perturb.io.table import Selection

        from .comparison_summary import summary_rows

        metric = self._metric(metric)
        return Selection(summary_rows(self.rows, metric), f"{self.experiment}: test {metric}")

    def _metric(self, metric: str | None) -> str:
        known = self.metrics()
        if metric is None and known:
            return known[0]
        if metric not in known:
            raise ParameterError(f"no layer-curve metric {metric!r} in this comparison; "
                                 f"its metrics: {', '.join(known) or 'none'}")
        return metric


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


def plot_metric(comparison: Comparison, metric: str, dest: Path) -> Path:
    """:meth:`Comparison.plot` of ``metric`` written as a PNG at ``dest``."""
    from ..render.figures import save_png

    return save_png(comparison.plot(metric), dest, dpi=110)


def write_comparison(comparison: Comparison, outdir: str | os.PathLike[str]) -> list[Path]:
    """Write ``results.json``, ``results.csv``, ``compare-METRIC.png`` per plotted metric and
    a self-contained ``report.html`` (each metric's summary table first, then the figures,
    then every row, collapsed and sortable) into ``outdir``; returns the files."""
    from synrob.perturb.io.atomic import write_text_atomic

    from ..experiments.report import write_csv
    from ..render.html_report import Summary, html_page
    from .comparison_summary import summary_rows

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
    metrics = comparison.metrics()
    images = [plot_metric(comparison, m, out / f"compare-{m}.png") for m in metrics]
    summaries = [Summary(f"{m} (test)", summary_rows(comparison.rows, m), ("probe", "condition"))
                 for m in metrics]
    page = html_page(comparison.title, provenance=meta, images=images, summaries=summaries,
                     summary_note=SUMMARY_NOTE, sortable=True,
                     tables=[("every row of the compared directories", comparison.rows)])
    files += images
    files.append(write_text_atomic(out / "report.html", page))
    return files
