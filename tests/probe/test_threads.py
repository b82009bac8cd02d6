"""Probe training gives the same bits on one torch thread and on two.

Experiment runs take their share of the cores (``synrob.probe.experiments.base.run_threads``):
a run alone trains on every core, a run beside others on one, and its results must not depend on
which. Shapes are MiniLM's (dim 384, batches of 20 to 40 sentences of EWT-like lengths), where
the CPU's matrix products split their work between threads.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from synrob.probe.probes import LinearProbe, PerceptronProbe, StructuralProbe
from synrob.probe.probes.inputs import Features
from synrob.probe.runtime.threads import torch_threads
from synrob.probe.training.batches import make_batches
from synrob.probe.training.loop import fit

DIM = 384


def _data(kind: str, seed: int = 0) -> tuple[Features, list[np.ndarray]]:
    rng = np.random.default_rng(seed)
    lens = rng.integers(3, 45, 160)
    feats = Features.from_sentences([rng.standard_normal((n, DIM)).astype(np.float32)
                                     for n in lens])
    if kind == "tag":
        return feats, [rng.integers(0, 17, n) for n in lens]
    i = [np.arange(n) for n in lens]
    if kind == "depth":
        return feats, [a.astype(np.float32) for a in i]
    return feats, [np.abs(a[:, None] - a[None, :]).astype(np.float32) for a in i]


def _train(probe_cls, kind: str, precision: str, threads: int, **params
           ) -> tuple[list[torch.Tensor], list]:
    with torch_threads(threads):
        feats, targets = _data(kind)
        probe = probe_cls(epochs=2, train_precision=precision, **params)
        dtype = torch.bfloat16 if precision == "bfloat16" else None
        bs = probe.options["batch_size"]
        train = make_batches(feats.head(120), kind, targets[:120], batch_size=bs, dtype=dtype)
        dev = make_batches(Features(feats.matrix[int(feats.offsets[120]):],
                                    feats.offsets[120:] - feats.offsets[120]),
                           kind, targets[120:], batch_size=bs, dtype=dtype)
        torch.manual_seed(0)
        module = probe.build(DIM, 17, kind)
        log = fit(probe, module, train, dev, seed=0)
        return [p.detach().clone() for p in module.parameters()], log.dev_loss


@pytest.mark.parametrize(("probe_cls", "kind", "precision", "params"), [
    (StructuralProbe, "distance", "float32", {}),
    (StructuralProbe, "distance", "bfloat16", {}),
    # rank 128: the weight gradient (dim, 128) that MKL split between threads on an Intel
    # Xeon from about 780 rows per batch unless in strict mode (synrob.perturb.lm.blas)
    (StructuralProbe, "depth", "float32", {"rank": 128}),
    (StructuralProbe, "depth", "bfloat16", {"rank": 128}),
    (PerceptronProbe, "distance", "float32", {}),
    (PerceptronProbe, "distance", "bfloat16", {}),
    (LinearProbe, "tag", "float32", {}),
    (LinearProbe, "tag", "bfloat16", {}),
])
def test_training_gives_the_same_bits_on_one_and_two_threads(probe_cls, kind, precision, params):
    w1, dev1 = _train(probe_cls, kind, precision, 1, **params)
    w2, dev2 = _train(probe_cls, kind, precision, 2, **params)
    assert dev1 == dev2
    assert all(torch.equal(a, b) for a, b in zip(w1, w2, strict=True))


@pytest.mark.parametrize("precision", ["float32", "bfloat16"])
def test_fused_training_gives_the_same_bits_on_one_and_two_threads(precision):
    """All layers in one pass (``fit_layers``: one batched product per step) on 1 and 2
    threads: the same weights and dev losses for every layer."""
    from synrob.probe.training.batches import make_layer_batches
    from synrob.probe.training.loop import fit_layers

    def train(threads: int) -> tuple[list[torch.Tensor], list]:
        with torch_threads(threads):
            first, targets = _data("distance")
            other = np.random.default_rng(1).standard_normal(first.matrix.shape)
            layers = [first, Features(other.astype(np.float32), first.offsets)]
            dtype = torch.bfloat16 if precision == "bfloat16" else None
            cut = int(layers[0].offsets[120])

            def batches(feats, lo, hi):
                return make_layer_batches(feats, "distance", targets[lo:hi], batch_size=20,
                                          dtype=dtype)

            train_set = batches([f.head(120) for f in layers], 0, 120)
            dev_set = batches([Features(f.matrix[cut:], f.offsets[120:] - cut) for f in layers],
                              120, None)
            probe = StructuralProbe(epochs=2, train_precision=precision)
            torch.manual_seed(0)
            modules = [probe.build(DIM, 0, "distance") for _ in layers]
            logs = fit_layers(probe, modules, train_set, dev_set, seed=0)
            return [m.proj.detach().clone() for m in modules], [g.dev_loss for g in logs]

    w1, dev1 = train(1)
    w2, dev2 = train(2)
    assert dev1 == dev2
    assert all(torch.equal(a, b) for a, b in zip(w1, w2, strict=True))


def test_amnesic_softmax_fit_gives_the_same_bits_on_one_and_two_threads():
    """The amnesic probe's L-BFGS fit (its line search's ``torch.dot`` sums depend on the
    thread count) runs on one thread: the same weights whatever the caller's threads."""
    from synrob.probe.causal.erasure.softmax import fit_softmax

    rng = np.random.default_rng(0)
    x = rng.standard_normal((9323, 576)).astype(np.float32)
    y = rng.integers(0, 17, 9323)
    fits = []
    for threads in (1, 2):
        with torch_threads(threads):
            fits.append(fit_softmax(x, y, 17, (x[:500], y[:500]), grid=(1e-3,)))
            assert torch.get_num_threads() == threads  # the caller's threads are back
    assert fits[0].iterations == fits[1].iterations
    assert torch.equal(fits[0].weight, fits[1].weight) and torch.equal(fits[0].bias, fits[1].bias)
