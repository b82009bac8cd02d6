"""``card.md``: the card as Markdown (the headline, then every section's table per language,
each number with its 95 % interval), and the command that makes it."""

from __future__ import annotations

import shlex
from collections.abc import Mapping, Sequence
from typing import Any

from ..experiments.report import fmt_ci, markdown_table

__all__ = ["card_markdown", "card_command"]


def card_command(settings: Mapping[str, Any]) -> str:
    """The ``synrob card`` command line of these settings."""
    args = ["synrob", "card", settings["model"], "--languages", ",".join(settings["languages"]),
            "--preset", settings["preset"]["name"], "--layers",
            ",".join(map(str, settings["layers"]))]
    for lang, spec in settings["treebanks"].items():
        args += ["--treebank", f"{lang}={spec}"]
    for k, v in settings["params"].items():
        args += ["-p", f"{k}={str(v).lower() if isinstance(v, bool) else v}"]
    if settings.get("seed"):
        args += ["--seed", str(settings["seed"])]
    return " ".join(shlex.quote(a) for a in args)


def _n(n: Mapping[str, Any] | None) -> str:
    if n is None or n.get("value") is None:
        return "—"
    lo, hi = n["ci95"]
    return fmt_ci(n["value"], None if lo is None else [lo, hi])


def _task_table(task: Mapping[str, Any], columns: Sequence[tuple[str, str]]) -> str:
    rows = []
    for e in task["layers"]:
        mark = " (best on dev)" if e["layer"] == task["best_layer"] else ""
        rows.append([f"{e['layer']}{mark}", *(_n(e["measures"].get(k)) for k, _ in columns)])
    return markdown_table(["layer", *(name for _, name in columns)], rows)


def _structure(sec: Mapping[str, Any]) -> list[str]:
    task = sec["tasks"].get("distance")
    if task is None:
        return []
    cols = [("uuas", "UUAS"), ("dspr", "DSpr"), ("control_uuas", "control UUAS"),
            ("selectivity_uuas", "selectivity UUAS"), ("random_init_uuas", "random-init UUAS"),
            ("random_init_dspr", "random-init DSpr"), ("dev_uuas", "dev UUAS")]
    base = "; ".join(f"{name}: UUAS {_n(b.get('uuas'))}, DSpr {_n(b.get('dspr'))}"
                     for name, b in task["baselines"].items())
    return [_task_table(task, cols), f"Baselines (no layer): {base or 'none'}."]


def _morphosyntax(sec: Mapping[str, Any]) -> list[str]:
    from .probing import decodable_from

    out = []
    for label, task in sec["tasks"].items():
        cols = [("acc", "accuracy"), ("control_acc", "control"),
                ("selectivity_acc", "selectivity"), ("compression", "MDL compression"),
                ("dev_acc", "dev accuracy")]
        layer = decodable_from(task)
        out += [f"**{label}** (decodable from layer {layer} on)" if layer is not None
                else f"**{label}** (not decodable at any probed layer)", _task_table(task, cols)]
    for label, why in sec.get("absent", {}).items():
        out.append(f"*{label}: absent: {why}.*")
    return out


def _jabberwocky(sec: Mapping[str, Any]) -> list[str]:
    rows = [[name, _n(sec.get(key))] for key, name in (
        ("uuas_clean", "UUAS clean"), ("uuas_jabberwocky", "UUAS Jabberwocky (mean of draws)"),
        ("drop_uuas", "drop"), ("lead_clean", f"lead over {sec.get('baseline')}, clean"),
        ("lead_jabberwocky", f"lead over {sec.get('baseline')}, Jabberwocky"),
        ("lead_lost", "share of the lead lost"))]
    return [f"At layer {sec['layer']} (the best structural layer on dev).",
            markdown_table(["measure", "value [95 % interval]"], rows)]


def _behaviour(sec: Mapping[str, Any]) -> list[str]:
    out = []
    for f, b in sec["features"].items():
        rows = [["all", str(b["pairs"]), _n(b["accuracy"])]]
        for axis in ("distance", "attractors"):
            rows += [[f"{axis} {k}", str(v["n"]), _n(v)] for k, v in b[axis].items()]
        out += [f"**{f}**: scores in `{b.get('scores_file')}`",
                markdown_table(["pairs", "n", "accuracy [95 % interval]"], rows)]
    for f, why in sec.get("absent", {}).items():
        out.append(f"*{f}: absent: {why}.*")
    return out


def _causal(sec: Mapping[str, Any]) -> list[str]:
    cols = [("accuracy_clean", "clean"), ("accuracy_erased", "LEACE inside"),
            ("accuracy_random_matched", "random (matched)"),
            ("nll_increase_erased", "NLL increase"), ("flip_rate", "flip rate"),
            ("probe_accuracy_before", "probe before"), ("probe_accuracy_leace", "probe after"),
            ("probe_drop_leace", "probe drop")]
    out = []
    for f, entry in sec["features"].items():
        rows = [[str(e["layer"]), *(_n(e["measures"].get(k)) for k, _ in cols)]
                for e in entry["layers"]]
        out += [f"**{f}**: erasure hurts most at layer {entry['hurts_most']}",
                markdown_table(["layer", *(name for _, name in cols)], rows)]
    return out


_SECTIONS = (("structure", "Structure by layer", _structure),
             ("morphosyntax", "Morphosyntax by layer", _morphosyntax),
             ("jabberwocky", "Jabberwocky", _jabberwocky), ("behaviour", "Behaviour", _behaviour),
             ("causal", "Causal", _causal))


def _language(lang: str, entry: Mapping[str, Any]) -> list[str]:
    tb = entry["treebank"]
    files = ", ".join(f"{s} {f['sentences']} sentences (`{f['name']}`, sha256 "
                      f"{f['sha256'][:12]})" for s, f in tb["files"].items())
    split = f" Split: {tb['split']['method']}, seed {tb['split']['seed']}." if tb["split"] else ""
    out = [f"## {lang}", f"Treebank `{tb['spec']}`: {files}.{split}",
           f"![card-{lang}](card-{lang}.png)"]
    for key, title, render in _SECTIONS:
        sec = entry["sections"][key]
        out.append(f"### {title}")
        out += (render(sec) if sec["status"] == "ok"
                else [f"*Absent: {sec['reason']}.*"])
    return out


def card_markdown(data: Mapping[str, Any]) -> str:
    """The text of ``card.md``."""
    s, m = data["settings"], data["model"]
    out = [f"# Card: {m['name']}",
           f"Made by `{card_command(s)}` (synrob {data['synrob_version']}, {data['written']}); "
           f"definitions of every phrase and number: {data['definitions']}.",
           "## Headline"]
    for lang, entry in data["languages"].items():
        out += [f"- **{lang}**: {c['text']}" for c in entry["headline"]] or [
            f"- **{lang}**: no headline (no section has its numbers)."]
    out += ["## Model and settings", markdown_table(["setting", "value"], [
        ["model", m["name"]], ["dtype", str(m["dtype"])], ["layers", str(m["num_layers"])],
        ["LM head", str(m["lm_head"])], ["probed layers", ", ".join(map(str, s["layers"]))],
        ["causal layers", ", ".join(map(str, s["causal_layers"]))],
        ["preset", s["preset"]["name"]], ["probe seeds", ", ".join(map(str, s["seeds"]))],
        ["bootstrap resamples", str(s["preset"]["bootstrap"])]])]
    for lang, entry in data["languages"].items():
        out += _language(lang, entry)
    return "\n\n".join(out).rstrip() + "\n"
