"""The comparison page (issue 46 §4): ``synrob compare``'s report.html opens on summary tables
(one row per probe and condition, one column per source, intervals), then the figures, then
every row, collapsed and sortable by the page's one inline script.

In headless chromium at 1400 px wide: the summary tables fit without a horizontal scroll bar,
the sort script runs under the page's Content-Security-Policy (no console error) and sorts, and
the figures are the ones whose ticks are categories (one layer) or integers (several layers),
checked on the Figure objects that drew them, pixel for pixel.
"""

from __future__ import annotations

import io
import re
from pathlib import Path
from typing import Any

import pytest
import synrob.probe as pr
from synrob.probe.render.html_report import SORT_SCRIPT
from synrob.probe.reporting.comparison_summary import summary_rows

from tests.chromium import needs_chromium, page_values

from .test_compare import Layered, seed_dirs
from .test_html_report import _assert_self_contained, _tables

WIDTH = 1400


class Jabberwockyish(Layered):
    """One layer, two probes, trained and tested on clean and perturbed data, baselines: the
    shape of the docs' Jabberwocky comparison (8 model series with two sources)."""

    name = "test-jabberwockyish"

    def plan(self, ctx: Any) -> list[Any]:
        from synrob.probe.experiments.base import RunSpec

        return [RunSpec({"layer": 3, "tests": {"clean": {"sha256": "a" * 64}}}, "L3")]

    def execute(self, spec: Any, ctx: Any) -> list[dict[str, Any]]:
        rows = []
        conditions = [(p, tr, te) for p in ("structural", "perceptron")
                      for tr in ("clean", "jabberwocky") for te in ("clean", "jabberwocky")]
        for i, (probe, train_on, test_on) in enumerate(conditions):
            for role, layer, v in (("model", 3, 0.40 + 0.02 * i + 0.01 * ctx.seed),
                                   ("path", None, 0.38), ("fast+pos", 0, 0.25 + 0.01 * i)):
                for split in ("dev", "test"):
                    rows.append({"layer": layer, "role": role, "split": split, "probe": probe,
                                 "task": "distance" if probe == "structural" else "parse",
                                 "train_on": train_on, "test_on": test_on, "metric": "uuas",
                                 "value": v, "ci_low": v - 0.015, "ci_high": v + 0.017})
        return rows


def _dirs(tmp_path: Path, experiment: type[Layered], seeds: range) -> list[Path]:
    return seed_dirs(experiment(), tmp_path, f"{experiment.name}-", seeds)


def test_summary_rows_one_per_probe_and_condition_one_column_per_source(tmp_path) -> None:
    cmp = pr.compare(_dirs(tmp_path, Jabberwockyish, range(2)))
    rows = summary_rows(cmp.rows, "uuas")
    assert len(rows) == 8 * 3  # (probe x trained x tested) x (model, path, fast+pos)
    assert list(rows[0]) == ["probe", "condition", "en seed 0", "en seed 1"]
    assert rows[0] == {"probe": "structural", "condition": "model, trained on clean, tested on "
                       "clean", "en seed 0": "0.400 [0.385, 0.417]",
                       "en seed 1": "0.410 [0.395, 0.427]"}
    assert [r["condition"].split(",")[0] for r in rows] == ["model"] * 8 + ["path"] * 8 + [
        "fast+pos"] * 8  # the model's rows first
    table = cmp.summary("uuas")
    assert table.rows == rows and "uuas" in table.title


def test_summary_chooses_a_models_layer_on_dev_not_test() -> None:
    """Several layers: each source's cell is the layer with the best dev score, marked (L…),
    whatever the test scores; without dev rows every layer is a row of its own."""
    rows = []
    for source, dev, test in (("a", {1: 0.5, 2: 0.7, 3: 0.6}, {1: 0.5, 2: 0.6, 3: 0.9}),
                              ("b", {1: 0.9, 2: 0.1, 3: 0.1}, {1: 0.3, 2: 0.8, 3: 0.8})):
        for layer in (1, 2, 3):
            for split, v in (("dev", dev[layer]), ("test", test[layer])):
                rows.append({"source": source, "probe": "structural", "role": "model",
                             "layer": layer, "split": split, "metric": "uuas", "value": v})
    got = summary_rows(rows, "uuas")
    assert got == [{"condition": "—", "a": "0.600 (L2)", "b": "0.300 (L1)"}]  # one condition
    test_only = [r for r in rows if r["split"] == "test"]
    assert [r["condition"] for r in summary_rows(test_only, "uuas")] == [
        "layer=1", "layer=2", "layer=3"]


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Two comparison pages: the docs' shape (one layer, 8 series, 4 sources) and layer
    curves (three layers, two sources)."""
    tmp = tmp_path_factory.mktemp("comparison-page")
    one = pr.compare(_dirs(tmp, Jabberwockyish, range(4)))
    pr.write_comparison(one, tmp / "one")
    curves = pr.compare(_dirs(tmp, Layered, range(2)))
    pr.write_comparison(curves, tmp / "curves")
    return {"one": (one, tmp / "one"), "curves": (curves, tmp / "curves")}


def test_page_order_summary_figures_then_every_row_collapsed(page: dict[str, Any]) -> None:
    cmp, out = page["one"]
    html = (out / "report.html").read_text(encoding="utf-8")
    assert html.index('id="summary"') < html.index('id="figures"') < html.index('id="tables"')
    tables = _tables(html)
    summary = tables["summary-1"]
    assert summary["header"] == ["probe", "condition", *(f"en seed {s}" for s in range(4))]
    assert [c[1] for c in summary["rows"][0]] == [
        "structural", "model, trained on clean, tested on clean", "0.400 [0.385, 0.417]",
        "0.410 [0.395, 0.427]", "0.420 [0.405, 0.437]", "0.430 [0.415, 0.447]"]
    every = tables["table-1"]
    assert len(every["rows"]) == len(cmp.rows)
    details = re.search(r"<details><summary>(.*?)</summary>", html)
    assert details and f"{len(cmp.rows)} rows" in details.group(1)
    assert html.index("<details>") < html.index('id="table-1"') < html.index("</details>")
    # one script, the sorter, allowed by its hash and by nothing else; otherwise self-contained
    assert html.count("<script") == 1 and f"<script>{SORT_SCRIPT}</script>" in html
    assert re.search(r"script-src 'sha256-[A-Za-z0-9+/=]{44}'", html)
    _assert_self_contained(html.replace(f"<script>{SORT_SCRIPT}</script>", ""))


def _figure_ticks(fig: Any) -> list[str]:
    return [t.get_text() for ax in fig.axes for t in ax.get_xticklabels()]


def _pixels(png: bytes) -> Any:
    from PIL import Image

    with Image.open(io.BytesIO(png)) as im:
        return im.convert("RGB").tobytes(), im.size


def test_figure_ticks_are_categories_or_integers(page: dict[str, Any]) -> None:
    """Checked on the Figure objects, and the page's PNGs are those figures pixel for pixel."""
    from synrob.probe.render.figures import save_png

    for name, want in (("one", None), ("curves", ["1", "2", "3"])):
        cmp, out = page[name]
        fig = cmp.plot("uuas")
        ticks = _figure_ticks(fig)
        if want is None:  # categories: probe and condition, never a number
            assert ticks and all(re.search(r"[a-z]", t) for t in ticks), ticks
            assert len(ticks) == 8
        else:
            assert ticks == want
        again = save_png(fig, out / "again.png", dpi=110).read_bytes()
        assert _pixels(again) == _pixels((out / "compare-uuas.png").read_bytes())


MEASURE = """JSON.stringify({
  page: [document.documentElement.scrollWidth, document.documentElement.clientWidth],
  summaries: Array.from(document.querySelectorAll("table.summary")).map(function (t) {
    var box = t.parentElement;
    return [box.scrollWidth, box.clientWidth, t.getBoundingClientRect().right,
            document.querySelector("main").getBoundingClientRect().right];
  }),
  images: Array.from(document.images).every(function (i) {
    return i.complete && i.naturalWidth > 0; }),
  collapsed: !document.querySelector("details").open
})"""

SORT_BY = """(function (name) {
  var table = document.getElementById("table-1");
  var heads = Array.from(table.tHead.rows[0].cells);
  var col = heads.findIndex(function (h) { return h.textContent === name; });
  heads[col].querySelector("button").click();
  return JSON.stringify(Array.from(table.tBodies[0].rows).map(function (r) {
    var c = r.cells[col]; return c.getAttribute("data-value") || c.textContent; }));
})("value")"""


def _in_chromium(url: str) -> tuple[list[str], dict[str, Any], list[str], list[str]]:
    """Open ``url`` 1400 px wide; its console errors, :data:`MEASURE`, and the ``value``
    column after one click on its name and after a second."""
    errors, (measured, up, down) = page_values(url, [MEASURE, SORT_BY, SORT_BY], width=WIDTH,
                                               height=900)
    return errors, measured, up, down


@needs_chromium
@pytest.mark.parametrize("name", ["one", "curves"])
def test_comparison_page_in_headless_chromium_at_1400px(page: dict[str, Any],
                                                        name: str) -> None:
    cmp, out = page[name]
    errors, measured, up, down = _in_chromium((out / "report.html").as_uri())
    assert errors == []  # the sorter ran under the page's CSP; every image loaded
    assert measured["page"][0] <= measured["page"][1] == WIDTH
    assert measured["summaries"], "no summary table"
    for scroll_width, client_width, right, main_right in measured["summaries"]:
        assert scroll_width <= client_width, measured  # no horizontal scroll bar
        assert right <= main_right + 0.5
    assert measured["images"] and measured["collapsed"]
    values = sorted(float(r["value"]) for r in cmp.rows if isinstance(r.get("value"), float))
    numbers = [float(v) for v in up if v not in ("", "null")]
    assert numbers == values and numbers == sorted(numbers)
    assert [float(v) for v in down if v not in ("", "null")] == values[::-1]
