"""Bootstrap intervals of experiment rows, and paired drops and leads between rows.

Every run of an experiment scores its test files with the same resamples of their sentences:
the indices of a file of ``n`` sentences are drawn by :func:`boot_indices` from
``numpy.random.default_rng([seed, n, n_boot])`` — a function of the experiment's seed and the
file's length only. So two rows about the same test file (a model and a baseline, two layers,
two training seeds) or about position-aligned files of the same length (a clean test set and
its Jabberwocky version, which keep every sentence in order) are scored on the *same* drawn
sentences, even when different runs, processes or machines produced them, and any difference of
two rows is a **paired** bootstrap (Koehn 2004) computed at report time.

A length-averaged metric (DSpr, NSpr: :attr:`synrob.probe.metrics.bootstrap.SentenceStats.strata`) is
resampled within each sentence length instead (:func:`strata_indices`, drawn from
``numpy.random.default_rng([seed, n, n_boot, 1])`` by
:func:`synrob.probe.metrics.bootstrap.stratified_indices`), so that every resample averages over the same
lengths as the score itself; files whose sentences have the same lengths (a Jabberwocky draw of
the test set) again share the resamples. Every version of a sentence (the Jabberwocky draws, the
sets of ``local-structure``) is resampled with it, which makes a mean over versions a cluster
bootstrap over the source sentences.

A row that has an interval carries ``ci_low`` and ``ci_high`` (the 2.5 % and 97.5 % percentiles
of its resampled values, :func:`synrob.probe.metrics.bootstrap.percentile_interval`) and the private field
``_boot``: its ``n_boot`` resampled values (rounded to 6 decimals), kept in ``runs/ID.json`` and
given to the report, but not written to ``results.json`` or ``results.csv`` (the runner drops
every field whose name starts with ``_``).

:func:`delta` turns two groups of rows into ``value``, ``ci_low``, ``ci_high`` and the one-sided
``p_value`` of "the first is above the second" (:func:`synrob.probe.metrics.bootstrap.one_sided_p`): a drop
(clean - perturbed) or a lead (model - baseline).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np

from ..metrics.bootstrap import (
    SentenceStats,
    one_sided_p,
    percentile_interval,
    resample_indices,
    stratified_indices,
)

__all__ = ["BOOT", "boot_indices", "strata_indices", "resamples", "annotate", "annotate_mean", "attach", "boots", "delta",
           "interval", "mean_boot", "p_above_zero", "public", "Estimate"]

#: The private row field holding a row's resampled values.
BOOT = "_boot"

#: ``{"value", "ci_low", "ci_high", "p_value"}`` (NaN where unknown).
Estimate = dict[str, float]


@functools.lru_cache(maxsize=16)
def _indices(seed: int, n: int, n_boot: int) -> np.ndarray:
    return resample_indices(n, n_boot, np.random.default_rng([seed, n, n_boot]))


def boot_indices(seed: int, n: int, n_boot: int) -> np.ndarray:
    """The resamples of a file of ``n`` sentences. Shape: (n_boot, n); read-only, shared."""
    idx = _indices(int(seed), int(n), int(n_boot))
    idx.setflags(write=False)
    return idx


@functools.lru_cache(maxsize=16)
def _strata_indices(seed: int, strata: bytes, n_boot: int) -> np.ndarray:
    s = np.frombuffer(strata, dtype=np.float64)
    return stratified_indices(s, n_boot, np.random.default_rng([seed, s.size, n_boot, 1]))


def strata_indices(seed: int, strata: np.ndarray, n_boot: int) -> np.ndarray:
    """The resamples of a file of ``n`` sentences in ``strata`` (n,), each sentence drawn
    within its stratum (:func:`synrob.probe.metrics.bootstrap.stratified_indices`). Shape: (n_boot, n);
    read-only, shared."""
    key = np.ascontiguousarray(strata, dtype=np.float64).tobytes()
    idx = _strata_indices(int(seed), key, int(n_boot))
    idx.setflags(write=False)
    return idx


def resamples(seed: int, stats: SentenceStats, n_boot: int) -> np.ndarray:
    """The resamples a metric with per-sentence ``stats`` is scored on: :func:`strata_indices`
    of its strata for a length-averaged metric, else :func:`boot_indices`. Shape: (n_boot, n)."""
    if stats.strata is not None:
        return strata_indices(seed, stats.strata, n_boot)
    return boot_indices(seed, stats.a.size, n_boot)


def attach(row: dict[str, Any], values: np.ndarray) -> dict[str, Any]:
    """``row`` with ``ci_low``, ``ci_high`` and ``_boot`` from resampled ``values`` (B,)."""
    lo, hi = percentile_interval(values)
    return {**row, "ci_low": lo, "ci_high": hi,
            BOOT: [None if math.isnan(v) else round(float(v), 6) for v in values]}


def annotate(rows: Iterable[dict[str, Any]], stats: dict[str, SentenceStats], seed: int,
             n_boot: int) -> list[dict[str, Any]]:
    """Attach intervals to the rows whose ``metric`` has per-sentence ``stats`` (one file),
    each scored on its :func:`resamples`."""
    out = []
    for row in rows:
        s = stats.get(row["metric"])
        if n_boot > 0 and s is not None and s.a.size:
            row = attach(row, s.values(resamples(seed, s, n_boot)))
        out.append(row)
    return out


def mean_boot(values: np.ndarray, seed: int, n_boot: int) -> np.ndarray:
    """Resampled means of per-sentence ``values`` (n,), NaN left out. Shape: (n_boot,)."""
    v = np.asarray(values, dtype=np.float64)
    idx = boot_indices(seed, v.size, n_boot)
    with np.errstate(invalid="ignore"):
        return np.nanmean(v[idx], axis=1) if v.size else np.full(n_boot, np.nan)


def annotate_mean(row: dict[str, Any], values: np.ndarray, seed: int, n_boot: int
                  ) -> dict[str, Any]:
    """``row`` (the mean of per-sentence ``values``) with its interval, when ``n_boot`` > 0."""
    return attach(row, mean_boot(values, seed, n_boot)) if n_boot > 0 and len(values) else row


def boots(rows: Sequence[dict[str, Any]]) -> np.ndarray | None:
    """The mean of the rows' resampled values (B,), or None when one row has none or the rows
    were resampled differently (another number of resamples)."""
    vecs = [r.get(BOOT) for r in rows]
    if not vecs or any(v is None for v in vecs) or len({len(v) for v in vecs}) != 1:
        return None
    arr = np.array([[np.nan if x is None else x for x in v] for v in vecs], dtype=np.float64)
    return arr.mean(axis=0)


def interval(rows: Sequence[dict[str, Any]]) -> tuple[float, float]:
    """``(low, high)`` of the mean of ``rows``: from their resamples, else, for one row read
    back from ``results.json`` (which keeps no resamples), its own ``ci_low``/``ci_high``;
    NaN when unknown."""
    b = boots(rows)
    if b is not None:
        return tuple(percentile_interval(b))  # type: ignore[return-value]
    if len(rows) == 1 and rows[0].get("ci_low") is not None and rows[0].get("ci_high") is not None:
        return float(rows[0]["ci_low"]), float(rows[0]["ci_high"])
    return math.nan, math.nan


def delta(first: Sequence[dict[str, Any]], second: Sequence[dict[str, Any]],
          combine: Callable[[Any, Any], Any] = lambda a, b: a - b) -> Estimate:
    """``combine(mean(first), mean(second))`` (default: the difference) with its paired
    interval and one-sided p-value for "it is > 0" (NaN when either side has no resamples)."""
    if not first or not second:
        return {"value": math.nan, "ci_low": math.nan, "ci_high": math.nan, "p_value": math.nan}
    point = float(combine(_mean([r["value"] for r in first]), _mean([r["value"] for r in second])))
    point = round(point, 12) + 0.0 if math.isfinite(point) else point  # no "-0.000" for 0
    a, b = boots(first), boots(second)
    if a is None or b is None or a.size != b.size:
        return {"value": point, "ci_low": math.nan, "ci_high": math.nan, "p_value": math.nan}
    with np.errstate(invalid="ignore", divide="ignore"):
        # resamples are stored to 6 decimals: below 1e-9 a difference is rounding (the mean
        # of three equal draws is not always bit-equal to one), so equal rows give exactly 0
        d = np.round(np.asarray(combine(a, b), dtype=np.float64), 9) + 0.0
    lo, hi = percentile_interval(d)
    return {"value": point, "ci_low": lo, "ci_high": hi, "p_value": p_above_zero(d)}


def p_above_zero(values: np.ndarray) -> float:
    """:func:`synrob.probe.metrics.bootstrap.one_sided_p` of resampled values (B,), NaN when none is
    defined (a ratio whose denominator is never positive, say)."""
    v = np.asarray(values, dtype=np.float64)
    return one_sided_p(v) if np.isfinite(v).any() else math.nan


def _mean(values: Sequence[float]) -> float:
    vals = [float(v) for v in values if v is not None and math.isfinite(float(v))]
    return sum(vals) / len(vals) if vals else math.nan


def public(row: dict[str, Any]) -> dict[str, Any]:
    """The row without its private fields (names starting with ``_``)."""
    return {k: v for k, v in row.items() if not k.startswith("_")}
