"""The figure of one metric of a comparison (:mod:`.comparison`): the model's test score of each
series (a results directory, probe and condition) against the layer.

When every series has one layer (the docs' two seeds of one model, say), the figure plots
categories, not lines: one position per probe and condition, one dot per source beside each
other, each with its 95 % interval. Otherwise each series is a line over integer ticks at the
layers, with its own marker, moved sideways by a little so that equal series stay visible. The
legend sits below the axes, in two or three columns when there are many series.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..render.figures import Figure

__all__ = ["SERIES_COLUMNS", "condition_text", "curve_rows", "distinguishing", "series",
           "metric_figure"]

#: Columns that tell the curves of one figure apart (those present in the rows).
SERIES_COLUMNS = ("source", "probe", "task", "role", "train_on", "test_on", "condition",
                  "perturbation", "draw")


def curve_rows(rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Rows of a model's layer curve: a numeric layer, role ``model`` (where rows have roles),
    a test split (or none), not derived."""
    return [r for r in rows if isinstance(r.get("layer"), int) and not r.get("derived")
            and r.get("role", "model") == "model" and r.get("split") in (None, "test")
            and isinstance(r.get("value"), (int, float))]


#: How a column's value reads in a condition (others: ``column=value``).
_READ = {"probe": "{}", "role": "{}", "train_on": "trained on {}", "test_on": "tested on {}"}


def distinguishing(rows: Sequence[dict[str, Any]], columns: Sequence[str],
                   given: Sequence[str] = ()) -> list[str]:
    """The ``columns`` that split rows which ``given`` and the earlier columns put together
    (``task`` is left out when ``probe`` already determines it)."""
    keys: list[str] = []
    for column in columns:
        groups: dict[tuple[str, ...], set[str]] = {}
        for r in rows:
            groups.setdefault(tuple(str(r.get(k)) for k in [*given, *keys]), set()).add(
                str(r.get(column)))
        if any(len(v) > 1 for v in groups.values()):
            keys.append(column)
    return keys


def condition_text(row: dict[str, Any], columns: Sequence[str]) -> str:
    """``"structural, trained on clean, tested on jabberwocky"``: the row's values of
    ``columns`` (those it has)."""
    return ", ".join(_READ.get(c, c + "={}").format(row[c]) for c in columns
                     if row.get(c) is not None)


def series(rows: Sequence[dict[str, Any]], metric: str
           ) -> dict[tuple[str, str], list[dict[str, Any]]]:
    """The curve rows of ``metric`` (perturbed sets: their first draw) by (source, condition):
    the condition is the values of the other :data:`SERIES_COLUMNS` that differ between the
    rows (``"structural, test_on=jabberwocky"``)."""
    picked = [r for r in curve_rows(rows) if r["metric"] == metric
              and r.get("draw") in (None, 0)]
    varying = distinguishing(picked, [c for c in SERIES_COLUMNS if c not in ("draw", "source")],
                             ["source"])
    out: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for r in picked:
        out.setdefault((str(r.get("source", "")), condition_text(r, varying)), []).append(r)
    return out


def _errors(rows: Sequence[dict[str, Any]]) -> list[list[float]]:
    """``yerr`` of the rows' intervals (0 where a row has none)."""
    def low(r: dict[str, Any]) -> float:
        return r["value"] - r["ci_low"] if r.get("ci_low") is not None else 0.0

    def high(r: dict[str, Any]) -> float:
        return r["ci_high"] - r["value"] if r.get("ci_high") is not None else 0.0

    return [[max(low(r), 0.0) for r in rows], [max(high(r), 0.0) for r in rows]]


def metric_figure(rows: Sequence[dict[str, Any]], experiment: str, metric: str) -> Figure:
    """The figure of ``metric``: categories when every series has one layer, else lines
    against the layer (see the module docstring)."""
    from ..render.figures import new_figure, outside_legend

    found = series(rows, metric)
    one_layer = all(len({r["layer"] for r in s}) == 1 for s in found.values())
    conditions = list(dict.fromkeys(c for _, c in found))
    sources = list(dict.fromkeys(s for s, _ in found))
    width = max(8.0, 1.2 * len(conditions) * (1 + 0.25 * len(sources))) if one_layer else 8.0
    fig, axes = new_figure(figsize=(width, 4.5 + (0.0 if one_layer else 0.12 * len(found))),
                           layout="constrained")
    ax = axes[0][0]
    if one_layer:
        _categories(ax, found, sources, conditions)
        what = "test; dots: 95% intervals"
    else:
        _lines(ax, found)
        what = "test; bars: 95% intervals; series moved sideways a little"
    ax.set_ylabel(metric)
    ax.set_title(f"{experiment}: {metric} ({what})", fontsize=10)
    ax.grid(alpha=0.3)
    outside_legend(fig, ax, fontsize=7)
    return fig


def _categories(ax: Any, found: dict[tuple[str, str], list[dict[str, Any]]],
                sources: Sequence[str], conditions: Sequence[str]) -> None:
    """One x position per condition, one dot per source beside each other (the source's
    layer in its legend entry when the sources' layers differ)."""
    from ..render.figures import MARKERS, dodge

    layers = {s: sorted({r["layer"] for (src, _), rs in found.items() if src == s for r in rs})
              for s in sources}
    same_layer = len({tuple(v) for v in layers.values()}) == 1
    positions = list(range(len(conditions)))
    for i, source in enumerate(sources):
        shift = dodge(i, len(sources), positions, share=min(0.6, 0.15 * len(sources)))
        pts = [(conditions.index(c), rs[0]) for (s, c), rs in found.items() if s == source]
        label = source if same_layer else f"{source} (layer {', '.join(map(str, layers[source]))})"
        ax.errorbar([x + shift for x, _ in pts], [r["value"] for _, r in pts],
                    yerr=_errors([r for _, r in pts]), fmt=MARKERS[i % len(MARKERS)],
                    markersize=7, capsize=3, label=label)
    ax.set_xticks(positions, [c.replace(", ", "\n") or "all" for c in conditions], fontsize=8)
    ax.set_xlim(-0.6, len(conditions) - 0.4)
    only = sorted({x for v in layers.values() for x in v})
    ax.set_xlabel(f"condition (layer {', '.join(map(str, only))})")


def _lines(ax: Any, found: dict[tuple[str, str], list[dict[str, Any]]]) -> None:
    """A line per series against the layer, integer ticks at the layers."""
    from ..render.figures import MARKERS, dodge, layer_ticks

    layers = sorted({r["layer"] for rs in found.values() for r in rs})
    for i, ((source, condition), rs) in enumerate(sorted(found.items())):
        rs = sorted(rs, key=lambda r: r["layer"])
        shift = dodge(i, len(found), layers, share=0.25)
        label = ", ".join(x for x in (source, condition) if x)
        ax.errorbar([r["layer"] + shift for r in rs], [r["value"] for r in rs],
                    yerr=_errors(rs), marker=MARKERS[i % len(MARKERS)], markersize=5,
                    capsize=3, label=label)
    ax.set_xlabel("layer")
    layer_ticks(ax, layers)
