"""bench/train_step.py: it prints every line, its parts add up to the step, and its floor is
bench/experiment_floor.py's count of a training step."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from .bench_script import load_bench

ROOT = Path(__file__).resolve().parents[1]


def _bench():
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        module = load_bench("train_step")
        module.floor_flop_per_step([1])  # imports experiment_floor while bench/ is on the path
        return module
    finally:
        sys.path.remove(str(ROOT / "bench"))


def test_the_floor_of_a_step_is_experiment_floors_count() -> None:
    bench = _bench()
    lens = [3, 4] + [5] * 19  # 21 sentences: 2 steps of at most 20
    words, sq = sum(lens), sum(n * n for n in lens)
    want = (2 * 2 * words * 384 * 384 + 3 * 2 * sq * 384) / 2
    assert bench.floor_flop_per_step(lens) == pytest.approx(want, rel=1e-12)


def test_the_prototypes_gradient_is_autograds() -> None:
    """The hand-written gradient of the prototype step is the structural probe's loss's
    gradient (autograd through synrob's loss), up to fp32 rounding."""
    import numpy as np
    import torch
    from synrob.probe.probes.inputs import Features
    from synrob.probe.probes.structural import _l1_loss
    from synrob.probe.training.batches import make_batches

    bench = _bench()
    rng = np.random.default_rng(0)
    lens = [1, 2, 5, 9, 9, 14]
    feats = Features.from_sentences([rng.normal(size=(n, 12)).astype(np.float32) for n in lens])
    gold = [np.abs(np.arange(n)[:, None] - np.arange(n)[None]).astype(np.float32) for n in lens]
    data = make_batches(feats, "distance", gold, batch_size=4)
    weight = torch.from_numpy(rng.normal(0, 0.3, (12, 6)).astype(np.float32))
    for b in data.batches:
        w = weight.clone().requires_grad_(True)
        loss = _l1_loss("distance", data.x(b) @ w, b)
        loss.backward()
        mine, grad = bench.prototype_loss_grad(data.x(b), weight, b)
        assert float(mine) == pytest.approx(loss.item(), rel=1e-5)
        assert torch.allclose(grad, w.grad, rtol=1e-4, atol=1e-6)


@pytest.mark.slow
def test_train_step_bench_prints_parts_that_add_up(ewt_dir: Path) -> None:
    out = subprocess.run([sys.executable, str(ROOT / "bench" / "train_step.py"),
                          "--sentences", "60", "--epochs", "1", "--layers", "2",
                          "--repeats", "1"],
                         check=True, capture_output=True, text=True,
                         env={**os.environ, "SYNROB_EWT_DIR": str(ewt_dir)}).stdout
    lines = dict(line.split(": ", 1) for line in out.splitlines())
    assert lines["sentences"] == "60" and lines["steps_per_epoch"] == "3"
    parts = [float(lines[f"{p}_ms"]) for p in ("gather", "projection", "loss", "backward",
                                                "adam")]
    assert all(p > 0 for p in parts)
    step, floor = float(lines["step_ms"]), float(lines["floor_ms"])
    assert step == pytest.approx(sum(parts), abs=0.003)
    assert float(lines["step_over_floor"]) == pytest.approx(step / floor, abs=0.01)
    rest = (step - float(lines["products_ms"])) / floor
    assert float(lines["rest_over_floor"]) == pytest.approx(rest, abs=0.01)
    assert float(lines["prototype_step_over_floor"]) > 0
    assert lines["fused_layers"] == "2" and float(lines["fused_step_ms_per_layer"]) > 0
