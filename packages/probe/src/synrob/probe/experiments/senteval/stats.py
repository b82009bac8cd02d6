"""The numbers of the ``senteval`` report, computed from the result rows: accuracy per (row,
task), the order of the rows (baselines in the paper's order, then encoder/layer/classifier) and
the size of each task."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

__all__ = ["BASELINE_ORDER", "accuracies", "row_order", "task_sizes"]

#: The baseline rows in the paper's order.
BASELINE_ORDER = ("majority", "length", "nb-uni-tfidf", "nb-bi-tfidf", "bov-glove")


def row_order(rows: Sequence[dict[str, Any]]) -> list[str]:
    """Baseline rows (paper order), then encoder rows by encoder, layer, classifier."""
    base = sorted({r["row"] for r in rows if r.get("kind") == "baseline"},
                  key=lambda b: (BASELINE_ORDER.index(b) if b in BASELINE_ORDER else 99, b))
    encs: list[str] = []
    for r in rows:
        if r.get("kind") == "encoder" and r["encoder"] not in encs:
            encs.append(r["encoder"])
    enc_rows = sorted({(encs.index(r["encoder"]), r["layer"], r["classifier"], r["row"])
                       for r in rows if r.get("kind") == "encoder"})
    return [*base, *(e[3] for e in enc_rows)]


def accuracies(rows: Sequence[dict[str, Any]], split: str) -> dict[tuple[str, str], float]:
    """(row, task) -> accuracy on ``split`` (``dev`` or ``test``)."""
    return {(r["row"], r["task"]): float(r["value"]) for r in rows
            if r.get("split") == split and r.get("metric") == "accuracy"}


def task_sizes(rows: Sequence[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """task -> ``{"n_train", "n_dev", "n_test", "n_classes"}`` (from its first row)."""
    sizes: dict[str, dict[str, Any]] = {}
    for r in rows:
        sizes.setdefault(r["task"], {k: r.get(k) for k in ("n_train", "n_dev", "n_test",
                                                             "n_classes")})
    return sizes
