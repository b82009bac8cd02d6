"""Encoding throughput and memory with MiniLM on EWT (prints ``name: value`` lines).

* ``raw_tokens_per_s``: plain batched forward passes (hidden states on) over the very batches
  synrob builds (length-sorted, token budget), nothing else;
* ``synrob_tokens_per_s``: :func:`encode_corpus` end to end - tokenization, windows, batching,
  forward, word pooling, float16 cache writes - with the model already loaded;
* ``ratio_vs_raw`` (target >= 0.9): best raw time / best synrob time over ``--repeats``
  (default 5) *interleaved* passes (raw, synrob, raw, synrob, ...), so that contention on a
  shared machine hits both alike; ``ratio_vs_raw_median`` uses the medians, and
  ``raw_s_runs``/``synrob_s_runs``/``pair_ratios`` list every pass; ``naive_tokens_per_s``: one sentence per forward pass with
  per-word Python pooling (synrob must be >= 2.5x);
* ``peak_rss_mb``: peak RSS of a fresh process caching all 7 MiniLM layers of EWT train in
  float16 (target < 2000).

Usage: ``python bench/encode.py [--device cpu|cuda|auto] [--threads 2] [--skip-rss]``.
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

ROOT = Path(__file__).resolve().parents[1]
EWT = Path(os.environ.get("SYNROB_EWT_DIR", ROOT.parent / "shared" / "data" / "ud" / "en_ewt"))

_RSS_CHILD = """
import resource, sys, time, torch
torch.set_num_threads(int(sys.argv[3]))
from synrob.probe.representations import encode_corpus
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
    args = ap.parse_args()

    import torch

    torch.set_num_threads(args.threads)
    os.environ["SYNROB_CACHE"] = tempfile.mkdtemp(prefix="synrob-bench-")
    from synrob.probe import representations as reps
    from synrob.probe.encoders.resolve import resolve_encoder

    sync = torch.cuda.synchronize if args.device.startswith("cuda") else (lambda: None)
    enc = resolve_encoder("minilm", {"device": args.device})
    t = time.perf_counter()
    enc.load()
    print(f"model_load_s: {time.perf_counter() - t:.2f}")
    print(f"device: {enc.device}")
    a = torch.randn(1024, 1024)
    a @ a
    t = time.perf_counter()
    for _ in range(8):
        a @ a
    print(f"matmul_gflops: {8 * 2 * 1024**3 / (time.perf_counter() - t) / 1e9:.0f}")
    sents = reps.read_words(args.input)
    layers = list(range(enc.num_layers))
    enc.encode_flat(sents[:64], layers)  # warm-up

    # the batches encode_corpus builds: per chunk, length-sorted under the token budget
    offsets = [0]
    for s in sents:
        offsets.append(offsets[-1] + len(s))
    import numpy as np

    bounds = reps._chunks(np.asarray(offsets), reps.CHUNK_WORDS)
    batches = []
    for a, b in zip(bounds[:-1], bounds[1:], strict=True):
        batches.extend(enc.batches(enc.sequences(sents[a:b])))
    n_tokens = sum(b.n_tokens for b in batches)
    print(f"sentences: {len(sents)}")
    print(f"tokens: {n_tokens}")
    print(f"batches: {len(batches)}")

    def raw() -> float:
        sync()
        t0 = time.perf_counter()
        with torch.inference_mode():
            for b in batches:
                enc.model(input_ids=b.input_ids.to(enc.device),
                          attention_mask=b.attention_mask.to(enc.device),
                          output_hidden_states=True)
        sync()
        return time.perf_counter() - t0

    def synrob() -> float:
        reps._cache.clear()
        sync()
        t0 = time.perf_counter()
        reps.encode_corpus(enc, args.input, layers="all", dtype="float16")
        sync()
        return time.perf_counter() - t0

    # interleaved raw, synrob, raw, synrob, ...: contention hits both alike
    runs = [(raw(), synrob()) for _ in range(args.repeats)]
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


if __name__ == "__main__":
    main()
