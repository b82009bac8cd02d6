"""The sections of a card that read the studies' runs: Jabberwocky, behaviour and causal.

* **jabberwocky**: the ``jabberwocky`` study's numbers at the best structural layer
  (:func:`synrob.probe.experiments.jabberwocky.stats.summarize`): clean and Jabberwocky UUAS,
  the drop, the lead over the baseline chosen on clean dev in both conditions, and the share
  of it lost (``lead_lost``);
* **behaviour**: per feature, the agreement accuracy over its pairs (the model prefers the
  grammatical sentence), and by subject-verb distance and attractors;
* **causal**: per feature and causal layer, the ``amnesic`` study's agreement accuracy
  clean, with LEACE inside the model and with the random controls, the NLL increase, the
  counterfactual flip rate, the probe's accuracy before and after LEACE (without interval:
  the study gives one to their paired difference, ``probe_drop_leace``); and
  ``hurts_most``, the layer whose erasure lowers agreement accuracy most.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .numbers import find, finite, number, rows_where

__all__ = ["jabberwocky_section", "behaviour_feature", "causal_feature", "CAUSAL_MEASURES"]

#: causal measure -> the amnesic study's row (``section``, ``metric``, ``condition``,
#: ``contrast``).
CAUSAL_MEASURES: dict[str, tuple[str, str, str, str]] = {
    "accuracy_clean": ("behaviour", "agreement_accuracy", "clean", ""),
    "accuracy_erased": ("behaviour", "agreement_accuracy", "erased", ""),
    "accuracy_random": ("behaviour", "agreement_accuracy", "random", ""),
    "accuracy_random_matched": ("behaviour", "agreement_accuracy", "random_matched", ""),
    "accuracy_change_erased": ("behaviour", "agreement_accuracy", "", "erased-clean"),
    "accuracy_change_random_matched": ("behaviour", "agreement_accuracy", "",
                                       "random_matched-clean"),
    "nll_increase_erased": ("damage", "nll_per_token", "", "erased-clean"),
    "nll_increase_random_matched": ("damage", "nll_per_token", "", "random_matched-clean"),
    "flip_rate": ("counterfactual", "flip_rate", "counterfactual", ""),
    "flip_rate_random": ("counterfactual", "flip_rate", "random", ""),
}


def jabberwocky_section(rows: Sequence[Mapping[str, Any]], layer: int, ref: str
                        ) -> dict[str, Any]:
    """The Jabberwocky section from the study's rows (with their resamples)."""
    from ..experiments.jabberwocky.stats import summarize

    summary = summarize([dict(r) for r in rows], ["structural"])
    out: dict[str, Any] = {"status": "ok", "layer": layer, "settings": ref}
    for e in summary["entries"]:
        if e["role"] == "model" and e["metric"] in ("uuas", "dspr"):
            m = e["metric"]
            out[f"{m}_clean"] = number(e["clean"], e["clean_ci"], ref)
            out[f"{m}_jabberwocky"] = number(e["jab_mean"], e["jab_ci"], ref)
            out[f"drop_{m}"] = number(e["drop"], e["drop_ci"], ref, p_value=finite(e["drop_p"]))
    for x in summary["lead"]:
        if x["metric"] == "uuas":
            out["baseline"] = x["baseline"]
            for key, name in (("lead_clean", "lead_clean"), ("lead_jab", "lead_jabberwocky"),
                              ("lead_lost", "lead_lost")):
                out[name] = number(x[key], x[f"{key}_ci"], ref, p_value=finite(x[f"{key}_p"]))
    return out


def behaviour_feature(rows: Sequence[Mapping[str, Any]], ref: str) -> dict[str, Any]:
    """One feature's behaviour entry from its run's rows."""
    total = rows_where(rows, bucket="all")[0]
    out: dict[str, Any] = {"accuracy": number(total["value"], (total.get("ci_low"),
                                                               total.get("ci_high")), ref),
                           "pairs": int(total["pairs"]), "ties": int(total.get("ties", 0)),
                           "pairs_without_metadata": int(total.get("without_metadata", 0))}
    for axis in ("distance", "attractors"):
        out[axis] = {str(r["bucket"]): {"n": int(r["pairs"]), **number(
            r["value"], (r.get("ci_low"), r.get("ci_high")), ref)}
            for r in rows_where(rows, by=axis)}
    return out


def causal_feature(rows: Sequence[Mapping[str, Any]], layers: Sequence[int], ref: str
                   ) -> dict[str, Any]:
    """One feature's causal entry: every measure per layer, and the layer where erasure
    hurts most (the lowest ``accuracy_change_erased``; a tie goes to the lower layer)."""
    entries = []
    for layer in layers:
        mine = rows_where(rows, layer=layer)
        measures = {}
        for name, (section, metric, condition, contrast) in CAUSAL_MEASURES.items():
            got = find(mine, ref, section=section, metric=metric, condition=condition,
                       contrast=contrast)
            if got is not None:
                measures[name] = got
        probe = [r for r in rows_where(mine, section="probe", metric="accuracy", contrast="")
                 if r.get("erased_task") is True]
        for cond in ("before", "leace"):  # the study's accuracies have no interval ...
            got = find(probe, ref, condition=cond)
            if got is not None:
                measures[f"probe_accuracy_{cond}"] = got
        drop = find([r for r in rows_where(mine, section="probe", metric="accuracy",
                                           contrast="drop_leace")
                     if r.get("erased_task") is True], ref)
        if drop is not None:  # ... its paired drop has one
            measures["probe_drop_leace"] = drop
        entries.append({"layer": layer, "measures": measures})
    changes = [(e["measures"]["accuracy_change_erased"]["value"], e["layer"]) for e in entries
               if e["measures"].get("accuracy_change_erased", {}).get("value") is not None]
    worst = min(changes, key=lambda x: (x[0], x[1]))[1] if changes else None
    return {"layers": entries, "hurts_most": worst}
