"""The numbers of the ``jabberwocky`` report, computed from the result rows.

:func:`summarize` gives the model's best layer per probe, each model/baseline's clean and
Jabberwocky scores (mean and sample std over draws) with 95 % intervals and the paired drop,
the model's lead over the baseline chosen on clean dev (:func:`chosen_baselines`) in both
conditions and how much of it is lost (with intervals and p-values), the scores of probes
trained on Jabberwocky, and the behavioural column (an LM's preference for the clean
sentences). :func:`derived_rows` gives the drops and leads as ``results.json`` rows.

Both choices are made on clean dev before any test score is read, so the paired bootstrap of a
lead needs no selection inside it: the model's layer (best clean dev UUAS) and, per panel, the
baseline (best clean dev score of the panel's metric), the same baseline in both conditions.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
from synrob.perturb.errors import SynrobError

from ...metrics.bootstrap import percentile_interval
from ..base import Row
from ..intervals import boots, delta, interval, p_above_zero, public
from ..stats import finite_mean

__all__ = ["PANELS", "PAPER_FIGURES", "BASELINES", "best_layers", "chosen_baselines", "summarize",
           "behaviour", "derived_rows"]

#: (probe, metric) panels of the report; the perceptron probe's DSpr is not a paper number.
PANELS: tuple[tuple[str, str], ...] = (("structural", "uuas"), ("structural", "dspr"),
                                       ("perceptron", "uuas"))
#: Their headlines: BERT's lead over the baselines shrinks by 53% (one probe); UUAS drops by
#: 15.4 points on average (one probe, three models).
PAPER_FIGURES = {"lead_lost_bert": 0.53, "uuas_drop_mean": 0.154}
#: The baselines (role, label) in the report's order; a tie on dev goes to the first.
BASELINES: tuple[tuple[str, str], ...] = (("layer0", "layer 0"), ("fast+pos", "fast+pos"),
                                         ("path", "path"), ("majority", "majority"))


def _std(values: Sequence[float]) -> float:
    vals = [v for v in values if v is not None and not math.isnan(v)]
    if len(vals) < 2:
        return math.nan
    m = sum(vals) / len(vals)
    return math.sqrt(sum((v - m) ** 2 for v in vals) / (len(vals) - 1))


def best_layers(rows: list[Row], probes: Sequence[str]) -> dict[str, int]:
    """probe -> the model layer (not 0) with the best clean dev UUAS among train_on=clean runs."""
    out: dict[str, int] = {}
    for probe in probes:
        dev = [r for r in rows if r.get("role") == "model" and r["probe"] == probe
               and r["train_on"] == "clean" and r["split"] == "dev" and r["metric"] == "uuas"]
        if dev:
            out[probe] = max(dev, key=lambda r: (r["value"], -r["layer"]))["layer"]
    return out


def chosen_baselines(rows: list[Row], probes: Sequence[str]) -> dict[tuple[str, str], str]:
    """(probe, metric) of each panel -> the baseline role with the best **clean dev** score of
    that metric (train_on=clean; ties: the first of :data:`BASELINES`), among the baselines
    with test rows. Test scores play no part. Raises :class:`SynrobError` when a baseline with
    test rows has no clean dev score (runs from before version 1.1.0)."""
    order = [role for role, _ in BASELINES]
    out: dict[tuple[str, str], str] = {}
    for probe, metric in PANELS:
        if probe not in probes:
            continue
        dev: dict[str, list[float]] = {}
        for r in rows:
            if (r.get("role") in order and r["probe"] == probe and r["metric"] == metric
                    and r["split"] == "dev" and r.get("train_on") == "clean"
                    and r.get("test_on") == "clean"):
                dev.setdefault(r["role"], []).append(r["value"])
        tested = {r["role"] for r in rows if r.get("role") in order and r["probe"] == probe
                  and r["metric"] == metric and r["split"] == "test"}
        if tested - dev.keys():
            raise SynrobError(f"jabberwocky: no clean dev {metric} for the {probe} probe's "
                              f"baseline(s) {', '.join(sorted(tested - dev.keys()))}: re-run "
                              "the experiment (its baselines score dev since version 1.1.0)")
        if tested:
            out[(probe, metric)] = max(sorted(tested, key=order.index),
                                       key=lambda b: finite_mean(dev[b]))
    return out


def summarize(rows: list[Row], probes: Sequence[str]) -> dict[str, Any]:
    """The numbers of the report.

    Returns ``{"best_layers": {probe: layer}, "entries": [...], "lead": [...], "train_on": [...],
    "behaviour": [...]}`` where each entry is ``{"probe", "role", "label", "layer", "metric",
    "clean", "clean_ci", "jab_mean", "jab_std", "jab_ci", "jab_draws", "drop", "drop_ci",
    "drop_p"}`` (train_on=clean), each lead row is ``{"probe", "metric", "baseline",
    "lead_clean", "lead_jab", "lead_lost"}`` (``baseline``: the label of the baseline of
    :func:`chosen_baselines`) with ``X_ci`` and ``X_p`` for each of the three, each train_on row is ``{"probe", "role", "label", "metric", "clean", "jab",
    "clean_from_jab", "jab_from_jab"}``, and ``behaviour`` is :func:`behaviour`.

    Intervals (``[low, high]``, 95 %) and one-sided p-values are paired bootstraps over the test
    sentences (:mod:`..intervals`): the Jabberwocky score of a model is the mean over draws, its
    drop ``clean - Jabberwocky`` and its lead ``model - chosen baseline`` are resampled on the
    same sentences; NaN when the runs carry no resamples (``bootstrap=0``).
    """
    rows = [r for r in rows if not r.get("derived")]
    best = best_layers(rows, probes)
    test = [r for r in rows if r["split"] == "test"]
    entries = _entries(rows, test, probes, best)
    lead = _lead(entries, chosen_baselines(rows, probes))
    return {"best_layers": best, "entries": [public(e) for e in entries], "lead": lead,
            "train_on": _train_on(test, probes, best, entries), "behaviour": behaviour(rows)}


def behaviour(rows: list[Row]) -> list[dict[str, Any]]:
    """The LM's preference for the clean sentence over each draw's Jabberwocky version:
    ``[{"lm", "draw", "pairs", "accuracy", "ci": [low, high]}]`` (empty without an LM)."""
    out = []
    for r in sorted((r for r in rows if r.get("kind") == "behaviour"), key=lambda r: r["draw"]):
        out.append({"lm": r["lm"], "draw": r["draw"], "pairs": r["pairs"], "accuracy": r["value"],
                    "ci": [r.get("ci_low", math.nan), r.get("ci_high", math.nan)]})
    return out


def derived_rows(rows: list[Row], probes: Sequence[str]) -> list[Row]:
    """The report's drops and leads as rows with ``value``, ``ci_low``, ``ci_high``,
    ``p_value`` and ``seeds`` (the training seeds pooled: the experiment's seed); a lead row
    names its ``baseline`` (chosen on clean dev)."""
    summary = summarize(rows, probes)
    seeds = sorted({r["seed"] for r in rows if "seed" in r})
    out: list[Row] = []
    for e in summary["entries"]:
        out.append({"probe": e["probe"], "role": e["role"], "label": e["label"],
                    "layer": e["layer"], "split": "test", "test_on": "jabberwocky",
                    "metric": f"drop_{e['metric']}", "value": e["drop"],
                    "ci_low": e["drop_ci"][0], "ci_high": e["drop_ci"][1],
                    "p_value": e["drop_p"], "seeds": seeds})
    for x in summary["lead"]:
        for what in ("lead_clean", "lead_jab", "lead_lost"):
            out.append({"probe": x["probe"], "role": "model", "label": what,
                        "baseline": x["baseline"], "split": "test",
                        "metric": f"{what}_{x['metric']}", "value": x[what],
                        "ci_low": x[f"{what}_ci"][0], "ci_high": x[f"{what}_ci"][1],
                        "p_value": x[f"{what}_p"], "seeds": seeds})
    return out


def _entries(rows: list[Row], test: list[Row], probes: Sequence[str], best: dict[str, int]
             ) -> list[dict[str, Any]]:
    """Clean vs Jabberwocky scores of the model (best layer) and each baseline (train_on=clean)."""
    entries: list[dict[str, Any]] = []
    for probe in probes:
        sel = [r for r in test if r["probe"] == probe]
        roles: list[tuple[str, str, int | None]] = []
        if probe in best:
            roles.append(("model", f"{_model_name(rows)} L{best[probe]}", best[probe]))
        for role, label in BASELINES:
            if any(r["role"] == role for r in sel):
                roles.append((role, label, 0 if role == "layer0" else None))
        for role, label, layer in roles:
            for metric in ("uuas", "dspr"):
                cell = [r for r in sel if r["role"] == role and r["metric"] == metric
                        and r["train_on"] == "clean" and (role != "model" or r["layer"] == layer)]
                if cell:
                    entries.append(_entry(cell, probe, role, label, layer, metric))
    return entries


def _entry(cell: list[Row], probe: str, role: str, label: str, layer: int | None, metric: str
           ) -> dict[str, Any]:
    """One model/baseline's clean and Jabberwocky scores, their intervals and the paired drop."""
    clean_rows = [r for r in cell if r["test_on"] == "clean"]
    jab_rows = sorted((r for r in cell if r["test_on"] == "jabberwocky"),
                      key=lambda r: r["draw"] or 0)
    clean = finite_mean([r["value"] for r in clean_rows])
    jab = [r["value"] for r in jab_rows]
    drop = delta(clean_rows, jab_rows)
    return {"probe": probe, "role": role, "label": label, "layer": layer, "metric": metric,
            "clean": clean, "clean_ci": list(interval(clean_rows)), "jab_mean": finite_mean(jab),
            "jab_std": _std(jab), "jab_ci": list(interval(jab_rows)), "jab_draws": jab,
            "drop": drop["value"], "drop_ci": [drop["ci_low"], drop["ci_high"]],
            "drop_p": drop["p_value"], "_clean_rows": clean_rows, "_jab_rows": jab_rows}


def _lead(entries: list[dict[str, Any]], chosen: dict[tuple[str, str], str]
          ) -> list[dict[str, Any]]:
    """Per panel, the model's lead over the baseline ``chosen`` on clean dev, clean and
    Jabberwocky, and the share of it lost."""
    lead = []
    for probe, metric in PANELS:
        cell = [e for e in entries if e["probe"] == probe and e["metric"] == metric]
        model = [e for e in cell if e["role"] == "model"]
        base = [e for e in cell if e["role"] == chosen.get((probe, metric))]
        if not model or not base:
            continue
        m, b = model[0], base[0]
        lc, lj = m["clean"] - b["clean"], m["jab_mean"] - b["jab_mean"]
        ec = delta(m["_clean_rows"], b["_clean_rows"])
        ej = delta(m["_jab_rows"], b["_jab_rows"])
        lost = _lead_lost(m, b)
        lead.append({"probe": probe, "metric": metric, "baseline": b["label"],
                     "lead_clean": lc, "lead_jab": lj,
                     "lead_lost": (lc - lj) / lc if lc > 0 else math.nan,
                     "lead_clean_ci": [ec["ci_low"], ec["ci_high"]], "lead_clean_p": ec["p_value"],
                     "lead_jab_ci": [ej["ci_low"], ej["ci_high"]], "lead_jab_p": ej["p_value"],
                     "lead_lost_ci": lost[:2], "lead_lost_p": lost[2]})
    return lead


def _lead_lost(m: dict[str, Any], b: dict[str, Any]) -> list[float]:
    """``[low, high, p]`` of the share of the lead over baseline ``b`` lost, ``(lc - lj) / lc``,
    recomputed on every paired resample (resamples where the clean lead is not positive are
    left out); ``p`` is the one-sided p-value of "some of the lead is lost" (> 0). NaN without
    resamples or when the model has no lead on clean data."""
    parts = [boots(m["_clean_rows"]), boots(b["_clean_rows"]), boots(m["_jab_rows"]),
             boots(b["_jab_rows"])]
    undefined = m["clean"] - b["clean"] <= 0  # no lead on clean data: nothing to lose
    if undefined or any(p is None for p in parts) or len({p.size for p in parts}) != 1:  # type: ignore[union-attr]
        return [math.nan, math.nan, math.nan]
    mc, bc, mj, bj = parts
    lc, lj = mc - bc, mj - bj  # type: ignore[operator]
    with np.errstate(invalid="ignore", divide="ignore"):
        share = np.where(lc > 0, (lc - lj) / np.where(lc > 0, lc, 1.0), np.nan)
    return [*percentile_interval(share), p_above_zero(share)]


def _train_on(test: list[Row], probes: Sequence[str], best: dict[str, int],
              entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Clean and Jabberwocky scores of probes trained on clean vs on Jabberwocky data."""
    train_on = []
    for probe in probes:
        for role in ("model", "layer0", "fast+pos"):
            layer = best.get(probe) if role == "model" else 0
            for metric in ("uuas", "dspr"):
                cell = [r for r in test if r["probe"] == probe and r["role"] == role
                        and r["metric"] == metric and r["layer"] == layer]
                jt = [r for r in cell if r["train_on"] == "jabberwocky"]
                if not jt:
                    continue
                ct = [r for r in cell if r["train_on"] == "clean"]
                label = next((e["label"] for e in entries if e["probe"] == probe
                              and e["role"] == role), role)
                train_on.append({
                    "probe": probe, "role": role, "label": label, "metric": metric,
                    "clean": finite_mean([r["value"] for r in ct if r["test_on"] == "clean"]),
                    "jab": finite_mean([r["value"] for r in ct if r["test_on"] == "jabberwocky"]),
                    "clean_from_jab": finite_mean([r["value"] for r in jt
                                                   if r["test_on"] == "clean"]),
                    "jab_from_jab": finite_mean([r["value"] for r in jt
                                                 if r["test_on"] == "jabberwocky"])})
    return train_on


def _model_name(rows: list[Row]) -> str:
    """The probed model's encoder name (``model`` when no model row is there)."""
    for r in rows:
        if r.get("role") == "model":
            return str(r["encoder"])
    return "model"
