"""Writing an experiment's outputs: markdown tables and CSV (figures: :mod:`synrob.probe.render.figures`)."""

from __future__ import annotations

import csv
import math
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from synrob.perturb.io.atomic import atomic_open, write_text_atomic

__all__ = ["fmt", "fmt_ci", "fmt_p", "markdown_table", "write_markdown", "write_csv",
           "mean_std", "select", "error_bars"]


def fmt(value: Any, digits: int = 3) -> str:
    """A table cell: floats to ``digits`` places, NaN/None as an em dash."""
    if value is None:
        return "—"
    if isinstance(value, float):
        if math.isnan(value):
            return "—"
        return f"{value:.{digits}f}"
    return str(value)


def fmt_ci(value: Any, ci: Sequence[float] | None, digits: int = 3) -> str:
    """``"v [low, high]"`` (a 95 % interval), or ``fmt(value)`` when the interval is unknown."""
    if ci is None or len(ci) != 2 or any(c is None or math.isnan(float(c)) for c in ci):
        return fmt(value, digits)
    return f"{fmt(value, digits)} [{float(ci[0]):.{digits}f}, {float(ci[1]):.{digits}f}]"


def fmt_p(p: Any) -> str:
    """A p-value cell: ``"<0.001"``, three decimals, or an em dash when unknown."""
    if p is None or (isinstance(p, float) and math.isnan(p)):
        return "—"
    return "<0.001" if float(p) < 0.001 else f"{float(p):.3f}"


def error_bars(values: Sequence[float], cis: Sequence[Sequence[float]]) -> list[list[float]]:
    """matplotlib ``yerr`` (2, n) from values and their ``[low, high]`` intervals (0 where
    unknown)."""
    lower, upper = [], []
    for v, ci in zip(values, cis, strict=True):
        ok = ci is not None and len(ci) == 2 and not any(math.isnan(float(c)) for c in ci)
        lower.append(max(float(v) - float(ci[0]), 0.0) if ok else 0.0)
        upper.append(max(float(ci[1]) - float(v), 0.0) if ok else 0.0)
    return [lower, upper]


def mean_std(values: Sequence[float], digits: int = 3) -> str:
    """``"m ± s"`` (sample std) or ``"m"`` for one value; ``—`` for none."""
    vals = [float(v) for v in values if v is not None and not math.isnan(float(v))]
    if not vals:
        return "—"
    m = sum(vals) / len(vals)
    if len(vals) == 1:
        return f"{m:.{digits}f}"
    s = math.sqrt(sum((v - m) ** 2 for v in vals) / (len(vals) - 1))
    return f"{m:.{digits}f} ± {s:.{digits}f}"


def markdown_table(header: Sequence[str], rows: Iterable[Sequence[Any]]) -> str:
    """A GitHub-flavoured markdown table (numbers right-aligned)."""
    body = [[fmt(c) for c in r] for r in rows]
    align = ["---" if i == 0 else "---:" for i in range(len(header))]
    lines = ["| " + " | ".join(header) + " |", "| " + " | ".join(align) + " |"]
    lines += ["| " + " | ".join(r) + " |" for r in body]
    return "\n".join(lines)


def write_markdown(path: Path, title: str, sections: Sequence[str]) -> Path:
    """Write ``title`` then each section, separated by blank lines."""
    return write_text_atomic(path, "\n\n".join([title, *sections]).rstrip() + "\n")


def write_csv(path: Path, rows: Sequence[dict[str, Any]]) -> Path:
    """Rows to CSV: columns are the union of keys (first-seen order); dicts as JSON."""
    import json

    from synrob.perturb.io.table import columns_of

    cols = columns_of(rows)
    with atomic_open(path, newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=cols)
        w.writeheader()
        for r in rows:
            w.writerow({k: json.dumps(v, sort_keys=True) if isinstance(v, (dict, list)) else v
                        for k, v in r.items()})
    return path


def select(rows: Iterable[dict[str, Any]], **where: Any) -> list[dict[str, Any]]:
    """Rows whose fields equal every ``where`` value."""
    return [r for r in rows if all(r.get(k) == v for k, v in where.items())]
