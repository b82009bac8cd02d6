"""``synrob erase``: fit LEACE on a word classification task's labels at one layer, and measure
what a retrained linear probe still finds (amnesic probing) against a random erasure of the
same rank."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from synrob.perturb.device import DEVICE_HELP

if TYPE_CHECKING:
    from synrob.probe.erasure.amnesic import AmnesicRun
    from synrob.probe.erasure.eraser import Eraser
    from synrob.probe.probes.base import Probe
    from synrob.probe.tasks.base import Task

_OPTS = "Erasure options"

_Encoder = Annotated[str | None, typer.Option(help="Encoder name (synrob plugins --kind encoder); default with --load: the eraser's.")]
_Layer = Annotated[int | None, typer.Option(help="Layer whose word vectors are erased; default with --load: the eraser's.")]
_Task = Annotated[str | None, typer.Option(help="Word classification task whose labels are erased: pos, deprel, feats (-p feature=Number); default with --load: the eraser's.")]
_Train = Annotated[str, typer.Option(help="Training CoNLL-U file (the eraser and the probes are fitted on it).")]
_Dev = Annotated[str, typer.Option(help="Dev CoNLL-U file (the probes' early stopping).")]
_Test = Annotated[str, typer.Option(help="Test CoNLL-U file (the accuracies).")]
_Param = Annotated[list[str] | None, typer.Option("-p", "--param", help="key=value for the task, the linear probe or the encoder (task.k / probe.k / encoder.k to disambiguate); the probe's normalize is standardize (default) or none.", rich_help_panel=_OPTS)]
_Control = Annotated[bool, typer.Option("--control", help="Erase the task's control labels (Hewitt & Liang: one label per word type) instead of its own.", rich_help_panel=_OPTS)]
_Also = Annotated[str | None, typer.Option("--also", help="Other tasks to probe before and after the erasure, comma-separated, each NAME or NAME:key=value[:key=value] (e.g. pos,deprel,feats:feature=Person).", rich_help_panel=_OPTS)]
_Output = Annotated[Path | None, typer.Option("-o", "--output", help="Write the LEACE eraser here (safetensors with its provenance) and its random control beside it (NAME.random.safetensors).", rich_help_panel=_OPTS)]
_Load = Annotated[Path | None, typer.Option("--load", help="Use a saved LEACE eraser instead of fitting one; it must match the encoder, layer, dimension and task.", rich_help_panel=_OPTS)]
_Fit = Annotated[str, typer.Option("--fit", help="How the linear probes are fitted: lbfgs (to convergence, the classifier LEACE's guarantee is about) or adam (synrob's usual regimen with early stopping; for comparison: no guarantee).", rich_help_panel=_OPTS)]
_Seed = Annotated[int, typer.Option(help="Seed of the random control's subspace, the probes and the bootstrap.", rich_help_panel=_OPTS)]
_Bootstrap = Annotated[int, typer.Option("--bootstrap", help="Paired bootstrap resamples of test sentences for the differences' 95% intervals (0: off).", rich_help_panel=_OPTS)]
_Device = Annotated[str, typer.Option(help=DEVICE_HELP, rich_help_panel=_OPTS)]
_Json = Annotated[bool, typer.Option("--json", help="Print one JSON object.")]
_Lang = Annotated[str | None, typer.Option("--lang", help="Language of the treebanks (recorded); default: from the test file's UD name or '# synrob.lang', else en.", rich_help_panel=_OPTS)]


@dataclass
class _Setup:
    """The components of one ``synrob erase`` call."""

    encoder: str
    layer: int
    task_name: str
    task: Task               # the task whose labels are erased (its control with --control)
    probe: Probe
    enc_params: dict[str, Any]
    identity: dict[str, Any]
    given_task_params: dict[str, Any]


def _names(saved: Eraser | None, encoder: str | None, layer: int | None, task: str | None
           ) -> tuple[str, int, str]:
    """Encoder, layer and task: given, else the loaded eraser's; required without --load."""
    from synrob.perturb.errors import SynrobError

    meta = saved.meta if saved is not None else {}
    encoder = encoder or meta.get("encoder")
    layer = layer if layer is not None else meta.get("layer")
    task = task or meta.get("task")
    for value, what in ((encoder, "--encoder"), (layer, "--layer"), (task, "--task")):
        if value is None:
            raise SynrobError(f"{what} is required (or --load a saved eraser)")
    return str(encoder), int(layer), str(task)  # type: ignore[arg-type]


def _components(reg: Any, names: tuple[str, int, str], param: list[str], saved: Eraser | None,
                control: bool, seed: int) -> _Setup:
    """Task (a saved eraser's parameters under the given ones), linear probe (normalize
    standardize unless given) and encoder parameters from the registry and ``-p``."""
    from synrob.perturb.params import parse_assignments
    from synrob.probe.encoders.resolve import resolve_encoder, spec_target
    from synrob.probe.probe_setup import route_params
    from synrob.probe.tasks.control import control_task

    encoder, layer, task = names
    task_cls, probe_cls = reg.get("task", task), reg.get("probe", "linear")
    enc_cls = reg.get("encoder", spec_target(encoder)[0])
    routed = route_params(parse_assignments(param), {
        "task": task_cls.params, "probe": probe_cls.params,
        "encoder": getattr(enc_cls, "params", ())})
    meta = saved.meta if saved is not None else {}
    same = saved is not None and meta.get("task") == task and meta.get("encoder") == encoder
    task_obj = task_cls(**{**(meta.get("task_params", {}) if same else {}), **routed["task"]})
    probe_obj = probe_cls(**{"normalize": "standardize", **routed["probe"]})
    enc_params = {**(meta.get("encoder_params", {}) if same else {}), **routed["encoder"]}
    if control:
        task_obj = control_task(task_obj, seed)
    identity = resolve_encoder(encoder, enc_params).identity()
    given = {k: task_obj.options[k] for k in routed["task"]}
    return _Setup(encoder, layer, task, task_obj, probe_obj, enc_params, identity, given)


def _also_tasks(reg: Any, spec: str | None) -> dict[str, Task]:
    """``--also pos,feats:feature=Person`` -> {item: fitted-later task}."""
    from synrob.perturb.params import parse_assignments

    out: dict[str, Task] = {}
    for item in (x.strip() for x in (spec or "").split(",")):
        if item:
            name, _, params = item.partition(":")
            out[item] = reg.get("task", name)(**parse_assignments(
                [p for p in params.split(":") if p]))
    return out


def _meta(setup: _Setup, control: bool, seed: int, train: str, lang: str) -> dict[str, Any]:
    """The provenance written into a fitted eraser (store.py's ``meta``)."""
    from synrob.probe import __version__
    from synrob.probe.cache import corpus_hash

    return {"encoder": setup.encoder, "encoder_params": setup.enc_params,
            "encoder_identity": setup.identity, "layer": setup.layer, "task": setup.task_name,
            "task_params": dict(setup.task.options), "control": control,
            **({"control_seed": seed} if control else {}), "seed": seed, "train": train,
            "train_sha256": corpus_hash(train), "lang": lang, "synrob_version": __version__}


def _check_loaded(saved: Eraser, where: Path, setup: _Setup, control: bool, train: str) -> None:
    """A loaded eraser must fit this setup (one error line); other training data: a warning."""
    import warnings

    from synrob.perturb.errors import SynrobWarning
    from synrob.probe.cache import corpus_hash
    from synrob.probe.erasure.store import check_eraser

    check_eraser(saved, where, encoder=setup.encoder, identity=setup.identity,
                 layer=setup.layer, dim=None, task=setup.task_name,
                 task_params=dict(setup.task.options), control=control)
    if saved.meta.get("train_sha256") not in (None, corpus_hash(train)):
        warnings.warn(f"eraser in {where} was fitted on other training data "
                      f"({saved.meta.get('train')}); LEACE's guarantee holds on that data",
                      SynrobWarning, stacklevel=2)


def _random_path(output: Path) -> Path:
    """``E.safetensors`` -> ``E.random.safetensors`` (the random control beside the eraser)."""
    return output.with_name(f"{output.stem}.random{output.suffix or '.safetensors'}")


def result_json(run: AmnesicRun, setup: _Setup, n_boot: int, seed: int, fit: str
                ) -> dict[str, Any]:
    """The ``--json`` object (see docs/erasure.md for every field)."""
    e = run.eraser
    return {
        **run.erased.summary(n_boot, seed),
        "task": setup.task_name, "control": e.meta.get("control", False),
        "rank": int(e.meta.get("rank", e.rank)), "dim": e.dim, "labels": e.labels,
        "train_words": e.meta.get("train_words"), "class_mean_gap": run.gaps,
        "also": {k: r.summary(n_boot, seed) for k, r in run.also.items()},
        "probe": setup.probe.name, "probe_params": dict(setup.probe.options),
        "encoder": setup.encoder, "encoder_identity": setup.identity, "layer": setup.layer,
        "fit": fit, "seed": seed, "bootstrap": n_boot, "seconds": round(run.seconds, 3)}


def _summary(out: dict[str, Any]) -> None:
    """The human summary on stdout."""
    task = out["task"] + (" (control labels)" if out["control"] else "")
    typer.echo(f"erased {task} at {out['encoder']} layer {out['layer']}: LEACE rank "
               f"{out['rank']} of {out['dim']}, fitted on {out['train_words']} training words")
    rows = [["task", "majority", "before", "LEACE", "random"]]
    for name, r in [(out["task"], out), *out["also"].items()]:
        rows.append([name, *(f"{r[k]:.4f}" for k in ("majority", "accuracy_before",
                                                      "accuracy_after", "accuracy_random"))])
    widths = [max(len(r[i]) for r in rows) for i in range(5)]
    for r in rows:
        typer.echo("  ".join(c.ljust(w) if i == 0 else c.rjust(w)
                             for i, (c, w) in enumerate(zip(r, widths, strict=True))))
    for key in ("drop_leace", "drop_random"):
        if key in out:
            d = out[key]
            typer.echo(f"{key}: {d['value']:.4f} [{d['ci95'][0]:.4f}, {d['ci95'][1]:.4f}]")


def erase(train: _Train, dev: _Dev, test: _Test, encoder: _Encoder = None, layer: _Layer = None,
          task: _Task = None, param: _Param = None, control: _Control = False,
          also: _Also = None, output: _Output = None, load: _Load = None, fit: _Fit = "lbfgs",
          seed: _Seed = 0,
          bootstrap: _Bootstrap = 1000, device: _Device = "auto", as_json: _Json = False,
          lang: _Lang = None) -> None:
    """Erase a task's labels from one layer with LEACE (and a random erasure of the same rank)
    and retrain its linear probe: test accuracy before, after and after random erasure."""
    from synrob.perturb.device import check_device
    from synrob.perturb.language import infer_language
    from synrob.perturb.plugins import get_registry
    from synrob.probe.erasure.amnesic import run_amnesic
    from synrob.probe.erasure.store import load_eraser
    from synrob.probe.probe_setup import one_path as _one_path
    from synrob.probe.probing import encoder_features

    from ..output import emit_json, info, progress

    device = check_device(device)  # a missing or invalid device fails before any work
    reg = get_registry()
    saved = load_eraser(load) if load is not None else None
    setup = _components(reg, _names(saved, encoder, layer, task), param or [], saved, control,
                        seed)
    also_tasks = _also_tasks(reg, also)
    paths = {k: _one_path(v, f"--{k}") for k, v in (("train", train), ("dev", dev), ("test", test))}
    language = infer_language([paths["test"]], lang)
    if saved is not None:
        _check_loaded(saved, load, setup, control, paths["train"])  # type: ignore[arg-type]
    features = encoder_features(setup.encoder, params=setup.enc_params or None, device=device,
                                layers=[setup.layer])
    run = run_amnesic(task=setup.task, probe=setup.probe, features=features, layer=setup.layer,
                      also=also_tasks, seed=seed, device=device, eraser=saved, fit=fit,
                      meta=_meta(setup, control, seed, paths["train"], language.code),
                      progress=progress, **paths)
    if output is not None:
        _write(run, output, info)
    out = {**result_json(run, setup, bootstrap, seed, fit),
           "lang": {"code": language.code, "source": language.source}, **paths,
           "eraser": {"loaded": str(load) if load else None,
                      "output": str(output) if output else None}}
    if as_json:
        emit_json(out)
    else:
        _summary(out)


def _write(run: AmnesicRun, output: Path, info: Any) -> None:
    from synrob.probe.erasure.store import save_eraser

    save_eraser(output, run.eraser)
    save_eraser(_random_path(output), run.control)
    info(f"synrob: wrote {output} (LEACE) and {_random_path(output)} (random control)")


def register(app: typer.Typer) -> None:
    app.command("erase")(erase)
