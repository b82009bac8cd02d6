"""Encoding throughput and memory with MiniLM on EWT (prints ``name: value`` lines).

* ``raw_tokens_per_s``: plain batched forward passes (hidden states on) over the very batches
  synrob builds (length-sorted, token budget), nothing else;
* ``synrob_tokens_per_s``: :func:`encode_corpus` end to end - tokenization, windows, batching,
  forward, word pooling, float16 cache writes - with the model already loaded;
* ``ratio_vs_raw`` (target >= 0.9): best raw time / best synrob time over ``--repeats``
  (default 5) *interleaved* passes (raw, synrob, raw, synrob, ...), so that contention on a
  shared machine hits both alike; ``ratio_vs_raw_median`` uses the medians, and
  ``raw_s_runs``/``synrob_s_runs``/``pair_ratios`` list every pass; ``naive_tokens_per_s``:
  one sentence per forward pass with per-word Python pooling (synrob must be >= 2.5x);
* ``peak_rss_mb``: peak RSS of a fresh process caching all 7 MiniLM layers of EWT train in
  float16 (target < 2000);
* the machine and the FLOP bound: ``matmul_gflops_fp32`` / ``matmul_gflops_bf16`` (a
  (2048 x 1024) x (1024 x 1024) ``torch.nn.functional.linear``, the product a transformer layer
  runs), ``native_bf16`` (:func:`synrob.perturb.lm.dtype.native_bf16`; ``SYNROB_NATIVE_BF16``
  overrides the hardware's answer when set), ``default_dtype`` (what
  the encoder's ``precision=auto`` resolves to for MiniLM here), ``flop_per_token`` (2 FLOPs
  per weight of the layers plus the attention products at the batches' mean length),
  ``flop_bound_tokens_per_s`` (fp32 GFLOP/s over that; the GFLOP/s is the median of one
  measurement before and one beside each timed pair, ``matmul_gflops_fp32_runs``),
  ``fraction_of_flop_bound`` (synrob's
  default extraction over the bound of its dtype) and ``fraction_of_flop_bound_fp32``
  (synrob forced to fp32 over the fp32 bound; target >= 0.8), ``padding_share`` (padded
  positions that hold no token, in the batches synrob builds; reduce if > 0.05), and
  ``synrob_vs_raw_fp32`` (synrob's default extraction over the raw fp32 forward on the same
  batches; target >= 1.5 on a bf16-capable CPU, about 1 where ``auto`` stays fp32);
* with ``--bf16-check``: ``bf16_uuas_delta``, ``bf16_dspr_delta`` and ``bf16_pos_delta``,
  |bf16 - fp32| of the MiniLM layer-3 distance probe's UUAS/DSpr and the POS probe's accuracy
  on EWT test (``synrob probe``, train on EWT train; target <= 0.005 each).
* on CUDA: ``synrob_serial_tokens_per_s``, ``synrob_overlapped_tokens_per_s`` and
  ``overlap_speedup``, synrob (fp32) with each batch's host work (pooling, cache writes) run
  after its forward pass or overlapping the next one's (the default), interleaved;
* ``exit_layer``, ``synrob_one_layer_tokens_per_s``, ``early_exit_speedup`` and
  ``synrob_one_layer_vs_raw_fp32``: synrob (fp32) asked for one layer (``--exit-layer``,
  default 3), which with early exit runs only the blocks that layer needs, over the same
  request run through every block, and over the raw fp32 forward (every layer); interleaved;
* with ``--op-shares``: ``gemm_gflops_MxKxN`` (and ``gemm_vs_bound``) for each linear shape
  of the model at the token budget, and ``op_share_<op>``, the share of self CPU time of the
  six largest ops in a ``torch.profiler`` trace of one raw fp32 pass;
* with ``--attention-kernels``: ``raw_fp32_sdpa_s``, ``raw_fp32_eager_s`` and
  ``fp32_eager_vs_sdpa``, the raw fp32 forward with each attention kernel, interleaved;
* with ``--budgets B1,B2,...``: ``budget_sweep_B`` per token budget, raw fp32 and synrob's
  default-dtype extraction on the batches of budget B (interleaved, ``--repeats`` passes).

Usage: ``python bench/encode.py [--device cpu|cuda|auto] [--threads 2] [--skip-rss]
[--bf16-check] [--budgets 1024,4096] [--exit-layer 3] [--op-shares] [--attention-kernels]``.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
EWT = Path(os.environ.get("SYNROB_EWT_DIR", ROOT.parent / "shared" / "data" / "ud" / "en_ewt"))

_RSS_CHILD = """
import resource, sys, time, torch
torch.set_num_threads(int(sys.argv[3]))
from synrob.probe.representations.encoding import encode_corpus
t = time.perf_counter()
rs = encode_corpus("minilm", sys.argv[1], layers="all", dtype="float16", device=sys.argv[2])
print(rs.n_words, time.perf_counter() - t, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--input", default=str(EWT / "en_ewt-ud-dev.conllu"))
    ap.add_argument("--train", default=str(EWT / "en_ewt-ud-train.conllu"))
    ap.add_argument("--naive-sentences", type=int, default=600)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--skip-rss", action="store_true")
    ap.add_argument("--bf16-check", action="store_true")
    ap.add_argument("--exit-layer", type=int, default=3,
                    help="the one layer of the early-exit lines (synrob_one_layer_*)")
    ap.add_argument("--op-shares", action="store_true",
                    help="profile one raw fp32 pass (op_share_* lines) and time the model's own "
                         "linear shapes (gemm_gflops_* lines)")
    ap.add_argument("--attention-kernels", action="store_true",
                    help="time the raw fp32 forward with SDPA and with eager attention "
                         "(fp32_eager_vs_sdpa)")
    ap.add_argument("--budgets", default="",
                    help="comma list of token budgets: time the default dtype against raw fp32 "
                         "on the batches of each (budget_sweep lines)")
    args = ap.parse_args()

    import torch

    torch.set_num_threads(args.threads)
    os.environ["SYNROB_CACHE"] = tempfile.mkdtemp(prefix="synrob-bench-")
    from synrob.probe.encoders.resolve import resolve_encoder
    from synrob.probe.representations import encoding as reps

    sync = torch.cuda.synchronize if args.device.startswith("cuda") else (lambda: None)
    enc = resolve_encoder("minilm", {"device": args.device, "precision": "float32"})
    t = time.perf_counter()
    enc.load()
    print(f"model_load_s: {time.perf_counter() - t:.2f}")
    print(f"device: {enc.device}")
    gflops = {dt: _linear_gflops(torch, dt, args.device) for dt in ("float32", "bfloat16")}
    from synrob.perturb.lm.dtype import native_bf16, resolve_dtype

    default = resolve_dtype("auto", enc.device, enc.options["model"])
    print(f"matmul_gflops_fp32: {gflops['float32']:.1f}")
    print(f"matmul_gflops_bf16: {gflops['bfloat16']:.1f}")
    print(f"native_bf16: {str(native_bf16(enc.device)).lower()}")
    print(f"default_dtype: {default}")
    sents = reps.read_words(args.input)
    layers = list(range(enc.num_layers))
    enc.encode_flat(sents[:64], layers)  # warm-up

    import numpy as np

    batches = _corpus_batches(enc, sents)
    n_tokens = sum(b.n_tokens for b in batches)
    padded = sum(int(b.input_ids.numel()) for b in batches)
    print(f"sentences: {len(sents)}")
    print(f"tokens: {n_tokens}")
    print(f"batches: {len(batches)}")
    print(f"padding_share: {1 - n_tokens / padded:.4f}")
    flop = _flop_per_token(enc.model.config, n_tokens / len(sents))
    print(f"flop_per_token: {flop / 1e6:.2f}e6")

    def raw() -> float:
        return _raw_pass(enc, batches, sync)

    def synrob(encoder: Any = enc, layers: Any = "all") -> float:
        reps._cache.clear()
        sync()
        t0 = time.perf_counter()
        reps.encode_corpus(encoder, args.input, layers=layers, dtype="float16")
        sync()
        return time.perf_counter() - t0

    # interleaved raw, synrob, raw, synrob, ... with the fp32 GFLOP/s measured beside each
    # pair: contention hits all alike, and the FLOP bound is the median of those measurements
    runs, fp32_runs = [], []
    for _ in range(args.repeats):
        fp32_runs.append(_linear_gflops(torch, "float32", args.device))
        runs.append((raw(), synrob()))
    gflops["float32"] = float(np.median([gflops["float32"], *fp32_runs]))
    print(f"matmul_gflops_fp32_runs: {' '.join(f'{g:.0f}' for g in fp32_runs)}")
    print(f"matmul_gflops_fp32_median: {gflops['float32']:.1f}")
    bound = gflops["float32"] * 1e9 / flop
    print(f"flop_bound_tokens_per_s: {bound:.0f}")
    raws, syns = sorted(r for r, _ in runs), sorted(s for _, s in runs)
    raw_s, syn_s = raws[0], syns[0]
    raw_med, syn_med = float(np.median(raws)), float(np.median(syns))
    print(f"raw_s_runs: {' '.join(f'{r:.2f}' for r, _ in runs)}")
    print(f"synrob_s_runs: {' '.join(f'{s:.2f}' for _, s in runs)}")
    print(f"pair_ratios: {' '.join(f'{r / s:.3f}' for r, s in runs)}")
    print(f"raw_tokens_per_s: {n_tokens / raw_s:.0f}")
    print(f"synrob_tokens_per_s: {n_tokens / syn_s:.0f}")
    print(f"ratio_vs_raw: {raw_s / syn_s:.3f}")
    print(f"ratio_vs_raw_median: {raw_med / syn_med:.3f}")
    # the encoder above is forced to fp32 (precision=float32): the default may differ
    print(f"fraction_of_flop_bound_fp32: {n_tokens / syn_s / bound:.3f}")
    if default == "float32":
        print(f"synrob_vs_raw_fp32: {raw_s / syn_s:.3f}")
        print(f"fraction_of_flop_bound: {n_tokens / syn_s / bound:.3f}")
    else:
        enc_d = resolve_encoder("minilm", {"device": args.device, "precision": default})
        enc_d.load()
        t_d = min(synrob(enc_d) for _ in range(args.repeats))
        print(f"synrob_vs_raw_fp32: {raw_s / t_d:.3f}")
        bound_d = gflops[default] * 1e9 / flop
        print(f"fraction_of_flop_bound: {n_tokens / t_d / bound_d:.3f}")
    if args.budgets:
        _budget_sweep(args, enc, default, sents, sync)
    if args.op_shares and not str(enc.device).startswith("cuda"):  # a CPU trace
        _op_shares(args, enc, batches, gflops["float32"])
    if args.attention_kernels:
        _attention_kernels(args, batches, sync)
    if str(enc.device).startswith("cuda"):
        _overlap_check(args, enc, synrob, n_tokens)
    _early_exit_check(args, enc, raw, synrob, n_tokens)

    # naive: one sentence per forward pass, per-word pooling in Python
    sub = sents[: args.naive_sentences]
    tok, model = enc.tokenizer, enc.model
    n_naive = 0
    t0 = time.perf_counter()
    with torch.inference_mode():
        for words in sub:
            e = tok(words, is_split_into_words=True, return_tensors="pt")
            n_naive += e.input_ids.shape[1]
            out = model(**{k: v.to(enc.device) for k, v in e.items()}, output_hidden_states=True)
            hs = torch.stack(out.hidden_states)[:, 0].float().cpu()
            wid = e.word_ids(0)
            vecs = []
            for i in range(len(words)):
                idx = [j for j, w in enumerate(wid) if w == i]
                vecs.append(hs[:, idx].mean(1))
            np.stack([v.numpy() for v in vecs], axis=1)
    sync()
    naive_s = time.perf_counter() - t0
    naive_tps = n_naive / naive_s
    print(f"naive_tokens_per_s: {naive_tps:.0f}")
    print(f"synrob_vs_naive: {n_tokens / syn_s / naive_tps:.2f}")
    shutil.rmtree(os.environ["SYNROB_CACHE"], ignore_errors=True)

    if args.bf16_check:
        _bf16_check(args)
    if not args.skip_rss:
        rss_cache = tempfile.mkdtemp(prefix="synrob-bench-rss-")
        try:
            out = subprocess.run([sys.executable, "-c", _RSS_CHILD, args.train, args.device,
                                  str(args.threads)], env=dict(os.environ, SYNROB_CACHE=rss_cache),
                                 capture_output=True, text=True, check=True)
        finally:
            shutil.rmtree(rss_cache, ignore_errors=True)
        words, secs, rss_kb = out.stdout.split()
        print(f"train_words: {words}")
        print(f"train_encode_s: {float(secs):.1f}")
        print(f"peak_rss_mb: {int(rss_kb) / 1024:.0f}")


def _raw_pass(enc: Any, batches: list[Any], sync: Any) -> float:
    """Seconds of plain forward passes (hidden states on) over ``batches``, nothing else."""
    import torch

    sync()
    t0 = time.perf_counter()
    with torch.inference_mode():
        for b in batches:
            enc.model(input_ids=b.input_ids.to(enc.device),
                      attention_mask=b.attention_mask.to(enc.device), output_hidden_states=True)
    sync()
    return time.perf_counter() - t0


def _budget_sweep(args: argparse.Namespace, enc: Any, default: str, sents: list[Any],
                  sync: Any) -> None:
    """Per token budget B: raw fp32 forward and synrob's ``default``-dtype extraction on the
    batches of budget B, interleaved ``--repeats`` times; prints ``budget_sweep_B: raw fp32
    tokens/s, synrob tokens/s, best-over-best ratio``."""
    from synrob.probe.encoders.resolve import resolve_encoder
    from synrob.probe.representations import encoding as reps

    for budget in (int(b) for b in args.budgets.split(",")):
        enc_b = resolve_encoder("minilm", {"device": args.device, "precision": default,
                                           "token_budget": budget})
        enc_b.load()
        batches = _corpus_batches(enc_b, sents)  # the same ids and masks in any dtype
        n_tokens = sum(b.n_tokens for b in batches)
        raws, syns = [], []
        for _ in range(args.repeats):
            raws.append(_raw_pass(enc, batches, sync))
            reps._cache.clear()
            t0 = time.perf_counter()
            reps.encode_corpus(enc_b, args.input, layers="all", dtype="float16")
            sync()
            syns.append(time.perf_counter() - t0)
        print(f"budget_sweep_{budget}: raw_fp32 {n_tokens / min(raws):.0f} tok/s, synrob_"
              f"{default} {n_tokens / min(syns):.0f} tok/s, ratio {min(raws) / min(syns):.3f} "
              f"({len(batches)} batches)")


def _overlap_check(args: argparse.Namespace, enc: Any, synrob: Any, n_tokens: int) -> None:
    """CUDA: synrob with the fp32 encoder ``enc``, with and without host work overlapping the
    GPU's (its ``overlap_host_work``, switched between passes), interleaved ``--repeats``
    times; prints ``synrob_serial_tokens_per_s`` and ``overlap_speedup`` (best serial / best
    overlapped)."""
    times: dict[bool, list[float]] = {True: [], False: []}
    try:
        for _ in range(args.repeats):
            for overlap in (False, True):
                enc.overlap_host_work = overlap
                times[overlap].append(synrob(enc))
    finally:
        del enc.overlap_host_work  # back to the class default
    print(f"synrob_serial_tokens_per_s: {n_tokens / min(times[False]):.0f}")
    print(f"synrob_overlapped_tokens_per_s: {n_tokens / min(times[True]):.0f}")
    print(f"overlap_speedup: {min(times[False]) / min(times[True]):.3f}")


def _early_exit_check(args: argparse.Namespace, enc: Any, raw: Any, synrob: Any,
                      n_tokens: int) -> None:
    """synrob (fp32 encoder ``enc``) asked for one layer (``--exit-layer``), with and without
    early exit (its ``early_exit``, switched between passes), interleaved ``--repeats`` times
    with the raw fp32 forward (every layer, as a plain ``model(**batch)`` computes them)."""
    layer = args.exit_layer
    times: dict[str, list[float]] = {"raw": [], "full": [], "exit": []}
    try:
        for _ in range(args.repeats):
            times["raw"].append(raw())
            for name, on in (("full", False), ("exit", True)):
                enc.early_exit = on
                times[name].append(synrob(enc, [layer]))
    finally:
        del enc.early_exit  # back to the class default
    best = {k: min(v) for k, v in times.items()}
    print(f"exit_layer: {layer} ({enc.blocks_run([layer])} of {enc.num_layers - 1} blocks run)")
    print(f"synrob_one_layer_tokens_per_s: {n_tokens / best['exit']:.0f}")
    print(f"early_exit_speedup: {best['full'] / best['exit']:.3f}")
    print(f"synrob_one_layer_vs_raw_fp32: {best['raw'] / best['exit']:.3f}")


def _op_shares(args: argparse.Namespace, enc: Any, batches: list[Any], bound_gflops: float
               ) -> None:
    """Where the raw fp32 forward's time goes: ``op_share_<op>`` (self CPU time of the largest
    ops in a ``torch.profiler`` trace of one raw pass over ``batches``; ``addmm`` is the linear
    layers), and ``gemm_gflops_MxKxN`` / ``gemm_vs_bound``: the fp32 rate of each linear shape
    the model runs (M = the token budget), timed like the bound's (2048 x 1024 x 1024)."""
    import torch
    from torch.profiler import ProfilerActivity, profile

    cfg = enc.model.config
    d, ffn = cfg.hidden_size, getattr(cfg, "intermediate_size", 4 * cfg.hidden_size)
    m = max(int(b.input_ids.numel()) for b in batches)
    for k, n in sorted({(d, d), (d, ffn), (ffn, d)}):
        rate = _linear_gflops(torch, "float32", args.device, shape=(m, k, n), repeats=5)
        print(f"gemm_gflops_{m}x{k}x{n}: {rate:.1f} (gemm_vs_bound {rate / bound_gflops:.3f})")
    _raw_pass(enc, batches, lambda: None)  # warm
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        _raw_pass(enc, batches, lambda: None)
    rows = sorted(prof.key_averages(), key=lambda e: e.self_cpu_time_total, reverse=True)
    total = sum(e.self_cpu_time_total for e in rows)
    for e in rows[:6]:
        print(f"op_share_{e.key.removeprefix('aten::')}: {e.self_cpu_time_total / total:.3f}")


def _attention_kernels(args: argparse.Namespace, batches: list[Any], sync: Any) -> None:
    """The raw fp32 forward over ``batches`` with MiniLM loaded with SDPA and with eager
    attention, interleaved ``--repeats`` times: ``raw_fp32_<kernel>_s`` (best, median) and
    ``fp32_eager_vs_sdpa`` (best SDPA time over best eager time)."""
    import numpy as np
    from synrob.probe.encoders.resolve import resolve_encoder

    encs = {}
    for kernel in ("sdpa", "eager"):
        encs[kernel] = resolve_encoder("minilm", {"device": args.device, "precision": "float32",
                                                  "attention": kernel})
        encs[kernel].load()
    times: dict[str, list[float]] = {k: [] for k in encs}
    for _ in range(args.repeats):
        for kernel, e in encs.items():
            times[kernel].append(_raw_pass(e, batches, sync))
    for kernel, ts in times.items():
        print(f"raw_fp32_{kernel}_s: {min(ts):.2f} (median {float(np.median(ts)):.2f})")
    print(f"fp32_eager_vs_sdpa: {min(times['sdpa']) / min(times['eager']):.3f}")


def _corpus_batches(enc: Any, sents: list[Any]) -> list[Any]:
    """The batches :func:`encode_corpus` builds with ``enc``: per chunk of the corpus,
    length-sorted under the encoder's token budget."""
    import numpy as np
    from synrob.probe.representations import encoding as reps

    offsets = np.cumsum([0] + [len(s) for s in sents])
    bounds = reps._chunks(offsets, reps.CHUNK_WORDS)
    return [b for a, c in zip(bounds[:-1], bounds[1:], strict=True)
            for b in enc.batches(enc.sequences(sents[a:c]))]


def _linear_gflops(torch: Any, dtype: str, device: str, repeats: int = 3,
                   shape: tuple[int, int, int] = (2048, 1024, 1024)) -> float:
    """GFLOP/s of an (M x K) x (K x N) linear layer in ``dtype`` (default: 2048 x 1024 x
    1024, the bound's shape); best of ``repeats``."""
    dev = "cpu" if device == "auto" and not torch.cuda.is_available() else device
    dev = "cuda" if dev == "auto" else dev
    dt = getattr(torch, dtype)
    m, k, n = shape
    x = torch.randn(m, k, device=dev).to(dt)
    w = torch.randn(n, k, device=dev).to(dt)
    with torch.inference_mode():
        torch.nn.functional.linear(x, w)
        best = float("inf")
        for _ in range(repeats):
            t = time.perf_counter()
            torch.nn.functional.linear(x, w)
            if dev.startswith("cuda"):
                torch.cuda.synchronize()
            best = min(best, time.perf_counter() - t)
    return 2 * m * k * n / best / 1e9


def _flop_per_token(config: Any, mean_len: float) -> float:
    """Forward FLOPs per token of a BERT-style encoder: 2 per weight of the attention and
    feed-forward matrices, plus QK^T and AV over ``mean_len`` positions."""
    d, layers = config.hidden_size, config.num_hidden_layers
    ffn = getattr(config, "intermediate_size", 4 * d)
    weights = layers * (4 * d * d + 2 * d * ffn)
    return 2 * weights + layers * 4 * d * mean_len


def _bf16_check(args: argparse.Namespace) -> None:
    """|bf16 - fp32| of MiniLM layer 3's distance (UUAS, DSpr) and POS (accuracy) probes."""
    import json

    dev, test = (str(Path(args.train).with_name(f"en_ewt-ud-{x}.conllu")) for x in ("dev", "test"))
    scores: dict[str, dict[str, float]] = {}
    for prec in ("float32", "bfloat16"):
        for task in ("distance", "pos"):
            out = subprocess.run(
                [sys.executable, "-m", "synrob.cli", "probe", "--encoder", "minilm", "--layer",
                 "3", "--task", task, "--train", args.train, "--dev", dev, "--test", test,
                 "--json", "--device", args.device, "-p", f"encoder.precision={prec}"],
                capture_output=True, text=True, check=True)
            res = json.loads(out.stdout)["results"]
            scores.setdefault(prec, {}).update(next(iter(res.values())))
    for metric, name in (("uuas", "bf16_uuas_delta"), ("dspr", "bf16_dspr_delta"),
                         ("acc", "bf16_pos_delta")):
        print(f"{name}: {abs(scores['bfloat16'][metric] - scores['float32'][metric]):.4f}")


if __name__ == "__main__":
    main()
