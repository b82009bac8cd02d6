"""Benchmark: what the reproducibility rule of a bf16 training step costs on the CPU.

oneDNN's bf16 weight gradients round differently on other thread counts in some shapes, so a
bf16 step's products run their gradients on one thread
(:func:`synrob.probe.training.precision.backward`). This bench trains the structural distance
probe and the perceptron probe (full rank, their default regimens, ``train_precision``
bfloat16) on synthetic vectors (dim ``--dim``, standard normal, seed 0) shaped like the first
``--sentences`` sentences of EWT train (their lengths; path-distance targets, a chain as the
gold tree), with the backward pass done three ways, alternated ``--repeats`` times, each time
``--epochs`` epochs from the same initial weights:

* ``free``: ``loss.backward()`` on the run's threads (no rule: the weights may depend on the
  thread count);
* ``whole``: the whole backward pass on one thread (synrob's rule before 2026-11-27 evening);
* ``nodes``: only the bf16 products' gradient nodes on one thread (synrob's rule now).

Prints ``name: value`` lines: ``cpu_model``, ``native_bf16``, ``threads``; per probe ``P`` and
way ``W`` the median seconds per epoch ``P_W_epoch_s``; ``P_nodes_over_free`` and
``P_whole_over_free`` (what each rule costs, as a ratio in one run); ``P_nodes_equal_whole``
(yes when the weights trained the ``nodes`` way equal the ``whole`` way's bit for bit).

Usage: ``python bench/bf16_backward.py [--sentences 2000] [--epochs 3] [--repeats 8]
[--threads 2] [--probes structural,perceptron]``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from pathlib import Path

EWT = Path(os.environ.get("SYNROB_EWT_DIR",
                          Path(__file__).resolve().parents[2] / "shared" / "data" / "ud" / "en_ewt"))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sentences", type=int, default=2000)
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--repeats", type=int, default=8)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--dim", type=int, default=384)
    ap.add_argument("--probes", default="structural,perceptron")
    args = ap.parse_args()
    import torch
    from synrob.perturb.lm.dtype import native_bf16

    torch.set_num_threads(args.threads)
    from mst import cpu_model  # bench/ is this script's directory, first on sys.path

    print(f"cpu_model: {cpu_model()}")
    print(f"native_bf16: {str(native_bf16('cpu')).lower()}")
    print(f"threads: {args.threads}")
    lengths = _lengths(args.sentences)
    for name in args.probes.split(","):
        for key, value in _compare(name, lengths, args).items():
            print(f"{name}_{key}: {value}")


def _compare(name: str, lengths: list[int], args: argparse.Namespace) -> dict[str, str]:
    """Each way's median epoch seconds and the ratios for probe ``name``."""
    import torch
    from synrob.probe.training import loop as training

    probe, train, dev = _setup(name, lengths, args.dim, args.epochs)
    ways = {"free": _free, "whole": _whole, "nodes": training.backward}
    seconds: dict[str, list[float]] = {w: [] for w in ways}
    weights: dict[str, torch.Tensor] = {}
    try:
        for _ in range(args.repeats):
            for way, fn in ways.items():
                training.backward = fn
                torch.manual_seed(0)
                module = probe.build(args.dim, 0, "distance")
                t = time.perf_counter()
                training.fit(probe, module, train, dev)
                seconds[way].append((time.perf_counter() - t) / args.epochs)
                weights[way] = module.proj.detach().clone()
    finally:
        training.backward = ways["nodes"]
    med = {w: statistics.median(v) for w, v in seconds.items()}
    out = {f"{w}_epoch_s": f"{med[w]:.3f}" for w in ways}
    out["nodes_over_free"] = f"{med['nodes'] / med['free']:.2f}"
    out["whole_over_free"] = f"{med['whole'] / med['free']:.2f}"
    out["nodes_equal_whole"] = "yes" if torch.equal(weights["nodes"], weights["whole"]) else "no"
    return out


def _setup(name: str, lengths: list[int], dim: int, epochs: int):  # noqa: ANN202
    """The probe (bf16, ``epochs`` epochs, no early stop) and its train and dev batches."""
    import numpy as np
    import torch
    from synrob.perturb.plugins import get_registry
    from synrob.probe.probes.inputs import Features
    from synrob.probe.training.batches import make_batches

    rng = np.random.default_rng(0)
    feats = Features.from_sentences([rng.standard_normal((n, dim)).astype(np.float32)
                                     for n in lengths])
    dist = [np.abs(np.arange(n)[:, None] - np.arange(n)[None]).astype(np.float32)
            for n in lengths]
    heads = [np.concatenate([[0], np.arange(1, n)]).astype(np.int64) for n in lengths]
    probe = get_registry().get("probe", name)(epochs=epochs, patience=epochs,
                                               train_precision="bfloat16")
    dev_n = max(len(lengths) // 10, 1)

    def batches(f: Features, n: int):  # noqa: ANN202
        kw = {"heads": heads[:n]} if name == "perceptron" else {}
        return make_batches(f, "distance", dist[:n], batch_size=probe.options["batch_size"],
                            dtype=torch.bfloat16, **kw)

    return probe, batches(feats, len(lengths)), batches(feats.head(dev_n), dev_n)


def _free(loss, precision: str, device: object) -> None:  # noqa: ANN001
    loss.backward()


def _whole(loss, precision: str, device: object) -> None:  # noqa: ANN001
    from synrob.probe.runtime.threads import torch_threads

    with torch_threads(1):
        loss.backward()


def _lengths(n: int) -> list[int]:
    """Word counts of the first ``n`` sentences of EWT train."""
    from synrob.perturb.corpus import read_conllu

    out = []
    for sent in read_conllu(EWT / "en_ewt-ud-train.conllu"):
        out.append(len(sent.forms))
        if len(out) == n:
            break
    return out


if __name__ == "__main__":
    main()
