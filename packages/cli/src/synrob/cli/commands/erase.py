"""``synrob erase``: fit LEACE on a word classification task's labels at one layer, and measure
what a retrained linear probe still finds (amnesic probing) against a random erasure of the
same rank."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from synrob.perturb.device import DEVICE_HELP

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
    from synrob.probe.api import erase as run_erase
    from synrob.probe.erasure.setup import random_path

    from ..output import emit_json, info, progress

    result = run_erase(train, dev, test, encoder=encoder, layer=layer, task=task,
                       params=param or [], control=control, also=also, load=load, fit=fit,
                       seed=seed, bootstrap=bootstrap, device=device, lang=lang,
                       progress=progress)
    if output is not None:
        result.save(output)
        info(f"synrob: wrote {output} (LEACE) and {random_path(output)} (random control)")
    out = {**result.summary, "eraser": {"loaded": str(load) if load else None,
                                        "output": str(output) if output else None}}
    if as_json:
        emit_json(out)
    else:
        _summary(out)


def register(app: typer.Typer) -> None:
    app.command("erase")(erase)
