"""``synrob demo``: the Jabberwocky probing experiment on the bundled EWT sample, offline.

It runs the ``demo`` preset of the ``jabberwocky`` experiment (Hall Maudslay & Cotterell 2021):
structural and perceptron probes on MiniLM (best of a small layer sweep on clean dev UUAS),
its layer 0, the GloVe fast+pos baseline and the path/majority baselines, trained on the
bundled EWT training sample and tested on the clean test sample and two Jabberwocky versions of
it. It prints the report's tables to stdout, and the report and bar chart paths to stderr.
Results are resumable: a second run reuses every finished run from ``OUT/runs``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from synrob.perturb.lm.device import DEVICE_HELP


def demo(
    out: Annotated[Path, typer.Option("--out", "-o", help="Results directory.")] = Path(
        "synrob-demo"
    ),
    seed: Annotated[int, typer.Option(help="Random seed (Jabberwocky draws, probe training).")] = 0,
    device: Annotated[str, typer.Option(help=DEVICE_HELP)] = "auto",
    as_json: Annotated[bool, typer.Option("--json", help="Print the summary as JSON.")] = False,
) -> None:
    """Jabberwocky probing on the bundled EWT sample: clean vs pseudoword UUAS/DSpr."""
    from synrob.perturb.lm.device import check_device
    from synrob.probe.experiments.jabberwocky.experiment import JabberwockyExperiment
    from synrob.probe.experiments.jabberwocky.report import lead_table, main_table
    from synrob.probe.experiments.jabberwocky.stats import summarize
    from synrob.probe.experiments.runner import run_experiment

    from ..output import emit_json, info, progress

    device = check_device(device)  # a missing or invalid device fails before any work
    experiment = JabberwockyExperiment.from_preset("demo")

    def on_run(run_id: str, spec: object, seconds: float) -> None:
        info(f"synrob: run {getattr(spec, 'label', run_id)} done in {seconds:.1f} s")

    result = run_experiment(experiment, out, seed=seed, device=device, progress=progress,
                            on_run=on_run)
    summary = summarize(result.rows, experiment.list("probes"))
    report = out / "report.md"
    plot = out / "jabberwocky-bars.png"
    info(f"synrob demo: {result.executed} runs executed, {result.reused} reused, "
         f"{result.seconds:.1f} s")
    if as_json:
        emit_json({"experiment": result.experiment, "options": result.options, "seed": seed,
                   "report": str(report), "plot": str(plot), "seconds": round(result.seconds, 3),
                   "executed": result.executed, "reused": result.reused,
                   **summary})
    else:
        typer.echo("Jabberwocky probing (Hall Maudslay & Cotterell 2021) on the bundled EWT "
                   f"sample, seed {seed}\n")
        typer.echo(main_table(summary))
        typer.echo("")
        typer.echo(lead_table(summary))
    info(f"synrob: report: {report}")
    info(f"synrob: plot: {plot}")


def register(app: typer.Typer) -> None:
    app.command("demo")(demo)
