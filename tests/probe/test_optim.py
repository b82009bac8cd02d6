"""synrob.probe.training.optim against the installed torch.optim: the same weights bit for bit."""

from __future__ import annotations

import subprocess
import sys

import pytest
import torch
from synrob.probe.training.optim import Adam, Plateau


def _params(seed: int) -> list[torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    return [torch.randn(16, 8, generator=g).requires_grad_(),
            torch.randn(8, generator=g).requires_grad_(),
            torch.randn(3, 5, 7, generator=g).requires_grad_()]


def _grads(step: int, params: list[torch.Tensor]) -> list[torch.Tensor | None]:
    g = torch.Generator().manual_seed(1000 + step)
    out: list[torch.Tensor | None] = [torch.randn(p.shape, generator=g) * 10 ** (step % 5 - 2)
                                      for p in params]
    if step % 4 == 3:  # a parameter without a gradient is skipped, as torch skips it
        out[1] = None
    return out


@pytest.mark.parametrize("weight_decay", [0.0, 0.01])
@pytest.mark.parametrize("factor", [0.1, 0.5])
def test_adam_and_plateau_equal_torch_optim(weight_decay: float, factor: float) -> None:
    ours, theirs = _params(0), _params(0)
    opt = Adam(ours, lr=0.003, weight_decay=weight_decay)
    ref = torch.optim.Adam(theirs, lr=0.003, weight_decay=weight_decay)
    sched = Plateau(opt, factor=factor)
    ref_sched = torch.optim.lr_scheduler.ReduceLROnPlateau(ref, mode="min", factor=factor,
                                                           patience=0)
    # epoch metrics: improvements, a plateau within the 1e-4 threshold, a rise, improvements
    metrics = [5.0, 4.0, 3.9999, 4.5, 3.0, 2.9, 2.9, 1.0]
    step = 0
    for metric in metrics:
        for _ in range(7):
            opt.zero_grad()
            ref.zero_grad(set_to_none=True)
            for p, q, g in zip(ours, theirs, _grads(step, ours), strict=True):
                p.grad = None if g is None else g.clone()
                q.grad = None if g is None else g.clone()
            opt.step()
            ref.step()
            step += 1
        sched.step(metric)
        ref_sched.step(metric)
        assert opt.lr == ref.param_groups[0]["lr"]
        for p, q in zip(ours, theirs, strict=True):
            assert torch.equal(p, q)
    assert opt.lr < 0.003  # the schedule did lower the rate, so that path was compared


def test_plateau_rejects_factor_one() -> None:
    with pytest.raises(ValueError, match="factor"):
        Plateau(Adam([torch.zeros(1, requires_grad=True)], lr=0.1), factor=1.0)


def test_training_does_not_import_torch_dynamo() -> None:
    """The point of the module: training a probe does not pay torch._dynamo's import."""
    code = """
import sys, numpy as np
from synrob.probe.probes import StructuralProbe
from synrob.probe.probes.inputs import Features
from synrob.probe.training.batches import make_batches
from synrob.probe.training.loop import fit
import torch
rng = np.random.default_rng(0)
f = Features.from_sentences([rng.standard_normal((n, 6)).astype(np.float32) for n in (3, 4, 5)])
d = [np.abs(np.subtract.outer(np.arange(n), np.arange(n))).astype(np.float32) for n in (3, 4, 5)]
data = make_batches(f, "distance", d, batch_size=2)
probe = StructuralProbe(epochs=2)
module = probe.build(6, 0, "distance")
fit(probe, module, data, data)
print("torch._dynamo" in sys.modules)
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
