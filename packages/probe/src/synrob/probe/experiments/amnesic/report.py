"""The ``amnesic`` report: ``report.md`` (four tables per layer) and ``amnesic-layers.png``
(probe accuracy, agreement accuracy and flip rate against the layer, with 95 % intervals)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..base import Row
from ..report import (
    error_bars,
    fmt,
    fmt_ci,
    fmt_p,
    markdown_table,
    pyplot,
    save_figure,
    select,
    write_markdown,
)

__all__ = ["write_report", "probe_table", "also_table", "behaviour_table",
           "counterfactual_table", "plot_layers"]


def _one(rows: Sequence[Row], **where: Any) -> Row | None:
    found = select(rows, **where)
    return found[0] if found else None


def _ci(row: Row | None) -> list[float] | None:
    """``[low, high]``; NaN where unknown (``results.json`` writes NaN as null)."""
    if row is None:
        return None
    return [math.nan if row.get(k) is None else float(row[k]) for k in ("ci_low", "ci_high")]


def _cell(row: Row | None, digits: int = 3) -> str:
    return "—" if row is None else fmt_ci(row["value"], _ci(row), digits)


def _diff(row: Row | None, digits: int = 3) -> str:
    if row is None:
        return "—"
    return f"{_cell(row, digits)} p {fmt_p(row.get('p_value', math.nan))}"


def _layers(rows: Sequence[Row]) -> list[int]:
    return sorted({int(r["layer"]) for r in rows if "layer" in r})


def probe_table(rows: Sequence[Row], erased: bool = True) -> str:
    """Per layer (and task): majority, probe accuracy before / LEACE / random, and the drops."""
    body = []
    for layer in _layers(rows):
        probe = [r for r in select(rows, layer=layer, section="probe", metric="accuracy")
                 if r.get("erased_task") is erased]
        for task in dict.fromkeys(r["task"] for r in probe):
            got = {c: _one(probe, task=task, condition=c, contrast="")
                   for c in ("before", "leace", "random")}
            maj = _one(select(rows, layer=layer, section="probe", metric="majority"), task=task)
            body.append([layer, task, fmt(maj["value"] if maj else math.nan),
                         *(fmt(got[c]["value"] if got[c] else math.nan)
                           for c in ("before", "leace", "random")),
                         _diff(_one(probe, task=task, contrast="drop_leace")),
                         _diff(_one(probe, task=task, contrast="drop_random"))])
    return markdown_table(["layer", "task", "majority", "before", "LEACE", "random",
                           "drop LEACE [95% CI]", "drop random [95% CI]"], body)


def also_table(rows: Sequence[Row]) -> str:
    return probe_table(rows, erased=False)


def behaviour_table(rows: Sequence[Row]) -> str:
    """Per layer: agreement accuracy clean / erased / random, changes, damage."""
    body = []
    for layer in _layers(rows):
        acc = select(rows, layer=layer, section="behaviour", metric="agreement_accuracy")
        dmg = select(rows, layer=layer, section="damage", metric="loglik_per_token")
        if not acc:
            continue
        body.append([layer, acc[0].get("pairs", "—"),
                     *(_cell(_one(acc, condition=c, contrast="")) for c in
                       ("clean", "erased", "random")),
                     _diff(_one(acc, contrast="erased-clean")),
                     _diff(_one(acc, contrast="random-clean")),
                     _diff(_one(dmg, contrast="erased-clean")),
                     _diff(_one(dmg, contrast="random-clean"))])
    return markdown_table(["layer", "pairs", "clean", "LEACE inside", "random inside",
                           "LEACE − clean", "random − clean", "damage LEACE (nats/token)",
                           "damage random"], body)


def counterfactual_table(rows: Sequence[Row]) -> str:
    """Per layer: flip rate and log-odds shift of the intervention vs random, the lead."""
    body = []
    for layer in _layers(rows):
        cf = select(rows, layer=layer, section="counterfactual")
        if not cf:
            continue
        flip = [r for r in cf if r["metric"] == "flip_rate"]
        shift = [r for r in cf if r["metric"] == "shift"]
        body.append([layer, cf[0].get("pairs", "—"), cf[0].get("clean_prefers_original", "—"),
                     _cell(_one(flip, condition="counterfactual")),
                     _cell(_one(flip, condition="random")),
                     _diff(_one(flip, contrast="counterfactual-random")),
                     _cell(_one(shift, condition="counterfactual"), 2),
                     _cell(_one(shift, condition="random"), 2)])
    return markdown_table(["layer", "pairs", "clean right", "flip rate counterfactual",
                           "flip rate random", "lead over random", "log-odds shift",
                           "shift random"], body)


def _series(rows: Sequence[Row], **where: Any) -> tuple[list[int], list[float], list[Any]]:
    xs, ys, cis = [], [], []
    for layer in _layers(rows):
        r = _one(rows, layer=layer, **where)
        if r is not None:
            xs.append(layer)
            ys.append(float(r["value"]))
            cis.append(_ci(r))
    return xs, ys, cis


def plot_layers(rows: Sequence[Row], path: Path, title: str) -> Path:
    """Three panels against the layer, each line with its 95 % interval."""
    plt = pyplot()
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.2))
    erased = [r for r in rows if r.get("erased_task") is True]
    task = erased[0]["task"] if erased else "task"
    panels = [
        (axes[0], f"probe accuracy ({task})",
         [("before", dict(section="probe", metric="accuracy", condition="before", contrast="")),
          ("LEACE", dict(section="probe", metric="accuracy", condition="leace", contrast="")),
          ("random", dict(section="probe", metric="accuracy", condition="random", contrast="")),
          ("majority", dict(section="probe", metric="majority"))], erased),
        (axes[1], "agreement accuracy (LM prefers the original)",
         [(c, dict(section="behaviour", metric="agreement_accuracy", condition=c, contrast=""))
          for c in ("clean", "erased", "random")], rows),
        (axes[2], "flip rate of the intervention on the subject",
         [(c, dict(section="counterfactual", metric="flip_rate", condition=c, contrast=""))
          for c in ("counterfactual", "random")], rows),
    ]
    for ax, name, lines, source in panels:
        for label, where in lines:
            xs, ys, cis = _series(source, **where)
            if xs:
                ax.errorbar(xs, ys, yerr=error_bars(ys, cis), marker="o", capsize=3,
                            label=label)
        ax.set_title(name, fontsize=10)
        ax.set_xlabel("layer")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    fig.suptitle(title, fontsize=11)
    return save_figure(fig, path)


def write_report(rows: list[Row], outdir: Path, options: dict[str, Any]) -> list[Path]:
    """Write ``report.md`` and ``amnesic-layers.png``; return both paths."""
    model = options["model"]
    data = (f"Model `{model}`; train `{options['train']}`"
            + (f" (first {options['train_sentences']} sentences)"
               if options.get("train_sentences") else "")
            + f", dev `{options['dev']}`, test `{options['test']}`. Erased: `{options['task']}`"
            + (f" feature `{options['feature']}`" if options["task"] == "feats" else "")
            + ". 95 % bootstrap intervals over test sentences (pairs: clustered by source "
              "sentence); p: one-sided paired bootstrap p-value.")
    sections = [
        data,
        "## Amnesic probing: the erased property\n\nLinear probe (L-BFGS to convergence, "
        "standardized inputs) retrained on the vectors as they are, after LEACE and after a "
        "random erasure of the same rank. LEACE's guarantee: after it, no linear probe beats "
        "the majority rate by more than noise.\n\n" + probe_table(rows),
        "## What else was lost\n\n" + also_table(rows),
        "## Erasure inside the model: agreement minimal pairs and damage\n\nThe eraser is "
        "applied to the layer's hidden state of every token but the start token during the "
        "LM's forward pass. Damage: change of the per-token log-likelihood of the original "
        "sentences (nats; negative = worse).\n\n" + behaviour_table(rows),
        "## Counterfactual intervention on the subject\n\nThe subject's token states are moved "
        "to the other value's class mean along the LEACE subspace (AlterRep), against a random "
        "direction of the same size. Flip rate: of the pairs the clean LM gets right, the share "
        "whose ungrammatical twin it prefers after the intervention.\n\n"
        + counterfactual_table(rows),
    ]
    files = [write_markdown(outdir / "report.md",
                            "# Amnesic probing and counterfactual intervention", sections)]
    files.append(plot_layers(rows, outdir / "amnesic-layers.png",
                             f"{model}: erasing and flipping {options.get('feature') or options['task']}"))
    return files
