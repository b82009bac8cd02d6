"""Where one layer run of the ``amnesic`` experiment spends its time, against its FLOP floor
(prints ``name: value`` lines).

Runs one layer of a preset (default: layer 12 of ``demo``) in this process, as
``synrob run amnesic`` runs it with one worker: ``prepare`` (the agreement pairs; the encoding,
normally a cache hit), then the layer's run, timed by phase. With ``--clean warm`` (default) the
preset's clean LM scores are computed (or read) first, as the first layer run of a preset does,
so the timed run is one of the others, which reuse them; ``--clean cold`` times a run that
computes them itself. Code without a clean-score cache always recomputes them in the run.

Lines:

* the machine: ``cpu_model``, ``cpu_bf16`` (bf16 in the CPU's flags), ``native_bf16`` (synrob's
  choice), ``threads`` (torch's, the run's), ``date``, ``loadavg_start`` and ``loadavg_end``
  (the one-minute load average: other work on a shared machine); ``preset``, ``layer``,
  ``clean``;
* ``prepare_s``; ``clean_scores_s`` (computing or reading the clean scores before the run,
  the LM's load included; nan when the code has no clean-score cache or with ``--clean cold``);
* ``layer_run_s`` and its phases, each counted once (the innermost phase owns a second):
  ``probe_fits_s`` (LEACE, the random controls, the probes before and after every erasure:
  ``run_amnesic``), ``lm_scoring_s`` (the pairs scored inside the model, every condition:
  ``score_pairs``), ``counterfactual_s`` (``counterfactual_scores`` and its clean pass),
  ``loading_s`` (models, configs, tokenizers: transformers' ``from_pretrained`` and GGUF
  reads, ``load_lm``), ``other_s`` (the rest: reading vectors and treebanks, pairing,
  bootstrap intervals);
* ``layer_run_floor_s``: the floating-point work the run cannot avoid, at this machine's
  measured rate for products of those sizes (the best of ``--repeats`` timings of each shape,
  on the run's threads, as bench/experiment_floor.py does for probes; the LM's shapes are
  timed before the run too, with ``--clean warm``, and the better rate counts: on a shared
  machine a busy minute lowers a rate, and a lower rate would lower the bar):

  - ``lm_floor_s``: the LM's forward passes over the scored tokens of the conditions the run
    must compute (inside the model: LEACE and the two random controls; counterfactual: the
    intervention and its random direction; the two clean passes too with ``--clean cold``):
    per scored token (every token of a sequence but the last, whose prediction is not
    scored), 2 FLOPs per weight of the attention, feed-forward and output matrices (a
    LLaMA-style block: q, k, v, o, gate, up, down), and QK^T and AV over the positions before
    it; padding, the norms, the softmax and the last token cost nothing;
  - ``probe_floor_s``: the probes' training steps as the run took them: every L-BFGS
    evaluation of the softmax probe's loss on ``n`` training words of ``d`` dimensions and
    ``C`` classes costs the products ``x W`` and ``x^T g`` (2 n d C FLOPs each), at the
    better of their rates on one thread (the fits' own) and on the run's; the erasers' fits
    and applications, the dev and test predictions cost nothing;

  ``lm_tflop``, ``probe_tflop``, ``scored_tokens``, ``conditions_counted``, ``probe_evals``
  and the rates (``gflops_<shape>``) say what it is made of; ``matmul_gflops_fp32`` is
  bench/encode.py's reference product on the same threads;
* ``layer_run_over_floor``: ``layer_run_s`` / ``layer_run_floor_s``;
* ``model_parses_per_process``: reads of a model's file in this whole process: full parses
  of a GGUF file (``gguf_parses``: ``gguf.GGUFReader`` built on it, which reads its metadata
  and tensor table) plus weight loads of a checkpoint that is not a GGUF file
  (``checkpoint_weight_loads``: ``from_pretrained`` of a model without ``gguf_file``; a GGUF
  weight load reads its tensors through the reader its parse built). Apart: ``weight_loads``
  (every ``from_pretrained`` of a model), ``gguf_parses``, ``gguf_header_reads``
  (transformers' fast reader of a GGUF header: metadata keys with long string arrays
  skipped, and tensor names; 0.01 s for SmolLM2),
  ``gguf_metadata_reads`` and ``gguf_tensor_loads`` (transformers' ``load_gguf_checkpoint``
  without and with tensors), ``config_parses`` (transformers' config reads) and
  ``tokenizer_loads``;
* ``rows_identical`` (with ``--reference FILE``: rows written by ``--rows-out`` or a
  ``results.json``): 1 when the run's rows equal the reference's, the run's time and id
  (:data:`NOT_COMPARED`) aside.

``--compare A B`` only prints ``rows_identical`` of two such files (e.g. the ``results.json``
of ``synrob run amnesic`` under the code before and after a change).

``--count ARGS...`` only runs ``synrob ARGS...`` in this process (its output goes to stderr)
and prints ``exit_code``, ``model_parses_per_process`` and the counts apart, counted as
above: the parse-once rule for any command (e.g. ``--count run jabberwocky --preset sample -p
model=smollm2 -p behaviour_lm=smollm2 -o DIR``).

Usage: ``python bench/amnesic.py [--preset demo] [--layer 12] [-o DIR] [--clean warm|cold]
[--rows-out F] [--reference F] [--repeats 5]``; ``python bench/amnesic.py --compare A B``;
``python bench/amnesic.py --count ARGS...``.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime
import functools
import json
import math
import os
import sys
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

PHASES = ("probe_fits", "lm_scoring", "counterfactual", "loading")


# ---------------------------------------------------------------------- phases and counts
class Phases:
    """Exclusive wall time per phase: a call inside another phase's call is that inner
    phase's time only (a stack of open phases; ``clock`` is injectable for tests)."""

    def __init__(self, clock: Callable[[], float] = time.perf_counter) -> None:
        self.clock = clock
        self.seconds: Counter[str] = Counter()
        self._stack: list[list[Any]] = []  # [name, since]

    def reset(self) -> None:
        self.seconds.clear()

    def enter(self, name: str) -> None:
        now = self.clock()
        if self._stack:
            top = self._stack[-1]
            self.seconds[top[0]] += now - top[1]
        self._stack.append([name, now])

    def leave(self) -> None:
        now = self.clock()
        name, since = self._stack.pop()
        self.seconds[name] += now - since
        if self._stack:
            self._stack[-1][1] = now

    def wrap(self, name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(fn)
        def timed(*args: Any, **kwargs: Any) -> Any:
            self.enter(name)
            try:
                return fn(*args, **kwargs)
            finally:
                self.leave()

        return timed


@dataclasses.dataclass
class Counts:
    """Model reads in this process, and the probes' L-BFGS evaluations by (n, d, C)."""

    calls: Counter[str] = dataclasses.field(default_factory=Counter)
    evals: Counter[tuple[int, int, int]] = dataclasses.field(default_factory=Counter)
    fit: tuple[int, int, int] | None = None

    @property
    def model_parses(self) -> int:
        """Reads of a model's file: full GGUF parses plus weight loads of a checkpoint that
        is not a GGUF file (a GGUF load reads its tensors through the parse it is counted by)."""
        return self.calls["gguf"] + self.calls["checkpoint"]

    @property
    def weight_loads(self) -> int:
        """Every ``from_pretrained`` of a model, from a GGUF file or another checkpoint."""
        return self.calls["gguf_weights"] + self.calls["checkpoint"]


def _patch(owner: Any, name: str, make: Callable[[Callable[..., Any]], Any]) -> None:
    """Replace ``owner.name`` by ``make(original)`` where it exists (older code may lack it)."""
    if owner is not None and hasattr(owner, name):
        setattr(owner, name, make(getattr(owner, name)))


#: A count's label, or a function of the counted call's arguments that gives it.
Label = str | Callable[..., str]


def _classmethod(owner: Any, name: str, phases: Phases, counts: Counts, label: Label) -> None:
    func = getattr(owner, name).__func__

    def counted(cls: Any, *args: Any, **kwargs: Any) -> Any:
        counts.calls[label(*args, **kwargs) if callable(label) else label] += 1
        return func(cls, *args, **kwargs)

    setattr(owner, name, classmethod(phases.wrap("loading", counted)))


def _counted(phases: Phases, counts: Counts, label: Label) -> Callable[[Any], Any]:
    """Wrap a function to count its calls under ``label`` (or ``label(*args, **kwargs)``)."""
    def make(fn: Callable[..., Any]) -> Callable[..., Any]:
        def counted(*args: Any, **kwargs: Any) -> Any:
            counts.calls[label(*args, **kwargs) if callable(label) else label] += 1
            return fn(*args, **kwargs)

        return phases.wrap("loading", functools.wraps(fn)(counted))

    return make


def instrument(phases: Phases, counts: Counts) -> None:
    """Time the phases and count the model reads by wrapping the functions that do them."""
    import importlib

    import torch
    import transformers
    from transformers.tokenization_utils_base import PreTrainedTokenizerBase

    def module(name: str) -> Any:
        try:
            return importlib.import_module(name)
        except ImportError:
            return None

    _classmethod(transformers.PreTrainedModel, "from_pretrained", phases, counts,
                 lambda *a, **k: "gguf_weights" if k.get("gguf_file") else "checkpoint")
    _classmethod(transformers.PretrainedConfig, "get_config_dict", phases, counts, "config")
    _classmethod(PreTrainedTokenizerBase, "from_pretrained", phases, counts, "tokenizer")
    _patch(module("gguf"), "GGUFReader", _counted(phases, counts, "gguf"))
    _patch(module("transformers.modeling_gguf_pytorch_utils"), "load_gguf_checkpoint",
           _counted(phases, counts, lambda *a, **k: "gguf_tensors" if k.get("return_tensors")
                    else "gguf_metadata"))
    _patch(module("transformers.integrations.gguf"), "read_gguf_metadata",
           _counted(phases, counts, "gguf_header"))
    wrap = phases.wrap
    _patch(module("synrob.perturb.lm.loaded"), "load_lm", lambda f: wrap("loading", f))
    _patch(module("synrob.perturb.lm.models"), "dequantised_copy", lambda f: wrap("loading", f))
    amnesic = module("synrob.probe.causal.erasure.amnesic")
    _patch(amnesic, "run_amnesic", lambda f: wrap("probe_fits", f))
    _patch(amnesic, "load_gold", lambda f: wrap("other", f))
    _patch(module("synrob.probe.training.probing"), "encoder_features",
           lambda f: _timed_source(f, phases))
    _patch(module("synrob.probe.causal.behaviour"), "score_pairs", lambda f: wrap("lm_scoring", f))
    cf = module("synrob.probe.causal.erasure.counterfactual")
    for name in ("counterfactual_scores", "clean_logprobs"):
        _patch(cf, name, lambda f: wrap("counterfactual", f))
    _count_probe_steps(module("synrob.probe.causal.erasure.softmax"), counts, torch)


def _timed_source(encoder_features: Callable[..., Any], phases: Phases) -> Callable[..., Any]:
    """``encoder_features`` whose feature source's reads are phase ``other``."""
    @functools.wraps(encoder_features)
    def make(*args: Any, **kwargs: Any) -> Any:
        return phases.wrap("other", encoder_features(*args, **kwargs))  # keeps .layers, .encode

    return make


def _count_probe_steps(softmax: Any, counts: Counts, torch: Any) -> None:
    """Count every L-BFGS loss evaluation of the softmax probe by its (n, d, C)."""
    step = torch.optim.LBFGS.step

    def counted_step(self: Any, closure: Callable[[], Any]) -> Any:
        def counted() -> Any:
            if counts.fit is not None:
                counts.evals[counts.fit] += 1
            return closure()

        return step(self, counted)

    torch.optim.LBFGS.step = counted_step

    def make(lbfgs: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(lbfgs)
        def fit(x: Any, y: Any, w: Any, b: Any, l2: float) -> Any:
            counts.fit = (int(x.shape[0]), int(x.shape[1]), int(w.shape[1]))
            try:
                return lbfgs(x, y, w, b, l2)
            finally:
                counts.fit = None

        return fit

    _patch(softmax, "_lbfgs", make)


# ---------------------------------------------------------------------- FLOPs
def lm_shapes(config: Mapping[str, Any]) -> dict[str, tuple[int, int, int]]:
    """The LM's product shapes per scored token ``(1, K, N)`` by name: a LLaMA-style block's
    q and o (``qo``), k and v (``kv``), gate and up (``up``), down (``down``), and the output
    head (``head``)."""
    d = int(config["hidden_size"])
    heads = int(config["num_attention_heads"])
    kv = int(config.get("num_key_value_heads") or heads) * (d // heads)
    ffn = int(config["intermediate_size"])
    return {"qo": (1, d, d), "kv": (1, d, kv), "up": (1, d, ffn), "down": (1, ffn, d),
            "head": (1, d, int(config["vocab_size"]))}


#: Products of each shape per block (``head``: once per token).
_PER_BLOCK = {"qo": 2, "kv": 2, "up": 2, "down": 1}


def lm_flop(config: Mapping[str, Any], lengths: Sequence[int]) -> dict[str, float]:
    """FLOPs by product shape (:func:`lm_shapes`, plus ``attention``: QK^T and AV) of a forward
    pass over sequences of ``lengths`` tokens (start token included) that scores every token
    but the first: position ``t`` (``0..n-2``) is computed, attending to ``t + 1``
    positions."""
    shapes, blocks = lm_shapes(config), int(config["num_hidden_layers"])
    d = int(config["hidden_size"])
    tokens = sum(max(n - 1, 0) for n in lengths)
    out = {name: 2.0 * tokens * k * n * (_PER_BLOCK[name] * blocks if name != "head" else 1)
           for name, (_, k, n) in shapes.items()}
    pairs = sum(m * (m + 1) / 2 for m in (max(n - 1, 0) for n in lengths))
    out["attention"] = 2.0 * 2.0 * d * pairs * blocks
    return out


def probe_flop(evals: Mapping[tuple[int, int, int], int]) -> dict[tuple[int, int, int], float]:
    """FLOPs by (n, d, C) of the probes' loss evaluations: ``x W`` forward and ``x^T g`` for
    the weights' gradient, 2 n d C each."""
    return {shape: 4.0 * shape[0] * shape[1] * shape[2] * k for shape, k in evals.items()}


def floor_seconds(flop: Mapping[Any, float], gflops: Mapping[Any, float]) -> float:
    """Each shape's FLOPs at its measured rate (GFLOP/s), summed."""
    return sum(f / (gflops[shape] * 1e9) for shape, f in flop.items() if f)


# ---------------------------------------------------------------------- rows
def run_rows(path: str | Path) -> list[dict[str, Any]]:
    """The rows of a ``results.json`` (``rows``) or of a ``--rows-out`` file (a list)."""
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    return data["rows"] if isinstance(data, dict) else data


#: Row fields that say when and as which run a row was made, not what it measured:
#: ``results.json`` adds the last three to a run's rows.
NOT_COMPARED = ("run_seconds", "experiment", "run", "seed")


def rows_identical(a: Sequence[Mapping[str, Any]], b: Sequence[Mapping[str, Any]],
                   ignore: Sequence[str] = NOT_COMPARED) -> bool:
    """Whether two row lists hold the same rows in the same order, ``ignore`` fields aside
    (NaN equals NaN: rows are compared as canonical JSON)."""
    def canon(row: Mapping[str, Any]) -> str:
        return json.dumps({k: v for k, v in row.items() if k not in ignore}, sort_keys=True)

    return len(a) == len(b) and all(canon(x) == canon(y) for x, y in zip(a, b, strict=True))


# ---------------------------------------------------------------------- measurement
def _rate(torch: Any, m: int, k: int, n: int, repeats: int, transposed: bool = False) -> float:
    """GFLOP/s of an (m x k) x (k x n) fp32 product (``transposed``: ``a^T b`` with ``a``
    stored (k x m), as a weight gradient is), best of ``repeats``."""
    a = torch.randn(k, m) if transposed else torch.randn(m, k)
    b = torch.randn(k, n)
    with torch.inference_mode():
        best = math.inf
        for _ in range(repeats + 1):  # the first warms up
            t0 = time.perf_counter()
            torch.mm(a.t() if transposed else a, b)
            best = min(best, time.perf_counter() - t0)
    return 2.0 * m * k * n / best / 1e9


def _sequences(key: Mapping[str, Any], lm: Any) -> tuple[list[int], list[int]]:
    """Token lengths (start token included) of the sequences one condition scores: inside
    the model (both sides of each pair, as ``score_pairs`` tokenizes them) and in the
    counterfactual (word by word, subject before target)."""
    from synrob.perturb.lm.loaded import start_token_id
    from synrob.probe.causal.behaviour import pair_sentences, split_unchanged
    from synrob.probe.causal.erasure.counterfactual import agreement_pairs, subject_first
    from synrob.probe.encoders.transformer import word_tokens

    limit = int(key["pair_limit"]) or None
    pairs, _ = pair_sentences(key["test"], key["pairs"])
    kept, _ = split_unchanged(pairs[:limit])
    texts = [p.original for p in kept] + [p.perturbed for p in kept]
    start = 1 if start_token_id(lm.tokenizer) is not None else 0
    inside = [len(ids) + start for ids in
              lm.tokenizer(texts, add_special_tokens=False)["input_ids"]]
    flips, _ = subject_first(agreement_pairs(key["test"], key["pairs"])[0][:limit])
    sents = [s for p in flips for s in (p.original, p.flipped)]
    cf = [len(ids) for ids, _ in word_tokens(lm.tokenizer, sents, causal=True, model=lm.spec)]
    return inside, cf


def _experiment(preset: str, params: Sequence[str]) -> Any:
    from synrob.perturb.params import parse_assignments
    from synrob.perturb.plugins import get_registry

    cls = get_registry().get("experiment", "amnesic")
    return cls(**{**cls.presets[preset], **parse_assignments(list(params))})


def _warm_clean(key: Mapping[str, Any], device: str) -> float:
    """Seconds to compute (or read) the clean scores before the run; nan without the cache."""
    from synrob.probe.experiments.amnesic import runs

    if not hasattr(runs, "clean_scores"):
        return math.nan
    from synrob.perturb.lm.loaded import load_lm

    t0 = time.perf_counter()
    runs.clean_scores(key, load_lm(key["model"], device=device))
    return time.perf_counter() - t0


def _fresh_score_cache(root: Path) -> None:
    """Point the clean-score cache (where the code has one) at an empty ``root``."""
    import shutil

    try:
        from synrob.probe.causal import score_cache
    except ImportError:
        return
    shutil.rmtree(root, ignore_errors=True)
    score_cache.scores_root = lambda: root


def _cpu_bf16() -> bool:
    try:
        flags = Path("/proc/cpuinfo").read_text(encoding="utf-8")
    except OSError:
        return False
    return any(f in flags.split() for f in ("avx512_bf16", "amx_bf16"))


def emit(name: str, value: Any) -> None:
    if isinstance(value, float):
        value = f"{value:.3f}" if math.isfinite(value) else "nan"
    print(f"{name}: {value}", flush=True)


def lm_rates(key: Mapping[str, Any], lm: Any, repeats: int, torch: Any) -> dict[str, float]:
    """The best GFLOP/s of each of the LM's product shapes (:func:`lm_shapes`) for a pass of
    ``batch_size`` rows of the pairs' mean length, on the run's threads."""
    inside, _ = _sequences(key, lm)
    rows = int(key["batch_size"]) * max(1, round(sum(inside) / max(len(inside), 1)))
    rates = {name: max(_rate(torch, rows, k, n, 1) for _ in range(repeats))
             for name, (_, k, n) in lm_shapes(lm.model.config.to_dict()).items()}
    return {**rates, "attention": rates["qo"]}


def _floor(key: Mapping[str, Any], lm: Any, counts: Counts, cold: bool, rates: dict[str, float],
           repeats: int, torch: Any) -> dict[str, Any]:
    """The floor's parts (see the module docstring); ``rates``: the LM's, measured before the
    run, to be bettered by those measured now."""
    from synrob.probe.runtime.threads import torch_threads

    inside, cf = _sequences(key, lm)
    n_inside, n_cf = (4, 3) if cold else (3, 2)
    flop = lm_flop(lm.model.config.to_dict(), inside * n_inside + cf * n_cf)
    rates = {k: max(v, rates.get(k, 0.0)) for k, v in lm_rates(key, lm, repeats, torch).items()}
    pflop = probe_flop(counts.evals)
    prates: dict[Any, float] = {}
    threads = {1, torch.get_num_threads()}  # the fits run on one; the best rate bounds them
    for n, d, c in pflop:
        fwd = grad = 0.0
        for t in threads:
            with torch_threads(t):
                fwd = max(fwd, *(_rate(torch, n, d, c, 1) for _ in range(repeats)))
                grad = max(grad, *(_rate(torch, d, n, c, 1, transposed=True)
                                   for _ in range(repeats)))
        prates[(n, d, c)] = 2.0 / (1.0 / fwd + 1.0 / grad)  # half the FLOPs at each rate
    return {"lm": floor_seconds(flop, rates), "probe": floor_seconds(pflop, prates),
            "lm_flop": sum(flop.values()), "probe_flop": sum(pflop.values()),
            "tokens": sum(max(n - 1, 0) for n in inside * n_inside + cf * n_cf),
            "conditions": f"{n_inside} inside the model, {n_cf} counterfactual",
            "rates": rates, "prates": prates}


def _bench(args: argparse.Namespace) -> None:
    phases, counts = Phases(), Counts()
    instrument(phases, counts)
    import torch
    from encode import _linear_gflops  # bench/ is this script's directory, first on sys.path
    from mst import cpu_model
    from synrob.perturb.lm.device import resolve_device
    from synrob.perturb.lm.dtype import native_bf16
    from synrob.perturb.lm.loaded import load_lm
    from synrob.probe.experiments.backends import execute_run
    from synrob.probe.experiments.base import Context

    device = resolve_device(args.device)
    emit("cpu_model", cpu_model())
    emit("cpu_bf16", int(_cpu_bf16()))
    emit("native_bf16", str(native_bf16(device)).lower())
    emit("threads", torch.get_num_threads())
    emit("date", datetime.date.today().isoformat())
    emit("loadavg_start", f"{os.getloadavg()[0]:.2f}")
    emit("preset", args.preset)
    emit("layer", args.layer)
    emit("clean", args.clean)
    exp = _experiment(args.preset, args.param)
    ctx = Context(Path(args.outdir), device=device, seed=args.seed, lang=exp.language().code)
    t0 = time.perf_counter()
    exp.prepare(ctx)
    specs = [s for s in exp.plan(ctx) if int(s.key["layer"]) == args.layer]
    if not specs:
        sys.exit(f"layer {args.layer} is not among the preset's layers {exp.layers()}")
    emit("prepare_s", time.perf_counter() - t0)
    key = dict(specs[0].key)
    if args.clean == "cold":  # scores cached by an earlier run are not read
        _fresh_score_cache(Path(args.outdir) / "bench-scores")
    emit("clean_scores_s", _warm_clean(key, device) if args.clean == "warm" else math.nan)
    # the LM's product rates before the run too (a busy minute after it would lower the bar);
    # loaded already unless the run computes the clean scores itself
    before = lm_rates(key, load_lm(key["model"], device=device), args.repeats, torch) \
        if args.clean == "warm" else {}
    phases.reset()
    t0 = time.perf_counter()
    rows, _, _ = execute_run(exp, specs[0], ctx)
    wall = time.perf_counter() - t0
    emit("layer_run_s", wall)
    for name in PHASES:
        emit(f"{name}_s", phases.seconds[name])
    emit("other_s", wall - sum(phases.seconds[name] for name in PHASES))
    floor = _floor(key, load_lm(key["model"], device=device), counts, args.clean == "cold",
                   before, args.repeats, torch)
    emit("conditions_counted", floor["conditions"])
    emit("scored_tokens", floor["tokens"])
    emit("lm_tflop", floor["lm_flop"] / 1e12)
    emit("probe_evals", sum(counts.evals.values()))
    emit("probe_tflop", floor["probe_flop"] / 1e12)
    for name, rate in floor["rates"].items():
        emit(f"gflops_{name}", rate)
    for (n, d, c), rate in floor["prates"].items():
        emit(f"gflops_probe_{n}x{d}x{c}", rate)
    emit("matmul_gflops_fp32", max(_linear_gflops(torch, "float32", "cpu")
                                   for _ in range(args.repeats)))
    emit("lm_floor_s", floor["lm"])
    emit("probe_floor_s", floor["probe"])
    total = floor["lm"] + floor["probe"]
    emit("layer_run_floor_s", total)
    emit("layer_run_over_floor", wall / total if total else math.nan)
    emit("loadavg_end", f"{os.getloadavg()[0]:.2f}")
    emit_counts(counts)
    if args.rows_out:
        Path(args.rows_out).write_text(json.dumps(rows, indent=1), encoding="utf-8")
    if args.reference:
        emit("rows_identical", int(rows_identical(run_rows(args.reference), rows)))


def main(argv: Sequence[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--preset", default="demo")
    ap.add_argument("--layer", type=int, default=12)
    ap.add_argument("-p", "--param", action="append", default=[],
                    help="KEY=VALUE over the preset (as synrob run -p)")
    ap.add_argument("-o", "--outdir", default="amnesic-bench",
                    help="the experiment's directory (its data/: the pairs, the first-N files)")
    ap.add_argument("--clean", choices=("warm", "cold"), default="warm")
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--rows-out", default="", help="write the run's rows to this JSON file")
    ap.add_argument("--reference", default="", help="rows to compare with (rows_identical)")
    ap.add_argument("--compare", nargs=2, metavar=("A", "B"), default=None,
                    help="only compare the rows of two files")
    ap.add_argument("--count", nargs=argparse.REMAINDER, default=None, metavar="ARGS",
                    help="only run `synrob ARGS` in this process and count its model reads")
    args = ap.parse_args(argv)
    if args.compare:
        emit("rows_identical", int(rows_identical(*(run_rows(p) for p in args.compare))))
        return
    if args.count is not None:
        _count_command(args.count)
        return
    _bench(args)


def emit_counts(counts: Counts) -> None:
    """``model_parses_per_process`` and the counts it is made of, apart."""
    emit("model_parses_per_process", counts.model_parses)
    emit("weight_loads", counts.weight_loads)
    for label, name in (("checkpoint", "checkpoint_weight_loads"),
                        ("gguf", "gguf_parses"), ("gguf_header", "gguf_header_reads"),
                        ("gguf_metadata", "gguf_metadata_reads"),
                        ("gguf_tensors", "gguf_tensor_loads"),
                        ("config", "config_parses"), ("tokenizer", "tokenizer_loads")):
        emit(name, counts.calls[label])


def _count_command(argv: Sequence[str]) -> None:
    """``synrob ARGV`` run in this process (its output to stderr), then its model reads:
    ``exit_code``, ``model_parses_per_process`` and the counts apart."""
    from synrob.cli.app import run

    counts = Counts()
    instrument(Phases(), counts)
    stdout, sys.stdout = sys.stdout, sys.stderr
    try:
        code = run(list(argv))
    finally:
        sys.stdout = stdout
    emit("exit_code", code)
    emit_counts(counts)


if __name__ == "__main__":
    main()
