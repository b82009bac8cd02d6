"""The numbers of the ``jabberwocky`` report, computed from the result rows.

:func:`summarize` gives the model's best layer per probe, each model/baseline's clean and
Jabberwocky scores (mean and sample std over draws), the model's lead over the best baseline in
both conditions and how much of it is lost, and the scores of probes trained on Jabberwocky.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from ..base import Row
from ..stats import finite_mean

__all__ = ["PANELS", "PAPER_FIGURES", "best_layers", "summarize"]

#: (probe, metric) panels of the report; the perceptron probe's DSpr is not a paper number.
PANELS: tuple[tuple[str, str], ...] = (("structural", "uuas"), ("structural", "dspr"),
                                       ("perceptron", "uuas"))
#: Their headlines: BERT's lead over the baselines shrinks by 53% (one probe); UUAS drops by
#: 15.4 points on average (one probe, three models).
PAPER_FIGURES = {"lead_lost_bert": 0.53, "uuas_drop_mean": 0.154}


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


def summarize(rows: list[Row], probes: Sequence[str]) -> dict[str, Any]:
    """The numbers of the report.

    Returns ``{"best_layers": {probe: layer}, "entries": [...], "lead": [...], "train_on": [...]}``
    where each entry is ``{"probe", "role", "label", "layer", "metric", "clean", "jab_mean",
    "jab_std", "jab_draws", "drop"}`` (train_on=clean), each lead row is ``{"probe", "metric",
    "best_clean", "best_jab", "lead_clean", "lead_jab", "lead_lost"}`` and each train_on row is
    ``{"probe", "role", "label", "metric", "clean", "jab", "clean_from_jab", "jab_from_jab"}``.
    """
    best = best_layers(rows, probes)
    test = [r for r in rows if r["split"] == "test"]
    entries = _entries(rows, test, probes, best)
    return {"best_layers": best, "entries": entries, "lead": _lead(entries),
            "train_on": _train_on(test, probes, best, entries)}


def _entries(rows: list[Row], test: list[Row], probes: Sequence[str], best: dict[str, int]
             ) -> list[dict[str, Any]]:
    """Clean vs Jabberwocky scores of the model (best layer) and each baseline (train_on=clean)."""
    entries: list[dict[str, Any]] = []
    for probe in probes:
        sel = [r for r in test if r["probe"] == probe]
        roles: list[tuple[str, str, int | None]] = []
        if probe in best:
            roles.append(("model", f"{_model_name(rows)} L{best[probe]}", best[probe]))
        for role, label in (("layer0", "layer 0"), ("fast+pos", "fast+pos"),
                            ("path", "path"), ("majority", "majority")):
            if any(r["role"] == role for r in sel):
                roles.append((role, label, 0 if role == "layer0" else None))
        for role, label, layer in roles:
            for metric in ("uuas", "dspr"):
                cell = [r for r in sel if r["role"] == role and r["metric"] == metric
                        and r["train_on"] == "clean" and (role != "model" or r["layer"] == layer)]
                clean = finite_mean([r["value"] for r in cell if r["test_on"] == "clean"])
                jab = [r["value"] for r in sorted(cell, key=lambda r: r["draw"] or 0)
                       if r["test_on"] == "jabberwocky"]
                if not cell:
                    continue
                entries.append({"probe": probe, "role": role, "label": label, "layer": layer,
                                "metric": metric, "clean": clean, "jab_mean": finite_mean(jab),
                                "jab_std": _std(jab), "jab_draws": jab,
                                "drop": clean - finite_mean(jab)})
    return entries


def _lead(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per panel, the model's lead over the best baseline, clean and Jabberwocky, and the share
    of it lost."""
    lead = []
    for probe, metric in PANELS:
        cell = [e for e in entries if e["probe"] == probe and e["metric"] == metric]
        model = [e for e in cell if e["role"] == "model"]
        bases = [e for e in cell if e["role"] != "model"]
        if not model or not bases:
            continue
        m = model[0]
        bc = max(bases, key=lambda e: e["clean"])
        bj = max(bases, key=lambda e: e["jab_mean"])
        lc, lj = m["clean"] - bc["clean"], m["jab_mean"] - bj["jab_mean"]
        lead.append({"probe": probe, "metric": metric, "best_clean": bc["label"],
                     "best_jab": bj["label"], "lead_clean": lc, "lead_jab": lj,
                     "lead_lost": (lc - lj) / lc if lc > 0 else math.nan})
    return lead


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
