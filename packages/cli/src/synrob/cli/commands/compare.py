"""``synrob compare``: join results directories of one experiment into one table, a figure per
metric and a self-contained HTML report."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

_Dirs = Annotated[list[Path], typer.Argument(
    metavar="DIR",
    help="Results directories of one experiment (synrob run ... -o DIR): different models, "
    "languages or seeds.", show_default=False)]
_Out = Annotated[Path, typer.Option(
    "--out", "-o", help="Where to write results.csv, results.json, compare-METRIC.png and "
    "report.html.")]
_Json = Annotated[bool, typer.Option("--json", help="Print the joined rows as JSON lines.")]


def compare(dirs: _Dirs, out: _Out = Path("synrob-compare"), as_json: _Json = False) -> None:
    """Compare runs of one experiment: one table (every row, with its source) and one layer
    curve per metric, intervals included. Different experiments, or test data that differ by
    content within one language, are refused."""
    from synrob.perturb.io.atomic import refuse_overwriting_inputs
    from synrob.probe.reporting.comparison import compare as join
    from synrob.probe.reporting.comparison import write_comparison

    from ..output import emit_json, info

    refuse_overwriting_inputs(out / "results.json", [d / "results.json" for d in dirs])
    comparison = join(dirs)
    files = write_comparison(comparison, out)
    info(f"synrob: compared {len(dirs)} {comparison.experiment} runs: "
         f"{len(comparison.rows)} rows, {len(comparison.metrics())} metrics plotted")
    for f in files:
        info(f"synrob: wrote {f}")
    if as_json:
        for row in comparison.rows:
            emit_json(row)
    else:
        typer.echo(str(out / "report.html"))


def register(app: typer.Typer) -> None:
    app.command("compare")(compare)
