"""The numbers of the ``local-structure`` report, computed from the result rows: each set's
structure metrics, each probe's and the LM's performance per set, and Spearman's rho between
every metric and every performance across the sets (Clouatre et al. 2022, Figure 5), with a
bootstrap interval of each probe's rho (:func:`spearman_intervals`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

__all__ = ["METRICS", "structure", "performances", "spearman_table", "spearman_intervals",
           "derived_rows"]

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


def _label(r: dict[str, Any]) -> str:
    return f"{r['task']} {r['encoder']}:{r['layer']}"


def spearman_intervals(rows: Sequence[dict[str, Any]], struct: dict[str, dict[str, float]]
                       ) -> dict[str, dict[str, list[float]]]:
    """metric -> probe label -> ``[low, high]``: the 95 % interval of rho when each set's probe
    score is recomputed on the same resample of the test sentences (every set is a version of
    the same sentences, resampled alike: :mod:`..intervals`), the structure metrics held fixed.
    Probes whose rows carry no resamples are left out."""
    import numpy as np
    from scipy.stats import rankdata

    from ...metrics.bootstrap import percentile_interval

    boot: dict[str, dict[str, list[float]]] = {}
    for r in rows:
        if r.get("split") == "test" and "encoder" in r and r.get("_boot"):
            boot.setdefault(_label(r), {})[r["set"]] = r["_boot"]
    out: dict[str, dict[str, list[float]]] = {m: {} for m in METRICS}
    for label, per_set in boot.items():
        for m in METRICS:
            sets = [s for s in per_set if m in struct.get(s, {})]
            xs = np.array([struct[s][m] for s in sets], dtype=np.float64)
            if len(sets) < 3 or len(set(xs.tolist())) < 2:
                continue
            ys = np.array([[np.nan if v is None else v for v in per_set[s]] for s in sets]).T
            rx = rankdata(xs) - (len(sets) + 1) / 2
            ry = rankdata(ys, axis=1)
            ry = ry - ry.mean(axis=1, keepdims=True)
            with np.errstate(invalid="ignore", divide="ignore"):
                rho = (ry @ rx) / np.sqrt((ry ** 2).sum(axis=1) * (rx ** 2).sum())
            out[m][label] = percentile_interval(rho)
    return out


def derived_rows(rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Spearman's rho of every metric and performance over the sets, as ``results.json`` rows
    (``ci_low``/``ci_high`` for probes with resamples; ``p_value`` is not defined here: NaN)."""
    rows = [r for r in rows if not r.get("derived")]
    struct = structure(rows)
    corr, cis = spearman_table(struct, performances(rows)), spearman_intervals(rows, struct)
    seeds = sorted({r["seed"] for r in rows if "seed" in r})
    nan = float("nan")
    return [{"performance": label, "structure_metric": m, "split": "test",
             "metric": "spearman_rho", "value": rho, "sets": n,
             "ci_low": cis[m].get(label, [nan, nan])[0],
             "ci_high": cis[m].get(label, [nan, nan])[1], "p_value": nan, "seeds": seeds}
            for m in METRICS for label, (rho, n) in corr[m].items()]
