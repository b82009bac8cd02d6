"""The numbers of the ``local-structure`` report, computed from the result rows: each set's
structure metrics, each probe's and the LM's performance per set, and Spearman's rho between
every metric and every performance across the sets (Clouatre et al. 2022, Figure 5)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

__all__ = ["METRICS", "structure", "performances", "spearman_table"]

#: The structure metrics correlated with performance.
METRICS = ("chrf2", "lev", "compression")


def structure(rows: Sequence[dict[str, Any]]) -> dict[str, dict[str, float]]:
    """set -> metric -> value (chrF-2, Levenshtein, compression, compression_original)."""
    out: dict[str, dict[str, float]] = {}
    for r in rows:
        if "encoder" not in r and "model" not in r and r.get("set"):
            out.setdefault(r["set"], {})[r["metric"]] = float(r["value"])
    return out


def performances(rows: Sequence[dict[str, Any]]) -> dict[str, dict[str, float]]:
    """performance label -> set -> value, in the order first seen (probes, then the LM)."""
    out: dict[str, dict[str, float]] = {}
    for r in rows:
        if r.get("split") != "test":
            continue
        if "encoder" in r:
            label = f"{r['task']} {r['encoder']}:{r['layer']}"
        elif "model" in r and r["metric"] in ("loglik_per_token", "loglik_per_char"):
            label = f"LM {r['model']} log-lik/{r['metric'].rsplit('_', 1)[1]}"
        else:
            continue
        out.setdefault(label, {})[r["set"]] = float(r["value"])
    return out


def _spearman(xs: Sequence[float], ys: Sequence[float]) -> float:
    from scipy.stats import spearmanr

    if len(xs) < 3 or len(set(xs)) < 2 or len(set(ys)) < 2:
        return float("nan")
    return float(spearmanr(xs, ys).statistic)


def spearman_table(struct: dict[str, dict[str, float]], perf: dict[str, dict[str, float]]
                   ) -> dict[str, dict[str, tuple[float, int]]]:
    """metric -> performance -> (Spearman rho over the sets where both are known, n sets)."""
    out: dict[str, dict[str, tuple[float, int]]] = {}
    for m in METRICS:
        out[m] = {}
        for label, per_set in perf.items():
            sets = [s for s in per_set if m in struct.get(s, {})]
            xs = [struct[s][m] for s in sets]
            ys = [per_set[s] for s in sets]
            out[m][label] = (_spearman(xs, ys), len(sets))
    return out
