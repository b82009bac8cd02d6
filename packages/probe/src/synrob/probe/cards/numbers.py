"""A card's numbers: each is ``{"value", "ci95", "settings"}`` (the 95 % interval, ``None``
ends where unknown, and the key of the settings that made it in ``card.json``'s
``settings.sections``), picked from the grid's rows."""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

__all__ = ["number", "find", "rows_where", "finite", "flat_rows"]


def finite(value: Any) -> float | None:
    """``value`` as a float, or None when it is missing, NaN or infinite (JSON has neither)."""
    if value is None:
        return None
    v = float(value)
    return v if math.isfinite(v) else None


def number(value: Any, ci: Any, settings: str, **extra: Any) -> dict[str, Any]:
    """One number of the card: its value, its 95 % interval and the key of its settings."""
    lo, hi = (ci if ci is not None and len(ci) == 2 else (None, None))
    return {"value": finite(value), "ci95": [finite(lo), finite(hi)], "settings": settings,
            **extra}


def rows_where(rows: Iterable[Mapping[str, Any]], **where: Any) -> list[Mapping[str, Any]]:
    """The rows whose fields equal every ``where`` value (a missing field is None)."""
    return [r for r in rows if all(r.get(k) == v for k, v in where.items())]


def find(rows: Iterable[Mapping[str, Any]], settings: str, **where: Any) -> dict[str, Any] | None:
    """The :func:`number` of the first row matching ``where``, or None when none does."""
    got = rows_where(rows, **where)
    if not got:
        return None
    r = got[0]
    return number(r.get("value"), (r.get("ci_low"), r.get("ci_high")), settings)


#: containers whose keys name what their numbers are about: the row field they fill
_NAMED = {"tasks": "task", "features": "feature", "baselines": "baseline",
          "distance": "distance", "attractors": "attractors"}


def _is_number(v: Any) -> bool:
    return isinstance(v, Mapping) and {"value", "ci95", "settings"} <= v.keys()


def _row(ctx: dict[str, Any], measure: str, n: Mapping[str, Any]) -> dict[str, Any]:
    lo, hi = n["ci95"]
    return {**ctx, "measure": measure, "value": n["value"], "ci_low": lo, "ci_high": hi,
            "settings": n["settings"]}


def _numbers(node: Any, ctx: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """Every number under ``node`` with the names of the entries that hold it."""
    if isinstance(node, list):
        for v in node:
            inner = {**ctx, "layer": v["layer"]} if isinstance(v, Mapping) and "layer" in v else ctx
            yield from _numbers(v, inner)
        return
    if not isinstance(node, Mapping):
        return
    for k, v in node.items():
        if _is_number(v):
            yield _row(ctx, k, v)
        elif k in _NAMED and isinstance(v, Mapping):
            for name, sub in v.items():
                if _is_number(sub):  # a behaviour bucket
                    yield _row({**ctx, _NAMED[k]: name}, "agreement_accuracy", sub)
                else:
                    yield from _numbers(sub, {**ctx, _NAMED[k]: name})
        elif isinstance(v, (Mapping, list)):
            yield from _numbers(v, ctx)


def flat_rows(data: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Every number of a card as a row: ``lang``, ``section``, ``task``/``feature``,
    ``layer``, ``measure`` (or ``baseline`` and the metric, or a behaviour bucket), ``value``,
    ``ci_low``, ``ci_high``, ``settings``."""
    rows = []
    for lang, entry in data["languages"].items():
        for section, sec in entry["sections"].items():
            for row in _numbers(sec, {"lang": lang, "section": section}):
                rows.append(row)
    return rows
