"""The card's own run kinds: a probing run (one task, one encoder, some layers) and a
behaviour run (one feature's agreement pairs). The Jabberwocky and causal runs are the
studies' own (:mod:`.grid`).

Each returns rows as every experiment does (flat, one number under ``value``); a behaviour
run's private ``_pairs`` field (every pair's preference, kept in ``runs/`` and in the card's
pairs file, never in ``results.json``) lets the breakdown be recomputed.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ..experiments.base import Context, Row

__all__ = ["probing_rows", "behaviour_rows", "agreement_metadata"]


def probing_rows(key: Mapping[str, Any], ctx: Context) -> list[Row]:
    """Train ``key``'s probe on each of its layers for every seed (and on the task's control
    when ``key["control"]``), score the test split and the baselines with bootstrap intervals
    that resample the seeds too (:func:`~synrob.probe.training.analysis.run_analysed`), as
    rows (:func:`~synrob.probe.training.rows.probe_rows`)."""
    from synrob.perturb.lm.device import resolve_device
    from synrob.perturb.plugins import get_registry

    from ..training.analysis import AnalysisOptions, run_analysed
    from ..training.probing import encoder_features
    from ..training.rows import probe_rows

    reg = get_registry()
    task = reg.get("task", key["task"])(**key["task_params"])
    probe = reg.get("probe", key["probe"])(**key["probe_params"])
    device = resolve_device(ctx.device)
    features = encoder_features(key["encoder"], params=dict(key["encoder_params"]) or None,
                                device=device, layers=list(key["layers"]))
    seeds = [int(s) for s in key["seeds"]]
    opts = AnalysisOptions(control=bool(key["control"]), mdl=bool(key["mdl"]),
                           bootstrap=int(key["bootstrap"]), seeds=seeds, seed_variance=True)
    run = run_analysed(opts, encoder=key["encoder"], task=task, probe=probe,
                       layers=list(key["layers"]), tests=[key["test"]], features=features,
                       train=key["train"], dev=key["dev"], seed=seeds[0], device=device,
                       baselines=True, fuse=len(key["layers"]) > 1)
    best = run.best.layer
    epochs = {r.layer: len(r.log.dev_loss) if r.log is not None else None for r in run.layers}
    extra = {"part": "probe", "section": key["section"], "card_task": key["label"],
             "encoder_role": key["encoder_role"], "run_best_layer": best}
    rows = []
    for row in probe_rows(run, ctx.lang):
        if row.get("test") is not None:
            row["test"] = "test"  # the card's test split (its file is in the key)
        row.pop("test_path", None)
        rows.append({**row, **extra, "epochs_run": epochs.get(row.get("layer"))})
    return rows


def agreement_metadata(path: str) -> dict[str, dict[str, Any]]:
    """The ``synrob.agreement`` dict of every pair of a pairs file, by the pair's sentence id."""
    from synrob.perturb.corpus import read_conllu

    out: dict[str, dict[str, Any]] = {}
    for s in read_conllu(path):
        raw = s.metadata.get("synrob.agreement")
        if raw and s.sent_id:
            out[s.sent_id] = json.loads(str(raw))
    return out


def behaviour_rows(key: Mapping[str, Any], ctx: Context) -> list[Row]:
    """The LM's preference for the grammatical sentence of each agreement pair of one feature
    (the scores the amnesic study keeps for the same pairs), its accuracy with the interval
    over source sentences, and the breakdown by subject-verb distance and attractors."""
    from synrob.perturb.lm.device import resolve_device
    from synrob.perturb.lm.loaded import load_lm

    from ..causal.behaviour import agreement_breakdown, preference_summary
    from ..experiments.amnesic.runs import clean_behaviour

    lm = load_lm(key["model"], device=resolve_device(ctx.device))
    scores = clean_behaviour(key, lm)
    n_boot, seed = int(key["bootstrap"]), ctx.seed
    summary = preference_summary(scores, n_boot=n_boot, seed=seed)
    meta = agreement_metadata(key["pairs"])
    split = agreement_breakdown(scores, meta, n_boot=n_boot, seed=seed)
    base = {"part": "behaviour", "section": "behaviour", "lang": ctx.lang,
            "feature": key["feature"], "model": key["model"], "lm_kind": lm.kind}
    lo, hi = summary["accuracy_ci95"]
    pairs = [{**s.as_dict(), **{k: meta.get(str(s.pair.sentence), {}).get(k)
                                for k in ("distance", "attractors", "attractor_in_pp",
                                          "attractor_in_rc")}} for s in scores]
    rows: list[Row] = [{**base, "metric": "agreement_accuracy", "bucket": "all",
                        "value": summary["accuracy"], "ci_low": lo, "ci_high": hi,
                        "pairs": summary["pairs"], "ties": summary["ties"],
                        "without_metadata": split["pairs_without_metadata"], "_pairs": pairs}]
    for axis in ("distance", "attractors"):
        for bucket, b in split[axis].items():
            rows.append({**base, "metric": "agreement_accuracy", "by": axis, "bucket": bucket,
                         "value": b["accuracy"], "ci_low": b["ci95"][0], "ci_high": b["ci95"][1],
                         "pairs": b["n"]})
    return rows
