"""The ``jabberwocky`` report: ``report.md`` (clean vs Jabberwocky, lead over the baseline chosen
on clean dev lost, training on Jabberwocky) and ``jabberwocky-bars.png`` (grouped bars like the paper's
Figure 3)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ...render.figures import Figure, new_figure, save_png
from ..base import Row
from ..report import (
    error_bars,
    fmt,
    fmt_ci,
    fmt_p,
    markdown_table,
    write_markdown,
)
from .stats import PANELS, summarize

__all__ = ["METRIC_NAMES", "write_report", "main_table", "lead_table", "behaviour_table",
           "bars_figure", "plot_bars"]

#: How metric names are written in tables and plots.
METRIC_NAMES = {"uuas": "UUAS", "dspr": "DSpr"}


def write_report(rows: list[Row], outdir: Path, options: dict[str, Any], probes: Sequence[str]
                 ) -> list[Path]:
    """Write ``report.md`` and ``jabberwocky-bars.png``; return both paths."""
    summary = summarize(rows, probes)
    sections = _report_sections(summary, options, rows)
    files = [write_markdown(outdir / "report.md",
                            "# Jabberwocky probing (Hall Maudslay & Cotterell 2021)", sections)]
    files.append(plot_bars(summary, outdir / "jabberwocky-bars.png"))
    return files


def _pm(mean: float, std: float, ci: list[float] | None = None) -> str:
    cell = fmt_ci(mean, ci)
    return cell if math.isnan(std) else f"{cell} ± {fmt(std)}"


def _drop(e: dict[str, Any]) -> str:
    p = e.get("drop_p", math.nan)
    return fmt_ci(e["drop"], e.get("drop_ci")) + ("" if math.isnan(p) else f" p {fmt_p(p)}")


def main_table(summary: dict[str, Any]) -> str:
    """probe | model | UUAS clean | UUAS jabberwocky | drop | DSpr clean | DSpr jab | drop, each
    with its 95 % interval (the drop's paired, with its one-sided p-value)."""
    body = []
    seen: list[tuple[str, str]] = []
    for e in summary["entries"]:
        if (e["probe"], e["label"]) not in seen:
            seen.append((e["probe"], e["label"]))
    for probe, label in seen:
        cells: list[Any] = [probe, label]
        for metric in ("uuas", "dspr"):
            e = next((x for x in summary["entries"] if x["probe"] == probe
                      and x["label"] == label and x["metric"] == metric), None)
            cells += ([fmt_ci(e["clean"], e.get("clean_ci")),
                       _pm(e["jab_mean"], e["jab_std"], e.get("jab_ci")), _drop(e)] if e
                      else [None, None, None])
        body.append(cells)
    return markdown_table(["probe", "model", "UUAS clean", "UUAS jabberwocky", "drop",
                           "DSpr clean", "DSpr jabberwocky", "drop"], body)


def lead_table(summary: dict[str, Any]) -> str:
    """probe | metric | baseline (chosen on clean dev) | lead, clean and Jabberwocky | lead lost,
    with paired 95 % intervals; p: one-sided p-value that the share of the lead lost is > 0."""
    body = [[x["probe"], METRIC_NAMES[x["metric"]], x["baseline"],
             fmt_ci(x["lead_clean"], x.get("lead_clean_ci")),
             fmt_ci(x["lead_jab"], x.get("lead_jab_ci")),
             fmt_ci(x["lead_lost"], x.get("lead_lost_ci")), fmt_p(x.get("lead_lost_p"))]
            for x in summary["lead"]]
    return markdown_table(["probe", "metric", "baseline (best clean dev)", "lead clean",
                           "lead jabberwocky", "lead lost", "p"], body)


def behaviour_table(summary: dict[str, Any]) -> str:
    """draw | LM | pairs | the LM prefers the clean sentence [95 % interval]."""
    body = [[str(b["draw"]), b["lm"], str(b["pairs"]), fmt_ci(b["accuracy"], b["ci"])]
            for b in summary["behaviour"]]
    return markdown_table(["draw", "LM", "changed pairs", "LM prefers clean"], body)


def _report_sections(summary: dict[str, Any], options: dict[str, Any], rows: list[Row]
                     ) -> list[str]:
    lost = [x["lead_lost"] for x in summary["lead"] if not math.isnan(x["lead_lost"])]
    draws = sorted({r["draw"] for r in rows if r.get("test_on") == "jabberwocky"
                    and r["draw"] is not None})
    best = ", ".join(f"{p}: layer {layer}" for p, layer in summary["best_layers"].items())
    sections = [
        f"Model `{options['model']}` (layer sweep `{options['layers']}`; best on clean dev "
        f"UUAS — {best or 'none'}), baselines `{options['baselines']}` (fast+pos vectors "
        f"`{options['vectors']}`). Train `{options['train']}`"
        + (f" (first {options['train_sentences']} sentences)" if options["train_sentences"] else "")
        + f", dev `{options['dev']}`, test `{options['test']}`; {len(draws)} Jabberwocky "
        "draw(s) of the test set (mean ± sample std over draws). Brackets: 95 % bootstrap "
        f"intervals over the test sentences ({options.get('bootstrap', 0)} resamples; drops "
        "and leads paired on the same resamples); p: one-sided bootstrap p-value that the drop "
        "(or the share of the lead lost) is > 0.",
        "## Clean vs Jabberwocky (probes trained on clean data)\n\n" + main_table(summary),
        "## Lead over the best baseline lost on Jabberwocky\n\n"
        "lead = model − baseline, where the baseline is chosen on clean dev, as the model's "
        "layer is (per panel, the best clean dev score of its metric), and is the same in both "
        "conditions: no test score takes part in either choice. lead lost = (lead clean − "
        "lead jabberwocky) / lead clean. Paper: 53% for BERT with one probe.\n\n"
        + lead_table(summary)
        + (f"\n\nMean lead lost: {fmt(sum(lost) / len(lost))}" if lost else ""),
    ]
    if summary["train_on"]:
        body = [[x["probe"], x["label"], METRIC_NAMES[x["metric"]], x["clean"], x["jab"],
                 x["clean_from_jab"], x["jab_from_jab"]] for x in summary["train_on"]]
        sections.append(
            "## Training on Jabberwocky (beyond the paper)\n\n"
            "Probes trained on a Jabberwocky version of train (and dev) of each draw, tested on "
            "the clean test set and that draw's Jabberwocky test set (means over draws).\n\n"
            + markdown_table(["probe", "model", "metric", "clean→clean", "clean→jab",
                              "jab→clean", "jab→jab"], body))
    if summary.get("behaviour"):
        sections.append(
            "## Behaviour: does the LM prefer the clean sentence?\n\n"
            "On the same test items, the language model's preference for each clean sentence "
            "over its Jabberwocky version (higher total log-probability; unchanged sentences "
            "left out), BLiMP style, beside the probes' scores above.\n\n"
            + behaviour_table(summary))
    sections.append("![clean vs Jabberwocky](jabberwocky-bars.png)")
    return sections


def plot_bars(summary: dict[str, Any], path: Path) -> Path:
    """:func:`bars_figure` written as a PNG at ``path``."""
    return save_png(bars_figure(summary), path)


def bars_figure(summary: dict[str, Any]) -> Figure:
    """Grouped bars like the paper's Figure 3: per panel (probe, metric), per model, clean vs
    Jabberwocky (error bars: 95 % bootstrap intervals over the test sentences) and, where run,
    trained on Jabberwocky (hatched)."""
    panels = [(p, m) for p, m in PANELS
              if any(e["probe"] == p and e["metric"] == m for e in summary["entries"])]
    fig, axes = new_figure(1, max(len(panels), 1), figsize=(4.2 * max(len(panels), 1), 3.6))
    for ax, (probe, metric) in zip(axes[0], panels, strict=False):
        cell = [e for e in summary["entries"] if e["probe"] == probe and e["metric"] == metric]
        tj = {x["label"]: x["jab_from_jab"] for x in summary["train_on"]
              if x["probe"] == probe and x["metric"] == metric}
        xs = range(len(cell))
        width = 0.27 if tj else 0.38
        clean = [e["clean"] for e in cell]
        jab = [e["jab_mean"] for e in cell]
        ax.bar([x - width / 2 - (width / 2 if tj else 0) for x in xs], clean, width,
               label="clean", color="#4c72b0", capsize=2,
               yerr=error_bars(clean, [e.get("clean_ci") for e in cell]))
        ax.bar([x + width / 2 - (width / 2 if tj else 0) for x in xs], jab, width,
               label="Jabberwocky", color="#dd8452", capsize=2,
               yerr=error_bars(jab, [e.get("jab_ci") for e in cell]))
        if tj:
            ax.bar([x + width for x in xs], [tj.get(e["label"], math.nan) for e in cell], width,
                   label="Jabberwocky (trained on J.)", color="#dd8452", hatch="//",
                   edgecolor="white", alpha=0.7)
        ax.set_xticks(list(xs), [e["label"] for e in cell], rotation=30, ha="right", fontsize=8)
        ax.set_title(f"{probe} probe: {METRIC_NAMES[metric]}", fontsize=10)
        ax.set_ylim(0, 1)
        ax.grid(axis="y", alpha=0.3)
    axes[0][0].legend(fontsize=7, loc="upper right")
    fig.tight_layout()
    return fig
