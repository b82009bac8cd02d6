"""The report of the ``senteval`` experiment: a Table-2-shaped table (tasks as columns, baseline
rows then encoder/layer rows, test accuracy %), the paper's reference rows, dev accuracies with
the hyperparameters chosen on dev, and ``senteval-layers.png`` (accuracy per layer per task for
every encoder probed at several layers). The numbers come from :mod:`.stats`."""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ...render.figures import MARKERS, Figure, dodge, layer_ticks, new_figure, save_png
from ..report import error_bars, fmt_p, markdown_table, write_markdown
from .stats import accuracies, behaviour, intervals, leads, row_order, task_sizes

__all__ = ["PAPER_TABLE2", "PAPER_SOURCE", "write_report", "lead_table", "layers_figure"]

PAPER_SOURCE = ("Conneau, Kruszewski, Lample, Barrault & Baroni (2018), \"What you can cram into a "
                "single $&!#* vector: Probing sentence embeddings for linguistic properties\", "
                "ACL 2018, Table 2 (test accuracy %, 100k/10k/10k sentences from the Toronto "
                "Book Corpus)")

#: Reference rows of the paper's Table 2 (baseline block), in the order of
#: :data:`synrob.perturb.senteval.TASK_FILES`: SentLen, WC, TreeDepth, TopConst, BShift, Tense,
#: SubjNum, ObjNum, SOMO, CoordInv. Encoder rows (BiLSTM/GatedConvNet x 8 training tasks) are
#: left out.
PAPER_TABLE2: dict[str, tuple[float, ...]] = {
    "Majority vote": (20.0, 0.5, 17.9, 5.0, 50.0, 50.0, 50.0, 50.0, 50.0, 50.0),
    "Hum. Eval.": (100.0, 100.0, 84.0, 84.0, 98.0, 85.0, 88.0, 86.5, 81.2, 85.0),
    "Length": (100.0, 0.2, 18.1, 9.3, 50.6, 56.5, 50.3, 50.1, 50.2, 50.0),
    "NB-uni-tfidf": (22.7, 97.8, 24.1, 41.9, 49.5, 77.7, 68.9, 64.0, 38.0, 50.5),
    "NB-bi-tfidf": (23.0, 95.0, 24.6, 53.0, 63.8, 75.9, 69.1, 65.4, 39.9, 55.7),
    "BoV-fastText": (66.6, 91.6, 27.1, 68.1, 50.8, 89.1, 82.1, 79.8, 54.2, 54.8),
}
PAPER_TASKS = ("SentLen", "WC", "TreeDepth", "TopConst", "BShift", "Tense", "SubjNum", "ObjNum",
               "SOMO", "CoordInv")


def _pct(v: float | None) -> str:
    return "—" if v is None or math.isnan(v) else f"{100 * v:.1f}"


def _pct_ci(v: float | None, ci: Sequence[float] | None) -> str:
    """``"78.1 [76.9, 79.3]"`` (percent), or the bare percentage without an interval."""
    if v is None or ci is None or any(math.isnan(c) for c in ci):
        return _pct(v)
    return f"{100 * v:.1f} [{100 * ci[0]:.1f}, {100 * ci[1]:.1f}]"


def lead_table(items: Sequence[dict[str, Any]]) -> str:
    """task | best-dev model [CI] | best-dev baseline [CI] | lead [CI] | p (percent)."""
    return markdown_table(
        ["task", "model (best dev)", "test %", "baseline (best dev)", "test %", "lead (points)",
         "p"],
        [[x["task"], x["model"], _pct_ci(x["model_acc"], x["model_ci"]), x["baseline"],
          _pct_ci(x["baseline_acc"], x["baseline_ci"]), _pct_ci(x["lead"], x["lead_ci"]),
          fmt_p(x["p_value"])] for x in items])


_STYLES = ("-", "--", ":", "-.")


def layers_figure(rows: Sequence[dict[str, Any]], tasks: Sequence[str]) -> Figure | None:
    """One panel per task: test accuracy per layer of every encoder probed at several layers
    (one line per encoder x classifier, error bars: 95 % bootstrap intervals), the majority and
    bag-of-vectors baselines as flat lines. Ticks at the layers probed."""
    test = [r for r in rows if r.get("split") == "test" and r.get("metric") == "accuracy"]
    enc_rows = [r for r in test if r.get("kind") == "encoder"]
    encoders = [e for e in dict.fromkeys(r["encoder"] for r in enc_rows)
                if len({r["layer"] for r in enc_rows if r["encoder"] == e}) > 1]
    if not encoders:
        return None
    classifiers = list(dict.fromkeys(r["classifier"] for r in enc_rows))
    import matplotlib

    layers = [r["layer"] for r in enc_rows if r["encoder"] in encoders]
    ncols = min(5, len(tasks))
    nrows = -(-len(tasks) // ncols)
    fig, axes = new_figure(nrows, ncols, figsize=(3.0 * ncols, 2.6 * nrows),
                           layout="constrained")
    cmap = matplotlib.colormaps["tab10"]
    for k, task in enumerate(tasks):
        ax = axes[k // ncols][k % ncols]
        for ei, enc in enumerate(encoders):
            for ci, clf in enumerate(classifiers):
                pts = sorted((r["layer"], 100 * r["value"], 100 * r.get("ci_low", math.nan),
                              100 * r.get("ci_high", math.nan)) for r in enc_rows
                             if r["encoder"] == enc and r["task"] == task
                             and r["classifier"] == clf)
                if pts:
                    ys = [p[1] for p in pts]
                    i = ei * len(classifiers) + ci  # moved sideways: equal lines stay visible
                    shift = dodge(i, len(encoders) * len(classifiers), layers, share=0.2)
                    ax.errorbar([p[0] + shift for p in pts], ys, ms=4, capsize=2,
                                marker=MARKERS[i % len(MARKERS)],
                                yerr=error_bars(ys, [p[2:] for p in pts]),
                                color=cmap(ei % 10), linestyle=_STYLES[ci % len(_STYLES)],
                                label=f"{enc} {clf}")
        for name, style in (("majority", (0, (1, 2))), ("bov-glove", (0, (4, 2)))):
            vals = [100 * r["value"] for r in test if r.get("row") == name and r["task"] == task]
            if vals:
                ax.axhline(vals[0], color="grey", linestyle=style, linewidth=1, label=name)
        ax.set_title(task, fontsize=9)
        ax.tick_params(labelsize=7)
        layer_ticks(ax, layers)
        ax.grid(alpha=0.3)
        if k % ncols == 0:
            ax.set_ylabel("test accuracy (%)", fontsize=8)
        if k // ncols == nrows - 1:
            ax.set_xlabel("layer", fontsize=8)
    for k in range(len(tasks), nrows * ncols):
        axes[k // ncols][k % ncols].axis("off")
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncol=min(6, len(labels)),
               fontsize=8, frameon=False)
    return fig


def write_report(rows: list[dict[str, Any]], outdir: Path, tasks: Sequence[str]) -> list[Path]:
    """Write ``report.md`` (and ``senteval-layers.png`` when an encoder has several layers)."""
    order = row_order(rows)
    test, dev = accuracies(rows, "test"), accuracies(rows, "dev")
    header = ["row", *tasks]
    main = markdown_table(header, [[name, *(_pct(test.get((name, t))) for t in tasks)]
                                   for name in order])
    paper_cols = [PAPER_TASKS.index(t) for t in tasks if t in PAPER_TASKS]
    paper = markdown_table(["paper row", *(PAPER_TASKS[i] for i in paper_cols)],
                           [[name, *(f"{vals[i]:.1f}" for i in paper_cols)]
                            for name, vals in PAPER_TABLE2.items()])
    info = {(r["row"], r["task"]): r for r in rows if r.get("split") == "test"
            and not r.get("derived")}
    cis = intervals(rows)
    detail_rows = []
    for name in order:
        for t in tasks:
            r = info.get((name, t))
            if r is None:
                continue
            chosen = ", ".join(f"{k}={v}" for k, v in sorted((r.get("chosen") or {}).items()))
            detail_rows.append([name, t, _pct(dev.get((name, t))),
                                _pct_ci(test.get((name, t)), cis.get((name, t))),
                                chosen or "—", r.get("epochs", "—")])
    detail = markdown_table(["row", "task", "dev %", "test % [95% CI]", "chosen on dev",
                             "epochs"], detail_rows)
    sizes = task_sizes(rows)
    size_table = markdown_table(["task", "train", "dev", "test", "classes"],
                                [[t, *sizes.get(t, {}).values()] for t in tasks if t in sizes])
    files: list[Path] = []
    fig = layers_figure(rows, tasks)
    plot = None if fig is None else save_png(fig, outdir / "senteval-layers.png")
    sections = [
        "Test accuracy (%) of each baseline and each encoder/layer/classifier on the SentEval "
        "probing tasks (tasks as columns, as in the paper's Table 2). Classifiers and the NB "
        "smoothing are chosen on dev accuracy.",
        "## This run (test accuracy %)\n\n" + main,
        "## Lead of the best model over the best baseline\n\n"
        "Per task: the model row and the baseline with the best dev accuracy (no test score "
        "takes part in either choice), and the lead (test accuracy points) with its 95 % "
        "paired bootstrap interval over the test sentences; p: one-sided bootstrap p-value "
        "that the lead is > 0.\n\n"
        + lead_table(leads(rows, tasks)),
        f"## The paper's Table 2 (baselines)\n\nSource: {PAPER_SOURCE}. The paper's tasks have "
        "100k training sentences; tasks built from a treebank are far smaller, so expect lower "
        "classifier accuracies and majority rows that follow this run's class balance.\n\n" + paper,
        "## Task sizes\n\n" + size_table,
        "## Dev accuracy and hyperparameters chosen on dev\n\n" + detail,
    ]
    behav = behaviour(rows, tasks)
    if behav:
        sections.append(
            "## Behaviour: does the LM prefer the original?\n\n"
            "For each modified (I) test sentence of the O/I tasks, whether the language model "
            "gives its unmodified original a higher total log-probability (BLiMP style), beside "
            "the accuracy of the best-dev model row on the same sentences (% with 95 % "
            "bootstrap intervals).\n\n" + markdown_table(
                ["task", "modified test sentences", "LM", "LM prefers original", "model",
                 "model accuracy on them"],
                [[b["task"], str(b["items"]), b["lm"], _pct_ci(b["lm_acc"], b["lm_ci"]),
                  b["model"] or "—", _pct_ci(b["model_acc"], b["model_ci"])] for b in behav]))
    if plot is not None:
        sections.append("## Accuracy per layer\n\n![accuracy per layer](senteval-layers.png)")
        files.append(plot)
    files.insert(0, write_markdown(outdir / "report.md", "# SentEval probing tasks", sections))
    return files
