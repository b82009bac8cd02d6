"""Report of ``local-structure``: per-set table, Spearman table (Fig. 5), scatter plots (Fig. 4).

The numbers come from :mod:`.stats`."""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ...render.figures import Figure, new_figure, save_png
from ..report import error_bars, fmt_ci, markdown_table, write_markdown
from .data import PerturbedSet
from .stats import METRICS, performances, spearman_intervals, spearman_table, structure

__all__ = ["write_report", "scatter_figure"]

METRIC_LABELS = {"chrf2": "chrF-2", "lev": "Levenshtein", "compression": "compression"}
UNIT_COLOURS = {"none": "black", "word": "tab:blue", "subword": "tab:orange", "char": "tab:red"}
KIND_MARKERS = {"none": "*", "shuffle": "s", "phrase": "o", "flip": "^"}


def scatter_figure(rows: Sequence[dict[str, Any]], sets: Sequence[PerturbedSet]) -> Figure:
    """The scatter plots of ``rows`` (the perturbed ``sets``' structure and performances)."""
    return _scatter(structure(rows), performances(rows), {s.name: s for s in sets},
                    _set_cis(rows))


def _scatter(struct: dict[str, dict[str, float]], perf: dict[str, dict[str, float]],
             kinds: dict[str, PerturbedSet],
             cis: dict[tuple[str, str], list[float]] | None = None) -> Figure:
    """One panel per (performance, structure metric); a probe's points carry their 95 %
    bootstrap intervals (``cis``: (label, set) -> [low, high]) as vertical error bars."""
    from matplotlib.lines import Line2D

    n = max(1, len(perf))
    fig, axes = new_figure(n, len(METRICS), figsize=(2.5 * len(METRICS), 1.8 * n))
    for i, (label, per_set) in enumerate(perf.items()):
        for j, m in enumerate(METRICS):
            ax = axes[i][j]
            for s, y in per_set.items():
                if m not in struct.get(s, {}):
                    continue
                ps = kinds.get(s)
                kind, unit = (ps.kind, ps.unit) if ps and ps.kind != "none" else ("none", "none")
                ax.scatter(struct[s][m], y, c=UNIT_COLOURS[unit], marker=KIND_MARKERS[kind],
                           s=22 if kind != "none" else 70, alpha=0.8, edgecolors="none")
                ci = (cis or {}).get((label, s))
                if ci is not None:
                    ax.errorbar(struct[s][m], y, yerr=error_bars([y], [ci]), fmt="none",
                                ecolor=UNIT_COLOURS[unit], elinewidth=0.7, alpha=0.6)
            if i == n - 1:
                ax.set_xlabel(METRIC_LABELS[m], fontsize=8)
            if j == 0:
                ax.set_ylabel(label, fontsize=7)
            ax.tick_params(labelsize=7)
    handles = [Line2D([], [], color=c, marker="o", linestyle="", label=u)
               for u, c in UNIT_COLOURS.items()]
    handles += [Line2D([], [], color="grey", marker=mk, linestyle="", label=k)
                for k, mk in KIND_MARKERS.items()]
    fig.legend(handles=handles, loc="upper center", ncol=len(handles), fontsize=7,
               frameon=False, bbox_to_anchor=(0.5, 1.0 + 0.12 / n))
    fig.suptitle("performance vs structure metric (Clouatre et al. 2022, Fig. 4)", fontsize=9,
                 y=1.0 + 0.3 / n)
    fig.tight_layout()
    return fig


def write_report(rows: Sequence[dict[str, Any]], outdir: Path, sets: Sequence[PerturbedSet],
                 options: dict[str, Any]) -> list[Path]:
    """Write ``report.md`` and ``local-structure-scatter.png``; return both paths."""
    struct = structure(rows)
    perf = performances(rows)
    kinds = {s.name: s for s in sets}
    labels = list(perf)
    header = ["set", "perturbation", "unit", "rho", "chrF-2", "Lev", "compression", *labels]
    body = []
    for s in sets:
        st = struct.get(s.name, {})
        body.append([s.name, s.kind, s.unit if s.kind != "none" else "—", s.rho,
                     st.get("chrf2"), st.get("lev"), st.get("compression"),
                     *[perf[lab].get(s.name) for lab in labels]])
    corr = spearman_table(struct, perf)
    cis = spearman_intervals(rows, struct)
    corr_rows = [[METRIC_LABELS[m], *[f"{fmt_ci(corr[m][lab][0], cis[m].get(lab), 2)} "
                                      f"({corr[m][lab][1]})" for lab in labels]]
                 for m in METRICS]
    verdicts = []
    for lab in labels:
        c, lv, cp = (corr[m][lab][0] for m in METRICS)
        if any(math.isnan(v) for v in (c, lv)):
            continue
        strongest = max(METRICS, key=lambda m: abs(corr[m][lab][0])
                        if not math.isnan(corr[m][lab][0]) else -1.0)
        verdicts.append(f"- **{lab}**: |ρ| chrF-2 {abs(c):.2f} vs Levenshtein {abs(lv):.2f}"
                        f" vs compression {abs(cp):.2f} - strongest: "
                        f"{METRIC_LABELS[strongest]}")
    static = {f"{r['task']} {r['encoder']}:{r['layer']}" for r in rows
              if (r.get("encoder_identity") or {}).get("encoder") == "static"}
    sanity = _invariance(perf, sets, static)
    dev = [[f"{r['task']} {r['encoder']}:{r['layer']}", r["value"], r.get("best_epoch"),
            r.get("train_seconds")] for r in rows if r.get("split") == "dev"]
    png = save_png(_scatter(struct, perf, kinds, _set_cis(rows)),
                   outdir / "local-structure-scatter.png")
    sections = [
        "Clouatre et al. 2022 (*Local Structure Matters Most*), Figures 4-5: structure metrics of "
        "perturbed test sets against the performance of probes trained on clean data and of a "
        "causal LM. chrF-2 measures local structure (higher = more preserved), Levenshtein "
        "global order (higher = more changed), compression the characters per token of the "
        "perturbed text. POS is defined only on word-level sets (subword/char sets no longer "
        "have the treebank's words: —).",
        f"Test: `{options['test']}` (first {options['test_limit'] or 'all'} sentences); probes "
        f"trained on `{options['train']}`, early-stopped on `{options['dev']}`; LM "
        f"`{options['lm'] or '—'}` on the first {options['lm_limit'] or 'all'} sentences of "
        "each set.",
        "## Sets\n\n" + markdown_table(header, body),
        "## Spearman correlation (metric vs performance, over sets; n sets in parentheses)\n\n"
        "Square brackets: 95 % bootstrap interval of a probe's rho, each set's score recomputed "
        f"on the same {options.get('bootstrap', 0)} resamples of the test sentences (structure "
        "metrics held fixed; the LM rows have none).\n\n"
        + markdown_table(["metric", *labels], corr_rows),
        "## Which metric tracks performance best\n\n" + ("\n".join(verdicts) or "—"),
        "## Sanity check: static vectors and word shuffles\n\n" + sanity,
        "## Probes on clean dev\n\n" + markdown_table(
            ["probe", "dev acc", "best epoch", "train s"], dev),
        f"![scatter]({png.name})",
    ]
    md = write_markdown(outdir / "report.md", "# local-structure", sections)
    return [md, png]


def _set_cis(rows: Sequence[dict[str, Any]]) -> dict[tuple[str, str], list[float]]:
    """(performance label, set) -> the probe score's 95 % interval, where the run has one."""
    return {(f"{r['task']} {r['encoder']}:{r['layer']}", r["set"]): [r["ci_low"], r["ci_high"]]
            for r in rows if r.get("split") == "test" and "encoder" in r and "ci_low" in r}


def _invariance(perf: dict[str, dict[str, float]], sets: Sequence[PerturbedSet],
                static: set[str]) -> str:
    """How far static-vector probes move on word-level sets (they are order-invariant)."""
    word_sets = [s.name for s in sets if s.kind == "none" or s.unit == "word"]
    lines = []
    for lab, per_set in perf.items():
        if lab not in static:
            continue
        vals = [per_set[s] for s in word_sets if s in per_set]
        if len(vals) > 1 and "none" in per_set:
            diff = max(abs(v - per_set["none"]) for v in vals)
            lines.append(f"- {lab}: largest |acc - clean acc| over word-level sets = {diff:.4f} "
                         "(0 expected: static vectors do not see word order)")
    return "\n".join(lines) or "— (no static-vector sentence probe in this run)"
