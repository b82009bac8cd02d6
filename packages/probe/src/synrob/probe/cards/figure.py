"""The figure of one language of a card (``card-LANG.png``): three panels against the layer,
each line with its 95 % interval.

1. structure: the structural probe's test UUAS, its control task's, the random-initialisation
   control's, and the path and majority baselines (flat: they read no layer);
2. morphosyntax: the selectivity (accuracy minus the control task's) of every task, with the
   0.05 line that "decodable" must clear;
3. causal: agreement accuracy clean, with LEACE inside the model at the layer and after the
   displacement-matched random erasure (the first feature erased).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..render.figures import MARKERS, Figure, dodge, layer_ticks, new_figure

__all__ = ["card_figure"]

Series = tuple[str, list[int], list[float], list[list[float]]]


def _series(label: str, entries: Sequence[Mapping[str, Any]], measure: str) -> Series:
    xs, ys, errs = [], [], []
    for e in entries:
        n = e["measures"].get(measure)
        if n is None or n["value"] is None:
            continue
        xs.append(int(e["layer"]))
        ys.append(float(n["value"]))
        lo, hi = n["ci95"]
        errs.append([float(n["value"]) - lo if lo is not None else 0.0,
                     hi - float(n["value"]) if hi is not None else 0.0])
    return label, xs, ys, errs


def _draw(ax: Any, series: Sequence[Series], layers: Sequence[int], share: float = 0.3) -> None:
    shown = [s for s in series if s[1]]
    for i, (label, xs, ys, errs) in enumerate(shown):
        off = dodge(i, len(shown), layers, share)
        yerr = [[max(e[0], 0.0) for e in errs], [max(e[1], 0.0) for e in errs]]
        ax.errorbar([x + off for x in xs], ys, yerr=yerr, label=label, capsize=2,
                    marker=MARKERS[i % len(MARKERS)], markersize=4, linewidth=1)


def _structure(ax: Any, sec: Mapping[str, Any], layers: Sequence[int]) -> None:
    task = sec.get("tasks", {}).get("distance")
    if task is None:
        ax.text(0.5, 0.5, sec.get("reason", "absent"), ha="center", wrap=True, fontsize=8)
        return
    _draw(ax, [_series("probe UUAS", task["layers"], "uuas"),
               _series("control task", task["layers"], "control_uuas"),
               _series("random-init model", task["layers"], "random_init_uuas")], layers)
    for i, (name, b) in enumerate(task["baselines"].items()):
        if b.get("uuas", {}).get("value") is not None:
            ax.axhline(b["uuas"]["value"], linestyle=("--", ":")[i % 2], color="grey",
                       linewidth=1, label=f"{name} baseline")
    if task["best_layer"] is not None:
        ax.axvline(task["best_layer"], color="black", alpha=0.2, linewidth=4,
                   label=f"best on dev (L{task['best_layer']})")
    ax.set_title("structure: UUAS (test)", fontsize=10)


def _morphosyntax(ax: Any, sec: Mapping[str, Any], layers: Sequence[int]) -> None:
    tasks = sec.get("tasks", {})
    _draw(ax, [_series(label, t["layers"], f"selectivity_{t['metric']}")
               for label, t in tasks.items()], layers)
    ax.axhline(0.05, color="grey", linestyle=":", linewidth=1, label="0.05 (decodable)")
    ax.set_title("morphosyntax: selectivity (acc - control)", fontsize=10)


def _causal(ax: Any, sec: Mapping[str, Any], layers: Sequence[int]) -> None:
    feats = sec.get("features", {})
    if sec.get("status") != "ok" or not feats:
        ax.text(0.5, 0.5, "absent:\n" + str(sec.get("reason", ""))[:160], ha="center",
                va="center", wrap=True, fontsize=7, transform=ax.transAxes)
        ax.set_title("causal: absent", fontsize=10)
        return
    feature, entry = next(iter(feats.items()))
    causal = [e["layer"] for e in entry["layers"]] or list(layers)
    _draw(ax, [_series("clean", entry["layers"], "accuracy_clean"),
               _series("LEACE inside", entry["layers"], "accuracy_erased"),
               _series("random (matched)", entry["layers"], "accuracy_random_matched")],
          causal, share=0.1)
    ax.set_title(f"causal: {feature} agreement accuracy", fontsize=10)
    layer_ticks(ax, causal)


def card_figure(data: Mapping[str, Any], lang: str) -> Figure:
    """The three panels of ``lang`` (see the module docstring)."""
    sections = data["languages"][lang]["sections"]
    layers = list(data["settings"]["layers"])
    fig, axes = new_figure(1, 3, figsize=(15, 4.2), layout="constrained")
    for ax, draw, name in ((axes[0][0], _structure, "structure"),
                           (axes[0][1], _morphosyntax, "morphosyntax"),
                           (axes[0][2], _causal, "causal")):
        if name != "causal":
            layer_ticks(ax, layers)
        draw(ax, sections[name], layers)
        ax.set_xlabel("layer")
        ax.grid(alpha=0.3)
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize=7)
    fig.suptitle(f"{data['model']['name']}, {lang}: card ({data['settings']['preset']['name']} "
                 "preset; 95 % intervals)", fontsize=11)
    return fig
