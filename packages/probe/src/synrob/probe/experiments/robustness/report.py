"""The ``robustness`` report: ``report.md`` (Table-1-shaped worst-case drops, clean scores on the
same sentences, representation shifts; mean ± std over seeds and the 95 % bootstrap interval of
that mean) and ``robustness-tau.png`` (the worst-case drop against the substitution budget tau,
with the intervals as error bars); :func:`derived_rows` for ``results.json``."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np

from ...render.figures import MARKERS, Figure, dodge, layer_ticks, new_figure, save_png
from ..base import Context, Experiment, Row
from ..intervals import boots, interval, p_above_zero
from ..report import error_bars, markdown_table, mean_std, write_markdown
from ..stats import finite_mean

__all__ = ["COLUMNS", "ADVERSARY_TEXT", "write_report", "derived_rows", "tau_figure"]

#: Columns of the Table-1-shaped report: (header, task, per-sentence metric).
COLUMNS: tuple[tuple[str, str, str], ...] = (
    ("ΔSDR", "distance", "sdr"),
    ("ΔUUAS", "distance", "uuas"),
    ("ΔSp", "distance", "dspr"),
    ("ΔSDR (LM code)", "distance", "sdr_lamalfa"),
    ("ΔUUAS (LM code)", "distance", "uuas_lamalfa"),
    ("ΔAcc POS (words/sent)", "pos", "words_right"),
    ("ΔAcc root", "root", "root_acc"),
    ("ΔAcc tree depth", "tree-depth", "acc"),
    ("ΔSp tree depth", "tree-depth", "spearman"),
    ("ΔSp depth", "depth", "nspr"),
    ("ΔAcc root (depth)", "depth", "root_acc"),
)


def _by_condition(rows: list[Row]) -> dict[tuple[Any, ...], dict[tuple[str, str], list[float]]]:
    """(encoder, layer, perturbation, budget) -> (task, metric) -> values over seeds."""
    out: dict[tuple[Any, ...], dict[tuple[str, str], list[float]]] = {}
    for r in rows:
        if r.get("perturbation") in (None, "none") or r.get("derived"):
            continue
        cond = (r["encoder"], r["layer"], r["perturbation"], r["budget"])
        out.setdefault(cond, {}).setdefault((r["task"], r["metric"]), []).append(r["value"])
    return out


def _rows_by_condition(rows: list[Row]) -> dict[tuple[Any, ...], list[Row]]:
    """(encoder, layer, perturbation, budget, task, metric) -> its rows (one per seed)."""
    out: dict[tuple[Any, ...], list[Row]] = {}
    for r in rows:
        if r.get("perturbation") in (None, "none") or r.get("derived"):
            continue
        key = (r["encoder"], r["layer"], r["perturbation"], r["budget"], r["task"], r["metric"])
        out.setdefault(key, []).append(r)
    return out


def _with_ci(text: str, cell_rows: list[Row] | None) -> str:
    """``"m ± s"`` followed by the 95 % interval of the mean over seeds, when resampled."""
    lo, hi = interval(cell_rows or [])
    return text if math.isnan(lo) else f"{text} [{lo:.3f}, {hi:.3f}]"


def derived_rows(rows: list[Row]) -> list[Row]:
    """Every drop and shift, averaged over the training seeds, with the interval of that mean
    (the seeds' resamples are of the same sentences), its one-sided p-value (drops) and
    ``seeds``: rows for ``results.json``."""
    out = []
    for (enc, layer, pert, budget, task, metric), group in _rows_by_condition(rows).items():
        if not (metric.startswith("drop_") or metric in ("l2", "cosine")) or \
                not all("_boot" in r for r in group):
            continue
        b = boots(group)
        lo, hi = interval(group)
        out.append({"encoder": enc, "layer": layer, "perturbation": pert, "budget": budget,
                    "task": task, "split": "test", "metric": f"{metric}_over_seeds",
                    "value": finite_mean([r["value"] for r in group]), "ci_low": lo,
                    "ci_high": hi, "p_value": p_above_zero(b) if metric.startswith("drop_")
                    and b is not None else math.nan,
                    "seeds": [r["seed"] for r in group]})
    return out


def _rep_values(cell: dict[tuple[str, str], list[float]], metric: str) -> list[float]:
    """A representation metric (identical in every task's run): the first task's values."""
    for (_, m), values in sorted(cell.items()):
        if m == metric:
            return values
    return []


#: How the report describes each ``adversary`` setting.
ADVERSARY_TEXT = {
    "loss": ("one adversarial variant per sentence, the one of the k with the highest probe loss "
             "(the probe's training loss on that sentence alone); every probe column is clean − "
             "that variant, averaged over sentences, and ΔSp tree depth is the corpus Spearman of "
             "clean predictions minus that of the adversarial variants'."),
    "per-metric": ("each metric's worst variant separately (max over the k variants of clean − "
                   "perturbed), averaged over sentences, so one row may combine different "
                   "variants; ΔSp tree depth uses the variant with the largest depth error."),
}


def write_report(exp: Experiment, rows: list[Row], ctx: Context) -> list[Path]:
    """``report.md`` (Table-1-shaped drops, clean scores, representation shifts) and
    ``robustness-tau.png`` (worst-case drop against tau)."""
    cells = _by_condition(rows)
    cols = _columns(cells)
    conds = sorted(cells, key=lambda c: (str(c[0]), c[1], str(c[2]), c[3]))
    seeds = sorted({r.get("seed") for r in rows})
    header = ["encoder@layer", "perturbation", "τ", *(c[0] for c in cols), "ℓ2 (max)",
              "cosine (min)", "words changed"]
    drop_rows, clean_rows = [], []
    by_rows = _rows_by_condition(rows)

    def rep_rows(cond: tuple[Any, ...], metric: str) -> list[Row] | None:
        return next((v for k, v in sorted(by_rows.items(), key=lambda kv: str(kv[0]))
                     if k[:4] == cond and k[5] == metric), None)

    for cond in conds:
        cell = cells[cond]
        lead = [f"{cond[0]}@{cond[1]}", cond[2], cond[3]]
        drop_rows.append([*lead, *(_with_ci(mean_std(cell.get((t, f"drop_{m}"), [])),
                                            by_rows.get((*cond, t, f"drop_{m}")))
                                   for _, t, m in cols),
                          _with_ci(mean_std(_rep_values(cell, "l2")), rep_rows(cond, "l2")),
                          _with_ci(mean_std(_rep_values(cell, "cosine")),
                                   rep_rows(cond, "cosine")),
                          mean_std(_rep_values(cell, "changed_words"), 2)])
        n = next((r.get("n_sentences") for r in rows if r.get("encoder") == cond[0]
                  and r.get("layer") == cond[1] and r.get("perturbation") == cond[2]
                  and r.get("budget") == cond[3]), None)
        clean_rows.append([*lead, *(mean_std(cell.get((t, f"clean_{m}"), [])) for _, t, m in cols),
                           mean_std(_rep_values(cell, "clean_norm")),
                           mean_std(_rep_values(cell, "unchanged_share"), 2), n])
    o = exp.options
    sections = [
        f"Paper: {exp.paper}.",
        (f"Test `{o['test']}` (probes trained on `{o['train']}`, early stopping on `{o['dev']}`); "
         f"k = {o['variants']} perturbations per sentence; seeds {', '.join(map(str, seeds))} "
         f"(mean ± std over seeds; brackets: 95 % bootstrap interval of the mean over the "
         f"test sentences, {o.get('bootstrap', 0)} resamples shared by the seeds' runs; the "
         "one-sided p-value of each drop is in results.json). Adversary: "
         f"`{o['adversary']}` — "
         + ADVERSARY_TEXT.get(o["adversary"], "")
         + " (LM code) columns: La Malfa et al.'s released UUAS/SDR (first 20 words, no MST, "
         "no punctuation removal, padding cells included in SDR), clean corpus value minus the "
         "mean per-sentence value of the adversarial variant(s), as their probing_robustness.py. "
         "ℓ2 / cosine (Algorithm 1, no probe): worst-case (max / min over all k variants) "
         "distance between the mean-pooled layer vectors of the original and a perturbed "
         "sentence, averaged over sentences."),
        "## Worst-case drops (Table 1)",
        markdown_table(header, drop_rows),
        "## Clean scores on the same sentences",
        ("Per-sentence means, except the (LM code) columns: corpus values pooled over the "
         "sentences, as La Malfa et al.'s code computes its clean scores."),
        markdown_table(["encoder@layer", "perturbation", "τ", *(c[0][1:] for c in cols),
                        "‖clean vector‖", "unchanged variants", "sentences"], clean_rows),
    ]
    skipped = exp.unsupported(ctx.lang)  # type: ignore[attr-defined]
    if skipped:
        from synrob.perturb.plugins import get_registry

        reg = get_registry()
        why = "; ".join(f"{k} supports only {', '.join(reg.get('perturber', k).languages)} "
                        f"({reg.get('perturber', k).language_note})" for k in skipped)
        sections.insert(1, f"Language: {ctx.lang}. Not run: {why}. Every other perturbation "
                        "ran.")
    files = [write_markdown(ctx.outdir / "report.md", f"# {exp.name}", sections)]
    if cells:
        files.append(save_png(_plot(cells, cols, by_rows), ctx.outdir / "robustness-tau.png"))
    return files


def _columns(cells: dict[tuple[Any, ...], dict[tuple[str, str], list[float]]]
             ) -> list[tuple[str, str, str]]:
    """The :data:`COLUMNS` whose drops the rows hold."""
    present = {tm for cell in cells.values() for tm in cell}
    return [c for c in COLUMNS if (c[1], f"drop_{c[2]}") in present]


def tau_figure(rows: list[Row]) -> Figure | None:
    """The worst-case drop against tau, drawn from ``rows`` (None when they hold no drop)."""
    cells = _by_condition(rows)
    return _plot(cells, _columns(cells), _rows_by_condition(rows)) if cells else None


def _plot(cells: dict[tuple[Any, ...], dict[tuple[str, str], list[float]]],
          cols: list[tuple[str, str, str]],
          by_rows: dict[tuple[Any, ...], list[Row]] | None = None) -> Figure:
    """One panel per column: the drop against tau per model and perturbation, with the 95 %
    bootstrap intervals (:func:`derived_rows`) as error bars where the runs carry them. Ticks at
    the budgets; each line its own marker, moved sideways a little, so that lines on the same
    points stay visible."""
    panels = [*cols, ("ℓ2 (max)", "", "l2")]
    ncol = min(4, len(panels))
    nrow = (len(panels) + ncol - 1) // ncol
    fig, axes = new_figure(nrow, ncol, figsize=(3.6 * ncol, 2.8 * nrow), layout="constrained")
    lines = sorted({(c[0], c[1], c[2]) for c in cells}, key=str)
    for ax, (title, task, metric) in zip(axes.flat, panels, strict=False):
        for i, (enc, layer, pert) in enumerate(lines):
            taus = sorted(c[3] for c in cells if c[:3] == (enc, layer, pert))
            ys, cis = [], []
            for tau in taus:
                cell = cells[(enc, layer, pert, tau)]
                vals = (_rep_values(cell, metric) if not task
                        else cell.get((task, f"drop_{metric}"), []))
                vals = [v for v in vals if v == v]
                ys.append(float(np.mean(vals)) if vals else np.nan)
                group = next((v for k, v in (by_rows or {}).items() if k[:4] == (
                    enc, layer, pert, tau) and k[5] == (f"drop_{metric}" if task else metric)
                    and (not task or k[4] == task)), [])
                cis.append(list(interval(group)))
            shift = dodge(i, len(lines), [c[3] for c in cells], share=0.2)
            ax.errorbar([t + shift for t in taus], ys, yerr=error_bars(ys, cis),
                        marker=MARKERS[i % len(MARKERS)], capsize=2,
                        label=f"{enc}@{layer} {pert}")
        ax.set_title(title, fontsize=9)
        ax.set_xlabel("τ (words substituted)", fontsize=8)
        layer_ticks(ax, [c[3] for c in cells])
        ax.axhline(0, color="grey", lw=0.5)
        ax.tick_params(labelsize=7)
    for ax in list(axes.flat)[len(panels):]:
        ax.axis("off")
    handles, labels = axes.flat[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncol=min(4, len(labels)),
               fontsize=7, frameon=False)
    fig.suptitle("Worst-case drop against the substitution budget τ", fontsize=10)
    return fig
