"""``synrob probe``: train a probe on frozen representations and evaluate test files;
``synrob probes``: list the probing tasks and probes."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from synrob.perturb.device import DEVICE_HELP

if TYPE_CHECKING:
    from synrob.perturb.language import Language
    from synrob.probe.probes.base import Probe
    from synrob.probe.probing import ProbeRun, SavedSetup
    from synrob.probe.tasks.base import Task

_OPTS = "Probe options"


def _one_path(spec: str, what: str) -> str:
    from synrob.perturb.data import resolve_input
    from synrob.perturb.errors import ResourceError

    paths = resolve_input(spec)
    if len(paths) != 1 or str(paths[0]) == "-":
        raise ResourceError(f"{what} {spec!r} must name one CoNLL-U file")
    return str(paths[0])


def route_params(assignments: dict[str, str], owners: dict[str, tuple[Any, ...]]
                 ) -> dict[str, dict[str, str]]:
    """Send each ``-p key=value`` to its component: ``task.k``, ``probe.k``, ``encoder.k``, or
    an unprefixed key to the first of task, probe, encoder that declares it."""
    from synrob.perturb.errors import ParameterError

    out: dict[str, dict[str, str]] = {k: {} for k in owners}
    for key, value in assignments.items():
        owner, dot, name = key.partition(".")
        if dot and owner in owners:
            out[owner][name] = value
            continue
        for comp, params in owners.items():
            if any(p.name == key for p in params):
                out[comp][key] = value
                break
        else:
            known = sorted({f"{c}.{p.name}" for c, ps in owners.items() for p in ps})
            raise ParameterError(f"unknown parameter {key!r}; known: {', '.join(known)}")
    return out


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
    """The best layer's clean - perturbed drops (``--bootstrap`` with several test files)."""
    deltas = run.best.extras.get("deltas") or {}
    key = run.task.primary_metric
    rows = [["drop (clean - perturbed)", "pairs", key, "ci95", "p_value"]]
    for f, d in deltas.items():
        rows.append([f, str(d["pairs"]), _fmt(d.get(key)), _interval(d.get(f"{key}_ci95")),
                     _fmt(d.get("p_value"))])
    return rows if len(rows) > 1 else []


def _echo_table(rows: list[list[str]]) -> None:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for r in rows:
        typer.echo("  ".join(c.ljust(w) if i < 2 else c.rjust(w)
                             for i, (c, w) in enumerate(zip(r, widths, strict=True))).rstrip())


def run_json(run: ProbeRun, many_layers: bool) -> dict[str, Any]:
    """The ``--json`` object (results of the best layer; every layer under ``layers``)."""
    best = run.best
    out: dict[str, Any] = {
        "encoder": run.encoder, "layer": best.layer, "task": run.task.name,
        "probe": run.probe.name, "seed": run.seed, "results": best.results,
        "baselines": run.baselines, "dev": best.dev,
        "train_seconds": round(best.log.seconds, 3) if best.log else None,
    }
    if many_layers:
        out["layers"] = {str(r.layer): {"results": r.results, "dev": r.dev} for r in run.layers}
        for r in run.layers:
            if "deltas" in r.extras:
                out["layers"][str(r.layer)]["deltas"] = r.extras["deltas"]
    if "deltas" in best.extras:
        out["deltas"] = best.extras["deltas"]
    if "seeds" in best.extras:
        out["seeds"] = best.extras["seeds"]
    return out


def _write_predictions(run: ProbeRun, dest: Path, many_layers: bool) -> int:
    import json

    best = run.best
    n = 0
    from synrob.perturb.atomic import atomic_open

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
_Fuse = Annotated[bool, typer.Option("--fuse/--no-fuse", help="With several layers: train the layers' probes together as one batched module (structural and linear probes; each layer's results are those of training it alone). --no-fuse trains them one after the other.", rich_help_panel=_OPTS)]
_Plot = Annotated[Path | None, typer.Option("--plot", help="With --layer all: draw the layer curve (task score, control and selectivity with their intervals; MDL compression) into this PNG.")]
_STATS = "Controls and statistics"
_Control = Annotated[bool, typer.Option("--control", help="Also train on the task's control task (Hewitt & Liang 2019) and report selectivity (pos, deprel, feats, distance, depth, parse).", rich_help_panel=_STATS)]
_Mdl = Annotated[bool, typer.Option("--mdl", help="Online-code MDL of the training labels (Voita & Titov 2020; pos, deprel, feats, root, tree-depth).", rich_help_panel=_STATS)]
_Bootstrap = Annotated[int, typer.Option("--bootstrap", help="Paired bootstrap resamples over sentences for 95% intervals and clean->perturbed drops (0: off).", rich_help_panel=_STATS)]
_Seeds = Annotated[str | None, typer.Option("--seeds", help="Comma-separated training seeds (e.g. 0,1,2): metrics are their mean, with per-seed values and std.", rich_help_panel=_STATS)]


# ------------------------------------------------------------------ the steps of ``synrob probe``
@dataclass
class _Setup:
    """The components of one ``synrob probe`` call, built from names and ``-p`` parameters."""

    encoder: str
    task_name: str
    task: Task
    probe: Probe
    routed: dict[str, dict[str, str]]  # -p assignments per component (task, probe, encoder)
    enc_params: dict[str, Any]         # encoder parameters (with a saved probe's, if any)
    identity: dict[str, Any]           # the encoder's identity, checked against a saved probe


def _names(saved: SavedSetup | None, encoder: str | None, layer: str | None, task: str | None,
           probe_name: str | None) -> tuple[str, str, str, str | None]:
    """Encoder, layer, task and probe names: what is not given is taken from a saved probe's
    ``probe.json``; the encoder and the layer are required, the task defaults to distance."""
    from synrob.perturb.errors import SynrobError

    if saved is not None:  # what is not given is taken from probe.json; the rest must agree
        encoder = encoder or saved.meta.get("encoder")
        task = task or saved.meta.get("task")
        probe_name = probe_name or saved.meta.get("probe")
        if layer is None:
            layer = "all" if saved.many else str(saved.layers[0])
    if encoder is None:
        raise SynrobError("--encoder is required (or --load a saved probe)")
    if layer is None:
        raise SynrobError("--layer is required: a layer number or 'all'")
    return encoder, layer, task or "distance", probe_name


def _components(reg: Any, encoder: str, task: str, probe_name: str | None, param: list[str],
                saved: SavedSetup | None, given_encoder: str | None) -> _Setup:
    """Task, probe and encoder parameters from the registry and ``-p``; a saved probe's encoder
    parameters apply when the same encoder (or none) is given."""
    from synrob.perturb.params import parse_assignments
    from synrob.probe.encoders.resolve import resolve_encoder, spec_target

    task_cls = reg.get("task", task)
    probe_cls = reg.get("probe", probe_name or task_cls.default_probe)
    enc_cls = reg.get("encoder", spec_target(encoder)[0])
    routed = route_params(parse_assignments(param), {
        "task": task_cls.params, "probe": probe_cls.params, "encoder": getattr(enc_cls, "params", ())})
    task_obj = task_cls(**routed["task"])
    probe_obj = probe_cls(**routed["probe"])
    enc_params: dict[str, Any] = dict(routed["encoder"])
    if saved is not None and given_encoder in (None, saved.meta.get("encoder")):
        enc_params = {**saved.meta.get("encoder_params", {}), **enc_params}
    identity = resolve_encoder(encoder, enc_params).identity()
    return _Setup(encoder, task, task_obj, probe_obj, routed, enc_params, identity)


def _layers(layer: str, saved: SavedSetup | None) -> list[int] | None:
    """``--layer`` as a list; None for ``all`` without a saved probe (every encoded layer)."""
    from synrob.perturb.errors import SynrobError

    if layer != "all":
        try:
            return [int(layer)]
        except ValueError:
            raise SynrobError(f"--layer must be a number or 'all', not {layer!r}") from None
    return saved.layers if saved is not None else None


def _check_saved(saved: SavedSetup, setup: _Setup, layers: list[int]) -> None:
    """A saved probe must have been trained on this encoder, layers, task and probe."""
    from synrob.probe.probing import check_saved

    task_obj, probe_obj, routed = setup.task, setup.probe, setup.routed
    check_saved(saved, encoder=setup.encoder, identity=setup.identity, layers=layers,
                task=setup.task_name,
                task_params={k: task_obj.options[k] for k in routed["task"]},
                probe=probe_obj.name,
                probe_params={k: probe_obj.options[k] for k in routed["probe"]})


def _data_paths(test: list[str], train: str | None, dev: str | None
                ) -> tuple[list[str], str | None, str | None]:
    """The test, train and dev files, each one CoNLL-U file."""
    tests = [_one_path(t, "--test") for t in test]
    train_p = _one_path(train, "--train") if train else None
    dev_p = _one_path(dev, "--dev") if dev else None
    return tests, train_p, dev_p


def _layer_reporter(task_obj: Task) -> Callable[[Any], None]:
    """The stderr line after each layer: its dev score, epochs and training time."""
    from ..output import info

    def report(res: Any) -> None:
        key = task_obj.primary_metric
        info(f"synrob: layer {res.layer}: dev {key}={_fmt(res.dev.get(key, float('nan')))}"
             + (f" ({res.log.best_epoch + 1} epochs best, {res.log.seconds:.1f}s)" if res.log else ""))

    return report


def _seed_list(seeds: str | None) -> list[int]:
    from synrob.perturb.errors import ParameterError

    if not seeds:
        return []
    try:
        out = [int(x) for x in seeds.split(",") if x.strip()]
    except ValueError:
        raise ParameterError(f"--seeds must be comma-separated integers, not {seeds!r}") from None
    if len(set(out)) != len(out) or not out:
        raise ParameterError(f"--seeds must list distinct integers, not {seeds!r}")
    return out


def _emit(run: ProbeRun, many: bool, predictions: Path | None, as_json: bool,
          lang: Language) -> None:
    """Write ``--predictions``, then print the JSON object or the table."""
    from ..output import emit_json, info

    if predictions is not None:
        n = _write_predictions(run, predictions, many)
        info(f"synrob: wrote {n} predictions to {predictions}")
    if as_json:
        emit_json({**run_json(run, many), "lang": {"code": lang.code, "source": lang.source}})
    else:
        _echo_table(_table(run, many))
        deltas = _delta_rows(run)
        if deltas:
            typer.echo("")
            _echo_table(deltas)


def probe(test: _Test, encoder: _Encoder = None, layer: _Layer = None, task: _Task = None,
          train: _Train = None, dev: _Dev = None, probe_name: _Probe = None, param: _Param = None,
          seed: _Seed = 0, device: _Device = "auto", save: _Save = None, load: _Load = None,
          predictions: _Predictions = None, baselines: _Baselines = True, as_json: _Json = False,
          control: _Control = False, mdl: _Mdl = False, bootstrap: _Bootstrap = 0,
          seeds: _Seeds = None, plot: _Plot = None, lang: _Lang = None,
          fuse: _Fuse = True) -> None:
    """Train a probe on one layer (or all) of an encoder and score test files and baselines."""
    from synrob.perturb.device import check_device
    from synrob.perturb.errors import ParameterError
    from synrob.perturb.language import infer_language
    from synrob.perturb.plugins import get_registry
    from synrob.probe.analysis import AnalysisOptions, run_analysed
    from synrob.probe.probing import encoder_features, read_saved, run_probe

    device = check_device(device)  # a missing or invalid device fails before any work
    reg = get_registry()
    saved = read_saved(load) if load is not None else None
    enc_name, layer, task, probe_name = _names(saved, encoder, layer, task, probe_name)
    setup = _components(reg, enc_name, task, probe_name, param or [], saved, encoder)
    layers = _layers(layer, saved)
    if plot is not None and layer != "all":
        raise ParameterError("--plot draws the layer curve: it needs --layer all")
    if saved is not None:
        _check_saved(saved, setup, layers)  # type: ignore[arg-type]  # a saved probe has layers
    features = encoder_features(enc_name, params=setup.enc_params or None, device=device)
    tests, train_p, dev_p = _data_paths(test, train, dev)
    language = infer_language(tests[:1], lang)
    if layers is None:
        layers = features.layers(train_p or tests[0])  # type: ignore[attr-defined]
    kw = dict(encoder=enc_name, task=setup.task, probe=setup.probe, layers=layers,
              tests=tests, features=features, train=train_p, dev=dev_p, seed=seed,
              device=device, save=save, load=load, keep_predictions=predictions is not None,
              baselines=baselines, encoder_params=setup.enc_params,
              encoder_identity=setup.identity, on_layer=_layer_reporter(setup.task), fuse=fuse)
    opts = AnalysisOptions(control, mdl, bootstrap, _seed_list(seeds))
    run = run_analysed(opts, **kw) if opts.active else run_probe(**kw)  # type: ignore[arg-type]
    _emit(run, layer == "all", predictions, as_json, language)
    if plot is not None:
        _plot(run, plot)


def _plot(run: ProbeRun, dest: Path) -> None:
    """Draw the layer curve of the first test file into ``dest``."""
    from synrob.probe.layer_curve import curve_rows, plot_layer_curve

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
