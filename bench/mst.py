"""Benchmark: the perceptron probe's batched spanning trees against Kruskal per sentence.

For padded batches of ``--batch`` sentences of each width ``L`` (lengths ``L - 5 .. L``, random
weights in [1, 2)), times :func:`synrob.probe.metrics.trees.mst_pairs_batch` (minimax ranks up to
``MINIMAX_MAX_LEN`` words, Prim on the whole batch above) and ``_per_sentence`` (Kruskal, one
sentence at a time: what batches wider than ``MINIMAX_MAX_LEN`` ran before), on the same
batches, median of ``--repeats``; checks that both give the same edges in the same order.

Prints ``name: value`` lines: ``mst_batch_ms_L{L}``, ``mst_per_sentence_ms_L{L}``,
``mst_speedup_L{L}`` (per sentence over batch) and ``mst_identical`` (yes/no).

    python bench/mst.py [--widths 20,40,60,100] [--batch 40] [--repeats 30]
"""

from __future__ import annotations

import argparse
import platform
import statistics
import time

import numpy as np


def cpu_model() -> str:
    """The CPU's model name (``/proc/cpuinfo``), else the platform's machine type."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.machine()


def _time(fn, repeats: int) -> float:
    out = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t0)
    return statistics.median(out) * 1e3


def main() -> None:
    from synrob.probe.metrics import trees as metrics

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--widths", default="20,40,60,100")
    ap.add_argument("--batch", type=int, default=40)
    ap.add_argument("--repeats", type=int, default=30)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    rng = np.random.default_rng(args.seed)
    print(f"cpu: {cpu_model()}")
    print(f"minimax_max_len: {metrics.MINIMAX_MAX_LEN}")
    identical = True
    for width in (int(w) for w in args.widths.split(",")):
        lens = rng.integers(max(2, width - 5), width + 1, size=args.batch)
        lens[0] = width
        w = rng.random((args.batch, width, width)) + 1.0
        batch = metrics.mst_pairs_batch(w, lens)
        alone = metrics._per_sentence(w, lens)
        identical &= all(np.array_equal(a, b) for a, b in zip(batch, alone, strict=True))
        t_batch = _time(lambda: metrics.mst_pairs_batch(w, lens), args.repeats)  # noqa: B023
        t_alone = _time(lambda: metrics._per_sentence(w, lens), args.repeats)  # noqa: B023
        print(f"mst_batch_ms_L{width}: {t_batch:.2f}")
        print(f"mst_per_sentence_ms_L{width}: {t_alone:.2f}")
        print(f"mst_speedup_L{width}: {t_alone / t_batch:.2f}")
    print(f"mst_identical: {'yes' if identical else 'no'}")


if __name__ == "__main__":
    main()
