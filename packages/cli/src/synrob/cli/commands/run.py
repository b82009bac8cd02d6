"""``synrob run``: run a registered experiment (by name, or from a TOML file) into a results
directory; ``synrob experiments``: list them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer
from synrob.perturb.lm.device import DEVICE_HELP

_RUN = "Execution"


def _experiment_class(name: str) -> Any:
    from synrob.perturb.plugins import get_registry

    return get_registry().get("experiment", name)


def run_experiment(
    name: Annotated[str, typer.Argument(help="Experiment name, or a TOML file (see docs/experiments.md).")],
    preset: Annotated[str | None, typer.Option(help="Named parameter set of the experiment (default: 'default').")] = None,
    param: Annotated[list[str] | None, typer.Option("-p", "--param", help="key=value for the experiment (comma-separated lists).")] = None,
    out: Annotated[Path | None, typer.Option("--out", "-o", help="Results directory (default: synrob-results/NAME).")] = None,
    seed: Annotated[int | None, typer.Option(help="Random seed (default 0).")] = None,
    device: Annotated[str | None, typer.Option(help=DEVICE_HELP + " (default auto).")] = None,
    backend: Annotated[str | None, typer.Option(help="local (process pool), ray or dask.", rich_help_panel=_RUN)] = None,
    address: Annotated[str | None, typer.Option(help="Address of an existing ray/dask cluster (default: start a local one).", rich_help_panel=_RUN)] = None,
    workers: Annotated[int | None, typer.Option(help="Parallel runs (local pool or local cluster size).", rich_help_panel=_RUN)] = None,
    force: Annotated[bool, typer.Option("--force", help="Execute finished runs again.", rich_help_panel=_RUN)] = False,
    describe: Annotated[bool, typer.Option("--describe", help="Print the experiment's parameters and presets as JSON.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print results.json to stdout.")] = False,
    lang: Annotated[str | None, typer.Option("--lang", help="Language of the treebanks (ISO code as UD uses it); default: from the test treebank's UD file name or '# synrob.lang', else en.")] = None,
) -> None:
    """Run an experiment: prepare its data, execute the grid (resuming), write the report."""
    from synrob.cli.output import emit_json, info, progress
    from synrob.perturb.params import describe_component, parse_assignments

    config = None
    if name.endswith(".toml") or Path(name).is_file():
        from synrob.probe.experiments.config import load_config

        config = load_config(name)
        exp_name = config.experiment
    else:
        exp_name = name
    cls = _experiment_class(exp_name)
    if describe:
        emit_json({**describe_component(cls), "presets": cls.presets})
        return
    overrides: dict[str, Any] = dict(config.params) if config else {}
    overrides.update(parse_assignments(param or []))

    def pick(cli: Any, key: str, default: Any) -> Any:
        if cli is not None:
            return cli
        value = getattr(config, key, None) if config else None
        return default if value is None else value

    outdir = Path(pick(out, "output", f"synrob-results/{exp_name}"))
    from synrob.probe.api import run_experiment as run

    def on_run(run_id: str, spec: Any, seconds: float) -> None:
        info(f"synrob: run {spec.label or run_id} done in {seconds:.1f} s")

    def on_stage(stage: str, seconds: float) -> None:
        info(f"synrob: stage {stage} done in {seconds:.1f} s")

    results = run(exp_name, outdir, preset=preset or (config.preset if config else None),
                  params=overrides, seed=pick(seed, "seed", 0),
                  device=pick(device, "device", "auto"), backend=pick(backend, "backend", "local"),
                  workers=pick(workers, "workers", 1), address=pick(address, "address", None) or None,
                  force=force, progress=progress, on_run=on_run, lang=lang,
                  on_stage=on_stage)
    result = results.invocation
    lang_info = results.meta.get("lang", {})
    info(f"synrob: {exp_name}: language {lang_info.get('code')} ({lang_info.get('source')})")
    info(f"synrob: {exp_name}: {result['executed']} runs executed, {result['reused']} reused "
         f"from {outdir}/runs, {result['seconds']:.1f} s")
    info("synrob: stages: " + ", ".join(f"{k} {v:.1f} s" for k, v in result["stages"].items()))
    rt = result["run_time"]
    if rt.get("training_share") is not None:
        info(f"synrob: runs: {rt['runs']} executed in {rt['seconds']:.1f} s, of which probe "
             f"training {rt['training_seconds']:.1f} s ({100 * rt['training_share']:.0f} %); "
             "the rest: loading representations, scoring, bootstrap")
    if as_json:
        emit_json(json.loads((outdir / "results.json").read_text(encoding="utf-8")))
        return
    report = outdir / "report.md"
    if report.exists():
        typer.echo(report.read_text(encoding="utf-8").rstrip())
    info(f"synrob: report: {report}")
    for f in map(Path, result["files"]):
        if f.suffix == ".png":
            info(f"synrob: plot: {f}")
        elif f.suffix == ".html":
            info(f"synrob: html report: {f}")


def list_experiments(
    as_json: Annotated[bool, typer.Option("--json", help="Print a JSON list.")] = False,
) -> None:
    """List the registered experiments, their papers and presets."""
    from synrob.probe.api import list_experiments as described

    experiments = described()
    if as_json:
        from synrob.cli.output import emit_json

        emit_json(experiments)
        return
    for e in experiments:
        presets = ", ".join(["default", *e["presets"]])
        typer.echo(f"{e['name']:<16} {e['summary']} [presets: {presets}]")


def register(app: typer.Typer) -> None:
    app.command("run")(run_experiment)
    app.command("experiments")(list_experiments)
