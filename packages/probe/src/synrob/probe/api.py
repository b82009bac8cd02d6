"""The Python API of synrob.probe: what a notebook needs, the same functions the CLI calls.

Exported by :mod:`synrob.probe` (``from synrob.probe import probe, run_experiment``); see
docs/python.md. ``synrob probe``, ``synrob score``, ``synrob run`` and ``synrob compare`` call
these functions and only print what they return.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# the lazy package: `_public.Figure` (a return type) imports matplotlib only when read
import synrob.probe as _public
from synrob.perturb.io.catalog import Catalog
from synrob.perturb.io.language import Language
from synrob.perturb.io.table import ResultTable

from .reporting.comparison import Comparison, compare
from .reporting.results import ExperimentResults, load_results
from .representations.encoding import RepresentationSet
from .runtime.progress import Counter, ProgressOption, RunCallback, StageCallback, resolve_progress
from .tasks.base import Task
from .training.probing import LayerResult, ProbeRun
from .training.rows import probe_rows

__all__ = ["Comparison", "EraseResult", "ExperimentResults", "ProbeResult", "ScoreResult",
           "compare", "encode", "erase", "list_experiments", "load_results", "probe",
           "run_experiment", "score_pairs"]

Params = Mapping[str, Any] | Sequence[str]


def encode(corpus: str | os.PathLike[str], encoder: str, *, layers: Sequence[int] | str = "all",
           device: str = "auto", params: Mapping[str, Any] | None = None,
           progress: ProgressOption = True) -> RepresentationSet:
    """Word vectors of every sentence of ``corpus`` (one CoNLL-U file or spec) from ``encoder``
    (an alias such as ``minilm``/``smollm2``, a Hugging Face name or a path), through the
    representation cache: ``.layer_matrix(l)`` gives ``((n_words, dim), offsets)``.
    ``progress`` (:mod:`synrob.probe.runtime.progress`) shows the encoding of a corpus not yet cached."""
    from synrob.perturb.io.data import resolve_one
    from synrob.perturb.lm.device import check_device

    from .representations.encoding import encode_corpus

    return encode_corpus(encoder, resolve_one(corpus, "corpus"), layers=layers,
                         device=check_device(device), params=params,
                         progress=resolve_progress(progress))


# ------------------------------------------------------------------ probing
@dataclass(repr=False)
class ProbeResult(ResultTable):
    """A probe run: ``run`` (every layer's results, baselines, logs), ``language``, and
    ``rows``: one per (layer or baseline, test file, role, metric) with ``value``,
    ``ci_low``/``ci_high`` and ``p_value`` where computed. ``test`` is the test file as the
    caller gave it (``sample:en_ewt:test``), ``test_path`` the file read. ``role`` is ``model``,
    ``control``, ``selectivity``, ``lead`` (over the baseline named in ``baseline``), ``mdl``,
    ``drop`` (clean minus perturbed, ``reference`` the clean file; a point difference without
    ``bootstrap``, with its interval and p-value with one), or a baseline's name (``path``,
    ``majority``), as in an experiment's rows (:class:`ExperimentResults`)."""

    run: ProbeRun
    language: Language
    many: bool
    rows: list[dict[str, Any]] = field(default_factory=list)
    #: The encoder's device map, offload and quantization where not the defaults
    #: (:mod:`synrob.perturb.lm.placement`): a quantized model's scores are not the model's own.
    placement: dict[str, Any] = field(default_factory=dict)
    #: test file read -> the spec the caller gave for it (``sample:en_ewt:test``)
    specs: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.title = (f"probe {self.run.encoder} {self.run.task.name} ({self.run.probe.name}), "
                      f"seed {self.run.seed}")
        self.rows = probe_rows(self.run, self.language.code, self.specs)

    @property
    def best(self) -> LayerResult:
        """The layer with the best dev score."""
        return self.run.best

    def as_json(self) -> dict[str, Any]:
        """The object ``synrob probe --json`` prints."""
        from .training.setup import run_json

        lang = {"code": self.language.code, "source": self.language.source}
        placed = {"placement": self.placement} if self.placement else {}
        return {**run_json(self.run, self.many), "lang": lang, **placed}

    def plot(self, metric: str | None = None, test: str | None = None) -> _public.Figure:
        """The layer curve (what ``synrob probe --layer all --plot`` draws): ``metric``
        (default: the task's primary metric) on the test file ``test`` (default: the first)
        against the layer, with the control task, selectivity and MDL where computed; a
        :class:`synrob.probe.render.figures.Figure`, shown inline in a notebook, outside pyplot."""
        from .metrics.layer_curve import curve_rows, layer_curve_figure
        from .training.setup import run_json

        metric = metric or self.run.task.primary_metric
        rows = curve_rows(run_json(self.run, True)["layers"], metric, test)
        title = f"{self.run.encoder} {self.run.task.name} ({self.run.probe.name} probe)"
        return layer_curve_figure(rows, metric=metric, title=title)


def probe(test: str | os.PathLike[str] | Sequence[str | os.PathLike[str]], *,
          encoder: str | None = None, layer: int | str | None = None, task: str | None = None,
          train: str | None = None, dev: str | None = None, probe: str | None = None,
          params: Params = (),
          seed: int = 0, seeds: Sequence[int] | str | None = None, device: str = "auto",
          control: bool = False, mdl: bool = False, bootstrap: int = 0,
          baselines: bool = True, save: str | os.PathLike[str] | None = None,
          load: str | os.PathLike[str] | None = None, fuse: bool | None = None,
          lang: str | None = None, keep_predictions: bool = False,
          on_layer: Callable[[LayerResult, Task], None] | None = None,
          progress: ProgressOption = True) -> ProbeResult:
    """Train a probe on ``layer`` (a number or ``"all"``) of ``encoder`` and score the test
    files (specs such as ``sample:en_ewt:test``, ``ud:en_ewt:test`` or paths) and baselines,
    exactly as ``synrob probe`` does with the same options; ``params`` are its ``-p`` values
    (``{"feature": "Number"}`` or ``["feature=Number"]``). ``on_layer(result, task)`` is
    called as each layer's probe is scored; ``progress`` (:mod:`synrob.probe.runtime.progress`) shows
    the files encoded and the layers probed (for each seed, and for the control task)."""
    from synrob.perturb.io.language import infer_language
    from synrob.perturb.lm.device import check_device
    from synrob.perturb.plugins import get_registry

    from .training.analysis import AnalysisOptions, run_analysed
    from .training.probing import encode_files, encoder_features, read_saved, run_probe
    from .training.setup import (
        build_setup,
        check_saved_setup,
        data_paths,
        layer_list,
        probe_names,
        seed_list,
    )

    device = check_device(device)  # a missing or invalid device fails before any work
    bar = resolve_progress(progress)
    saved = read_saved(Path(load)) if load is not None else None
    names = probe_names(saved, encoder, None if layer is None else str(layer), task, probe)
    setup = build_setup(get_registry(), names[0], names[2], names[3], params, saved, encoder)
    layers = layer_list(names[1], saved)
    if saved is not None:
        check_saved_setup(saved, setup, layers)  # type: ignore[arg-type]
    features = encoder_features(names[0], params=setup.enc_params or None, device=device,
                                layers="all" if layers is None else layers, progress=bar)
    given = [test] if isinstance(test, (str, os.PathLike)) else list(test)
    tests, train_p, dev_p = data_paths([os.fspath(t) for t in given], train, dev)
    language = infer_language(tests[:1], lang)
    if load is not None or (train_p and dev_p):  # else run_probe refuses, before any work
        encode_files(features, [train_p, dev_p, *tests])  # one read of the model's weights
    if layers is None:
        layers = features.layers(train_p or tests[0])  # type: ignore[attr-defined]
    kw = dict(encoder=names[0], task=setup.task, probe=setup.probe, layers=layers, tests=tests,
              features=features, train=train_p, dev=dev_p, seed=seed, device=device,
              save=save, load=load, keep_predictions=keep_predictions, baselines=baselines,
              encoder_params=setup.enc_params, encoder_identity=setup.identity, fuse=fuse,
              on_layer=(lambda r: on_layer(r, setup.task)) if on_layer else None,
              progress=bar)
    seed_ints = seed_list(seeds) if isinstance(seeds, str) else list(seeds or [])
    opts = AnalysisOptions(control, mdl, bootstrap, seed_ints, drops=len(tests) > 1)
    run = run_analysed(opts, **kw) if opts.active else run_probe(**kw)  # type: ignore[arg-type]
    return ProbeResult(run, language, names[1] == "all",
                       placement=_encoder_placement(setup.identity),
                       specs={t: os.fspath(g) for t, g in zip(tests, given, strict=True)})


def _encoder_placement(identity: Mapping[str, Any]) -> dict[str, Any]:
    """The placement options of an encoder identity (none for a plain load)."""
    from synrob.perturb.lm.placement import PLACEMENT_PARAMS

    options = identity.get("options", {}) if isinstance(identity, Mapping) else {}
    return {p.name: options[p.name] for p in PLACEMENT_PARAMS if p.name in options}


# ------------------------------------------------------------------ behaviour
@dataclass(repr=False)
class ScoreResult(ResultTable):
    """Minimal pairs scored by an LM: ``summary`` (accuracy with its interval, ties, mean
    log-probabilities, what ``synrob score`` prints) and ``rows``, one per scored pair."""

    summary: dict[str, Any]
    rows: list[dict[str, Any]] = field(default_factory=list)


def score_pairs(original: str | os.PathLike[str] | None = None,
                perturbed: str | os.PathLike[str] | None = None, *,
                pairs: str | os.PathLike[str] | None = None,
                lm: str = "smollm2", bootstrap: int = 1000, seed: int = 0,
                device: str = "auto", batch_size: int = 32, limit: int | None = None,
                dtype: str = "auto", chunk: int = 64,
                progress: ProgressOption = True,
                params: Params = ()) -> ScoreResult:
    """Does ``lm`` prefer the original? Score aligned original/perturbed CoNLL-U pairs (as
    ``synrob score``): pairs aligned by ``# synrob.source`` (else position), unchanged pairs
    skipped and counted, a bootstrap over source sentences for the accuracy's interval. Or
    score the pairs of ``pairs``, a MultiBLiMP TSV or BLiMP JSONL file (``synrob score
    --pairs``; the grammatical sentence is the original), the same way.

    The preference is on the summed log-probability (``normalisation`` ``sum``); the summary's
    ``normalised`` gives the accuracy per token, per character (lm-eval's ``acc_norm``) and
    per byte. Agreement pairs with distance and attractor metadata (``synrob perturb --kind
    agreement``) get ``breakdown``
    (:func:`~synrob.probe.causal.behaviour.agreement_breakdown`); without it, ``breakdown`` is
    None and ``breakdown_note`` says why. ``progress`` (:mod:`synrob.probe.runtime.progress`)
    shows the pairs scored, ``chunk`` at a time. ``params`` (dict, or ``key=value`` strings;
    ``synrob score -p``) place the LM: ``device_map``, ``max_memory``, ``offload``,
    ``quantization``, ``quantization_unchecked`` (:mod:`synrob.perturb.lm.placement`); the
    summary records them."""
    from synrob.perturb.lm.device import check_device
    from synrob.perturb.lm.dtype import check_dtype
    from synrob.perturb.lm.loaded import load_lm

    from .causal import behaviour as bh

    device = check_device(device)
    check_dtype(dtype)
    bh.check_score_options(bootstrap, batch_size, limit)
    bh.check_pair_inputs(original, perturbed, pairs)
    placement = lm_placement(params)
    placement.check(lm)
    found, how, meta, inputs = score_inputs(original, perturbed, pairs)
    kept, skipped = bh.split_unchanged(found[:limit] if limit is not None else found)
    loaded = load_lm(lm, device=device, dtype=dtype, placement=placement)
    counter = Counter(resolve_progress(progress), f"scoring {len(kept)} pairs ({lm})",
                      len(kept))
    scores = bh.score_chunked(loaded, kept, batch_size=batch_size, chunk=chunk,
                              progress=counter.advance_to)
    counter.close()
    summary = {**bh.preference_summary(scores, n_boot=bootstrap, seed=seed),
               "normalisation": "sum",
               "normalised": bh.normalised_summary(scores, n_boot=bootstrap, seed=seed),
               **_breakdown(scores, meta, bootstrap, seed), "skipped": skipped,
               "aligned_by": how, "lm": lm, "lm_kind": loaded.kind, "dtype": loaded.dtype,
               "bootstrap": bootstrap, "seed": seed, **_placement_record(placement), **inputs}
    out = ScoreResult(summary, [s.as_dict() for s in scores])
    out.title = f"score --lm {lm}: {summary['accuracy']:.3f} prefer the original"
    return out


def score_inputs(original: Any, perturbed: Any, pairs: Any
                 ) -> tuple[list[Any], str, dict[str, dict[str, Any]], dict[str, Any]]:
    """The pairs to score (:class:`~synrob.probe.causal.behaviour.SentencePair`), how they were
    aligned (``source``, ``position`` or ``pairs file``), their agreement metadata by pair id,
    and the inputs as given and resolved (the summary's keys): from the CoNLL-U files
    ``original`` and ``perturbed``, or from the pairs file ``pairs``."""
    from synrob.perturb.io.data import resolve_one

    from .causal import behaviour as bh

    if pairs is not None:
        found, meta, fmt = bh.pairs_from_file(os.fspath(pairs))
        return found, "pairs file", meta, {"pairs_file": os.fspath(pairs), "pairs_format": fmt}
    inputs = {"original": str(original), "perturbed": str(perturbed),
              "original_path": str(resolve_one(original, "original")),
              "perturbed_path": str(resolve_one(perturbed, "perturbed"))}
    found, how = bh.pair_sentences(inputs["original_path"], inputs["perturbed_path"])
    return found, how, bh.agreement_metadata(inputs["perturbed_path"]), inputs


def _breakdown(scores: Sequence[Any], meta: Mapping[str, Mapping[str, Any]], n_boot: int,
               seed: int) -> dict[str, Any]:
    """``breakdown`` (by subject-verb distance and attractors) and ``breakdown_note``: the
    breakdown when some scored pair has the metadata, else None and why not."""
    from .causal.behaviour import agreement_breakdown

    out = agreement_breakdown(scores, meta, n_boot=n_boot, seed=seed)
    if scores and out["pairs_without_metadata"] < len(scores):
        missing = out["pairs_without_metadata"]
        note = (f"{missing} scored pairs have no distance/attractor metadata and are in no "
                "bucket" if missing else None)
        return {"breakdown": out, "breakdown_note": note}
    return {"breakdown": None,
            "breakdown_note": "no scored pair has synrob.agreement distance/attractor metadata "
                              "(agreement pairs of synrob perturb --kind agreement 2.1 or later "
                              "have it), so accuracy is not broken down"}


def lm_placement(params: Params = ()) -> Any:
    """The :class:`~synrob.perturb.lm.placement.Placement` of a language model's ``params``
    (dict, or ``key=value`` strings: ``synrob score -p``); unknown keys are a
    :class:`~synrob.perturb.errors.ParameterError`."""
    from synrob.perturb.lm.placement import PLACEMENT_PARAMS, Placement
    from synrob.perturb.params import parse_params

    from .training.setup import given_params

    return Placement.from_options(parse_params(PLACEMENT_PARAMS, given_params(params), "lm"))


def _placement_record(placement: Any) -> dict[str, Any]:
    """``{"placement": {...}}`` for a device-mapped, offloaded or quantized LM, else empty."""
    ident = placement.identity()
    return {"placement": ident} if ident else {}


# ------------------------------------------------------------------ experiments
def list_experiments() -> Catalog:
    """Every registered experiment: name, version, summary, paper, parameters, presets; a list
    of dicts that is also a table (``.to_pandas()``, a notebook view)."""
    from synrob.perturb.params import describe_component
    from synrob.perturb.plugins import get_registry

    return Catalog([{**describe_component(c.cls), "presets": list(c.cls.presets),
                     "distribution": c.distribution}
                    for c in get_registry().components("experiment")], "experiments",
                   ("name", "version", "summary", "presets", "distribution"))


def make_experiment(name: str, preset: str | None = None, params: Params = ()) -> Any:
    """The registered experiment ``name`` with ``preset`` (default ``default``) and
    ``params`` (dict, or ``key=value`` strings) overriding it."""
    from synrob.perturb.plugins import get_registry

    from .training.setup import given_params

    cls = get_registry().get("experiment", name)
    return cls.from_preset(preset or "default", **given_params(params))


def run_experiment(name: str, out: str | os.PathLike[str] | None = None, *,
                   preset: str | None = None, params: Params = (), seed: int = 0,
                   device: str = "auto", backend: str = "local", workers: int = 1,
                   address: str | None = None, force: bool = False, lang: str | None = None,
                   progress: ProgressOption = True, on_run: RunCallback | None = None,
                   on_stage: StageCallback | None = None) -> ExperimentResults:
    """Run experiment ``name`` into ``out`` (default ``synrob-results/NAME``) as ``synrob
    run`` does: prepare, execute the unfinished runs of the grid (resuming), write
    results.json, report.md, plots and report.html; returns the loaded results.
    ``progress`` (:mod:`synrob.probe.runtime.progress`) shows the experiment's preparation (encoding,
    perturbing) and its runs; ``on_run(run_id, spec, seconds)`` is called as each run is saved,
    ``on_stage(stage, seconds)`` as each stage ends."""
    from synrob.perturb.lm.device import check_device

    from .experiments.runner import run_experiment as _run

    experiment = make_experiment(name, preset, params)
    outdir = Path(out) if out is not None else Path("synrob-results") / name
    device = check_device(device)  # fails before any work
    result = _run(experiment, outdir, seed=seed, device=device, backend=backend,
                  workers=workers, address=address, force=force,
                  progress=resolve_progress(progress), on_run=on_run, lang=lang,
                  on_stage=on_stage)
    loaded = load_results(outdir)
    loaded.invocation = {"executed": result.executed, "reused": result.reused,
                         "seconds": result.seconds, "stages": result.stages,
                         "run_time": result.run_time,
                         "files": [str(f) for f in result.files]}
    return loaded


# ------------------------------------------------------------------ erasure
@dataclass(repr=False)
class EraseResult(ResultTable):
    """An erasure (:func:`erase`): ``run`` (the LEACE eraser, its two random controls, each
    task's accuracies), ``summary`` (what ``synrob erase --json`` prints) and ``rows``: per task
    and condition (``before``, ``leace``, ``random``, ``random_matched``) its test accuracy
    beside the majority rate (the training majority label's test accuracy), then the paired
    differences with their intervals and p-values."""

    run: Any
    summary: dict[str, Any]
    rows: list[dict[str, Any]] = field(default_factory=list)

    def __post_init__(self) -> None:
        s = self.summary
        self.title = f"erase {s['task']} at {s['encoder']} layer {s['layer']} (rank {s['rank']})"
        base = {"encoder": s["encoder"], "layer": s["layer"], "erased": s["task"],
                "seed": s["seed"], "lang": s["lang"]["code"]}
        for name, r in [(s["task"], s), *s["also"].items()]:
            for cond, key in (("before", "before"), ("leace", "after"), ("random", "random"),
                              ("random_matched", "random_matched")):
                self.rows.append({**base, "task": name, "condition": cond, "metric": "accuracy",
                                  "value": r[f"accuracy_{key}"], "majority": r["majority"]})
            for key, d in r.items():
                if isinstance(d, dict) and "ci95" in d:
                    self.rows.append({**base, "task": name, "condition": key,
                                      "metric": "difference", "value": d["value"],
                                      "ci_low": d["ci95"][0], "ci_high": d["ci95"][1],
                                      "p_value": d["p_value"]})

    def save(self, path: str | os.PathLike[str]) -> Path:
        """Write the LEACE eraser to ``path`` and its random controls beside it,
        ``NAME.random.safetensors`` (rank-matched) and ``NAME.random_matched.safetensors``
        (rank- and displacement-matched): what ``synrob score --erase`` reads."""
        from .causal.erasure.setup import control_paths
        from .causal.erasure.store import save_eraser

        save_eraser(Path(path), self.run.eraser)
        erasers = self.run.erasers()
        for kind, where in control_paths(Path(path)).items():
            save_eraser(where, erasers[kind])
        return Path(path)


def erase(train: str, dev: str, test: str, *, encoder: str | None = None,
          layer: int | None = None, task: str | None = None, params: Params = (),
          control: bool = False, also: str | None = None,
          load: str | os.PathLike[str] | None = None, fit: str = "lbfgs", seed: int = 0,
          bootstrap: int = 1000, device: str = "auto", lang: str | None = None,
          progress: ProgressOption = True) -> EraseResult:
    """Fit LEACE on ``task``'s labels (e.g. ``feats`` with ``params={"feature": "Number"}``)
    at ``layer`` of ``encoder`` on ``train`` (or ``load`` a saved eraser), and retrain a linear
    probe on the original, LEACE-erased and randomly erased vectors (a random subspace of the
    same rank; and a random oblique projection of the same rank and mean displacement), as
    ``synrob erase`` does;
    ``also`` names other tasks to probe before and after (``"pos,deprel"``); ``progress``
    (:mod:`synrob.probe.runtime.progress`) shows the encoding and the steps."""
    from synrob.perturb.io.data import resolve_one
    from synrob.perturb.io.language import infer_language
    from synrob.perturb.lm.device import check_device
    from synrob.perturb.plugins import get_registry

    from .causal.erasure import setup as es
    from .causal.erasure.amnesic import run_amnesic
    from .causal.erasure.store import load_eraser
    from .training.probing import encoder_features

    device = check_device(device)  # a missing or invalid device fails before any work
    bar = resolve_progress(progress)
    reg = get_registry()
    saved = load_eraser(Path(load)) if load is not None else None
    setup = es.build_erase_setup(reg, es.erase_names(saved, encoder, layer, task), params,
                                 saved, control, seed)
    es.check_fit_params(setup, fit)
    paths = {k: str(resolve_one(v, k)) for k, v in (("train", train), ("dev", dev),
                                                            ("test", test))}
    language = infer_language([paths["test"]], lang)
    if saved is not None:
        es.check_loaded(saved, Path(load), setup, control, paths["train"])  # type: ignore[arg-type]
    features = encoder_features(setup.encoder, params=setup.enc_params or None, device=device,
                                layers=[setup.layer], progress=bar)
    run = run_amnesic(task=setup.task, probe=setup.probe, features=features, layer=setup.layer,
                      also=es.also_tasks(reg, also), seed=seed, device=device, eraser=saved,
                      fit=fit, meta=es.eraser_meta(setup, control, seed, paths["train"],
                                                   language.code),
                      progress=bar, **paths)
    summary = {**es.result_json(run, setup, bootstrap, seed, fit),
               "lang": {"code": language.code, "source": language.source},
               **{k: str(v) for k, v in (("train", train), ("dev", dev), ("test", test))},
               **{f"{k}_path": v for k, v in paths.items()}}
    return EraseResult(run, summary)
