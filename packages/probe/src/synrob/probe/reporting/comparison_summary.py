"""The summary tables of a comparison (:mod:`.comparison`): per metric, one row per probe and
condition, one column per source, each cell the test score with its 95 % interval.

A row is what the rows' key columns say (:data:`SUMMARY_KEYS` that tell rows apart, a column
left out when earlier ones already determine it: ``task`` follows ``probe``). Rows are the test
split's, not derived; a perturbed test set's first draw, as in the figure. Where a source has
the cell at several layers, the layer with the best dev score of the same metric and probe
(trained alike) is shown, its layer in brackets: a choice no test score takes part in, as in
the single-experiment reports. Without dev rows to choose by, each layer is a row of its own.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from synrob.perturb.io.table import KEY_COLUMNS

from .comparison_plot import condition_text, distinguishing

__all__ = ["SUMMARY_KEYS", "summary_rows"]

#: Columns that make a summary row, in the order they are tried.
SUMMARY_KEYS = ("probe", "task", "classifier", "section", "role", "baseline", "vs", "set",
                "unit", "rho", "perturbation", "adversary", "budget", "train_on", "test_on",
                "condition", "contrast")
#: Never part of a row's key: the columns, the choice and the numbers.
_NOT_KEYS = frozenset({"source", "layer", "split", "metric", "draw", "encoder", "test",
                       "value", "ci_low", "ci_high", "p_value"})

Cells = dict[tuple[Any, ...], dict[str, list[dict[str, Any]]]]


def _key(row: dict[str, Any], keys: Sequence[str]) -> tuple[Any, ...]:
    return tuple(str(row.get(k)) for k in keys)


def _test_rows(rows: Sequence[dict[str, Any]], metric: str) -> list[dict[str, Any]]:
    return [r for r in rows if r.get("metric") == metric and not r.get("derived")
            and r.get("split") in (None, "test") and r.get("draw") in (None, 0)
            and isinstance(r.get("value"), (int, float)) and not isinstance(r["value"], bool)]


def _cells(rows: Sequence[dict[str, Any]], keys: Sequence[str]) -> Cells:
    cells: Cells = {}
    for r in rows:
        cells.setdefault(_key(r, keys), {}).setdefault(str(r.get("source", "")), []).append(r)
    return cells


def _more_keys(cells: Cells, keys: Sequence[str]) -> list[str]:
    """Key columns (other than the layer) in which rows of one cell still differ."""
    return [c for c in KEY_COLUMNS if c not in keys and c not in _NOT_KEYS
            and any(len({str(r.get(c)) for r in rs}) > 1
                    for cell in cells.values() for rs in cell.values())]


def _best_dev_layer(cell: list[dict[str, Any]], rows: Sequence[dict[str, Any]],
                    keys: Sequence[str], metric: str) -> int | None:
    """Of the layers of ``cell``, the one with the best dev ``metric`` of the same source and
    key (the test condition aside: dev is read as the probe was trained)."""
    first = cell[0]
    same = [k for k in keys if k != "test_on"]
    layers = {r.get("layer") for r in cell}
    dev = [r for r in rows if r.get("split") == "dev" and r.get("metric") == metric
           and not r.get("derived") and r.get("source") == first.get("source")
           and r.get("layer") in layers and _key(r, same) == _key(first, same)
           and isinstance(r.get("value"), (int, float))
           and not math.isnan(float(r["value"]))]
    if not dev or len({r.get("layer") for r in dev}) != len(layers):
        return None
    return max(dev, key=lambda r: (r["value"], -(r.get("layer") or 0)))["layer"]


def _cell_text(row: dict[str, Any], chosen: bool) -> str:
    from ..experiments.report import fmt_ci

    ci = [row.get("ci_low"), row.get("ci_high")]
    text = fmt_ci(row["value"], None if None in ci else [float(c) for c in ci])
    return f"{text} (L{row['layer']})" if chosen else text


def _condition(row: dict[str, Any], keys: Sequence[str]) -> str:
    return condition_text(row, [k for k in keys if k != "probe"]) or "—"


def summary_rows(rows: Sequence[dict[str, Any]], metric: str) -> list[dict[str, str]]:
    """One dict per summary row: ``probe`` (when the rows have probes), ``condition`` and one
    entry per source (``"0.598 [0.580, 0.612]"``, ``"… (L3)"`` where a layer was chosen; ``""``
    where the source has no such row), in first-seen order."""
    test = _test_rows(rows, metric)
    keys = distinguishing(test, SUMMARY_KEYS)
    cells = _cells(test, keys)
    while extra := _more_keys(cells, keys):
        keys += extra
        cells = _cells(test, keys)
    picked: dict[tuple[Any, ...], dict[str, tuple[dict[str, Any], bool]]] = {}
    for key, cell in cells.items():
        for source, rs in cell.items():
            layer = None if len(rs) == 1 else _best_dev_layer(rs, rows, keys, metric)
            if len(rs) > 1 and layer is None:  # nothing to choose by: a row per layer
                return _per_layer(test, [*keys, "layer"])
            row = rs[0] if layer is None else next(r for r in rs if r.get("layer") == layer)
            picked.setdefault(key, {})[source] = (row, layer is not None)
    return _table(picked, keys, list(dict.fromkeys(str(r.get("source", "")) for r in test)))


def _per_layer(test: Sequence[dict[str, Any]], keys: list[str]) -> list[dict[str, str]]:
    cells = _cells(test, keys)
    picked = {k: {s: (rs[0], False) for s, rs in cell.items()} for k, cell in cells.items()}
    return _table(picked, keys, list(dict.fromkeys(str(r.get("source", "")) for r in test)))


def _table(picked: dict[tuple[Any, ...], dict[str, tuple[dict[str, Any], bool]]],
           keys: Sequence[str], sources: Sequence[str]) -> list[dict[str, str]]:
    """The rows, grouped by role: the model's first, then each baseline's as first seen."""
    def role(cell: dict[str, tuple[dict[str, Any], bool]]) -> str:
        return str(next(iter(cell.values()))[0].get("role", "model"))

    order = list(dict.fromkeys(["model", *(role(c) for c in picked.values())]))
    out = []
    for cell in sorted(picked.values(), key=lambda c: order.index(role(c))):
        first = next(iter(cell.values()))[0]
        head = {"probe": str(first["probe"])} if "probe" in keys else {}
        out.append({**head, "condition": _condition(first, keys),
                    **{s: _cell_text(*cell[s]) if s in cell else "" for s in sources}})
    return out
