"""A language's sections from the grid's rows, each with the settings that made its numbers.

Every section is ``{"status": "ok", ...}`` or ``{"status": "absent", "reason": "..."}``: a
section that cannot run says why, in place, and the others are made. The settings of a
section are returned beside it (``card.json``'s ``settings.sections[KEY]``; every number of
the section names ``KEY``): the task, probe and its parameters, the seeds, the resamples, the
files by SHA-256, and the runs (``runs/ID.json``) that hold the numbers' provenance.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from .lm_sections import behaviour_feature, causal_feature, jabberwocky_section
from .numbers import rows_where
from .probing import STRUCTURE_METRICS, probing_task

__all__ = ["feature_reasons", "language_sections", "absent"]


def absent(reason: str) -> dict[str, Any]:
    return {"status": "absent", "reason": reason}


def feature_reasons(train: str, test: str, features: Sequence[str]) -> dict[str, str]:
    """Feature -> "" when the treebank annotates it (two values or more among the training
    words, and some test word has it), else why not."""
    from synrob.perturb.corpus import read_conllu
    from synrob.perturb.io.feats import parse_feats

    def values(path: str) -> dict[str, Counter[str]]:
        out: dict[str, Counter[str]] = {f: Counter() for f in features}
        for s in read_conllu(path):
            for w in s.words():
                feats = parse_feats(w.feats, strict=False) if w.feats != "_" else {}
                for f in features:
                    if f in feats:
                        out[f][feats[f]] += 1
        return out

    tr, te = values(train), values(test)
    reasons = {}
    for f in features:
        if not tr[f]:
            reasons[f] = f"the treebank annotates no {f} (no training word has it)"
        elif len(tr[f]) < 2:
            reasons[f] = f"{f} has one value in the training split ({next(iter(tr[f]))})"
        elif not te[f]:
            reasons[f] = f"no test word has {f}"
        else:
            reasons[f] = ""
    return reasons


def _runs(rows: Sequence[Mapping[str, Any]]) -> list[str]:
    return sorted({str(r["run"]) for r in rows if r.get("run")})


def _probing(rows: Sequence[Mapping[str, Any]], lang: str, section: str, layers: Sequence[int],
             settings: dict[str, Any]) -> dict[str, Any]:
    """The structure or morphosyntax section: one entry per task label."""
    mine = rows_where(rows, part="probe", lang=lang, section=section)
    tasks: dict[str, Any] = {}
    for label in dict.fromkeys(str(r["card_task"]) for r in mine):
        ref = f"{lang}/{section}/{label}"
        task_rows = rows_where(mine, card_task=label)
        metrics = STRUCTURE_METRICS if section == "structure" else ("acc",)
        tasks[label] = probing_task(task_rows, metrics, layers, ref)
        first = task_rows[0]
        settings[ref] = {"task": first["task"], "probe": first["probe"], "runs": _runs(task_rows)}
    return {"status": "ok", "tasks": tasks} if tasks else absent("no probing run")


def language_sections(grid: Any, rows: Sequence[Mapping[str, Any]], lang: str,
                      counts: Mapping[str, int], keys: Mapping[str, Mapping[str, Any]]
                      ) -> tuple[dict[str, Any], dict[str, Any]]:
    """``(sections, settings)`` of ``lang`` (``keys``: run id -> its key, for the settings)."""
    settings: dict[str, Any] = {}
    layers = list(grid.settings.layers)
    out = {"structure": _probing(rows, lang, "structure", layers, settings),
           "morphosyntax": _probing(rows, lang, "morphosyntax", layers, settings)}
    out["morphosyntax"]["absent"] = {f"feats:{f}": why for f, why in grid.features(lang).items()
                                     if why}
    out["jabberwocky"] = _jabberwocky(grid, rows, lang, out["structure"], settings)
    out["behaviour"] = _behaviour(grid, rows, lang, counts, settings)
    out["causal"] = _causal(grid, rows, lang, counts, settings)
    for entry in settings.values():
        entry["keys"] = [keys[r] for r in entry["runs"] if r in keys]
    return out, settings


def _jabberwocky(grid: Any, rows: Sequence[Mapping[str, Any]], lang: str,
                 structure: Mapping[str, Any], settings: dict[str, Any]) -> dict[str, Any]:
    if grid.info.not_plain:
        return absent(grid.info.not_plain)
    layer = grid.jabberwocky_at.get(lang)
    mine = rows_where(rows, part="jabberwocky", lang=lang)
    if layer is None or not [r for r in mine if not r.get("derived")]:
        return absent("no best structural layer (the structure section has no dev score)")
    ref = f"{lang}/jabberwocky"
    settings[ref] = {"study": "jabberwocky", "layer": layer, "runs": _runs(mine)}
    return jabberwocky_section([r for r in mine if not r.get("derived")], layer, ref)


def _behaviour(grid: Any, rows: Sequence[Mapping[str, Any]], lang: str,
               counts: Mapping[str, int], settings: dict[str, Any]) -> dict[str, Any]:
    if grid.lm_sections():
        return absent(grid.lm_sections())
    features, missing = {}, {}
    for f, why in grid.features(lang).items():
        mine = rows_where(rows, part="behaviour", lang=lang, feature=f)
        if why or not counts.get(f) or not mine:
            missing[f] = why or "the agreement perturber made no pair from the test split"
            continue
        ref = f"{lang}/behaviour/{f}"
        settings[ref] = {"pairs": counts[f], "runs": _runs(mine)}
        features[f] = behaviour_feature(mine, ref)
    if not features:
        return {**absent("no agreement pairs: " + "; ".join(
            f"{f}: {why}" for f, why in missing.items())), "absent": missing}
    return {"status": "ok", "features": features, "absent": missing}


def _causal(grid: Any, rows: Sequence[Mapping[str, Any]], lang: str,
            counts: Mapping[str, int], settings: dict[str, Any]) -> dict[str, Any]:
    if grid.causal_reason():
        return absent(grid.causal_reason())
    chosen = grid.causal_features(lang, counts)
    if not chosen:
        return absent("no feature of the preset's (" + ", ".join(
            grid.settings.preset.causal_features) + ") has agreement pairs in this treebank")
    features = {}
    for f in chosen:
        mine = rows_where(rows, part="causal", lang=lang, feature=f)
        ref = f"{lang}/causal/{f}"
        settings[ref] = {"study": "amnesic", "feature": f, "runs": _runs(mine)}
        features[f] = causal_feature(mine, list(grid.settings.causal_layers), ref)
    return {"status": "ok", "features": features}
