"""The numbers of the ``senteval`` report, computed from the result rows: accuracy per (row,
task), the order of the rows (baselines in the paper's order, then encoder/layer/classifier),
the size of each task, and each task's lead of the best model row over the best baseline with
its paired bootstrap interval (:func:`leads`, :func:`derived_rows`)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from ..intervals import delta

__all__ = ["BASELINE_ORDER", "accuracies", "row_order", "task_sizes", "intervals", "leads",
           "behaviour", "derived_rows"]

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


def intervals(rows: Sequence[dict[str, Any]]) -> dict[tuple[str, str], list[float]]:
    """(row, task) -> ``[low, high]`` 95 % interval of the test accuracy (rows that have one)."""
    return {(r["row"], r["task"]): [r["ci_low"], r["ci_high"]] for r in rows
            if r.get("split") == "test" and r.get("metric") == "accuracy" and "ci_low" in r}


def _test_rows(rows: Sequence[dict[str, Any]], task: str, kind: str) -> list[dict[str, Any]]:
    return [r for r in rows if r.get("task") == task and r.get("kind") == kind
            and r.get("split") == "test" and r.get("metric") == "accuracy"
            and not r.get("derived")]


def leads(rows: Sequence[dict[str, Any]], tasks: Sequence[str]) -> list[dict[str, Any]]:
    """Per task, the model row with the best **dev** accuracy against the baseline with the
    best **dev** accuracy (ties: the first in :func:`row_order`; no test score takes part in
    either choice, so the paired bootstrap of the lead needs no selection inside it), and the
    model's lead (test accuracy difference) with its paired 95 % interval and one-sided
    p-value that it is > 0: ``[{"task", "model", "model_acc", "model_ci",
    "baseline", "baseline_acc", "baseline_ci", "lead", "lead_ci", "p_value"}]``."""
    order = {name: i for i, name in enumerate(row_order(rows))}
    dev = accuracies(rows, "dev")
    cis = intervals(rows)
    out = []
    for task in tasks:
        models, bases = _test_rows(rows, task, "encoder"), _test_rows(rows, task, "baseline")
        if not models or not bases:
            continue
        m = min(models, key=lambda r: (-dev.get((r["row"], task), -1.0), order[r["row"]]))
        b = min(bases, key=lambda r: (-dev.get((r["row"], task), -1.0), order[r["row"]]))
        d = delta([m], [b])
        nan2 = [math.nan, math.nan]
        out.append({"task": task, "model": m["row"], "model_acc": m["value"],
                    "model_ci": cis.get((m["row"], task), nan2), "baseline": b["row"],
                    "baseline_acc": b["value"], "baseline_ci": cis.get((b["row"], task), nan2),
                    "lead": d["value"], "lead_ci": [d["ci_low"], d["ci_high"]],
                    "p_value": d["p_value"]})
    return out


def behaviour(rows: Sequence[dict[str, Any]], tasks: Sequence[str]) -> list[dict[str, Any]]:
    """Per O/I task with a behavioural run: the LM's preference for the originals of the
    modified test sentences and, on the same sentences, the accuracy of the model row of
    :func:`leads` (best dev accuracy): ``[{"task", "lm", "items", "lm_acc", "lm_ci", "model",
    "model_acc", "model_ci"}]``."""
    best = {x["task"]: x["model"] for x in leads(rows, tasks)}
    nan2 = [math.nan, math.nan]
    out = []
    for r in rows:
        if r.get("kind") != "behaviour" or r.get("task") not in tasks:
            continue
        model = best.get(r["task"])
        mod = next((x for x in rows if x.get("row") == model and x.get("task") == r["task"]
                    and x.get("metric") == "accuracy_modified"), None)
        out.append({"task": r["task"], "lm": r["lm"], "items": r["n_items"],
                    "lm_acc": r["value"], "lm_ci": [r.get("ci_low", math.nan),
                                                    r.get("ci_high", math.nan)],
                    "model": model, "model_acc": mod["value"] if mod else math.nan,
                    "model_ci": [mod.get("ci_low", math.nan), mod.get("ci_high", math.nan)]
                    if mod else nan2})
    return sorted(out, key=lambda x: list(tasks).index(x["task"]))


def derived_rows(rows: Sequence[dict[str, Any]], tasks: Sequence[str]) -> list[dict[str, Any]]:
    """Each task's lead (:func:`leads`) as a ``results.json`` row."""
    seeds = sorted({r["seed"] for r in rows if "seed" in r})
    return [{"task": x["task"], "model": x["model"], "baseline": x["baseline"], "split": "test",
             "metric": "lead_accuracy", "value": x["lead"], "ci_low": x["lead_ci"][0],
             "ci_high": x["lead_ci"][1], "p_value": x["p_value"], "seeds": seeds}
            for x in leads(rows, tasks)]
