"""Figures that leave matplotlib's global state alone, and the conventions every synrob figure
shares.

synrob never calls ``matplotlib.use`` nor pyplot: a figure is a :class:`Figure` (a
``matplotlib.figure.Figure`` built directly, drawn by the Agg canvas when saved), so a notebook's
backend, its open figures and its current figure are the same after any synrob call. A
:class:`Figure` shows itself in Jupyter (``_repr_png_``) whether or not pyplot was imported, and
is never registered with pyplot (``plt.get_fignums()`` does not list it).

Shared conventions: :func:`layer_ticks` puts integer ticks at the layers (never 7.5 or 2.84),
:func:`dodge` spreads series that share x positions so that equal values stay visible, and
:data:`MARKERS` gives each series its own marker shape; :func:`save_png` writes a figure
atomically.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import matplotlib.figure
from matplotlib.ticker import FixedLocator, MaxNLocator

__all__ = ["Figure", "MARKERS", "new_figure", "save_png", "layer_ticks", "dodge",
           "outside_legend"]

#: One marker shape per series (cycled), so that coinciding lines stay distinguishable.
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "<", ">", "h", "*", "p")
#: Explicit ticks at every layer up to this many layers; above it, integer ticks chosen by
#: matplotlib (still integers).
EXPLICIT_TICKS = 16


class Figure(matplotlib.figure.Figure):
    """A matplotlib figure outside pyplot that a notebook shows as a PNG image."""

    def _repr_png_(self) -> bytes:
        buf = io.BytesIO()
        self.savefig(buf, format="png", dpi=100, bbox_inches="tight")
        return buf.getvalue()


def new_figure(nrows: int = 1, ncols: int = 1, *, figsize: tuple[float, float],
               layout: str | None = None, **subplots: Any) -> tuple[Figure, Any]:
    """A :class:`Figure` of ``figsize`` inches (``layout``: matplotlib's, e.g.
    ``"constrained"``) and its axes (``Figure.subplots``: a 2-d array unless ``squeeze=True``
    is passed)."""
    fig = Figure(figsize=figsize, layout=layout)
    axes = fig.subplots(nrows, ncols, squeeze=subplots.pop("squeeze", False), **subplots)
    return fig, axes


def save_png(fig: matplotlib.figure.Figure, path: str | Path, dpi: int = 150) -> Path:
    """Write ``fig`` as a PNG (tight bounding box) to ``path`` atomically; returns the path."""
    from synrob.perturb.io.atomic import atomic_path

    dest = Path(path)
    dest.parent.mkdir(parents=True, exist_ok=True)
    with atomic_path(dest) as tmp:
        fig.savefig(tmp, format="png", dpi=dpi, bbox_inches="tight")
    return dest


def layer_ticks(ax: Any, layers: Sequence[int], axis: str = "x") -> None:
    """Integer ticks on ``ax``'s ``axis``: one at every layer of ``layers`` when there are at
    most :data:`EXPLICIT_TICKS`, else integers chosen by matplotlib."""
    target = ax.xaxis if axis == "x" else ax.yaxis
    values = sorted({int(v) for v in layers})
    if 0 < len(values) <= EXPLICIT_TICKS:
        target.set_major_locator(FixedLocator(values))
    else:
        target.set_major_locator(MaxNLocator(integer=True))


def dodge(index: int, count: int, layers: Sequence[int], share: float = 0.3) -> float:
    """The x offset of series ``index`` of ``count`` that share the positions ``layers``:
    spread evenly over ``share`` of the smallest gap between two layers (0 for one series)."""
    if count <= 1:
        return 0.0
    values = sorted({float(v) for v in layers})
    gap = min((b - a for a, b in zip(values, values[1:], strict=False)), default=1.0)
    width = share * gap
    return -width / 2 + width * index / (count - 1)


def outside_legend(fig: Any, ax: Any, *, fontsize: float = 8) -> None:
    """The legend of ``ax`` below the axes of ``fig`` (a ``layout="constrained"`` figure, which
    makes room for it), never over the data: one column up to 5 entries, then two, three from
    13."""
    handles, labels = ax.get_legend_handles_labels()
    if not handles:
        return
    ncol = 1 if len(handles) <= 5 else 2 if len(handles) <= 12 else 3
    fig.legend(handles, labels, fontsize=fontsize, loc="outside lower center", ncol=ncol,
               frameon=False)
