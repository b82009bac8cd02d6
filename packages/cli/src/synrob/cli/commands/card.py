"""``synrob card MODEL``: a model's syntactic profile on one page (card.json, card.md,
card.html); ``synrob board CARD_DIR...``: cards side by side (board.html, board.csv)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer
from synrob.perturb.lm.device import DEVICE_HELP

_RUN = "Execution"

_Model = Annotated[str | None, typer.Argument(
    help="The model: an alias (smollm2, minilm), a Hugging Face name or a local path.",
    show_default=False)]
_Out = Annotated[Path | None, typer.Option(
    "--out", "-o", help="The card's directory (default: synrob-cards/MODEL); made again into "
    "the same directory, a card reuses every finished run.")]
_Languages = Annotated[str | None, typer.Option(
    help="Comma-separated ISO codes (default en); each language's treebank: --treebank, "
    "else its default (docs/card.md).")]
_Treebank = Annotated[list[str] | None, typer.Option(
    "--treebank", help="LANG=SPEC, repeatable: ud:NAME (its three splits), a directory of "
    "*-ud-{train,dev,test}.conllu files, or one CoNLL-U file (split 80/10/10, seeded, "
    "recorded).")]
_Preset = Annotated[str | None, typer.Option(
    help="test, sample (default) or default: the studies' presets, layers and sizes "
    "(docs/card.md).")]
_Layers = Annotated[str | None, typer.Option(
    help="Comma-separated layers to probe (default: the preset's, spread over the model).")]
_Param = Annotated[list[str] | None, typer.Option(
    "-p", "--param", help="key=value for the model, as synrob probe takes them (layer_only, "
    "device_map, offload, quantization, precision, ...).")]
_From = Annotated[Path | None, typer.Option(
    "--from", help="Make the card a card.json (or its directory) records, from its settings.")]


def card(
    model: _Model = None, out: _Out = None, languages: _Languages = None,
    treebank: _Treebank = None, preset: _Preset = None, layers: _Layers = None,
    param: _Param = None,
    seed: Annotated[int | None, typer.Option(help="Seed of the splits, the probes (their "
                                                  "seeds start here) and the resamples.")] = None,
    device: Annotated[str, typer.Option(help=DEVICE_HELP)] = "auto",
    backend: Annotated[str, typer.Option(help="local (process pool), ray or dask.",
                                         rich_help_panel=_RUN)] = "local",
    address: Annotated[str | None, typer.Option(help="Address of an existing ray/dask cluster "
                                                "(default: start a local one).",
                                                rich_help_panel=_RUN)] = None,
    workers: Annotated[int, typer.Option(help="Parallel runs (local pool or local cluster "
                                              "size).", rich_help_panel=_RUN)] = 1,
    from_card: _From = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print card.json to stdout.")] = False,
) -> None:
    """Make a model's card: structure and morphosyntax by layer, Jabberwocky, agreement
    behaviour and erasure, per language, each number with its 95 % interval."""
    from synrob.probe.cards.make import card as make
    from synrob.probe.cards.make import card_from

    from ..output import emit_json, info, progress

    def on_run(run_id: str, spec: Any, seconds: float) -> None:
        info(f"synrob: run {spec.label or run_id} done in {seconds:.1f} s")

    def on_stage(stage: str, seconds: float) -> None:
        info(f"synrob: stage {stage} done in {seconds:.1f} s")

    execution = dict(device=device, backend=backend, workers=workers, address=address,
                     progress=progress, on_run=on_run, on_stage=on_stage)
    if from_card is not None:
        given = [n for n, v in (("MODEL", model), ("--languages", languages),
                                ("--treebank", treebank), ("--preset", preset),
                                ("--layers", layers), ("-p", param), ("--seed", seed)) if v]
        if given:
            raise typer.BadParameter(f"--from takes the card's recorded settings; drop "
                                     f"{', '.join(given)}")
        made = card_from(from_card, out, **execution)
    elif model is None:
        raise typer.BadParameter("give a MODEL (or --from card.json)")
    else:
        made = make(model, out, languages=languages or "en", treebanks=treebank or [],
                    preset=preset or "sample", layers=layers, params=param or [],
                    seed=seed or 0, **execution)
    _report(made, as_json, emit_json, info)


def _report(made: Any, as_json: bool, emit_json: Any, info: Any) -> None:
    inv = made.invocation
    info(f"synrob: card {made.data['model']['name']}: {inv['executed']} runs executed, "
         f"{inv['reused']} reused, {inv['seconds']:.1f} s")
    if inv.get("stages"):
        info("synrob: stages: " + ", ".join(f"{k} {v:.1f} s" for k, v in inv["stages"].items()))
    for f in made.data["files"]:
        info(f"synrob: wrote {made.path / f}")
    if as_json:
        emit_json(json.loads((made.path / "card.json").read_text(encoding="utf-8")))
        return
    for lang, texts in made.headline.items():
        for text in texts:
            typer.echo(f"{lang}: {text}")
    typer.echo(str(made.path / "card.html"))


def board(
    cards: Annotated[list[Path] | None, typer.Argument(
        metavar="CARD_DIR", help="Card directories (synrob card ... -o DIR).",
        show_default=False)] = None,
    out: Annotated[Path, typer.Option("--out", "-o", help="Where to write board.html and "
                                                          "board.csv.")] = Path("synrob-board"),
    strict: Annotated[bool, typer.Option("--strict", help="Refuse cards that are not "
                                         "comparable (another preset or treebank) instead of "
                                         "marking them.")] = False,
) -> None:
    """Put cards side by side: one row per model, one column per language and measure, each
    cell linked to its card."""
    from synrob.probe.cards.board import board as write_board

    from ..output import info

    made = write_board(cards or [], out, strict=strict)
    for note in made.notes:
        info(f"synrob: warning: {note}")
    for f in made.files:
        info(f"synrob: wrote {f}")
    typer.echo(str(out / "board.html"))


def register(app: typer.Typer) -> None:
    app.command("card")(card)
    app.command("board")(board)
