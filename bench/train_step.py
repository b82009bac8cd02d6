"""Where a structural probe's training step goes, against its FLOP floor (prints ``name: value``).

The step timed is :func:`synrob.probe.training.loop.fit`'s for the structural distance probe (full
rank, batches of 20 sentences: the jabberwocky preset's), on synthetic vectors of MiniLM's size
shaped like the first ``--sentences`` EWT train sentences (the values do not change the work),
in fp32 on ``--threads`` threads. Over ``--epochs`` epochs after one warm-up, each phase is
timed on its own and summed; per step (mean over the epoch's batches), in ms:

* ``gather_ms`` (the batch's vectors from the table), ``projection_ms`` (``t = h B``, the first
  product), ``loss_ms`` (the distances by the Gram trick and the L1 loss), ``backward_ms`` and
  ``adam_ms``; ``step_ms`` is their sum;
* ``products_ms``: the step's two products at the floor (``h B`` and the weight gradient
  ``hᵀ dt``, the same shapes) timed alone, back to back;
* ``floor_ms``: what bench/experiment_floor.py counts for a training step (the projection and
  its weight gradient over the real words, the Gram products, 3x for their backward) at this
  machine's ``matmul_gflops_fp32`` (the best of ``--repeats`` measurements of
  bench/encode.py's large linear layer);
* ``step_over_floor``, ``products_over_floor`` and ``rest_over_floor`` (``step_ms`` less
  ``products_ms``, over the floor): a run's ``runs_over_floor`` cannot be below its steps'
  ``step_over_floor`` (its dev losses and scoring only add), and ``rest_over_floor`` is what
  the step spends beyond the two products it cannot skip.

``prototype_step_ms`` and ``prototype_step_over_floor`` time the same step in other arithmetic,
which synrob does not use because it changes the trained weights' bits (and so every fp32 figure
of the docs): the distances' gradient written by hand (:func:`prototype_loss_grad`: one batched
product ``G t`` instead of autograd's three, no tensor of squares) and torch's fused Adam kernel
(``torch._fused_adam_``, one pass over the weights instead of seven). It says how far from the
floor a step of eager torch kernels gets when the bits may move.

With ``--layers N`` (default 7, MiniLM's), the same for N layers trained in one pass
(:func:`synrob.probe.training.loop.fit_layers`'s step: ``fused_loss`` and N Adams), per layer:
``fused_step_ms_per_layer`` and ``fused_step_over_floor``; ``--layers 1`` skips it.

Usage: ``python bench/train_step.py [--sentences 2000] [--threads 2] [--epochs 3]
[--layers 7] [--repeats 10]``.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from itertools import islice
from pathlib import Path
from typing import Any

EWT = Path(os.environ.get("SYNROB_EWT_DIR",
                          Path(__file__).resolve().parents[2] / "shared" / "data" / "ud" / "en_ewt"))
DIM = 384  # MiniLM's hidden size; the probe is full rank
BATCH = 20
PHASES = ("gather", "projection", "loss", "backward", "adam")


def lengths(n: int) -> list[int]:
    """Word counts of the first ``n`` EWT train sentences."""
    from synrob.perturb.corpus import read_conllu

    return [len(s.forms) for s in islice(read_conllu(EWT / "en_ewt-ud-train.conllu"), n)]


def data(lens: list[int], layers: int, seed: int = 0) -> Any:
    """:func:`synrob.probe.training.batches.make_layer_batches` of ``layers`` synthetic layers."""
    import numpy as np
    from synrob.probe.probes.inputs import Features
    from synrob.probe.training.batches import make_layer_batches

    rng = np.random.default_rng(seed)
    feats = [Features.from_sentences([rng.standard_normal((n, DIM)).astype(np.float32)
                                      for n in lens]) for _ in range(layers)]
    gold = [np.abs(np.arange(n)[:, None] - np.arange(n)[None]).astype(np.float32) for n in lens]
    return make_layer_batches(feats, "distance", gold, batch_size=BATCH)


def step_parts(one: Any, epochs: int) -> dict[str, float]:
    """Mean ms per step of each phase of one layer's training step on the batches ``one``
    (a :class:`~synrob.probe.training.batches.BatchSet`), over ``epochs`` epochs."""
    from synrob.probe.probes import StructuralProbe
    from synrob.probe.probes.structural import _l1_loss
    from synrob.probe.training.optim import Adam

    probe = StructuralProbe(train_precision="float32")
    module = probe.build(DIM, 0, "distance")
    optim = Adam(module.parameters(), lr=probe.options["lr"])
    total = dict.fromkeys(PHASES, 0.0)
    for epoch in range(epochs + 1):  # the first is a warm-up
        for b in one.batches:
            t = [time.perf_counter()]
            x = one.x(b)
            t.append(time.perf_counter())
            optim.zero_grad()
            proj = module(x)
            t.append(time.perf_counter())
            loss = _l1_loss("distance", proj, b)
            t.append(time.perf_counter())
            loss.backward()
            t.append(time.perf_counter())
            optim.step()
            t.append(time.perf_counter())
            if epoch:
                for k, name in enumerate(PHASES):
                    total[name] += t[k + 1] - t[k]
    steps = epochs * len(one.batches)
    return {name: 1e3 * s / steps for name, s in total.items()}


def products_ms(one: Any, epochs: int) -> float:
    """Mean ms per step of ``h B`` and ``hᵀ dt`` alone, at the shapes of each batch of ``one``."""
    import torch

    weight = torch.randn(DIM, DIM)
    xs = [one.x(b).reshape(-1, DIM) for b in one.batches]
    grads = [torch.randn(x.shape[0], DIM) for x in xs]
    with torch.no_grad():
        for x, g in zip(xs, grads, strict=True):  # warm-up
            x @ weight, x.T @ g
        t0 = time.perf_counter()
        for _ in range(epochs):
            for x, g in zip(xs, grads, strict=True):
                x @ weight
                x.T @ g
    return 1e3 * (time.perf_counter() - t0) / (epochs * len(xs))


def prototype_loss_grad(x: Any, weight: Any, batch: Any) -> tuple[Any, Any]:
    """The structural distance loss of ``batch`` (its vectors ``x`` (b, L, dim)) and its gradient
    for ``weight`` (dim, rank), by hand: with ``g`` the loss's derivative in each distance,
    ``dL/dt = 2 (rowsum(G) t - G t)`` for ``G = g + gᵀ``. Equal to autograd's up to fp32
    rounding (tests/test_bench_train_step.py)."""
    import torch

    b, width, dim = x.shape
    flat = x.reshape(-1, dim)
    t = (flat @ weight).reshape(b, width, -1)
    gram = torch.bmm(t, t.transpose(1, 2))
    sq = torch.diagonal(gram, dim1=1, dim2=2)
    raw = sq[:, :, None] + sq[:, None, :] - 2.0 * gram
    diff = raw.clamp_min(0.0) - batch.y
    n = batch.lengths.to(x.dtype)
    pairs = (batch.mask[:, :, None] & batch.mask[:, None, :]).to(x.dtype)
    scale = pairs / (n * n)[:, None, None] / b
    g = torch.sign(diff) * scale * (raw > 0)
    sym = g + g.transpose(1, 2)
    dt = torch.baddbmm(sym.sum(-1, keepdim=True) * t, sym, t, alpha=-1.0).mul_(2.0)
    return (diff.abs() * scale).sum(), flat.T @ dt.reshape(b * width, -1)


def prototype_ms(one: Any, epochs: int) -> float:
    """Mean ms per step of the prototype step on the batches ``one``: gather,
    :func:`prototype_loss_grad`, fused Adam (the structural probe's learning rate)."""
    import torch
    from synrob.probe.probes import StructuralProbe

    probe = StructuralProbe()
    weight = probe.build(DIM, 0, "distance").proj.detach().clone()
    moments = [torch.zeros_like(weight), torch.zeros_like(weight)]
    count = torch.zeros(())
    seconds = 0.0
    for epoch in range(epochs + 1):
        t0 = time.perf_counter()
        for b in one.batches:
            _, grad = prototype_loss_grad(one.x(b), weight, b)
            torch._fused_adam_([weight], [grad], [moments[0]], [moments[1]], [], [count],
                               lr=probe.options["lr"], beta1=0.9, beta2=0.999,
                               weight_decay=0.0, eps=1e-8, amsgrad=False, maximize=False)
        if epoch:
            seconds += time.perf_counter() - t0
    return 1e3 * seconds / (epochs * len(one.batches))


def fused_step_ms(lens: list[int], layers: int, epochs: int) -> float:
    """Mean ms per step of ``layers`` layers' fused training step (all phases)."""
    import torch
    from synrob.probe.probes import StructuralProbe
    from synrob.probe.training.optim import Adam

    batches = data(lens, layers)
    probe = StructuralProbe(train_precision="float32")
    modules = [probe.build(DIM, 0, "distance") for _ in range(layers)]
    optims = [Adam(m.parameters(), lr=probe.options["lr"]) for m in modules]
    index = torch.arange(layers)
    seconds = 0.0
    for epoch in range(epochs + 1):
        t0 = time.perf_counter()
        for b in batches.batches:
            for o in optims:
                o.zero_grad()
            probe.fused_loss(modules, batches.x(b, index), b).sum().backward()
            for o in optims:
                o.step()
        if epoch:
            seconds += time.perf_counter() - t0
    return 1e3 * seconds / (epochs * len(batches.batches))


def floor_flop_per_step(lens: list[int]) -> float:
    """bench/experiment_floor.py's training FLOPs of one epoch over ``lens``, per step."""
    from experiment_floor import _epoch_flop  # bench/ is this script's directory

    corpus = (sum(lens), sum(n * n for n in lens))
    steps = -(-len(lens) // BATCH)
    return _epoch_flop(corpus, DIM, DIM, train=True) / steps


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sentences", type=int, default=2000)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--layers", type=int, default=7)
    ap.add_argument("--repeats", type=int, default=10)
    args = ap.parse_args()
    import torch
    from experiment_floor import _gflops  # bench/ is this script's directory
    from mst import cpu_model

    torch.set_num_threads(args.threads)
    lens = lengths(args.sentences)
    one = data(lens, 1).layer(0)
    parts = step_parts(one, args.epochs)
    prod = products_ms(one, args.epochs)
    gflops = max(_gflops(args.threads, args.repeats))
    floor = 1e3 * floor_flop_per_step(lens) / (gflops * 1e9)
    step = sum(parts.values())
    print(f"cpu_model: {cpu_model()}")
    print(f"threads: {args.threads}")
    print(f"sentences: {len(lens)}")
    print(f"steps_per_epoch: {len(one.batches)}")
    print(f"matmul_gflops_fp32: {gflops:.1f}")
    for name, ms in parts.items():
        print(f"{name}_ms: {ms:.3f}")
    print(f"step_ms: {step:.3f}")
    print(f"products_ms: {prod:.3f}")
    print(f"floor_ms: {floor:.3f}")
    print(f"step_over_floor: {step / floor:.2f}")
    print(f"products_over_floor: {prod / floor:.2f}")
    print(f"rest_over_floor: {(step - prod) / floor:.2f}")
    proto = prototype_ms(one, args.epochs)
    print(f"prototype_step_ms: {proto:.3f}")
    print(f"prototype_step_over_floor: {proto / floor:.2f}")
    if args.layers > 1:
        fused = fused_step_ms(lens, args.layers, args.epochs) / args.layers
        print(f"fused_layers: {args.layers}")
        print(f"fused_step_ms_per_layer: {fused:.3f}")
        print(f"fused_step_over_floor: {fused / floor:.2f}")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
