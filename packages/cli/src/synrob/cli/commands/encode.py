"""``synrob encode``, ``synrob encoders`` and ``synrob cache list|clear``."""

from __future__ import annotations

from typing import Annotated

import typer
from synrob.perturb.lm.device import DEVICE_HELP

cache_app = typer.Typer(help="Inspect and clear the representation cache.", no_args_is_help=True)


def encode(
    inputs: Annotated[list[str], typer.Argument(help="CoNLL-U files (or sample:/ud: specs).")],
    encoder: Annotated[str, typer.Option("--encoder", "-e",
                                         help="Alias, registered encoder, model path or HF name.")],
    layers: Annotated[str, typer.Option(help="Comma-separated layer indices (negative from "
                                        "the end) or 'all'.")] = "all",
    pooling: Annotated[str, typer.Option(help="Subword pooling: mean, first or last.")] = "mean",
    device: Annotated[str, typer.Option(help=DEVICE_HELP)] = "auto",
    dtype: Annotated[str, typer.Option(help="Storage dtype of the cache: float16 or float32.")] = "float16",
    precision: Annotated[str | None, typer.Option(help="Compute dtype of a transformer encoder "
                                                  "(shortcut for -p precision=): auto, "
                                                  "float32, bfloat16 or float16.")] = None,
    param: Annotated[list[str] | None, typer.Option("--param", "-p",
                                                    help="Encoder parameter key=value.")] = None,
) -> None:
    """Encode every syntactic word into the cache; print one JSON object per input."""
    import time

    from synrob.perturb.io.data import resolve_input
    from synrob.perturb.lm.device import check_device
    from synrob.perturb.lm.dtype import check_dtype
    from synrob.perturb.params import parse_assignments
    from synrob.probe.representations.encoding import LoadedEncoders, encode_corpus

    from ..output import emit_json, info, progress

    device = check_device(device)  # a missing or invalid device fails before any work
    params = parse_assignments(param or [])
    if precision is not None:
        params["precision"] = check_dtype(precision)
    held = LoadedEncoders()  # the model loads once for all inputs
    for spec in inputs:
        for path in resolve_input(spec):
            t0 = time.perf_counter()

            info(f"synrob: encoding {path} with {encoder}")
            rs = encode_corpus(encoder, path, layers=layers, pooling=pooling, device=device,
                               dtype=dtype, params=params, encoders=held,
                               progress=progress)
            emit_json({
                "encoder": encoder,
                "layers": rs.layers,
                "sentences": rs.n_sentences,
                "words": rs.n_words,
                "dim": rs.dim,
                "oov_rate": round(rs.oov_rate, 6),
                "cache_path": str(rs.cache_path),
                "seconds": round(time.perf_counter() - t0, 3),
            })


def encoders(
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object per encoder.")] = False,
) -> None:
    """List registered encoders and offline aliases."""
    from synrob.perturb.plugins import get_registry
    from synrob.probe.encoders.aliases import ALIASES, alias_path

    from ..output import emit_json

    reg = get_registry()
    for comp in reg.components("encoder"):
        row = {"name": comp.name, "kind": "encoder", "version": comp.version,
               "distribution": comp.distribution, "summary": getattr(comp.cls, "summary", "")}
        if as_json:
            emit_json(row)
        else:
            typer.echo(f"{comp.name}\t{comp.version}\t{comp.distribution}\t{row['summary']}")
    for alias in ALIASES.values():
        try:
            alias_path(alias)
            state = "installed"
        except Exception:  # noqa: BLE001 - report, do not fail the listing
            state = f"missing: {alias.install}"
        row = {"name": alias.name, "kind": "alias", "encoder": alias.encoder,
               "summary": alias.summary, "state": state}
        if as_json:
            emit_json(row)
        else:
            typer.echo(f"{alias.name}\talias->{alias.encoder}\t{state}\t{alias.summary}")


@cache_app.command("list")
def cache_list(
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object per entry.")] = False,
) -> None:
    """List cache entries (complete and partial)."""
    from synrob.probe.representations.cache import cache_root, list_entries

    from ..output import emit_json, info

    entries = list_entries()
    if not entries:
        info(f"synrob: cache is empty ({cache_root()})")
    for e in entries:
        if as_json:
            emit_json(e)
        else:
            layers = ",".join(map(str, e.get("layers") or []))
            typer.echo(f"{e['key']}\t{e['state']}\t{e['encoder']}\tlayers={layers}\t"
                       f"words={e.get('words')}\t{e['bytes'] / 1e6:.1f}MB\t{e['corpus']}")


@cache_app.command("clear")
def cache_clear(
    encoder: Annotated[str | None, typer.Option(help="Only entries of this encoder "
                                                "(spec, encoder name or model path), and "
                                                "the LM scores of that model.")] = None,
) -> None:
    """Delete cache entries and kept LM scores (all, or one encoder's or model's)."""
    from synrob.probe.causal.score_cache import clear_scores
    from synrob.probe.representations.cache import clear

    from ..output import info

    n = clear(encoder)
    m = clear_scores(encoder)
    info(f"synrob: removed {n} cache entr{'y' if n == 1 else 'ies'} and {m} LM score "
         f"file{'' if m == 1 else 's'}")


def register(app: typer.Typer) -> None:
    app.command("encode")(encode)
    app.command("encoders")(encoders)
    app.add_typer(cache_app, name="cache")
