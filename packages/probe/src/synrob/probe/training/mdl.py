"""Minimum description length probing, online code (Voita & Titov 2020).

The training **sentences** are shuffled once (``numpy.random.default_rng(seed)``) and cut at
:data:`FRACTIONS` of the sentence count: block ``k`` holds sentences ``ends[k-1]:ends[k]`` with
``ends[k] = max(1, ceil(f_k * N))`` (repeated ends are merged, so a small training set has
fewer blocks). The first block is transmitted with the uniform code; every later block is coded
by a probe trained (same probe, hyper-parameters and seed, early-stopped on the dev set as usual)
on all earlier blocks, at ``-log2 p(label)`` bits per label.

``online_bits`` = uniform bits of block 0 + sum of the later blocks' codelengths;
``uniform_bits`` = sum over all training labels of ``log2 K`` (``K`` classes; for ``select``
tasks such as ``root``, ``K`` is the sentence's length); ``compression`` = uniform / online.
A label is a word (``tag``), or a sentence (``select``, ``sentence``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
from synrob.perturb.errors import ParameterError, arg
from synrob.perturb.lm.device import resolve_device

from ..probes.base import Probe
from ..probes.inputs import Features
from ..tasks.base import GoldCorpus, Task
from .batches import make_batches

__all__ = ["FRACTIONS", "MDLResult", "block_ends", "uniform_bits", "online_codelength",
           "online_codelengths", "MDL_KINDS"]

#: Block boundaries as fractions of the training set (Voita & Titov 2020).
FRACTIONS = (0.001, 0.002, 0.004, 0.008, 0.016, 0.032, 0.0625, 0.125, 0.25, 0.5, 1.0)
#: Task kinds with a codelength (classification).
MDL_KINDS = ("tag", "select", "sentence")


@dataclass
class MDLResult:
    """Codelengths in bits; ``blocks`` are the sentence counts at the block ends."""

    online_bits: float
    uniform_bits: float
    compression: float
    blocks: list[int] = field(default_factory=list)
    block_bits: list[float] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def block_ends(n: int, fractions: tuple[float, ...] = FRACTIONS) -> list[int]:
    """Sentence counts at the block ends: ``max(1, ceil(f * n))``, deduplicated, ending at n."""
    if n <= 0:
        return []
    return sorted({min(n, max(1, math.ceil(f * n - 1e-9))) for f in fractions} | {n})


def check_mdl(task: Task) -> None:
    """:class:`ParameterError` unless ``task`` is a classification task."""
    if task.kind not in MDL_KINDS:
        raise ParameterError(f"{arg('mdl')} needs a classification task (pos, root, tree-depth), "
                             f"not {task.name!r}")


def _label_bits(task: Task, gold: GoldCorpus) -> np.ndarray:
    """Uniform code of each sentence's labels, in bits. Shape: (n_sentences,)."""
    if task.kind == "select":
        return np.log2(np.maximum(gold.lengths, 1).astype(np.float64))
    per_label = math.log2(task.n_classes) if task.n_classes > 0 else 0.0
    if task.kind == "sentence":
        return np.full(len(gold), per_label)
    return np.array([np.sum(t >= 0) * per_label for t in task.targets(gold)], dtype=np.float64)


def uniform_bits(task: Task, gold: GoldCorpus) -> float:
    """``N log2 K``: the uniform codelength of every label of ``gold`` (``task`` fitted)."""
    return float(_label_bits(task, gold).sum())


def _take(feats: Features, gold: GoldCorpus, idx: np.ndarray) -> tuple[Features, GoldCorpus]:
    """Sentences ``idx`` (m,) of a corpus and its features, in that order."""
    sub = Features.from_sentences([feats.sentence(int(i)) for i in idx])
    return sub, gold.select(idx)


def codelength(task: Task, probe: Probe, module: Any, feats: Features, gold: GoldCorpus,
               device: str = "cpu") -> float:
    """Bits to transmit ``gold``'s labels with a trained module: sum of ``-log2 p(label)``.

    Uses the probe's loss, which for every classifier probe is the mean cross-entropy (nats)
    over the batch's labelled items (words for ``tag``, sentences otherwise).
    """
    import torch

    from ..probes.normalize import inputs_for

    feats = inputs_for(module, feats)
    data = make_batches(feats, task.kind, task.targets(gold), batch_size=64, heads=gold.heads,
                        pooling=task.options.get("pooling", "mean"), device=device)
    nats = 0.0
    with torch.no_grad():
        for b in data.batches:
            assert b.y is not None
            count = int((b.y >= 0).sum()) if task.kind != "select" else len(b.ids)
            if count:
                nats += float(probe.loss(module, data.x(b), b)) * count
    return nats / math.log(2.0)


def online_codelength(task: Task, probe: Probe, train: tuple[Features, GoldCorpus],
                      dev: tuple[Features, GoldCorpus], *, seed: int = 0,
                      device: str = "cpu") -> MDLResult:
    """Online codelength of ``train``'s labels (``task`` already fitted on the full train)."""
    return online_codelengths(task, probe, [train[0]], train[1], [dev[0]], dev[1], seed=seed,
                              device=device)[0]


def online_codelengths(task: Task, probe: Probe, trains: Sequence[Features], gold: GoldCorpus,
                       devs: Sequence[Features], dev_gold: GoldCorpus, *, seed: int = 0,
                       device: str = "cpu") -> list[MDLResult]:
    """:func:`online_codelength` of several layers of one corpus (``trains[l]``, ``devs[l]``:
    the same sentences in every layer; ``task`` fitted on ``gold``). The probes of a block
    train for all layers together (:func:`synrob.probe.training.probing.train_layers`, when the probe
    can fuse), so each layer's codelengths are those of :func:`online_codelength` on it alone
    (tests/probe/test_mdl.py)."""
    from .probing import train_layers

    check_mdl(task)
    device = resolve_device(device)
    order = np.random.default_rng(seed).permutation(len(gold))
    ends = block_ends(len(gold))
    total = uniform_bits(task, gold)
    first = uniform_bits(task, gold.select(order[:ends[0]])) if ends else 0.0
    bits = [[first] for _ in trains]
    layers = list(range(len(trains)))
    for start, stop in zip(ends[:-1], ends[1:], strict=True):
        seen = [_take(feats, gold, order[:start])[0] for feats in trains]
        seen_gold = gold.select(order[:start])

        def source(path: str, layer: int, seen: list[Features] = seen) -> Features:
            return seen[layer] if path == "train" else devs[layer]

        trained = train_layers(task, probe, source, layers, "train", "dev", seen_gold,
                               dev_gold, seed=seed, device=device, fuse=True)  # small blocks
        for layer, feats in enumerate(trains):
            block = _take(feats, gold, order[start:stop])
            bits[layer].append(codelength(task, probe, trained[layer][0], *block,
                                          device=device))
    return [MDLResult(float(sum(b)), total,
                      total / sum(b) if sum(b) > 0 else float("nan"), ends, b) for b in bits]
