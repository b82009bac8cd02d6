"""One run of ``amnesic``: a layer's amnesic probing, erasure inside the LM, counterfactual.

Each step returns rows (flat dicts, one number under ``value``): ``section`` says which step
(``probe``, ``behaviour``, ``damage``, ``counterfactual``), ``condition`` which representation
(``before``/``leace``/``random``/``random_matched`` for probes, ``clean``/``erased``/``random``/
``random_matched`` inside the model, ``clean``/``counterfactual``/``random`` for the
intervention), ``ci_low``/``ci_high`` the 95 % interval; a difference row (``contrast``: e.g.
``drop_leace`` or ``erased-clean``) also has ``p_value``.

``random`` is the random control matched in rank, ``random_matched`` the one matched in rank
and in mean displacement on the training vectors (:func:`synrob.probe.causal.erasure.fit.
matched_control`). The probe section's ``majority`` row is the test accuracy of the training
majority label (``majority_label``); its ``displacement`` rows are each eraser's mean
displacement ``||x - E(x)||`` on the labelled training (``split`` train) and test words. The
damage section's metric is ``nll_per_token``, the original sentences' mean per-token negative
log-likelihood (nats): its ``erased-clean`` contrast is the NLL increase, positive when the
erasure made the LM worse.

The ``clean`` conditions do not depend on the layer: :func:`clean_scores` computes them in the
first layer run of a preset and keeps them by their content (:mod:`synrob.probe.causal.score_cache`),
so the other layer runs (in this process or another, now or when resumed) score only the
erased, random and counterfactual conditions. The LM itself loads once per process
(:func:`synrob.perturb.lm.loaded.load_lm`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from synrob.perturb.errors import SynrobError

from ..base import Row

__all__ = ["count_pairs", "layer_rows", "amnesic_rows", "behaviour_pairs", "flip_pairs",
           "CleanScores", "clean_scores", "clean_behaviour", "behaviour_rows",
           "counterfactual_rows"]


def count_pairs(path: str) -> int:
    """Sentences of a pairs file that carry a ``# synrob.agreement`` comment."""
    with open(path, encoding="utf-8") as fh:
        return sum(1 for line in fh if line.startswith("# synrob.agreement"))


def _tasks(key: Mapping[str, Any]) -> tuple[Any, dict[str, Any], Any]:
    """The erased task, the ``also`` tasks by their spec, and the linear probe (standardize:
    an affine preprocessing keeps LEACE's guarantee, docs/erasure.md)."""
    from synrob.perturb.params import parse_assignments
    from synrob.perturb.plugins import get_registry

    reg = get_registry()
    cls = reg.get("task", key["task"])
    task = cls(feature=key["feature"]) if key["task"] == "feats" else cls()
    also = {}
    for item in (x.strip() for x in str(key["also"]).split(",")):
        if item:
            name, _, params = item.partition(":")
            also[item] = reg.get("task", name)(**parse_assignments(
                [p for p in params.split(":") if p]))
    return task, also, reg.get("probe", "linear")(normalize="standardize")


def _meta(key: Mapping[str, Any], task: Any, seed: int, lang: str) -> dict[str, Any]:
    """The eraser's provenance, as ``synrob erase`` writes it."""
    from synrob.probe.encoders.resolve import resolve_encoder
    from synrob.probe.representations.cache import corpus_hash
    from synrob.probe.runtime.provenance import probe_version

    return {"encoder": key["model"], "encoder_params": {},
            "encoder_identity": resolve_encoder(key["model"], {}).identity(),
            "layer": key["layer"], "task": task.name, "task_params": dict(task.options),
            "control": False, "seed": seed, "train": key["train"],
            "train_sha256": corpus_hash(key["train"]), "lang": lang,
            "synrob_version": probe_version()}


def _row(base: Mapping[str, Any], section: str, metric: str, value: float, *,
         condition: str = "", contrast: str = "", ci: Any = None, p: Any = None,
         **extra: Any) -> Row:
    lo, hi = (ci if ci is not None else (float("nan"), float("nan")))
    row = {**base, "section": section, "metric": metric, "condition": condition,
           "contrast": contrast, "value": float(value), "ci_low": float(lo),
           "ci_high": float(hi), **extra}
    if p is not None:
        row["p_value"] = float(p)
    return row


#: Probe conditions and their ``accuracy_*`` summary keys.
_PROBE = (("before", "accuracy_before"), ("leace", "accuracy_after"),
          ("random", "accuracy_random"), ("random_matched", "accuracy_random_matched"))
_DROPS = ("drop_leace", "drop_random", "drop_random_matched", "leace_vs_random",
          "leace_vs_random_matched")


def _displacement_rows(run: Any, base: Mapping[str, Any], task: str) -> list[Row]:
    """Each eraser's mean displacement on the labelled training and test words."""
    return [_row(base, "probe", "displacement", value, condition=cond, task=task, split=split)
            for split, by in run.displacement.items() for cond, value in by.items()]


def amnesic_rows(key: Mapping[str, Any], base: Mapping[str, Any], *, seed: int, device: str,
                 lang: str) -> tuple[list[Row], Any]:
    """Probe accuracy before / after LEACE / after each random erasure for the erased task
    and the ``also`` tasks, the majority rate, the paired differences and the erasers' mean
    displacements; and the run (its erasers)."""
    from synrob.probe.causal.erasure.amnesic import run_amnesic
    from synrob.probe.training.probing import encoder_features

    task, also, probe = _tasks(key)
    features = encoder_features(key["model"], device=device, layers=key["encoded_layers"])
    run = run_amnesic(task=task, probe=probe, features=features, layer=key["layer"],
                      train=key["train"], dev=key["dev"], test=key["test"], also=also,
                      seed=seed, device=device, meta=_meta(key, task, seed, lang))
    rows: list[Row] = []
    n_boot = int(key["bootstrap"])
    named = [(f"{task.name}:{key['feature']}" if key["task"] == "feats" else task.name,
              run.erased, True), *((name, r, False) for name, r in run.also.items())]
    for name, result, erased in named:
        s = result.summary(n_boot, seed)
        common = {**base, "task": name, "erased_task": erased, "test_words": s["test_words"]}
        rows.append(_row(common, "probe", "majority", s["majority"], condition="majority",
                         majority_label=s["majority_label"]))
        for cond, field in _PROBE:
            rows.append(_row(common, "probe", "accuracy", s[field], condition=cond))
        for diff in _DROPS:
            if diff in s:
                d = s[diff]
                rows.append(_row(common, "probe", "accuracy", d["value"], contrast=diff,
                                 ci=d["ci95"], p=d["p_value"]))
    rank = int(run.eraser.meta.get("rank", run.eraser.rank))
    rows.append(_row(base, "probe", "rank", rank, task=named[0][0]))
    return rows + _displacement_rows(run, base, named[0][0]), run


def _lm(key: Mapping[str, Any], run: Any, device: str) -> tuple[Any, int]:
    from synrob.perturb.lm.loaded import load_lm
    from synrob.probe.causal.erasure.inside import check_lm_eraser

    lm = load_lm(key["model"], device=device)
    layer = check_lm_eraser(run.eraser, f"layer {key['layer']}", lm_spec=key["model"], lm=lm,
                            layer=int(key["layer"]))
    return lm, layer


def behaviour_pairs(key: Mapping[str, Any]) -> list[Any]:
    """The agreement pairs scored inside the model: the first ``pair_limit`` pairs of the pairs
    file whose texts differ (:class:`~synrob.probe.causal.behaviour.SentencePair`)."""
    from synrob.probe.causal.behaviour import pair_sentences, split_unchanged

    pairs, _ = pair_sentences(key["test"], key["pairs"])
    limit = int(key["pair_limit"]) or None
    kept, _ = split_unchanged(pairs[:limit])
    if not kept:
        raise SynrobError(f"{key['pairs']}: no agreement pair to score")
    return kept


def flip_pairs(key: Mapping[str, Any]) -> tuple[list[Any], int]:
    """The counterfactual's pairs (:class:`~synrob.probe.causal.erasure.counterfactual.AgreementPair`,
    subject before the target) among the first ``pair_limit``, and how many were set aside."""
    from synrob.probe.causal.erasure.counterfactual import agreement_pairs, subject_first

    pairs, _ = agreement_pairs(key["test"], key["pairs"])
    limit = int(key["pair_limit"]) or None
    return subject_first(pairs[:limit])


#: Padded tokens of one LM pass (:func:`synrob.perturb.lm.scoring.causal_sequence_logprobs`):
#: part of the clean scores' cache key, as the rows of a pass (``batch_size``) are.
MAX_TOKENS = 4096


@dataclass(frozen=True)
class CleanScores:
    """The LM's scores of a preset's pairs as they are, the same for every layer:
    :func:`behaviour_pairs`' (:class:`~synrob.probe.causal.behaviour.PairScore`) and
    :func:`flip_pairs`' ``(original, twin)`` log-probabilities."""

    behaviour: list[Any]
    flips: list[tuple[float, float]]


def clean_behaviour(key: Mapping[str, Any], lm: Any) -> list[Any]:
    """The LM's scores of :func:`behaviour_pairs` as they are
    (:class:`~synrob.probe.causal.behaviour.PairScore`), kept by their content like
    :func:`clean_scores`' (a card's behaviour section reads the same entry)."""
    from synrob.probe.causal.behaviour import PairScore, score_pairs
    from synrob.probe.causal.score_cache import cached_scores

    kept, batch = behaviour_pairs(key), int(key["batch_size"])

    def compute() -> list[Any]:
        return [[s.logprob_original, s.logprob_perturbed, s.tokens_original, s.tokens_perturbed]
                for s in score_pairs(lm, kept, batch_size=batch, max_tokens=MAX_TOKENS)]

    got = cached_scores("pair_scores", [[p.original, p.perturbed] for p in kept], lm,
                        {"batch_size": batch, "max_tokens": MAX_TOKENS}, compute)
    return [PairScore(p, float(lo), float(lp), int(to), int(tp))
            for p, (lo, lp, to, tp) in zip(kept, got, strict=True)]


def _clean_flips(key: Mapping[str, Any], lm: Any) -> list[tuple[float, float]]:
    from synrob.probe.causal.erasure.counterfactual import clean_logprobs, pair_sequences
    from synrob.probe.causal.score_cache import cached_scores

    kept, _ = flip_pairs(key)
    if not kept:
        return []
    seqs, batch = pair_sequences(lm, kept), int(key["batch_size"])

    def compute() -> list[Any]:
        return [list(lp) for lp in clean_logprobs(lm, seqs, batch_size=batch,
                                                  max_tokens=MAX_TOKENS)]

    got = cached_scores("sequence_pairs", seqs, lm,
                        {"batch_size": batch, "max_tokens": MAX_TOKENS}, compute)
    return [(float(lo), float(lf)) for lo, lf in got]


def clean_scores(key: Mapping[str, Any], lm: Any) -> CleanScores:
    """The pairs' clean scores (:class:`CleanScores`): computed by the first layer run of a
    preset and kept by their content (:func:`synrob.probe.causal.score_cache.cached_scores`), so every
    other layer run, a resumed run and runs in other processes read them."""
    return CleanScores(clean_behaviour(key, lm), _clean_flips(key, lm))


def behaviour_rows(key: Mapping[str, Any], base: Mapping[str, Any], lm: Any, run: Any,
                   layer: int, *, seed: int, clean: CleanScores | None = None) -> list[Row]:
    """Agreement accuracy on the minimal pairs and damage (per-token negative log-likelihood of
    the originals), clean / LEACE inside the model / each random control, with paired
    changes. ``clean``: the pairs' :func:`clean_scores` (read or computed here when None)."""
    from synrob.probe.causal.behaviour import score_pairs
    from synrob.probe.causal.erasure.inside import erasing, erasure_summary

    kept = behaviour_pairs(key)
    scores = {"clean": (clean or clean_scores(key, lm)).behaviour}
    conditions = {"erased": run.eraser, "random": run.control, "random_matched": run.matched}
    for name, eraser in conditions.items():
        with erasing(lm, eraser, layer):
            scores[name] = score_pairs(lm, kept, batch_size=int(key["batch_size"]),
                                       max_tokens=MAX_TOKENS)
    s = erasure_summary(scores, n_boot=int(key["bootstrap"]), seed=seed)
    common = {**base, "pairs": len(kept), "sources": s["sources"]}
    rows = []
    for cond in scores:
        c = s[cond]
        rows.append(_row(common, "behaviour", "agreement_accuracy", c["accuracy"],
                         condition=cond, ci=c.get("accuracy_ci95")))
        rows.append(_row(common, "damage", "nll_per_token", c["nll_per_token"],
                         condition=cond))
    contrasts = [(f"{c}-clean", s[c]) for c in ("erased", "random", "random_matched")]
    contrasts += [(f"erased-{c}", s[f"erased_vs_{c}"]) for c in ("random", "random_matched")]
    for contrast, into in contrasts:
        for metric, field, section in (("agreement_accuracy", "accuracy_change", "behaviour"),
                                       ("nll_per_token", "nll_increase", "damage")):
            d = into[field]
            rows.append(_row(common, section, metric, d["value"], contrast=contrast,
                             ci=d["ci95"], p=d["p_value"]))
    return rows


def counterfactual_rows(key: Mapping[str, Any], base: Mapping[str, Any], lm: Any, run: Any,
                        layer: int, *, seed: int, clean: CleanScores | None = None) -> list[Row]:
    """Flip rate and log-odds shift of the counterfactual intervention on the subject against
    a random direction of the same size, with the paired lead. ``clean``: the pairs'
    :func:`clean_scores` (read or computed here when None)."""
    from synrob.probe.causal.erasure.counterfactual import counterfactual_scores, flip_summary

    kept, after = flip_pairs(key)
    if not kept:
        return []
    scores = counterfactual_scores(lm, kept, run.eraser, layer, seed=seed,
                                   batch_size=int(key["batch_size"]), max_tokens=MAX_TOKENS,
                                   clean=(clean or clean_scores(key, lm)).flips)
    s = flip_summary(scores, n_boot=int(key["bootstrap"]), seed=seed)
    common = {**base, "pairs": s["pairs"], "sources": s["sources"],
              "subject_after_target": after, "clean_prefers_original": s["clean_prefers_original"]}
    rows = [_row(common, "counterfactual", "agreement_accuracy", s["clean"]["accuracy"],
                 condition="clean", ci=s["clean"]["accuracy_ci95"])]
    for cond in ("counterfactual", "random"):
        c = s[cond]
        rows.append(_row(common, "counterfactual", "agreement_accuracy", c["accuracy"],
                         condition=cond, ci=c["accuracy_ci95"]))
        rows.append(_row(common, "counterfactual", "flip_rate", c["flip_rate"],
                         condition=cond, ci=c["flip_rate_ci95"]))
        rows.append(_row(common, "counterfactual", "shift", c["shift"], condition=cond,
                         ci=c["shift_ci95"]))
    lead = s.get("counterfactual_vs_random", {})
    for metric in ("flip_rate", "shift"):
        if metric in lead:
            d = lead[metric]
            rows.append(_row(common, "counterfactual", metric, d["value"],
                             contrast="counterfactual-random", ci=d["ci95"], p=d["p_value"]))
    return rows


def layer_rows(key: Mapping[str, Any], *, seed: int, device: str, lang: str) -> list[Row]:
    """Every row of one layer (see the module docstring)."""
    from synrob.perturb.lm.device import resolve_device

    device = resolve_device(device)
    base = {"model": key["model"], "layer": int(key["layer"])}
    rows, run = amnesic_rows(key, base, seed=seed, device=device, lang=lang)
    lm, layer = _lm(key, run, device)
    clean = clean_scores(key, lm)
    rows += behaviour_rows(key, base, lm, run, layer, seed=seed, clean=clean)
    rows += counterfactual_rows(key, base, lm, run, layer, seed=seed, clean=clean)
    return rows
