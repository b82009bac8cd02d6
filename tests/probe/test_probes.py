"""Probes trained on real MiniLM representations of small EWT slices (300 train / 100 dev)."""

from __future__ import annotations

from itertools import islice

import numpy as np
import pytest
import torch
from synrob.perturb.corpus import read_conllu, write_conllu
from synrob.perturb.errors import SynrobError
from synrob.probe.probes import (
    FC3Probe,
    LinearProbe,
    MLPProbe,
    PerceptronProbe,
    StructuralProbe,
    load_probe,
    save_probe,
)
from synrob.probe.probes.inputs import Features
from synrob.probe.tasks import (
    CorpusTreeDepthTask,
    DepthTask,
    DistanceTask,
    PosTask,
    RootTask,
    load_gold,
)
from synrob.probe.training.probing import evaluate_baselines, evaluate_probe, train_probe

pytestmark = [pytest.mark.slow, pytest.mark.model]

FAST = {"epochs": 8, "patience": 1}


def write_slice(src, dest, start: int, n: int):
    write_conllu(islice(read_conllu(src), start, start + n), dest)
    return dest


@pytest.fixture(scope="module")
def data(tmp_path_factory, ewt_train, ewt_dev):
    """{split: (Features of MiniLM layer 3, GoldCorpus)} plus layer 0 of train and dev."""
    from synrob.probe.representations.encoding import encode_corpus

    d = tmp_path_factory.mktemp("slices")
    files = {"train": write_slice(ewt_train, d / "train.conllu", 0, 300),
             "dev": write_slice(ewt_dev, d / "dev.conllu", 0, 100)}
    out = {}
    for split, path in files.items():
        rep = encode_corpus("minilm", path, layers="all", device="cpu")
        gold = load_gold(path)
        for layer in (0, 3):
            m, o = rep.layer_matrix(layer)
            out[split, layer] = (Features(np.asarray(m, dtype=np.float32), np.asarray(o)), gold)
    return out


def test_distance_probe_beats_path_and_majority(data):
    task = DistanceTask()
    probe = StructuralProbe(rank=64, **FAST)
    module, log = train_probe(task, probe, data["train", 3], data["dev", 3], seed=0)
    assert log.best_epoch >= 1 and log.dev_loss[log.best_epoch] < log.dev_loss[0]
    scores, preds = evaluate_probe(task, probe, module, *data["dev", 3])
    base = evaluate_baselines(task, data["train", 3][1], {"dev": data["dev", 3][1]})
    for name in ("path", "majority"):
        assert scores["uuas"] > base[name]["dev"]["uuas"]
        assert scores["dspr"] > base[name]["dev"]["dspr"]
    assert all(p.shape == (n, n) for p, n in zip(preds, data["dev", 3][1].lengths, strict=True))
    assert all(np.allclose(p, p.T, atol=1e-4) and np.all(np.diag(p) == 0) for p in preds)


def test_depth_probe_learns_depths(data):
    task = DepthTask()
    probe = StructuralProbe(rank=64, **FAST)
    module, _ = train_probe(task, probe, data["train", 3], data["dev", 3], seed=0)
    scores, preds = evaluate_probe(task, probe, module, *data["dev", 3])
    base = evaluate_baselines(task, data["train", 3][1], {"dev": data["dev", 3][1]})
    assert scores["nspr"] > 0.6
    assert scores["root_acc"] > max(b["dev"]["root_acc"] for b in base.values())
    assert all(p.shape == (n,) for p, n in zip(preds, data["dev", 3][1].lengths, strict=True))


def test_training_is_deterministic_given_the_seed(data):
    task = DistanceTask()
    small = {"rank": 16, "epochs": 2, "patience": 5}
    a, _ = train_probe(task, StructuralProbe(**small), data["train", 0], data["dev", 0], seed=3)
    b, _ = train_probe(task, StructuralProbe(**small), data["train", 0], data["dev", 0], seed=3)
    c, _ = train_probe(task, StructuralProbe(**small), data["train", 0], data["dev", 0], seed=4)
    assert torch.equal(a.proj, b.proj)
    assert not torch.equal(a.proj, c.proj)
    assert a.proj.shape == (384, 16)


def test_perceptron_probe_recovers_trees(data):
    task = DistanceTask()
    probe = PerceptronProbe(rank=64, **FAST)
    module, log = train_probe(task, probe, data["train", 3], data["dev", 3], seed=0)
    scores, _ = evaluate_probe(task, probe, module, *data["dev", 3])
    path = evaluate_baselines(task, data["train", 3][1], {"dev": data["dev", 3][1]})["path"]
    assert scores["uuas"] > path["dev"]["uuas"]
    assert log.train_loss[-1] < log.train_loss[0]


@pytest.mark.parametrize("probe_cls,opts", [(LinearProbe, {}), (MLPProbe, {"hidden": 64}),
                                            (FC3Probe, {"hidden": 64, "activation": "linear"}),
                                            (FC3Probe, {"hidden": 64, "activation": "relu"})])
def test_pos_classifiers(data, probe_cls, opts):
    task = PosTask()
    task.fit(data["train", 3][1])
    probe = probe_cls(**opts, **FAST)
    module, _ = train_probe(task, probe, data["train", 3], data["dev", 3], seed=0)
    scores, preds = evaluate_probe(task, probe, module, *data["dev", 3])
    assert scores["acc"] > 0.8
    assert scores["words_right"] == pytest.approx(
        np.mean([np.sum(p == t) for p, t in zip(preds, task.targets(data["dev", 3][1]), strict=True)]))


def test_root_and_tree_depth_classifiers(data):
    train_gold, dev_gold = data["train", 3][1], data["dev", 3][1]
    root = RootTask()
    probe = LinearProbe(**FAST)
    module, _ = train_probe(root, probe, data["train", 3], data["dev", 3], seed=0)
    scores, preds = evaluate_probe(root, probe, module, *data["dev", 3])
    base = evaluate_baselines(root, train_gold, {"dev": dev_gold})["majority"]["dev"]
    assert scores["root_acc"] > base["root_acc"]
    assert all(0 <= int(p) < n for p, n in zip(preds, dev_gold.lengths, strict=True))
    td = CorpusTreeDepthTask()
    td.fit(train_gold)
    probe = LinearProbe(epochs=30, patience=3, lr=0.01)
    module, _ = train_probe(td, probe, data["train", 3], data["dev", 3], seed=0)
    scores, _ = evaluate_probe(td, probe, module, *data["dev", 3])
    assert scores["spearman"] > 0.3 and 0 < scores["acc"] <= 1


def test_save_and_load_give_the_same_predictions(data, tmp_path):
    task = PosTask(tagset="xpos")
    task.fit(data["train", 3][1])
    probe = MLPProbe(hidden=32, epochs=2)
    module, _ = train_probe(task, probe, data["train", 3], data["dev", 3], seed=1)
    before, p1 = evaluate_probe(task, probe, module, *data["dev", 3])
    save_probe(tmp_path, probe, module, task, {"encoder": "minilm", "layer": 3, "dim": 384})
    assert sorted(p.name for p in tmp_path.iterdir()) == ["probe.json", "probe.safetensors"]
    saved = load_probe(tmp_path)
    assert saved.task.labels == task.labels and saved.task.options["tagset"] == "xpos"
    assert saved.probe.options == probe.options
    after, p2 = evaluate_probe(saved.task, saved.probe, saved.module, *data["dev", 3])
    assert after == before
    assert all(np.array_equal(a, b) for a, b in zip(p1, p2, strict=True))


def test_probe_refuses_a_task_of_another_kind(data):
    with pytest.raises(SynrobError, match="cannot learn"):
        train_probe(PosTask(), StructuralProbe(), data["train", 0], data["dev", 0])
    other = load_gold(data["dev", 0][1].path, limit=50)
    with pytest.raises(SynrobError, match="do not match"):
        train_probe(DistanceTask(), StructuralProbe(), data["train", 0], (data["dev", 0][0], other))
