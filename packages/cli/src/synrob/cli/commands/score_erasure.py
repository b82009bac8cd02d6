"""``synrob score --erase FILE``: the LM's minimal-pair preference with an eraser inside it.

Two steps of ``synrob score`` (not a command of its own; :mod:`.score` calls them):

* :func:`score_erased`: every pair scored clean, erased and with each random control: the
  rank-matched one (``--erase-random FILE``, else ``NAME.random.safetensors`` beside the
  eraser as ``synrob erase -o`` writes it, else one built from the eraser with ``--seed``) and
  the rank- and displacement-matched one (``--erase-random-matched FILE``, else
  ``NAME.random_matched.safetensors`` beside the eraser; it needs the training vectors, so
  without a file it is left out, with a warning), with the accuracy changes and the damage,
  the increase of the clean text's negative log-likelihood (:mod:`synrob.probe.causal.erasure.inside`);
* :func:`score_counterfactual` (``--counterfactual``): agreement pairs, the subject moved to the
  other class at the eraser's layer against a random direction of the same size, and how often
  the preferred verb form flips (:mod:`synrob.probe.causal.erasure.counterfactual`).

The library returns results; this module loads, checks, shows progress on stderr and prints.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import typer

if TYPE_CHECKING:
    from synrob.probe.causal.behaviour import PairScore, SentencePair

_CHUNK = 64  # pairs per step of the progress bar


@dataclass
class ErasureOptions:
    """What ``synrob score`` passes on when ``--erase`` is given."""

    original: str | None
    perturbed: str | None
    lm: str
    erase: str | None
    erase_random: str | None
    erase_random_matched: str | None
    layer: int | None
    counterfactual: bool
    as_json: bool
    bootstrap: int
    seed: int
    device: str
    batch_size: int
    limit: int | None
    dtype: str
    placement: Any = None  # synrob.perturb.lm.placement.Placement (None: a plain load)
    pairs: str | None = None  # a MultiBLiMP / BLiMP file instead of original and perturbed


def _eraser_info(eraser: Any, path: str) -> dict[str, Any]:
    meta = eraser.meta
    return {"file": path, "kind": eraser.kind, "rank": eraser.rank, "dim": eraser.dim,
            "labels": eraser.labels, "encoder": meta.get("encoder"), "task": meta.get("task"),
            "task_params": meta.get("task_params"), "control": meta.get("control"),
            "layer": meta.get("layer")}


def _load(opts: ErasureOptions) -> tuple[Any, Any, int]:
    """The LM, the eraser and the layer, checked against each other."""
    from synrob.perturb.lm.loaded import load_lm
    from synrob.probe.causal.erasure.inside import check_lm_eraser
    from synrob.probe.causal.erasure.store import load_eraser

    eraser = load_eraser(opts.erase)
    loaded = load_lm(opts.lm, device=opts.device, dtype=opts.dtype, placement=opts.placement)
    layer = check_lm_eraser(eraser, opts.erase, lm_spec=opts.lm, lm=loaded, layer=opts.layer)
    return loaded, eraser, layer


def _placed(loaded: Any) -> dict[str, Any]:
    """``{"placement": ...}`` of a device-mapped, offloaded or quantized LM, else empty."""
    ident = loaded.placement.identity()
    return {"placement": ident} if ident else {}


def _control_file(opts: ErasureOptions, kind: str) -> str | None:
    """The file of the ``kind`` control: given (``--erase-random[-matched]``), else the one
    ``synrob erase -o FILE`` wrote beside the eraser when it exists, else None."""
    from pathlib import Path

    from synrob.probe.causal.erasure.setup import control_paths

    given = opts.erase_random if kind == "random" else opts.erase_random_matched
    beside = control_paths(Path(str(opts.erase)))[kind]
    return given if given is not None else (str(beside) if beside.is_file() else None)


def _controls(opts: ErasureOptions, eraser: Any, loaded: Any, layer: int
              ) -> dict[str, tuple[Any, dict[str, Any]]]:
    """Each random control and where it came from (:func:`_control_file`). Without a file the
    rank-matched one is built from the eraser (a random subspace of its rank, seeded by
    ``--seed``); the displacement-matched one cannot be (it is fitted on the training
    vectors), so it is left out with a warning."""
    import warnings

    from synrob.perturb.errors import SynrobWarning
    from synrob.probe.causal.erasure.fit import random_control
    from synrob.probe.causal.erasure.inside import CONTROLS, check_lm_eraser
    from synrob.probe.causal.erasure.store import load_eraser

    out = {}
    for kind in CONTROLS:
        path = _control_file(opts, kind)
        if path is not None:
            control = load_eraser(path)
            check_lm_eraser(control, path, lm_spec=opts.lm, lm=loaded, layer=layer, kind=kind)
            out[kind] = (control, _eraser_info(control, path))
        elif kind == "random":
            control = random_control(eraser, opts.seed)
            out[kind] = (control, {"built": "random subspace of the eraser's rank",
                                   "seed": opts.seed, "rank": control.rank})
        else:
            warnings.warn(f"no displacement-matched random control for {opts.erase} (no "
                          "--erase-random-matched and no NAME.random_matched.safetensors "
                          "beside it, which synrob erase -o writes): scoring clean, erased "
                          "and random only", SynrobWarning, stacklevel=2)
    return out


def _pairs(opts: ErasureOptions) -> tuple[list[Any], str, int]:
    from synrob.perturb.errors import SynrobError
    from synrob.probe.api import score_inputs
    from synrob.probe.causal.behaviour import split_unchanged

    pairs, how, _, _ = score_inputs(opts.original, opts.perturbed, opts.pairs)
    kept, skipped = split_unchanged(pairs[:opts.limit] if opts.limit is not None else pairs)
    if not kept:
        raise SynrobError(f"{opts.pairs or opts.perturbed}: no pair to score (every sentence "
                          "is unchanged)")
    return kept, how, skipped


def _score_all(lm: Any, pairs: list[SentencePair], batch_size: int, label: str = ""
               ) -> list[PairScore]:
    """:func:`~synrob.probe.causal.behaviour.score_chunked` with a progress bar on stderr."""
    from synrob.probe.causal.behaviour import score_chunked

    from ..output import progress_callback

    with progress_callback(f"{label}scoring {len(pairs)} pairs") as on_progress:
        return score_chunked(lm, pairs, batch_size=batch_size, chunk=_CHUNK,
                             progress=on_progress)


def score_with_eraser(opts: ErasureOptions) -> None:
    """:func:`score_counterfactual` with ``--counterfactual``, else :func:`score_erased`."""
    from synrob.perturb.errors import ParameterError

    if opts.erase is None:
        raise ParameterError("--erase-random, --erase-random-matched, --layer and "
                             "--counterfactual need --erase FILE")
    (score_counterfactual if opts.counterfactual else score_erased)(opts)


def score_erased(opts: ErasureOptions) -> None:
    """``synrob score --erase``: clean / erased / random controls: preference and damage."""
    from synrob.probe.causal.erasure.inside import erasing, erasure_summary

    from ..output import emit_json

    kept, how, skipped = _pairs(opts)
    loaded, eraser, layer = _load(opts)
    controls = _controls(opts, eraser, loaded, layer)
    scores = {}
    for name, which in (("clean", None), ("erased", eraser),
                        *((k, c) for k, (c, _) in controls.items())):
        with erasing(loaded, which, layer):
            scores[name] = _score_all(loaded, kept, opts.batch_size, f"{name}: ")
    matched = controls.get("random_matched")
    summary = {**erasure_summary(scores, n_boot=opts.bootstrap, seed=opts.seed),
               "pairs": len(kept), "skipped": skipped, "aligned_by": how, "lm": opts.lm,
               "lm_kind": loaded.kind, "dtype": loaded.dtype, "layer": layer,
               "positions": "every token but the start token",
               "eraser": _eraser_info(eraser, opts.erase),
               "random_control": controls["random"][1],
               "random_matched_control": matched[1] if matched else None,
               "bootstrap": opts.bootstrap, "seed": opts.seed, **_placed(loaded)}
    if not opts.as_json:
        _print_erased(summary)
        return
    for k, item in enumerate(scores["clean"]):
        emit_json({**item.as_dict(), **{
            name: {"logprob_original": s[k].logprob_original,
                   "logprob_perturbed": s[k].logprob_perturbed,
                   "prefers_original": s[k].prefers_original}
            for name, s in scores.items() if name != "clean"}})
    emit_json(summary)


def score_counterfactual(opts: ErasureOptions) -> None:
    """``synrob score --erase --counterfactual``: flip rates of the preferred verb form."""
    from synrob.perturb.errors import ParameterError, SynrobError
    from synrob.perturb.io.data import resolve_one
    from synrob.probe.causal.erasure.counterfactual import (
        agreement_pairs,
        counterfactual_scores,
        flip_summary,
        subject_first,
    )

    from ..output import emit_json, progress

    if opts.erase_random is not None or opts.erase_random_matched is not None:
        raise ParameterError("--erase-random and --erase-random-matched do not apply to "
                             "--counterfactual (its control is a random direction of the same "
                             "size per token)")
    pairs, other = agreement_pairs(str(resolve_one(opts.original)), str(resolve_one(opts.perturbed)))
    if not pairs:
        raise SynrobError(f"{opts.perturbed}: no synrob.agreement pair (write them with "
                          "synrob perturb --kind agreement)")
    kept, after = subject_first(pairs[:opts.limit] if opts.limit is not None else pairs)
    if not kept:
        raise SynrobError(f"{opts.perturbed}: no agreement pair with the subject before the "
                          f"verb ({after} set aside)")
    loaded, eraser, layer = _load(opts)
    scores: list[Any] = []
    starts = range(0, len(kept), _CHUNK)
    for a in progress(starts, f"counterfactual on {len(kept)} pairs", total=len(starts)):
        scores += counterfactual_scores(loaded, kept[a:a + _CHUNK], eraser, layer,
                                        seed=opts.seed, first=a, batch_size=opts.batch_size)
    summary = {**flip_summary(scores, n_boot=opts.bootstrap, seed=opts.seed),
               "subject_after_target": after, "without_pair": other, "lm": opts.lm,
               "lm_kind": loaded.kind, "dtype": loaded.dtype, "layer": layer,
               "eraser": _eraser_info(eraser, opts.erase), "bootstrap": opts.bootstrap,
               "seed": opts.seed, **_placed(loaded)}
    if not opts.as_json:
        _print_counterfactual(summary)
        return
    for item in scores:
        emit_json(item.as_dict())
    emit_json(summary)


def _num(v: float, fmt: str) -> str:
    return "n/a" if v is None or v != v else format(v, fmt)


def _ci(ci: list[float], scale: float = 1.0, fmt: str = ".1f") -> str:
    return f"[{_num(scale * ci[0], fmt)}, {_num(scale * ci[1], fmt)}]"


def _change(c: dict[str, Any], scale: float, fmt: str, unit: str) -> str:
    return (f"{_num(scale * c['value'], '+' + fmt)} {unit} {_ci(c['ci95'], scale, fmt)} "
            f"p={_num(c['p_value'], '.3f')}")


def _rows(rows: list[tuple[str, str]]) -> None:
    width = max(len(k) for k, _ in rows)
    for key, value in rows:
        typer.echo(f"{key:<{width}}  {value}".rstrip())


def _control_text(info: dict[str, Any] | None) -> str:
    if info is None:
        return "not scored (no file)"
    if "file" in info:
        return str(info["file"])
    return f"{info['built']} ({info['rank']}), seed {info['seed']}"


def _print_erased(s: dict[str, Any]) -> None:
    e = s["eraser"]
    rows = [("lm", f"{s['lm']} ({s['lm_kind']}, {s['dtype']})"),
            ("eraser", f"{e['file']}: {e['kind']} of rank {e['rank']} at layer {s['layer']} "
                       f"(task {e['task']}), on {s['positions']}"),
            ("random control", _control_text(s["random_control"])),
            ("random matched", _control_text(s["random_matched_control"])),
            ("pairs scored", f"{s['pairs']} from {s['sources']} source sentences (aligned by "
                             f"{s['aligned_by']}; {s['skipped']} unchanged pairs skipped)")]
    names = [n for n in ("clean", "erased", "random", "random_matched") if n in s]
    for name in names:
        c = s[name]
        text = (f"prefers original {_num(100 * c['accuracy'], '.1f')} % "
                f"{_ci(c['accuracy_ci95'], 100)}; NLL "
                f"{_num(c['nll_per_token'], '.3f')} nats/token")
        if name != "clean":
            text += (f"; vs clean: accuracy {_change(c['accuracy_change'], 100, '.1f', 'pts')}"
                     f", NLL increase {_change(c['nll_increase'], 1, '.3f', 'nats/token')}")
        rows.append((name.replace("_", " "), text))
    for control in names[2:]:
        d = s[f"erased_vs_{control}"]
        rows.append((f"erased - {control.replace('_', ' ')}",
                     f"accuracy {_change(d['accuracy_change'], 100, '.1f', 'pts')}, NLL "
                     f"increase {_change(d['nll_increase'], 1, '.3f', 'nats/token')}"))
    rows.append(("", f"95% intervals: paired bootstrap {s['bootstrap']} over sources, seed "
                     f"{s['seed']}; p one-sided: accuracy change below 0, NLL increase above "
                     "0 (damage: positive = worse)"))
    _rows(rows)


def _print_counterfactual(s: dict[str, Any]) -> None:
    e = s["eraser"]
    rows = [("lm", f"{s['lm']} ({s['lm_kind']}, {s['dtype']})"),
            ("eraser", f"{e['file']}: {e['kind']} of rank {e['rank']} at layer {s['layer']} "
                       f"(task {e['task']}), subject's tokens moved to the other class"),
            ("pairs scored", f"{s['pairs']} from {s['sources']} source sentences ({s['subject_after_target']}"
                             f" with the subject after the verb set aside); clean LM prefers "
                             f"the original in {s['clean_prefers_original']}")]
    for name in ("clean", "counterfactual", "random"):
        c = s[name]
        text = f"prefers original {_num(100 * c['accuracy'], '.1f')} % {_ci(c['accuracy_ci95'], 100)}"
        if name != "clean":
            text += (f"; flips {_num(100 * c['flip_rate'], '.1f')} % "
                     f"{_ci(c['flip_rate_ci95'], 100)}; log-odds shift "
                     f"{_num(c['shift'], '+.3f')} {_ci(c['shift_ci95'], 1, '.3f')} nats")
        rows.append((name, text))
    d = s.get("counterfactual_vs_random")
    if d is not None:
        rows.append(("counterfactual - random",
                     f"flip rate {_change(d['flip_rate'], 100, '.1f', 'pts')}, shift "
                     f"{_change(d['shift'], 1, '.3f', 'nats')} (p one-sided: above 0)"))
    rows.append(("", f"95% intervals: bootstrap {s['bootstrap']} over sources, seed {s['seed']}"))
    _rows(rows)
