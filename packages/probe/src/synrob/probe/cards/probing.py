"""The probing sections of a card from its rows: structure by layer and morphosyntax by layer.

A section is ``{"status": "ok", "tasks": {label: task}}`` where a task holds its ``metric``,
its ``best_layer`` (the best dev score; a tie goes to the lower layer, as
:attr:`~synrob.probe.training.probing.ProbeRun.best`), ``layers``
(``[{"layer", "measures": {name: number}}]``) and ``baselines`` (``{name: {metric: number}}``);
every number is :func:`.numbers.number`. Measures: the metric on test (``uuas``), on dev
(``dev_uuas``, no interval), the control task's (``control_uuas``), the selectivity
(``selectivity_uuas``: probe minus control, paired), the lead over each baseline
(``lead_path_uuas``), the random-initialisation control's (``random_init_uuas``), MDL
(``compression``, ``control_compression``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .numbers import find, finite, number, rows_where

__all__ = ["STRUCTURE_METRICS", "probing_task", "decodable_from"]

#: The structure section's metrics (UUAS: undirected attachment score of the minimum
#: spanning tree; DSpr: Spearman correlation of predicted and gold distances).
STRUCTURE_METRICS = ("uuas", "dspr")
#: The selectivity a layer's interval must exceed, at its lower end, to count as decodable.
DECODABLE_MARGIN = 0.05


def _layer_measures(rows: Sequence[Mapping[str, Any]], metric: str, layer: int, ref: str
                    ) -> dict[str, Any]:
    """Every measure of one layer of one task (see the module docstring)."""
    model = rows_where(rows, encoder_role="model", layer=layer)
    out: dict[str, Any] = {}
    for name, where in ((metric, {"role": "model", "split": "test"}),
                        (f"control_{metric}", {"role": "control"}),
                        (f"selectivity_{metric}", {"role": "selectivity"})):
        got = find(model, ref, metric=metric, **where)
        if got is not None:
            out[name] = got
    dev = rows_where(model, role="model", split="dev", metric=metric)
    if dev:
        out[f"dev_{metric}"] = number(dev[0]["value"], None, ref)
    for r in rows_where(model, role="lead", metric=metric):
        out[f"lead_{r['baseline']}_{metric}"] = number(r["value"], (r.get("ci_low"),
                                                                     r.get("ci_high")), ref)
    rnd = find(rows_where(rows, encoder_role="random-init", layer=layer), ref, role="model",
               split="test", metric=metric)
    if rnd is not None:
        out[f"random_init_{metric}"] = rnd
    for role, key in (("mdl", "compression"), ("control_mdl", "control_compression")):
        got = find(model, ref, role=role, metric="compression")
        if got is not None:
            out[key] = got
    return out


def _baselines(rows: Sequence[Mapping[str, Any]], metrics: Sequence[str], ref: str
               ) -> dict[str, dict[str, Any]]:
    """Each baseline's test score of each metric (the same in every run: the first)."""
    out: dict[str, dict[str, Any]] = {}
    for name in ("path", "majority"):
        for metric in metrics:
            got = find(rows, ref, role=name, split="test", metric=metric)
            if got is not None:
                out.setdefault(name, {})[metric] = got
    return out


def best_layer(rows: Sequence[Mapping[str, Any]], metric: str) -> int | None:
    """The model's layer with the best dev ``metric`` (ties: the lower layer)."""
    dev = [(finite(r["value"]), r["layer"]) for r in
           rows_where(rows, encoder_role="model", role="model", split="dev", metric=metric)]
    dev = [(v, layer) for v, layer in dev if v is not None]
    return max(dev, key=lambda x: (x[0], -x[1]))[1] if dev else None


def probing_task(rows: Sequence[Mapping[str, Any]], metrics: Sequence[str], layers: Sequence[int],
                 ref: str) -> dict[str, Any]:
    """One task's entry (see the module docstring) from its runs' rows; the primary metric
    is ``metrics[0]``."""
    entries = []
    for layer in layers:
        measures: dict[str, Any] = {}
        for metric in metrics:
            measures.update(_layer_measures(rows, metric, layer, ref))
        entries.append({"layer": layer, "measures": measures})
    return {"metric": metrics[0], "metrics": list(metrics),
            "best_layer": best_layer(rows, metrics[0]), "layers": entries,
            "baselines": _baselines(rows, metrics, ref), "settings": ref}


def decodable_from(task: Mapping[str, Any]) -> int | None:
    """The first probed layer from which on the lower end of the selectivity's interval of
    the task's metric exceeds :data:`DECODABLE_MARGIN` at every layer (docs/card.md), or None."""
    key = f"selectivity_{task['metric']}"
    found = None
    for entry in reversed(task["layers"]):
        sel = entry["measures"].get(key)
        low = None if sel is None else sel["ci95"][0]
        if low is None or low <= DECODABLE_MARGIN:
            break
        found = entry["layer"]
    return found
