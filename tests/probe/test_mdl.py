"""MDL online code (Voita & Titov 2020): blocks, the uniform code, a hand-computable case."""

from __future__ import annotations

import math

import numpy as np
import pytest
from synrob.perturb.errors import ParameterError
from synrob.probe.probes.classifier import LinearProbe
from synrob.probe.probes.inputs import Features
from synrob.probe.tasks import DistanceTask, PosTask
from synrob.probe.tasks.base import GoldCorpus
from synrob.probe.training.mdl import (
    block_ends,
    check_mdl,
    online_codelength,
    online_codelengths,
    uniform_bits,
)


def _corpus(n: int, length: int, tag: str = "NOUN") -> GoldCorpus:
    heads = [np.array([0] + [1] * (length - 1), dtype=np.int64) for _ in range(n)]
    forms = [[f"w{k}" for k in range(length)] for _ in range(n)]
    tags = [[tag] * length for _ in range(n)]
    return GoldCorpus("mem", [str(i) for i in range(n)], forms, tags, tags, heads)


def test_block_ends():
    assert block_ends(1000) == [1, 2, 4, 8, 16, 32, 63, 125, 250, 500, 1000]
    assert block_ends(10) == [1, 2, 3, 5, 10]
    assert block_ends(1) == [1] and block_ends(0) == []


def test_uniform_bits_is_n_log2_k():
    task = PosTask()
    task.labels = ["ADJ", "NOUN", "VERB"]
    gold = _corpus(7, 4)
    assert uniform_bits(task, gold) == pytest.approx(28 * math.log2(3), abs=1e-9)


def test_constant_label_task_codelength_by_hand():
    n, length = 400, 5
    task = PosTask()
    task.labels = ["NOUN", "VERB"]  # K = 2: one bit per word uniformly; every word is NOUN
    gold = _corpus(n, length)
    feats = Features.from_sentences([np.ones((length, 4), dtype=np.float32)] * n)
    dev = (Features.from_sentences([np.ones((length, 4), dtype=np.float32)] * 20), _corpus(20, length))
    probe = LinearProbe(lr=0.1, epochs=40, patience=3)
    res = online_codelength(task, probe, (feats, gold), dev, seed=0)
    assert res.uniform_bits == n * length * 1.0
    assert res.blocks == block_ends(n)
    assert res.block_bits[0] == res.blocks[0] * length * 1.0  # first block: log2 K bits a word
    assert sum(res.block_bits[1:]) < 0.05 * res.uniform_bits  # later blocks: nearly free
    assert res.online_bits == pytest.approx(sum(res.block_bits))
    assert res.compression == pytest.approx(res.uniform_bits / res.online_bits)
    assert res.compression > 10


def test_mdl_refuses_structural_tasks():
    with pytest.raises(ParameterError, match="mdl= needs a classification task"):
        check_mdl(DistanceTask())


def test_layers_coded_together_equal_each_layer_alone():
    """online_codelengths trains each block's probes of all layers in one pass (fit_layers):
    every layer's block codelengths equal online_codelength on that layer alone, bit for bit."""
    import torch

    torch.set_num_threads(1)
    rng = np.random.default_rng(0)
    n, length, dim = 120, 6, 8
    labels = ["NOUN", "VERB", "ADJ"]
    tags = [[labels[int(k)] for k in rng.integers(0, 3, length)] for _ in range(n + 20)]
    heads = [np.array([0] + [1] * (length - 1), dtype=np.int64) for _ in range(n + 20)]
    forms = [[f"w{k}" for k in range(length)] for _ in range(n + 20)]
    gold = GoldCorpus("mem", [str(i) for i in range(n)], forms[:n], tags[:n], tags[:n], heads[:n])
    dev_gold = GoldCorpus("dev", [str(i) for i in range(20)], forms[n:], tags[n:], tags[n:],
                          heads[n:])
    task = PosTask()
    task.fit(gold)

    def layer(scale: float, noise: float, sents: list[list[str]]) -> Features:
        out = []
        for t in sents:
            v = rng.normal(0, noise, (length, dim)).astype(np.float32)
            v[np.arange(length), [labels.index(x) for x in t]] += 1.0
            out.append(scale * v)
        return Features.from_sentences(out)

    trains = [layer(1 + k, 0.3 + 0.4 * k, tags[:n]) for k in range(3)]
    devs = [layer(1 + k, 0.3 + 0.4 * k, tags[n:]) for k in range(3)]
    probe = LinearProbe(lr=0.05, epochs=6, patience=1)
    together = online_codelengths(task, probe, trains, gold, devs, dev_gold, seed=2)
    for k in range(3):
        alone = online_codelength(task, probe, (trains[k], gold), (devs[k], dev_gold), seed=2)
        assert together[k] == alone
    assert together[0].online_bits < together[2].online_bits  # the layers really differ
