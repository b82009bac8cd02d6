"""The ``amnesic`` report: ``report.md`` (five tables per layer) and ``amnesic-layers.png``
(probe accuracy, agreement accuracy, NLL increase and flip rate against the layer, with 95 %
intervals). ``random`` is the random control matched in rank, ``random matched`` the one
matched in rank and mean displacement."""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ...render.figures import MARKERS, Figure, dodge, layer_ticks, new_figure, save_png
from ..base import Row
from ..report import (
    error_bars,
    fmt,
    fmt_ci,
    fmt_p,
    markdown_table,
    select,
    write_markdown,
)

__all__ = ["write_report", "probe_table", "also_table", "displacement_table",
           "behaviour_table", "damage_table", "counterfactual_table", "layers_figure",
           "plot_layers"]

#: Probe conditions and their column names.
_PROBE = (("before", "before"), ("leace", "LEACE"), ("random", "random"),
          ("random_matched", "random matched"))
#: Inside-the-model conditions and their column names.
_INSIDE = (("clean", "clean"), ("erased", "LEACE inside"), ("random", "random inside"),
           ("random_matched", "random matched inside"))
_CONTROLS = (("erased", "LEACE"), ("random", "random"), ("random_matched", "random matched"))


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


def _majority(row: Row | None) -> str:
    """``0.815 (Sing)``: the training majority label's test accuracy, and the label."""
    if row is None:
        return "—"
    label = row.get("majority_label")
    return fmt(row["value"]) + (f" ({label})" if label else "")


def probe_table(rows: Sequence[Row], erased: bool = True) -> str:
    """Per layer (and task): majority (the training majority label's test accuracy), probe
    accuracy before / LEACE / each random control, and the drops."""
    body = []
    for layer in _layers(rows):
        probe = [r for r in select(rows, layer=layer, section="probe", metric="accuracy")
                 if r.get("erased_task") is erased]
        for task in dict.fromkeys(r["task"] for r in probe):
            got = {c: _one(probe, task=task, condition=c, contrast="") for c, _ in _PROBE}
            maj = _one(select(rows, layer=layer, section="probe", metric="majority"), task=task)
            body.append([layer, task, _majority(maj),
                         *(fmt(got[c]["value"] if got[c] else math.nan) for c, _ in _PROBE),
                         *(_diff(_one(probe, task=task, contrast=f"drop_{c}"))
                           for c in ("leace", "random", "random_matched"))])
    return markdown_table(["layer", "task", "majority (train label)",
                           *(name for _, name in _PROBE), "drop LEACE [95% CI]",
                           "drop random [95% CI]", "drop random matched [95% CI]"], body)


def displacement_table(rows: Sequence[Row]) -> str:
    """Per layer: each eraser's mean displacement on the labelled training and test words."""
    body = []
    for layer in _layers(rows):
        found = select(rows, layer=layer, section="probe", metric="displacement")
        for split in dict.fromkeys(r["split"] for r in found):
            got = {c: _one(found, split=split, condition=c) for c in
                   ("leace", "random", "random_matched")}
            body.append([layer, split, *(fmt(got[c]["value"] if got[c] else math.nan)
                                         for c in ("leace", "random", "random_matched"))])
    return markdown_table(["layer", "words", "LEACE", "random", "random matched"], body)


def also_table(rows: Sequence[Row]) -> str:
    return probe_table(rows, erased=False)


def behaviour_table(rows: Sequence[Row]) -> str:
    """Per layer: agreement accuracy clean / erased / each random control, and the changes
    against clean."""
    body = []
    for layer in _layers(rows):
        acc = select(rows, layer=layer, section="behaviour", metric="agreement_accuracy")
        if not acc:
            continue
        body.append([layer, acc[0].get("pairs", "—"),
                     *(_cell(_one(acc, condition=c, contrast="")) for c, _ in _INSIDE),
                     *(_diff(_one(acc, contrast=f"{c}-clean")) for c, _ in _CONTROLS)])
    return markdown_table(["layer", "pairs", *(name for _, name in _INSIDE),
                           *(f"{name} − clean" for _, name in _CONTROLS)], body)


def damage_table(rows: Sequence[Row]) -> str:
    """Per layer: the NLL increase (nats/token; positive = worse) of the original sentences
    under LEACE and each random control against clean, and LEACE's excess over each control."""
    body = []
    for layer in _layers(rows):
        dmg = select(rows, layer=layer, section="damage", metric="nll_per_token")
        if not dmg:
            continue
        clean = _one(dmg, condition="clean", contrast="")
        body.append([layer, fmt(clean["value"]) if clean else "—",
                     *(_diff(_one(dmg, contrast=f"{c}-clean")) for c, _ in _CONTROLS),
                     *(_diff(_one(dmg, contrast=f"erased-{c}"))
                       for c in ("random", "random_matched"))])
    return markdown_table(["layer", "NLL clean (nats/token)",
                           *(f"NLL increase {name} (nats/token)" for _, name in _CONTROLS),
                           "LEACE − random", "LEACE − random matched"], body)


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


def _coinciding(series: Sequence[tuple[str, list[int], list[float], list[Any]]],
                i: int) -> str | None:
    """The label of an earlier series equal to series ``i`` at every layer (to 4 decimals)."""
    _, xs, ys, _ = series[i]
    for label, xs2, ys2, _ in series[:i]:
        if xs2 == xs and all(abs(a - b) < 5e-5 for a, b in zip(ys, ys2, strict=True)):
            return label
    return None


def _draw(ax: Any, series: Sequence[tuple[str, list[int], list[float], list[Any]]],
          layers: Sequence[int]) -> None:
    """Each series with its own marker shape and size, moved sideways by a little (the ticks
    stay at the layers), so equal series stay visible; a series equal to an earlier one at
    every layer says so in the legend."""
    for i, (label, xs, ys, cis) in enumerate(series):
        same = _coinciding(series, i)
        shift = dodge(i, len(series), layers, share=0.2)
        ax.errorbar([x + shift for x in xs], ys, yerr=error_bars(ys, cis),
                    marker=MARKERS[i % len(MARKERS)], markersize=max(8 - 1.2 * i, 4),
                    capsize=3, label=label if same is None else f"{label} (= {same} at "
                    "every layer)")


def layers_figure(rows: Sequence[Row], title: str) -> Figure:
    """Four panels against the layer, each line with its 95 % interval; integer ticks at the
    layers; coinciding lines kept visible (:func:`_draw`)."""
    fig, axes = new_figure(1, 4, figsize=(20, 4.2))
    erased = [r for r in rows if r.get("erased_task") is True]
    task = erased[0]["task"] if erased else "task"
    panels = [
        (axes[0][0], f"probe accuracy ({task})",
         [("before", dict(section="probe", metric="accuracy", condition="before", contrast="")),
          ("LEACE", dict(section="probe", metric="accuracy", condition="leace", contrast="")),
          ("random", dict(section="probe", metric="accuracy", condition="random", contrast="")),
          ("random matched", dict(section="probe", metric="accuracy",
                                  condition="random_matched", contrast="")),
          ("majority (train label)", dict(section="probe", metric="majority"))], erased),
        (axes[0][1], "agreement accuracy (LM prefers the original)",
         [(name, dict(section="behaviour", metric="agreement_accuracy", condition=c,
                      contrast="")) for c, name in _INSIDE], rows),
        (axes[0][2], "NLL increase over clean (nats/token; > 0: worse)",
         [(name, dict(section="damage", metric="nll_per_token", contrast=f"{c}-clean"))
          for c, name in _CONTROLS], rows),
        (axes[0][3], "flip rate of the intervention on the subject",
         [(c, dict(section="counterfactual", metric="flip_rate", condition=c, contrast=""))
          for c in ("counterfactual", "random")], rows),
    ]
    layers = _layers(rows)
    for ax, name, lines, source in panels:
        series = [(label, *_series(source, **where)) for label, where in lines]
        _draw(ax, [s for s in series if s[1]], layers)
        ax.set_title(name, fontsize=10)
        ax.set_xlabel("layer")
        layer_ticks(ax, layers)
        ax.grid(alpha=0.3)
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize=8)
    fig.suptitle(title, fontsize=11)
    return fig


def plot_layers(rows: Sequence[Row], path: Path, title: str) -> Path:
    """:func:`layers_figure` written as a PNG at ``path``."""
    return save_png(layers_figure(rows, title), path)


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
        "standardized inputs) retrained on the vectors as they are, after LEACE, after a "
        "random erasure of the same rank (random) and after a random oblique projection of "
        "the same rank and the same mean displacement as LEACE (random matched). Majority: "
        "the test accuracy of the training majority label, the constant predictor a probe "
        "can learn. LEACE's guarantee: after it, no linear probe beats the majority rate by "
        "more than noise.\n\n" + probe_table(rows),
        "## What else was lost\n\n" + also_table(rows),
        "## How far each eraser moves the vectors\n\nMean displacement ||x − E(x)|| on the "
        "labelled training words (the matched control is fitted to LEACE's there) and test "
        "words.\n\n" + displacement_table(rows),
        "## Erasure inside the model: agreement minimal pairs\n\nThe eraser is applied to "
        "the layer's hidden state of every token but the start token during the LM's "
        "forward pass.\n\n" + behaviour_table(rows),
        "## Damage: NLL increase\n\nIncrease of the original sentences' mean per-token "
        "negative log-likelihood over clean (nats/token; positive = the erasure made the LM "
        "worse at the text), and LEACE's excess over each random control.\n\n"
        + damage_table(rows),
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
