"""The layer curve of a ``synrob probe --layer all`` run: one row per layer, as a table or a plot.

Input is the ``layers`` object of the ``--json`` output (``{"0": {"results": {file: metrics}}}``),
so a saved JSON can be drawn again without retraining. Per layer, :func:`curve_rows` reads the
task's metric ``M`` on one test file with its 95 % interval (``M_ci95``, from ``--bootstrap``),
the control task's ``M`` and the selectivity (``--control``), and the MDL compression of the task
and of its control (``--mdl``); what the run did not compute is ``None``.
:func:`layer_curve_figure` draws the score panel (task, control, selectivity, with the intervals as
error bars) and, when present, the compression panel, with a tick at every layer;
:func:`plot_layer_curve` writes it as a PNG.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..render.figures import Figure

__all__ = ["curve_rows", "markdown_curve", "layer_curve_figure", "plot_layer_curve"]


def _pick(metrics: Mapping[str, Any] | None, metric: str) -> tuple[float | None, Any]:
    if not metrics or metrics.get(metric) is None:
        return None, None
    return float(metrics[metric]), metrics.get(f"{metric}_ci95")


def _compression(metrics: Mapping[str, Any], key: str) -> float | None:
    mdl = metrics.get(key)
    return float(mdl["compression"]) if mdl else None


def curve_rows(layers: Mapping[str, Any], metric: str, file: str | None = None
               ) -> list[dict[str, Any]]:
    """One dict per layer (sorted by layer) for ``file`` (by default the first test file):
    ``layer``, ``value``/``ci``, ``control``/``control_ci``, ``selectivity``/``selectivity_ci``,
    ``compression`` and ``control_compression``."""
    rows = []
    for key in sorted(layers, key=int):
        results = layers[key]["results"]
        metrics = results[file if file is not None else next(iter(results))]
        value, ci = _pick(metrics, metric)
        control, control_ci = _pick(metrics.get("control"), metric)
        sel, sel_ci = _pick(metrics.get("selectivity"), metric)
        rows.append({"layer": int(key), "value": value, "ci": ci, "control": control,
                     "control_ci": control_ci, "selectivity": sel, "selectivity_ci": sel_ci,
                     "compression": _compression(metrics, "mdl"),
                     "control_compression": _compression(metrics, "control_mdl")})
    return rows


def _cell(value: float | None, ci: Any = None, digits: int = 3) -> str:
    if value is None:
        return "—"
    text = f"{value:.{digits}f}"
    return f"{text} [{ci[0]:.{digits}f}, {ci[1]:.{digits}f}]" if ci else text


def markdown_curve(rows: list[dict[str, Any]], metric: str) -> str:
    """A Markdown table of :func:`curve_rows` (intervals in brackets)."""
    lines = [f"| layer | {metric} | control {metric} | selectivity | MDL compression | "
             "control compression |", "|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['layer']} | {_cell(r['value'], r['ci'])} | "
                     f"{_cell(r['control'], r['control_ci'])} | "
                     f"{_cell(r['selectivity'], r['selectivity_ci'])} | "
                     f"{_cell(r['compression'], digits=2)} | "
                     f"{_cell(r['control_compression'], digits=2)} |")
    return "\n".join(lines) + "\n"


def _series(ax: Any, rows: list[dict[str, Any]], key: str, label: str, fmt: str) -> None:
    """One line with asymmetric error bars (0 where a layer has no interval)."""
    pts = [(r["layer"], r[key], r.get(f"{key}_ci" if key != "value" else "ci"))
           for r in rows if r[key] is not None]
    if not pts:
        return
    xs, ys, cis = zip(*pts, strict=True)
    err = [[y - c[0] if c else 0.0 for y, c in zip(ys, cis, strict=True)],
           [c[1] - y if c else 0.0 for y, c in zip(ys, cis, strict=True)]]
    ax.errorbar(xs, ys, yerr=err, fmt=fmt, capsize=3, label=label)


def plot_layer_curve(rows: list[dict[str, Any]], path: str | Path, *, metric: str,
                     title: str = "") -> Path:
    """Draw :func:`curve_rows` into a PNG at ``path``; return the path."""
    from ..render.figures import save_png

    return save_png(layer_curve_figure(rows, metric=metric, title=title), path)


def layer_curve_figure(rows: list[dict[str, Any]], *, metric: str, title: str = "") -> Figure:
    """:func:`curve_rows` as a figure: the score panel (and the compression panel when the
    rows have MDL), a tick at every layer."""
    from ..render.figures import layer_ticks, new_figure

    has_mdl = any(r["compression"] is not None for r in rows)
    fig, axes = new_figure(1, 2 if has_mdl else 1, figsize=(10 if has_mdl else 5.5, 3.8))
    layers = [r["layer"] for r in rows]
    ax = axes[0][0]
    _series(ax, rows, "value", f"task {metric}", "o-")
    _series(ax, rows, "control", f"control {metric}", "s--")
    _series(ax, rows, "selectivity", "selectivity", "^-")
    ax.set_xlabel("layer")
    layer_ticks(ax, layers)
    ax.set_ylabel(metric)
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    if has_mdl:
        mx = axes[0][1]
        for key, label, fmt in (("compression", "task", "o-"),
                                ("control_compression", "control", "s--")):
            pts = [(r["layer"], r[key]) for r in rows if r[key] is not None]
            if pts:
                mx.plot(*zip(*pts, strict=True), fmt, label=label)
        mx.set_xlabel("layer")
        layer_ticks(mx, layers)
        mx.set_ylabel("MDL compression (uniform / online)")
        mx.legend(fontsize=8)
        mx.grid(alpha=0.3)
    if title:
        fig.suptitle(title, fontsize=10)
    return fig
