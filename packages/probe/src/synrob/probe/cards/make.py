"""Make a card, or resume one: :func:`card` (``synrob card``), :func:`card_from` (``synrob
card --from``) and :func:`load_card`; the result is a :class:`Card`.

A card is two passes of one grid (:class:`.grid.CardGrid`) into ``OUTDIR/work`` (the
experiment runner's directory: ``runs/``, ``data/``, ``studies/``, ``results.json``): the
first runs every section but Jabberwocky, whose layer (the best structural layer on dev) it
chooses; the second adds the Jabberwocky runs at that layer and reuses every other run. Then
``card.json``, ``card.md``, the figures and ``card.html`` are written from the rows
(:mod:`.document`). A card stopped midway resumes from its finished runs; made again with
nothing new, it executes none.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from synrob.perturb.errors import ParameterError, arg

from ..runtime.progress import ProgressOption, RunCallback, StageCallback, resolve_progress
from .grid import CardGrid, ModelInfo
from .result import Card
from .settings import CardSettings

__all__ = ["card", "card_from", "load_card", "model_info"]


def model_info(model: str, params: Mapping[str, Any]) -> ModelInfo:
    """The model's identity, layers and LM head, read from its config (no weights)."""
    from ..encoders.resolve import resolve_encoder

    enc = resolve_encoder(model, dict(params))
    identity = enc.identity()
    archs = [str(a) for a in (getattr(getattr(enc, "config", None), "architectures", None) or [])]
    kind = next((("masked" if a.endswith("ForMaskedLM") else "causal") for a in archs
                 if a.endswith(("ForMaskedLM", "ForCausalLM", "LMHeadModel"))), None)
    no_lm = "" if kind else (
        f"{model} has no LM head (its checkpoint's architectures: {', '.join(archs) or 'none'}"
        "): it scores no sentence, so there are no agreement preferences to measure and no "
        "behaviour to erase")
    plain = identity == resolve_encoder(model, {}).identity()
    not_plain = "" if plain else (
        f"-p {', '.join(sorted(params))} changes the model's vectors, and the jabberwocky and "
        "amnesic studies read the model as it is")
    placement = {k: v for k, v in identity.get("options", {}).items()
                 if k in ("device_map", "max_memory", "offload", "quantization",
                          "quantization_unchecked")}
    return ModelInfo(model, identity, int(enc.num_layers), kind, no_lm, not_plain, placement)


def _check_outdir(out: Path, model: str) -> None:
    """``out`` is a directory that holds no card of another model (nothing is written over)."""
    if out.exists() and not out.is_dir():
        raise ParameterError(f"{out}: not a directory ({arg('out')} takes a directory)")
    saved = out / "card.json"
    if saved.is_file():
        try:
            other = json.loads(saved.read_text(encoding="utf-8"))["settings"]["model"]
        except (OSError, ValueError, KeyError, TypeError):
            raise ParameterError(f"{saved}: not a card's card.json; choose another "
                                 f"{arg('out')}") from None
        if other != model:
            raise ParameterError(f"{out} holds the card of {other!r}, not {model!r}; choose "
                                 f"another {arg('out')}")


def card(model: str, out: str | os.PathLike[str] | None = None, *,
         languages: str | Sequence[str] = "en", treebanks: Mapping[str, str] | Sequence[str] = (),
         preset: str = "sample", layers: Sequence[int] | str | None = None,
         params: Mapping[str, Any] | Sequence[str] = (), seed: int = 0, device: str = "auto",
         backend: str = "local", workers: int = 1, address: str | None = None,
         progress: ProgressOption = True, on_run: RunCallback | None = None,
         on_stage: StageCallback | None = None) -> Card:
    """Make (or resume) the card of ``model`` in ``out`` (default ``synrob-cards/MODEL``), as
    ``synrob card`` does: ``languages`` (``"en,cs"``), ``treebanks`` (``{"cs": SPEC}`` or
    ``["cs=SPEC"]``: ``ud:NAME``, a directory, or one file split 80/10/10), ``preset``
    (``test``, ``sample``, ``default``: docs/card.md), ``layers`` (replacing the preset's),
    ``params`` (the model's ``-p`` keys), the runs on ``backend`` (``local``, ``ray``, ``dask``)
    with ``workers``; ``progress`` shows the encoding and the runs."""
    from synrob.perturb.lm.device import check_device

    from ..training.setup import given_params
    from .presets import preset as named
    from .settings import check_request, encoder_options, split_languages
    from .treebanks import parse_treebank_options

    card_preset, langs = named(preset), split_languages(languages)
    given_tb = (dict(treebanks) if isinstance(treebanks, Mapping)
                else parse_treebank_options(list(treebanks)))
    enc_params = encoder_options(given_params(params))
    specs = check_request(model, langs, given_tb, card_preset, enc_params)
    device = check_device(device)  # every check before any model is read
    outdir = Path(out) if out is not None else Path("synrob-cards") / model.replace("/", "_")
    _check_outdir(outdir, model)
    asked = _layer_list(layers)
    return _make(model, outdir, langs, specs, card_preset, asked, enc_params, seed,
                 dict(device=device, backend=backend, workers=workers, address=address,
                      progress=resolve_progress(progress), on_run=on_run, on_stage=on_stage))


def _layer_list(layers: Sequence[int] | str | None) -> list[int] | None:
    if layers is None or layers == "":
        return None
    try:
        items = layers.split(",") if isinstance(layers, str) else list(layers)
        return [int(x) for x in items if str(x).strip()]
    except ValueError:
        raise ParameterError(f"{arg('layers')} takes a comma list of layer numbers, not "
                             f"{layers!r}") from None


def _make(model: str, outdir: Path, langs: tuple[str, ...], specs: dict[str, str],
          card_preset: Any, asked: list[int] | None, enc_params: dict[str, Any], seed: int,
          execution: dict[str, Any]) -> Card:
    """Resolve the treebanks (before the model), read the model's config, run both passes,
    write the documents."""
    import time

    from ..experiments.runner import run_experiment
    from .document import write_card
    from .probing import best_layer
    from .settings import card_layers
    from .treebanks import resolve_treebank

    t0 = time.perf_counter()
    p = card_preset
    data_dir = outdir / "work" / "data"
    first = {"train": p.train_sentences, "dev": p.dev_sentences, "test": p.test_sentences}
    tbs = {lang: resolve_treebank(lang, specs[lang], data_dir / lang, seed=seed, first=first)
           for lang in langs}
    info = model_info(model, enc_params)
    probed, causal = card_layers(info.num_layers, p, asked)
    settings = CardSettings(model, langs, specs, p, probed, causal, enc_params, seed)
    grid = CardGrid(settings, tbs, info)
    first_pass = run_experiment(grid, outdir / "work", seed=seed, **execution)
    best = {}
    for lang in langs:
        mine = [r for r in first_pass.rows if r.get("part") == "probe" and r.get("lang") == lang
                and r.get("card_task") == "distance"]
        layer = best_layer(mine, "uuas")
        if layer is not None:
            best[lang] = layer
    grid = CardGrid(settings, tbs, info, jabberwocky_at=best)
    result = run_experiment(grid, outdir / "work", seed=seed, **execution)
    done = write_card(grid, result, outdir)
    done.invocation = {"executed": first_pass.executed + result.executed,
                       "reused": result.reused - first_pass.executed,
                       "seconds": time.perf_counter() - t0,
                       "stages": _stages(first_pass.stages, result.stages),
                       "files": [str(f) for f in done.data["files"]]}
    return done


def _stages(*parts: Mapping[str, float]) -> dict[str, float]:
    out: dict[str, float] = {}
    for stages in parts:
        for k, v in stages.items():
            out[k] = round(out.get(k, 0.0) + float(v), 3)
    return out


def card_from(path: str | os.PathLike[str], out: str | os.PathLike[str] | None = None,
              **execution: Any) -> Card:
    """The card that ``path`` (a ``card.json`` or its directory) records, made again from its
    recorded settings into ``out`` (default: ``path``'s directory, where every finished run
    is reused); ``execution``: :func:`card`'s ``device``, ``backend``, ``workers``, ``address``,
    ``progress``, ``on_run``, ``on_stage``."""
    data = _read(Path(path))
    s = CardSettings.from_json(data["settings"])
    where = Path(out) if out is not None else _card_json(Path(path)).parent
    return card(s.model, where, languages=list(s.languages), treebanks=s.treebanks,
                preset=s.preset.name, layers=list(s.layers), params=s.params, seed=s.seed,
                **execution)


def _card_json(path: Path) -> Path:
    return path / "card.json" if path.is_dir() else path


def _read(path: Path) -> dict[str, Any]:
    """A card.json, or a one-line error: missing, unreadable or not a card's."""
    from synrob.perturb.errors import MissingFileError

    p = _card_json(path)
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise MissingFileError(f"{p}: no such card (a directory made by synrob card, or its "
                               "card.json)") from None
    except (OSError, ValueError) as exc:
        raise ParameterError(f"{p}: not a readable card.json ({type(exc).__name__}: "
                             f"{str(exc).splitlines()[0] if str(exc) else exc})") from None
    if not isinstance(data, dict) or data.get("schema") != "synrob-card" or "settings" not in data:
        raise ParameterError(f"{p}: not a synrob card (no 'schema': 'synrob-card')")
    return data


def load_card(path: str | os.PathLike[str]) -> Card:
    """The card in ``path`` (a card directory or its ``card.json``)."""
    p = _card_json(Path(path))
    return Card(_read(p), p.parent)

