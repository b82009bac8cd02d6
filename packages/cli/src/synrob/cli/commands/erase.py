"""``synrob erase``: fit LEACE on a word classification task's labels at one layer, and measure
what a retrained linear probe still finds (amnesic probing) against two random erasures of the
same rank, one of them also of LEACE's mean displacement."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from synrob.perturb.lm.device import DEVICE_HELP

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
_Output = Annotated[Path | None, typer.Option("-o", "--output", help="Write the LEACE eraser here (safetensors with its provenance) and its random controls beside it (NAME.random.safetensors: rank-matched; NAME.random_matched.safetensors: rank- and displacement-matched).", rich_help_panel=_OPTS)]
_Load = Annotated[Path | None, typer.Option("--load", help="Use a saved LEACE eraser instead of fitting one; it must match the encoder, layer, dimension and task.", rich_help_panel=_OPTS)]
_Fit = Annotated[str, typer.Option("--fit", help="How the linear probes are fitted: lbfgs (to convergence, the classifier LEACE's guarantee is about) or adam (synrob's usual regimen with early stopping; for comparison: no guarantee).", rich_help_panel=_OPTS)]
_Seed = Annotated[int, typer.Option(help="Seed of the random controls' subspaces, the probes and the bootstrap.", rich_help_panel=_OPTS)]
_Bootstrap = Annotated[int, typer.Option("--bootstrap", help="Paired bootstrap resamples of test sentences for the differences' 95% intervals (0: off).", rich_help_panel=_OPTS)]
_Device = Annotated[str, typer.Option(help=DEVICE_HELP, rich_help_panel=_OPTS)]
_Json = Annotated[bool, typer.Option("--json", help="Print one JSON object.")]
_Lang = Annotated[str | None, typer.Option("--lang", help="Language of the treebanks (recorded); default: from the test file's UD name or '# synrob.lang', else en.", rich_help_panel=_OPTS)]


_COLUMNS = (("majority", "majority"), ("before", "accuracy_before"), ("LEACE", "accuracy_after"),
            ("random", "accuracy_random"), ("random matched", "accuracy_random_matched"))


def _table(out: dict[str, Any]) -> None:
    """Per task: the majority label, then the accuracies, aligned."""
    rows = [["task", "majority label", *(name for name, _ in _COLUMNS)]]
    for name, r in [(out["task"], out), *out["also"].items()]:
        rows.append([name, str(r["majority_label"]), *(f"{r[k]:.4f}" for _, k in _COLUMNS)])
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for r in rows:
        typer.echo("  ".join(c.ljust(w) if i < 2 else c.rjust(w)
                             for i, (c, w) in enumerate(zip(r, widths, strict=True))).rstrip())


def _summary(out: dict[str, Any]) -> None:
    """The human summary on stdout."""
    task = out["task"] + (" (control labels)" if out["control"] else "")
    typer.echo(f"erased {task} at {out['encoder']} layer {out['layer']}: LEACE rank "
               f"{out['rank']} of {out['dim']}, fitted on {out['train_words']} training words")
    typer.echo(f"mean displacement on the training words: LEACE "
               f"{out['displacement_leace']:.4g}, random {out['displacement_random']:.4g}, "
               f"random matched {out['displacement_random_matched']:.4g} "
               f"({out['random_matched']['construction']})")
    _table(out)
    typer.echo("majority: the training majority label's test accuracy (the constant predictor)")
    for key in ("drop_leace", "drop_random", "drop_random_matched"):
        if key in out:
            d = out[key]
            typer.echo(f"{key}: {d['value']:.4f} [{d['ci95'][0]:.4f}, {d['ci95'][1]:.4f}]")


def erase(train: _Train, dev: _Dev, test: _Test, encoder: _Encoder = None, layer: _Layer = None,
          task: _Task = None, param: _Param = None, control: _Control = False,
          also: _Also = None, output: _Output = None, load: _Load = None, fit: _Fit = "lbfgs",
          seed: _Seed = 0,
          bootstrap: _Bootstrap = 1000, device: _Device = "auto", as_json: _Json = False,
          lang: _Lang = None) -> None:
    """Erase a task's labels from one layer with LEACE (and two random erasures of the same
    rank, one also of LEACE's mean displacement) and retrain its linear probe: test accuracy
    before, after LEACE and after each random erasure."""
    from synrob.probe.api import erase as run_erase
    from synrob.probe.causal.erasure.setup import control_paths

    from ..output import emit_json, info, progress

    result = run_erase(train, dev, test, encoder=encoder, layer=layer, task=task,
                       params=param or [], control=control, also=also, load=load, fit=fit,
                       seed=seed, bootstrap=bootstrap, device=device, lang=lang,
                       progress=progress)
    if output is not None:
        result.save(output)
        paths = control_paths(output)
        info(f"synrob: wrote {output} (LEACE), {paths['random']} (random control) and "
             f"{paths['random_matched']} (displacement-matched random control)")
    out = {**result.summary, "eraser": {"loaded": str(load) if load else None,
                                        "output": str(output) if output else None}}
    if as_json:
        emit_json(out)
    else:
        _summary(out)


def register(app: typer.Typer) -> None:
    app.command("erase")(erase)
