"""Figures leave matplotlib's global state alone (issue 46 §2), and every result that has a
figure gives it as a :class:`synrob.probe.render.figures.Figure` from ``.plot()`` (§2), with integer or
categorical layer ticks (§4).

The notebook's state is played by :func:`notebook`: a backend other than Agg (the inline
backend where matplotlib-inline is installed, as in Jupyter, else pdf), a figure of the user's
own, open and current. After each synrob call the backend, the open figures and the current
figure must be the same: ``matplotlib.use("Agg", force=True)``, as the experiment reports did,
switched the backend and closed the user's figures.
"""

from __future__ import annotations

import importlib.util
import math
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import matplotlib
import matplotlib.pyplot as plt
import pytest
import synrob.probe as pr
from synrob.perturb.errors import ParameterError
from synrob.probe.experiments.runner import run_experiment
from synrob.probe.render.figures import Figure

from .test_compare import Layered, seed_dirs
from .test_experiment_amnesic import _rows as amnesic_rows

NOTEBOOK_BACKEND = ("module://matplotlib_inline.backend_inline"
                    if importlib.util.find_spec("matplotlib_inline") else "pdf")


@pytest.fixture
def notebook() -> Iterator[Callable[[], None]]:
    """Switch to a notebook-like backend with one figure of the user's, current; yields a check
    that the state is as it was; restores the backend afterwards."""
    before = matplotlib.get_backend()
    plt.switch_backend(NOTEBOOK_BACKEND)
    mine = plt.figure()
    plt.plot([0, 1], [1, 0])
    backend = matplotlib.get_backend()

    def unchanged() -> None:
        assert matplotlib.get_backend() == backend
        assert plt.get_fignums() == [mine.number]
        assert plt.gcf() is mine

    try:
        yield unchanged
    finally:
        plt.close("all")
        plt.switch_backend(before)


class Drawn(Layered):
    """The toy layer curve, whose report draws the amnesic figure as a real report does."""

    name = "test-drawn"

    def report(self, rows: list[dict[str, Any]], ctx: Any) -> list[Path]:
        from synrob.probe.experiments.amnesic.report import write_report

        return write_report(amnesic_rows(), ctx.outdir, {
            "model": "m", "train": "t", "dev": "d", "test": "x", "task": "feats",
            "feature": "Number"})


@pytest.fixture
def two_seeds(tmp_path: Path) -> list[Path]:
    return seed_dirs(Layered(), tmp_path)


def _one_layer(tmp_path: Path) -> list[Path]:
    """Two seeds of a one-layer experiment with 4 probe x condition series each (8 in all)."""

    class OneLayer(Layered):
        name = "test-one-layer"

        def plan(self, ctx: Any) -> list[Any]:
            from synrob.probe.experiments.base import RunSpec

            return [RunSpec({"layer": 3, "tests": {"clean": {"sha256": "a" * 64}}}, "L3")]

        def execute(self, spec: Any, ctx: Any) -> list[dict[str, Any]]:
            rows = []
            for i, (probe, test_on) in enumerate([(p, t) for p in ("structural", "perceptron")
                                                  for t in ("clean", "jabberwocky")]):
                v = 0.4 + 0.05 * i + 0.01 * ctx.seed
                rows += [{"layer": 3, "role": "model", "split": "test", "probe": probe,
                          "train_on": "clean", "test_on": test_on, "metric": "uuas",
                          "value": v, "ci_low": v - 0.02, "ci_high": v + 0.03},
                         {"layer": None, "role": "path", "split": "test", "probe": probe,
                          "train_on": "clean", "test_on": test_on, "metric": "uuas",
                          "value": 0.38, "ci_low": 0.37, "ci_high": 0.39}]
            return rows

    return seed_dirs(OneLayer(), tmp_path, "one")


def test_run_and_compare_leave_the_backend_and_the_users_figures(
        notebook: Callable[[], None], two_seeds: list[Path], tmp_path: Path) -> None:
    run_experiment(Drawn(), tmp_path / "drawn")
    assert (tmp_path / "drawn" / "amnesic-layers.png").stat().st_size > 10_000
    notebook()
    cmp = pr.compare(two_seeds)
    pr.write_comparison(cmp, tmp_path / "cmp")
    assert (tmp_path / "cmp" / "compare-uuas.png").is_file()
    notebook()
    for fig in (cmp.plot(), pr.compare(_one_layer(tmp_path)).plot()):
        assert isinstance(fig, Figure)
        notebook()


def test_a_figure_shows_itself_in_a_notebook_without_pyplot(two_seeds: list[Path]) -> None:
    """``_repr_png_`` gives a PNG; the figure is not one of pyplot's."""
    fig = pr.compare(two_seeds).plot()
    png = fig._repr_png_()
    assert png.startswith(b"\x89PNG\r\n\x1a\n") and len(png) > 5_000
    assert fig not in [plt.figure(n) for n in plt.get_fignums()]
    plt.close("all")


def _is_integer_label(text: str) -> bool:
    return text.lstrip("−-").isdigit()


def test_comparison_plot_of_layer_curves(two_seeds: list[Path]) -> None:
    """A line per source against integer ticks at the layers, the rows' values and intervals."""
    cmp = pr.compare(two_seeds)
    fig = cmp.plot("uuas")
    ax = fig.axes[0]
    assert list(ax.get_xticks()) == [1, 2, 3]
    assert all(_is_integer_label(t.get_text()) for t in ax.get_xticklabels())
    assert "uuas" in ax.get_title() and ax.get_ylabel() == "uuas"
    labels = [t.get_text() for t in fig.legends[0].get_texts()]
    assert labels == ["en seed 0", "en seed 1"]
    for container, seed in zip(ax.containers, (0, 1), strict=True):
        line = container[0]
        want = [0.5 + 0.1 * layer - 0.01 * seed for layer in (1, 2, 3)]
        assert list(line.get_ydata()) == pytest.approx(want)
        xs = list(line.get_xdata())  # moved sideways by less than a quarter of a layer
        assert all(abs(x - layer) < 0.25 for x, layer in zip(xs, (1, 2, 3), strict=True))
    with pytest.raises(ParameterError, match="no layer-curve metric"):
        cmp.plot("nope")


def test_comparison_plot_with_one_layer_plots_categories(tmp_path: Path) -> None:
    """The docs' case: every series at one layer. Categories (probe and condition), a dot per
    source beside each other, never a layer axis with ticks 2.84 ... 3.16."""
    cmp = pr.compare(_one_layer(tmp_path))
    fig = cmp.plot("uuas")
    ax = fig.axes[0]
    ticks = [t.get_text() for t in ax.get_xticklabels()]
    assert ticks == ["structural\ntested on clean", "structural\ntested on jabberwocky",
                     "perceptron\ntested on clean", "perceptron\ntested on jabberwocky"]
    assert list(ax.get_xticks()) == [0, 1, 2, 3]
    assert "layer 3" in ax.get_xlabel()
    assert [t.get_text() for t in fig.legends[0].get_texts()] == ["en seed 0", "en seed 1"]
    seed0, seed1 = (c[0] for c in ax.containers)
    assert list(seed0.get_ydata()) == pytest.approx([0.4, 0.45, 0.5, 0.55])
    assert list(seed1.get_ydata()) == pytest.approx([0.41, 0.46, 0.51, 0.56])
    assert all(a < b for a, b in zip(seed0.get_xdata(), seed1.get_xdata(), strict=True))
    assert seed0.get_marker() != seed1.get_marker()


def test_legend_of_many_series_sits_outside_in_columns(tmp_path: Path) -> None:
    """8 series: the legend is the figure's, below the axes (not over the data), 2 columns."""
    from synrob.probe.reporting.comparison_plot import metric_figure

    rows = [{"source": s, "probe": p, "test_on": t, "role": "model", "split": "test",
             "metric": "uuas", "layer": layer, "value": 0.5}
            for s in ("a", "b") for p in ("structural", "perceptron")
            for t in ("clean", "jabberwocky") for layer in (2, 4, 6)]
    fig = metric_figure(rows, "x", "uuas")
    ax = fig.axes[0]
    assert ax.get_legend() is None and len(fig.legends) == 1
    legend = fig.legends[0]
    assert len(legend.get_texts()) == 8 and legend._ncols == 2
    fig.draw_without_rendering()  # lays the figure out
    assert legend.get_window_extent().y1 <= ax.get_tightbbox().y0  # below the axes and labels
    assert list(ax.get_xticks()) == [2, 4, 6]


def test_experiment_results_plot_draws_the_reports_figure(tmp_path: Path) -> None:
    """ExperimentResults.plot() calls the experiment's figure() on the saved rows."""
    from synrob.probe.experiments.amnesic.experiment import AmnesicExperiment
    from synrob.probe.reporting.results import ExperimentResults

    rows = [{**r, "layer": layer} for layer in (6, 12) for r in amnesic_rows()]
    exp = AmnesicExperiment.from_preset("sample")
    res = ExperimentResults(tmp_path, {"experiment": "amnesic", "options": exp.options},
                            rows + [{"derived": True, "layer": 99, "section": "probe"}])
    fig = res.plot()
    assert isinstance(fig, Figure) and len(fig.axes) == 4
    assert [list(ax.get_xticks()) for ax in fig.axes] == [[6, 12]] * 4
    assert fig.get_suptitle() == "smollm2: erasing and flipping Number"


def _jabberwocky_rows() -> list[dict[str, Any]]:
    """results.json-shaped rows of a one-layer Jabberwocky run (no resamples, intervals kept)."""
    rows = []
    for role, layer, clean, jab in (("model", 3, 0.46, 0.43), ("path", None, 0.40, 0.40)):
        for split, test_on, value in (("dev", "clean", clean), ("test", "clean", clean),
                                      ("test", "jabberwocky", jab)):
            for metric in ("uuas", "dspr"):
                rows.append({"experiment": "jabberwocky", "role": role, "encoder": "minilm",
                             "layer": layer, "probe": "structural", "task": "distance",
                             "train_on": "clean", "test_on": test_on,
                             "draw": 0 if test_on == "jabberwocky" else None, "split": split,
                             "metric": metric, "value": value, "ci_low": value - 0.01,
                             "ci_high": value + 0.02})
    return rows


def test_jabberwocky_results_plot_gives_the_bars_with_their_intervals(tmp_path: Path) -> None:
    from synrob.probe.experiments.jabberwocky.experiment import JabberwockyExperiment
    from synrob.probe.reporting.results import ExperimentResults

    options = JabberwockyExperiment.from_preset("sample", probes="structural").options
    res = ExperimentResults(tmp_path, {"experiment": "jabberwocky", "options": options},
                            _jabberwocky_rows())
    fig = res.plot()
    ax = fig.axes[0]
    assert ax.get_title() == "structural probe: UUAS"
    assert [t.get_text() for t in ax.get_xticklabels()] == ["minilm L3", "path"]
    from matplotlib.container import BarContainer

    clean, jab = [c for c in ax.containers if isinstance(c, BarContainer)][:2]
    assert [b.get_height() for b in clean] == pytest.approx([0.46, 0.40])
    assert [b.get_height() for b in jab] == pytest.approx([0.43, 0.40])
    # the error bars are the saved intervals (results.json keeps no resamples)
    segments = [s for c in ax.collections for s in c.get_segments()]
    assert any(math.isclose(s[0][1], 0.45) and math.isclose(s[1][1], 0.48) for s in segments)


def test_probe_result_plot_is_the_layer_curve(tiny_ewt_lms: dict[str, str],
                                              notebook: Callable[[], None]) -> None:
    res = pr.probe("sample:en_ewt:test", encoder=tiny_ewt_lms["masked"], layer="all",
                   task="pos", train="sample:en_ewt:dev", dev="sample:en_ewt:dev",
                   params={"epochs": "1"}, device="cpu", baselines=False, bootstrap=20,
                   progress=False)
    fig = res.plot()
    notebook()
    ax = fig.axes[0]
    assert isinstance(fig, Figure) and ax.get_ylabel() == "acc"
    assert list(ax.get_xticks()) == [0, 1, 2]
    model = sorted((r["layer"], r["value"]) for r in res.rows if r["role"] == "model"
                   and r["split"] == "test" and r["metric"] == "acc")
    assert list(ax.containers[0][0].get_ydata()) == pytest.approx([v for _, v in model])


@pytest.mark.slow
def test_a_real_experiment_run_leaves_the_notebook_alone(notebook: Callable[[], None],
                                                         tmp_path: Path) -> None:
    """synrob.probe.run_experiment of a real study (robustness, sample preset, reduced: its
    report draws robustness-tau.png), then its results' .plot()."""
    res = pr.run_experiment("robustness", tmp_path / "rob", preset="sample", progress=False,
                            params={"test_limit": 20, "tasks": "pos,root", "budgets": "1,2",
                                    "epochs": 2})
    assert (tmp_path / "rob" / "robustness-tau.png").is_file()
    notebook()
    fig = res.plot()
    notebook()
    assert all(list(ax.get_xticks()) == [1, 2] for ax in fig.axes if ax.has_data())
