"""``synrob score``: behavioural scores of aligned original/perturbed pairs under a language model.

The pairs are CoNLL-U files (ORIGINAL PERTURBED) or a MultiBLiMP TSV / BLiMP JSONL file
(``--pairs FILE``). The library side is :mod:`synrob.probe.causal.behaviour` (pairing, scoring,
the bootstrap summary, the normalisations, the agreement breakdowns) on top of
:mod:`synrob.perturb.lm.scoring` (sentence log-probabilities); this module checks the options,
shows progress on stderr and prints: a short summary, or JSON lines with ``--json``.
"""

from __future__ import annotations

from typing import Annotated, Any

import typer
from synrob.perturb.lm.device import DEVICE_HELP

_CHUNK = 64  # pairs scored per step of the progress bar
_SCORING = {"causal": "sum of token log-probabilities given BOS",
            "masked": "pseudo-log-likelihood (Salazar et al. 2020)"}

_NORMS = {"sum": "sum of log-probabilities", "per_token": "per token",
          "per_char": "per character (lm-eval acc_norm)", "per_byte": "per byte (lm-eval "
          "acc_bytes)"}

_Original = Annotated[str | None, typer.Argument(
    help="Original CoNLL-U sentences (a file, sample:en_ewt:SPLIT or ud:NAME:SPLIT); not with "
    "--pairs.", show_default=False)]
_Perturbed = Annotated[str | None, typer.Argument(
    help="Perturbed CoNLL-U sentences (synrob perturb output, or aligned by position); not "
    "with --pairs.", show_default=False)]
_Pairs = Annotated[str | None, typer.Option(
    "--pairs", metavar="FILE",
    help="Score the pairs of a MultiBLiMP TSV (.tsv) or BLiMP JSONL (.jsonl) file instead of "
    "ORIGINAL PERTURBED: the grammatical sentence is the original (synrob perturb --format "
    "multiblimp|blimp writes them, with the metadata of the breakdowns).")]
_Lm = Annotated[str, typer.Option("--lm", help="Language model: an alias (smollm2), a local "
                                  "directory, a .gguf file or a Hugging Face name.")]
_Json = Annotated[bool, typer.Option("--json", help="JSON lines: one per scored pair, then the "
                                     "summary.")]
_Bootstrap = Annotated[int, typer.Option("--bootstrap", help="Bootstrap resamples of the source "
                                         "sentences, each with all its pairs, for the 95% "
                                         "interval of the accuracy (0: none).")]
_Seed = Annotated[int, typer.Option(help="Seed of the bootstrap resampling (and, with --erase, of the "
                                      "built rank-matched random control and the random "
                                      "directions).")]
_Device = Annotated[str, typer.Option(help=DEVICE_HELP)]
_Dtype = Annotated[str, typer.Option("--dtype", help="Dtype the LM computes in: auto (bfloat16 "
                                     "on native-bf16 hardware for a bf16-checked model, else "
                                     "float32), float32, bfloat16 or float16.")]
_BatchSize = Annotated[int, typer.Option(help="Sentences (masked LMs: masked copies) per "
                                         "forward pass.")]
_Limit = Annotated[int | None, typer.Option(help="Score only the first N aligned pairs "
                                            "(unchanged ones included in the N).")]
_Param = Annotated[list[str] | None, typer.Option(
    "--param", "-p", metavar="KEY=VALUE",
    help="LM placement, the same keys as the transformer encoders' -p: device_map=auto|"
    "balanced|balanced_low_0|sequential, max_memory=6GiB (or cpu=6GiB,0=20GiB), offload=DIR "
    "(disk offload), quantization=int8|nf4|torchao-int8 (fidelity-checked models only), "
    "quantization_unchecked=true. Recorded in the summary.")]
_ERASURE = "Erasure inside the LM"
_Erase = Annotated[str | None, typer.Option(
    "--erase", metavar="FILE", rich_help_panel=_ERASURE,
    help="An eraser (synrob erase -o FILE, fitted on this causal LM's states) applied at its "
    "layer during the forward pass, to every token but the start token: scores each pair "
    "clean, erased and with each random control (matched in rank; matched in rank and mean "
    "displacement), with the accuracy changes and the damage (NLL increase: the increase of "
    "the original sentences' per-token negative log-likelihood, positive = worse), paired "
    "bootstrap intervals.")]
_EraseRandom = Annotated[str | None, typer.Option(
    "--erase-random", metavar="FILE", rich_help_panel=_ERASURE,
    help="The rank-matched random-control eraser (kind random). Default: "
    "NAME.random.safetensors beside the --erase file (what synrob erase -o writes) when it "
    "exists, else a random subspace of the eraser's rank seeded by --seed.")]
_EraseRandomMatched = Annotated[str | None, typer.Option(
    "--erase-random-matched", metavar="FILE", rich_help_panel=_ERASURE,
    help="The rank- and displacement-matched random-control eraser (kind random_matched). "
    "Default: NAME.random_matched.safetensors beside the --erase file (what synrob erase -o "
    "writes) when it exists; else it is not scored, with a warning (it is fitted on the "
    "training vectors, which the LM does not have).")]
_Layer = Annotated[int | None, typer.Option(
    "--layer", rich_help_panel=_ERASURE,
    help="The layer to intervene at (the encoders' numbering: 0 = embeddings); default and "
    "only accepted value: the eraser's own.")]
_Counterfactual = Annotated[bool, typer.Option(
    "--counterfactual", rich_help_panel=_ERASURE,
    help="With --erase on agreement pairs (synrob perturb --kind agreement): move the "
    "subject's token states to the other class along the eraser's subspace (AlterRep) and "
    "report how often the preferred verb form flips, against a random direction of the same "
    "size per token (seeded by --seed).")]


def _num(v: float | None, fmt: str = ".2f") -> str:
    return "n/a" if v is None or v != v else format(v, fmt)


def _pct(accuracy: float, ci: list[float]) -> str:
    return (f"{_num(100 * accuracy, '.1f')} % [{_num(100 * ci[0], '.1f')}, "
            f"{_num(100 * ci[1], '.1f')}]")


def _breakdown_rows(s: dict[str, Any]) -> list[tuple[str, str]]:
    """The accuracy by distance and by attractors (sum), or why there is none."""
    b = s.get("breakdown")
    if b is None:
        return [("breakdown", f"none: {s['breakdown_note']}")]
    rows = []
    for axis, label in (("distance", "by distance"), ("attractors", "by attractors")):
        cells = [f"{bucket}: {_pct(c['accuracy'], c['ci95'])} (n={c['n']})"
                 for bucket, c in b[axis].items()]
        rows.append((label, "; ".join(cells)))
    if s.get("breakdown_note"):
        rows.append(("", s["breakdown_note"]))
    return rows


def _input_row(s: dict[str, Any]) -> tuple[str, str]:
    if "pairs_file" in s:
        return ("pairs", f"{s['pairs_file']} ({s['pairs_format']})")
    return ("pairs", f"{s['original']} / {s['perturbed']} (aligned by {s['aligned_by']})")


def _print_summary(s: dict[str, Any]) -> None:
    boot = (f"; 95% CI: bootstrap {s['bootstrap']} over source sentences, seed {s['seed']}"
            if s["bootstrap"] else "")
    rows = [
        ("lm", f"{s['lm']} ({s['lm_kind']}: {_SCORING[s['lm_kind']]})"),
        _input_row(s),
        ("pairs scored", f"{s['pairs']} ({s['skipped']} unchanged pairs skipped)"),
        ("prefers original", f"{s['preferred']} = {_pct(s['accuracy'], s['accuracy_ci95'])} "
                             f"({_NORMS[s['normalisation']]}{boot})"),
        *[(f"  {_NORMS[n]}", f"{c['preferred']} = {_pct(c['accuracy'], c['accuracy_ci95'])}")
          for n, c in s["normalised"].items()],
        ("ties", f"{s['ties']} (sum; counted as not preferring the original)"),
        *([("placement", ", ".join(f"{k}={v}" for k, v in s["placement"].items()))]
          if s.get("placement") else []),
        ("mean log-prob", f"original {_num(s['mean_logprob_original'])} nats "
                          f"({_num(s['logprob_per_token_original'], '.3f')}/token), perturbed "
                          f"{_num(s['mean_logprob_perturbed'])} nats "
                          f"({_num(s['logprob_per_token_perturbed'], '.3f')}/token)"),
        *_breakdown_rows(s),
    ]
    width = max(len(k) for k, _ in rows)
    for key, value in rows:
        typer.echo(f"{key:<{width}}  {value}".rstrip())


def score(original: _Original = None, perturbed: _Perturbed = None, pairs: _Pairs = None,
          lm: _Lm = "smollm2", as_json: _Json = False,
          bootstrap: _Bootstrap = 1000, seed: _Seed = 0, device: _Device = "auto",
          batch_size: _BatchSize = 32, limit: _Limit = None, dtype: _Dtype = "auto",
          erase: _Erase = None, erase_random: _EraseRandom = None,
          erase_random_matched: _EraseRandomMatched = None, layer: _Layer = None,
          counterfactual: _Counterfactual = False, param: _Param = None) -> None:
    """Does the LM prefer the original? Score aligned ORIGINAL/PERTURBED sentence pairs, or
    the pairs of a MultiBLiMP or BLiMP file (--pairs FILE).

    Pairs are aligned by the synrob.source comments of PERTURBED (else by position). Each side
    gets its total log-probability in nats (causal LMs: sum of token log-probabilities given
    BOS; masked LMs: pseudo-log-likelihood). The LM prefers the original when its total is
    strictly higher (ties do not count). Pairs with identical texts (unchanged by the
    perturber) are skipped and counted. The accuracy's 95% interval is a seeded percentile
    bootstrap over the source sentences, each resampled with all its pairs. The accuracy is
    also given per token, per character (lm-eval's acc_norm) and per byte; agreement pairs
    are broken down by subject-verb distance (1, 2-3, 4+) and attractors (0, 1+).

    With --erase FILE (a causal LM), each pair is also scored with the eraser applied inside
    the LM at its layer and with two random erasers of the same rank (one also of the same
    mean displacement); with --counterfactual,
    agreement pairs are scored with the subject moved to the other class (docs/erasure.md).
    """
    from synrob.perturb.errors import ParameterError
    from synrob.perturb.lm.device import check_device
    from synrob.perturb.lm.dtype import check_dtype
    from synrob.probe.api import lm_placement
    from synrob.probe.causal.behaviour import check_pair_inputs, check_score_options

    from ..output import emit_json

    device = check_device(device)  # a missing or invalid device fails before any work
    check_dtype(dtype)
    check_score_options(bootstrap, batch_size, limit)
    check_pair_inputs(original, perturbed, pairs)
    if counterfactual and pairs is not None:
        raise ParameterError("--counterfactual needs the CoNLL-U pairs (ORIGINAL PERTURBED): "
                             "it moves the subject's tokens, found in the trees, which a "
                             "--pairs file does not hold")
    placement = lm_placement(param or [])
    placement.check(lm)
    if (erase is not None or erase_random is not None or erase_random_matched is not None
            or layer is not None or counterfactual):
        from .score_erasure import ErasureOptions, score_with_eraser

        score_with_eraser(ErasureOptions(
            original, perturbed, lm, erase, erase_random, erase_random_matched, layer,
            counterfactual, as_json, bootstrap, seed, device, batch_size, limit, dtype,
            placement, pairs))
        return
    from synrob.probe.api import score_pairs

    from ..output import progress

    result = score_pairs(original, perturbed, pairs=pairs, lm=lm, bootstrap=bootstrap, seed=seed,
                         device=device, batch_size=batch_size, limit=limit, dtype=dtype,
                         chunk=_CHUNK, progress=progress, params=param or [])
    summary = result.summary
    if not as_json:
        _print_summary(summary)
        return
    for item in result.rows:
        emit_json(item)
    emit_json(summary)


def register(app: typer.Typer) -> None:
    app.command("score")(score)
