"""``synrob probe``: train a probe on frozen representations and evaluate test files;
``synrob probes``: list the probing tasks and probes."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from synrob.perturb.lm.device import DEVICE_HELP

if TYPE_CHECKING:
    from synrob.probe.api import ProbeResult
    from synrob.probe.tasks.base import Task
    from synrob.probe.training.probing import ProbeRun

_OPTS = "Probe options"


def _fmt(value: Any) -> str:
    if isinstance(value, float):
        return "nan" if value != value else (f"{int(value)}" if value.is_integer() and value > 1
                                             else f"{value:.4f}")
    return str(value)


def _table(run: ProbeRun, many_layers: bool) -> list[list[str]]:
    best = run.best.layer
    first = next(iter(run.layers[0].results.values()), {})
    metrics = [m for m, v in first.items() if m != "sentences" and not isinstance(v, (dict, list))
               and not m.endswith("_std")]
    extra = _extra_columns(run.task.primary_metric, first)
    rows = [["layer" if many_layers else "row", "file", *metrics, "sentences", *extra]]
    for res in run.layers:
        for f, m in res.results.items():
            mark = "*" if many_layers and res.layer == best else ""
            rows.append([f"{res.layer}{mark}" if many_layers else f"layer {res.layer}", f,
                         *[_fmt(m.get(k)) for k in metrics], _fmt(m.get("sentences")),
                         *_extra_cells(run.task.primary_metric, m, extra)])
    for name, per_file in run.baselines.items():
        for f, m in per_file.items():
            rows.append([name, f, *[_fmt(m.get(k)) for k in metrics], _fmt(m.get("sentences")),
                         *[_interval(m.get(f"{run.task.primary_metric}_ci95")) if c == "ci95"
                           else "" for c in extra]])
    return rows


def _extra_columns(key: str, m: dict[str, Any]) -> list[str]:
    """Columns for the primary metric's std, interval, control, selectivity and MDL, when
    ``--seeds``, ``--bootstrap``, ``--control`` or ``--mdl`` added them."""
    cols = [(f"{key}_std", "std"), (f"{key}_ci95", "ci95"), ("control", f"control {key}"),
            ("selectivity", "selectivity"), ("mdl", "compression"),
            ("control_mdl", "control compression")]
    return [name for k, name in cols if k in m]


def _interval(v: Any) -> str:
    return f"[{_fmt(v[0])}, {_fmt(v[1])}]" if isinstance(v, list) and len(v) == 2 else ""


def _extra_cells(key: str, m: dict[str, Any], columns: list[str]) -> list[str]:
    def sel(part: dict[str, Any]) -> str:
        ci = _interval(part.get(f"{key}_ci95"))
        return _fmt(part.get(key)) + (f" {ci}" if ci else "")

    cells = {"std": lambda: _fmt(m.get(f"{key}_std")), "ci95": lambda: _interval(m.get(f"{key}_ci95")),
             f"control {key}": lambda: sel(m["control"]), "selectivity": lambda: sel(m["selectivity"]),
             "compression": lambda: _fmt(m["mdl"]["compression"]),
             "control compression": lambda: _fmt(m["control_mdl"]["compression"])}
    return [cells[c]() for c in columns]


def _delta_rows(run: ProbeRun) -> list[list[str]]:
    """The best layer's clean - perturbed drops (several test files; intervals and p-values
    with ``--bootstrap``)."""
    deltas = run.best.extras.get("deltas") or {}
    key = run.task.primary_metric
    rows = [["drop (clean - perturbed)", "pairs", key, "ci95", "p_value"]]
    for f, d in deltas.items():
        rows.append([f, str(d["pairs"]), _fmt(d.get(key)), _interval(d.get(f"{key}_ci95")),
                     "" if d.get("p_value") is None else _fmt(d["p_value"])])
    return rows if len(rows) > 1 else []


def _echo_table(rows: list[list[str]]) -> None:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for r in rows:
        typer.echo("  ".join(c.ljust(w) if i < 2 else c.rjust(w)
                             for i, (c, w) in enumerate(zip(r, widths, strict=True))).rstrip())


def _write_predictions(run: ProbeRun, dest: Path, many_layers: bool) -> int:
    import json

    best = run.best
    n = 0
    from synrob.perturb.io.atomic import atomic_open

    with atomic_open(dest) as fh:
        for f, preds in best.predictions.items():
            gold = run.golds[f]
            for i, pred in enumerate(preds):
                rec: dict[str, Any] = {"file": f, "sent_id": gold.sent_ids[i],
                                       "words": int(gold.heads[i].size),
                                       "gold_heads": gold.heads[i].tolist()}
                if many_layers:
                    rec["layer"] = best.layer
                rec.update(run.task.record(pred))
                fh.write(json.dumps(rec, ensure_ascii=False) + "\n")
                n += 1
    return n


# ------------------------------------------------------------------ options of ``synrob probe``
_Test = Annotated[list[str], typer.Option("--test", help="Test CoNLL-U file (repeatable).")]
_Encoder = Annotated[str | None, typer.Option(help="Encoder name (synrob plugins --kind encoder).")]
_Layer = Annotated[str | None, typer.Option(help="Layer number, or 'all' for the layer curve.")]
_Task = Annotated[str | None, typer.Option(help="Task: distance (default), depth, parse, pos, deprel, feats (-p feature=Number), root, tree-depth.")]
_Train = Annotated[str | None, typer.Option(help="Training CoNLL-U file.")]
_Dev = Annotated[str | None, typer.Option(help="Dev CoNLL-U file (early stopping).")]
_Probe = Annotated[str | None, typer.Option("--probe", help="Probe (default: the task's).", rich_help_panel=_OPTS)]
_Param = Annotated[list[str] | None, typer.Option("-p", "--param", help="key=value for the task, probe or encoder (task.k / probe.k / encoder.k to disambiguate).", rich_help_panel=_OPTS)]
_Seed = Annotated[int, typer.Option(help="Random seed (initialisation, batch order).", rich_help_panel=_OPTS)]
_Device = Annotated[str, typer.Option(help=DEVICE_HELP, rich_help_panel=_OPTS)]
_Save = Annotated[Path | None, typer.Option(help="Save the trained probe (safetensors + JSON) here.", rich_help_panel=_OPTS)]
_Load = Annotated[Path | None, typer.Option(help="Evaluate a saved probe instead of training; encoder, layer, task and probe default to the saved ones and must agree with them.", rich_help_panel=_OPTS)]
_Predictions = Annotated[Path | None, typer.Option(help="Write one JSON line per test sentence.")]
_Baselines = Annotated[bool, typer.Option("--baselines/--no-baselines", help="Also score the path and majority baselines (needs --train).")]
_Json = Annotated[bool, typer.Option("--json", help="Print one JSON object.")]
_Lang = Annotated[str | None, typer.Option("--lang", help="Language of the treebanks (ISO code as UD uses it), recorded in --json and --predictions; default: from the first test file's UD file name or '# synrob.lang', else en.", rich_help_panel=_OPTS)]
_Fuse = Annotated[bool | None, typer.Option("--fuse/--no-fuse", help="With several layers: --fuse trains the layers' probes together as one batched module (structural, perceptron and linear probes; each layer's results are those of training it alone), --no-fuse one after the other; default: together where that is faster (on a GPU; on the CPU with two threads or more, not for the perceptron).", rich_help_panel=_OPTS)]
_Plot = Annotated[Path | None, typer.Option("--plot", help="With --layer all: draw the layer curve (task score, control and selectivity with their intervals; MDL compression) into this PNG.")]
_STATS = "Controls and statistics"
_Control = Annotated[bool, typer.Option("--control", help="Also train on the task's control task (Hewitt & Liang 2019) and report selectivity (pos, deprel, feats, distance, depth, parse).", rich_help_panel=_STATS)]
_Mdl = Annotated[bool, typer.Option("--mdl", help="Online-code MDL of the training labels (Voita & Titov 2020; pos, deprel, feats, root, tree-depth).", rich_help_panel=_STATS)]
_Bootstrap = Annotated[int, typer.Option("--bootstrap", help="Paired bootstrap resamples over sentences for 95% intervals and clean->perturbed drops (0: off).", rich_help_panel=_STATS)]
_Seeds = Annotated[str | None, typer.Option("--seeds", help="Comma-separated training seeds (e.g. 0,1,2): metrics are their mean, with per-seed values and std.", rich_help_panel=_STATS)]


# ------------------------------------------------------------------ the steps of ``synrob probe``
def _layer_reporter(res: Any, task_obj: Task) -> None:
    """The stderr line after each layer: its dev score, epochs and training time."""
    from ..output import info

    key = task_obj.primary_metric
    info(f"synrob: layer {res.layer}: dev {key}={_fmt(res.dev.get(key, float('nan')))}"
         + (f" ({res.log.best_epoch + 1} epochs best, {res.log.seconds:.1f}s)" if res.log else ""))


def _every_layer(layer: str | None, load: Path | None) -> bool:
    """Whether ``--layer`` (without it, a ``--load``ed probe) means every layer, read before
    any work; with neither, the missing ``--layer`` is reported by the run itself."""
    from synrob.probe.training.probing import read_saved

    if layer is not None:
        return layer == "all"
    return load is None or read_saved(load).many


def _emit(result: ProbeResult, predictions: Path | None, as_json: bool) -> None:
    """Write ``--predictions``, then print the JSON object or the table."""
    from ..output import emit_json, info

    if predictions is not None:
        n = _write_predictions(result.run, predictions, result.many)
        info(f"synrob: wrote {n} predictions to {predictions}")
    if as_json:
        emit_json(result.as_json())
    else:
        _echo_table(_table(result.run, result.many))
        deltas = _delta_rows(result.run)
        if deltas:
            typer.echo("")
            _echo_table(deltas)


def probe(test: _Test, encoder: _Encoder = None, layer: _Layer = None, task: _Task = None,
          train: _Train = None, dev: _Dev = None, probe_name: _Probe = None, param: _Param = None,
          seed: _Seed = 0, device: _Device = "auto", save: _Save = None, load: _Load = None,
          predictions: _Predictions = None, baselines: _Baselines = True, as_json: _Json = False,
          control: _Control = False, mdl: _Mdl = False, bootstrap: _Bootstrap = 0,
          seeds: _Seeds = None, plot: _Plot = None, lang: _Lang = None,
          fuse: _Fuse = None) -> None:
    """Train a probe on one layer (or all) of an encoder and score test files and baselines."""
    from synrob.perturb.errors import ParameterError
    from synrob.probe.api import probe as run_probe

    from ..output import progress

    if plot is not None and not _every_layer(layer, load):
        raise ParameterError("--plot draws the layer curve: it needs --layer all")
    result = run_probe(test, encoder=encoder, layer=layer, task=task, train=train, dev=dev,
                       probe=probe_name, params=param or [], seed=seed, seeds=seeds,
                       device=device, control=control, mdl=mdl, bootstrap=bootstrap,
                       baselines=baselines, save=save, load=load, fuse=fuse, lang=lang,
                       keep_predictions=predictions is not None, on_layer=_layer_reporter,
                       progress=progress)
    _emit(result, predictions, as_json)
    if plot is not None:
        _plot(result.run, plot)


def _plot(run: ProbeRun, dest: Path) -> None:
    """Draw the layer curve of the first test file into ``dest``."""
    from synrob.probe.metrics.layer_curve import curve_rows, plot_layer_curve
    from synrob.probe.training.setup import run_json

    from ..output import info

    metric = run.task.primary_metric
    rows = curve_rows(run_json(run, True)["layers"], metric)
    title = f"{run.encoder} {run.task.name} ({run.probe.name} probe)"
    info(f"synrob: wrote {plot_layer_curve(rows, dest, metric=metric, title=title)}")


def list_probes(
    as_json: Annotated[bool, typer.Option("--json", help="Print a JSON object.")] = False,
) -> None:
    """List the probing tasks and the probes, with what each probe can learn."""
    from synrob.perturb.plugins import get_registry

    from ..output import emit_json

    reg = get_registry()
    tasks = {n: reg.get("task", n).describe() for n in reg.names("task")}
    probes = {n: reg.get("probe", n).describe() for n in reg.names("probe")}
    if as_json:
        emit_json({"tasks": tasks, "probes": probes})
        return
    typer.echo("TASKS")
    for n, d in tasks.items():
        typer.echo(f"  {n:<11} {d['kind']:<9} probe={d['default_probe']:<11} {d['summary']}")
    typer.echo("PROBES")
    for n, d in probes.items():
        typer.echo(f"  {n:<11} {','.join(d['kinds']):<21} {d['summary']}")


def register(app: typer.Typer) -> None:
    app.command("probe")(probe)
    app.command("probes")(list_probes)
