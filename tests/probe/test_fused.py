"""All layers of one probe in one pass (training.fit_layers, probing.train_probes and
run_probe(fuse=True)): each layer's weights, log and metrics equal training it alone, bit for bit.

Synthetic features first (fast): layers differ in scale and signal, so they stop at different
epochs and only some decay their learning rate. Then MiniLM on the bundled EWT sample through
``synrob probe --layer all`` with and without ``--no-fuse``.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch
from synrob.probe.probes import LinearProbe, PerceptronProbe, StructuralProbe
from synrob.probe.probes.base import Probe
from synrob.probe.probes.inputs import Batch, Features
from synrob.probe.training.batches import make_batches, make_layer_batches
from synrob.probe.training.loop import TrainLog, fit, fit_layers

N_LAYERS, DIM = 4, 24


def _tree(n: int, rng: np.random.Generator) -> np.ndarray:
    """Parent of each word (word 0 is the root: parent -1)."""
    return np.array([-1] + [int(rng.integers(0, i)) for i in range(1, n)])


def _distances(parent: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Tree distances (n, n) and depths (n,) of a parent array."""
    n = parent.size
    depth = np.zeros(n)
    for i in range(1, n):
        depth[i] = depth[parent[i]] + 1
    anc = []
    for i in range(n):
        chain, j = [i], i
        while parent[j] >= 0:
            j = parent[j]
            chain.append(j)
        anc.append(chain)
    dist = np.zeros((n, n))
    for i in range(n):
        for j in range(n):
            common = next(a for a in anc[i] if a in set(anc[j]))
            dist[i, j] = depth[i] + depth[j] - 2 * depth[common]
    return dist.astype(np.float32), depth.astype(np.float32)


def _corpus(n_sent: int, seed: int) -> dict:
    """Sentences with trees, tags and per-layer vectors: layer ``l`` holds the depth and the
    tag in a few dimensions with noise growing with ``l`` and a scale of ``1 + l``."""
    rng = np.random.default_rng(seed)
    lens = rng.integers(2, 22, n_sent)
    parents = [_tree(int(n), rng) for n in lens]
    dist_depth = [_distances(p) for p in parents]
    tags = [rng.integers(0, 5, int(n)) for n in lens]
    layers = []
    for layer in range(N_LAYERS):
        sents = []
        for (_, depth), tag in zip(dist_depth, tags, strict=True):
            v = rng.normal(0, 0.5 + 0.6 * layer, (depth.size, DIM))
            v[:, 0] += depth
            v[np.arange(depth.size), 1 + tag] += 2.0
            sents.append((1 + layer) * v)
        layers.append(Features.from_sentences(sents))
    return {"layers": layers, "distance": [d for d, _ in dist_depth],
            "depth": [d for _, d in dist_depth], "tag": tags,
            "select": [np.int64(int(np.argmax(d))) for _, d in dist_depth],
            "sentence": [np.int64(int(t[0])) for t in tags]}


@pytest.fixture(scope="module")
def corpora() -> tuple[dict, dict]:
    return _corpus(90, 1), _corpus(30, 2)


@pytest.fixture
def one_thread():
    """Tiny products run far faster on one thread when the cores are shared (both ways of
    training use the same setting; the CLI test below runs with torch's default threads)."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def _separate(probe, kind, train, dev, n_classes=0, seed=0):
    out = []
    for layer in range(N_LAYERS):
        torch.manual_seed(seed)
        module = probe.build(DIM, n_classes, kind)
        bs = probe.options["batch_size"]
        log = fit(probe, module,
                  make_batches(train["layers"][layer], kind, train[kind], batch_size=bs),
                  make_batches(dev["layers"][layer], kind, dev[kind], batch_size=bs), seed=seed)
        out.append((module, log))
    return out


def _fused(probe, kind, train, dev, n_classes=0, seed=0):
    modules = []
    for _ in range(N_LAYERS):
        torch.manual_seed(seed)
        modules.append(probe.build(DIM, n_classes, kind))
    bs = probe.options["batch_size"]
    logs = fit_layers(probe, modules,
                      make_layer_batches(train["layers"], kind, train[kind], batch_size=bs),
                      make_layer_batches(dev["layers"], kind, dev[kind], batch_size=bs),
                      seed=seed)
    return list(zip(modules, logs, strict=True))


def _same_logs(a: TrainLog, b: TrainLog) -> None:
    assert a.train_loss == b.train_loss and a.dev_loss == b.dev_loss
    assert a.lr == b.lr and a.best_epoch == b.best_epoch


def _check_equal(sep, fused) -> tuple[list[int], list[int]]:
    """Weights bit-identical, logs equal; returns the epochs run and the decays per layer."""
    for (m1, l1), (m2, l2) in zip(sep, fused, strict=True):
        s1, s2 = m1.state_dict(), m2.state_dict()
        assert s1.keys() == s2.keys()
        for k in s1:
            assert torch.equal(s1[k], s2[k]), k
        _same_logs(l1, l2)
    return ([len(log.dev_loss) for _, log in sep],
            [sum(b < a for a, b in zip(log.lr, log.lr[1:], strict=False)) for _, log in sep])


@pytest.mark.parametrize("precision", ["float32", "bfloat16"])
@pytest.mark.parametrize("kind", ["distance", "depth"])
def test_structural_layers_fused_equal_separate(corpora, kind, precision, one_thread):
    """Also with bf16 training steps (synrob.probe.training.precision): the batched ``bmm`` in
    bf16 gives each layer the bits of its own bf16 product."""
    train, dev = corpora
    probe = StructuralProbe(rank=8, epochs=10, patience=2, lr=0.02, train_precision=precision)
    epochs, _ = _check_equal(_separate(probe, kind, train, dev), _fused(probe, kind, train, dev))
    assert len(set(epochs)) > 1, epochs  # layers stop early at different epochs


def test_one_layer_decays_while_the_others_do_not(corpora, one_thread):
    """A learning-rate decay of one layer only: the other layers' rates stay as they were."""
    train, dev = corpora
    probe = StructuralProbe(rank=8, epochs=6, patience=3, lr=0.02)
    epochs, decays = _check_equal(_separate(probe, "depth", train, dev),
                                  _fused(probe, "depth", train, dev))
    assert epochs == [6] * N_LAYERS  # all layers train throughout...
    assert sum(d > 0 for d in decays) >= 1 and sum(d == 0 for d in decays) >= 1, decays


@pytest.mark.parametrize("precision", ["float32", "bfloat16"])
@pytest.mark.parametrize(("kind", "n_classes"), [("tag", 5), ("select", 0), ("sentence", 5)])
def test_linear_layers_fused_equal_separate(corpora, kind, n_classes, precision, one_thread):
    train, dev = corpora
    probe = LinearProbe(epochs=8, patience=1, lr=0.05, batch_size=16, weight_decay=0.001,
                        train_precision=precision)
    epochs, _ = _check_equal(_separate(probe, kind, train, dev, n_classes, seed=3),
                             _fused(probe, kind, train, dev, n_classes, seed=3))
    assert all(e >= 2 for e in epochs)


@pytest.mark.parametrize("precision", ["float32", "bfloat16"])
def test_perceptron_layers_fused_equal_separate(corpora, precision, one_thread):
    """The trees of all layers' sentences come from one mst_pairs_batch call and the hinge of
    all of them from one computation; each layer's weights and log are its own run's."""
    train, dev = corpora
    probe = PerceptronProbe(rank=8, epochs=30, patience=0, lr=0.05, batch_size=16,
                            train_precision=precision)
    epochs, _ = _check_equal(_separate(probe, "distance", train, dev),
                             _fused(probe, "distance", train, dev))
    assert all(e >= 2 for e in epochs), epochs
    assert len(set(epochs)) > 1, epochs  # layers stopped apart: the batch lost some of them


def test_perceptron_fused_loss_of_a_batch_without_trees_is_zero_per_layer():
    """One-word sentences have no tree: each layer's loss is 0 and has a (zero) gradient."""
    probe = PerceptronProbe(rank=4)
    modules = [probe.build(6, 0, "distance") for _ in range(3)]
    batch = Batch(ids=np.arange(2), index=torch.zeros(1), mask=torch.ones(2, 1, dtype=bool),
                  lengths=torch.ones(2, dtype=torch.long), y=torch.zeros(2, 1, 1))
    losses = probe.fused_loss(modules, torch.randn(3, 2, 1, 6), batch)
    assert losses.shape == (3,) and not losses.any()
    assert probe.fused_loss(modules[:1], torch.randn(1, 2, 1, 6), batch).shape == (1,)
    losses.sum().backward()
    assert all(m.proj.grad is not None and not m.proj.grad.any() for m in modules)


class _AloneProbe(StructuralProbe):
    name = "alone-test"
    fused_kinds = frozenset[str]()
    fused_loss = Probe.fused_loss


def test_fusion_goes_where_it_was_measured_to_be_faster(monkeypatch):
    """fusion_pays: off the CPU always; on the CPU with two threads or more for the probes
    whose steps are products, never for the perceptron (its trees are numpy on one core)."""
    from synrob.probe.training.probing import fusing, fusion_pays

    s, p, lin = StructuralProbe(), PerceptronProbe(), LinearProbe()
    assert fusion_pays(s, "cuda", 1) and fusion_pays(p, "cuda:0", 1)
    assert fusion_pays(s, "cpu", 2) and fusion_pays(lin, "cpu", 16)
    assert not fusion_pays(s, "cpu", 1) and not fusion_pays(p, "cpu", 2)
    assert fusing(True, p, "distance", "cpu", 3) and not fusing(False, s, "distance", "cpu", 3)
    assert not fusing(True, s, "distance", "cpu", 1)  # one layer: nothing to fuse
    assert not fusing(True, _AloneProbe(), "distance", "cpu", 3)  # cannot
    monkeypatch.setattr(torch, "get_num_threads", lambda: 2)
    assert fusing(None, s, "distance", "cpu", 3) and not fusing(None, p, "distance", "cpu", 3)
    monkeypatch.setattr(torch, "get_num_threads", lambda: 1)
    assert not fusing(None, s, "distance", "cpu", 3)


def test_what_fuses():
    assert StructuralProbe().can_fuse("distance") and StructuralProbe().can_fuse("depth")
    assert LinearProbe().can_fuse("tag") and PerceptronProbe().can_fuse("distance")
    assert not _AloneProbe().can_fuse("distance")
    with pytest.raises(NotImplementedError):
        _AloneProbe().fused_loss([], torch.zeros(1, 1, 1, 1), None)  # type: ignore[arg-type]


@pytest.mark.slow
@pytest.mark.model
@pytest.mark.parametrize(("task", "extra"), [("distance", ["-p", "rank=32"]), ("pos", [])])
def test_cli_layer_all_fused_equals_no_fuse(cli, tmp_path, task, extra):
    """``synrob probe --layer all`` on the bundled sample with MiniLM (7 layers): the same
    JSON (every layer's results and dev metrics) and byte-identical saved weights."""
    outs, weights = [], []
    for flag in (["--fuse"], ["--no-fuse"]):
        save = tmp_path / f"save{len(outs)}"
        r = cli(["probe", "--encoder", "minilm", "--layer", "all", "--task", task,
                 "--train", "sample:en_ewt:train", "--dev", "sample:en_ewt:dev",
                 "--test", "sample:en_ewt:test", "-p", "epochs=4", "-p", "patience=1", *extra,
                 "--device", "cpu", "--json", "--save", str(save), *flag])
        assert r.exit_code == 0, r.stderr
        out = json.loads(r.stdout)
        out.pop("train_seconds")
        outs.append(out)
        weights.append({p.parent.name: p.read_bytes()
                        for p in sorted(save.glob("layer-*/probe.safetensors"))})
        logs = {p.parent.name: json.loads(p.read_text())["log"]
                for p in sorted(save.glob("layer-*/probe.json"))}
        for log in logs.values():
            log.pop("seconds")
        weights[-1]["logs"] = json.dumps(logs, sort_keys=True).encode()
    assert len(outs[0]["layers"]) == 7
    assert outs[0] == outs[1]
    assert weights[0] == weights[1]


@pytest.mark.parametrize("kind", ["distance", "tag", "sentence"])
@pytest.mark.parametrize("dtype", [None, torch.bfloat16])
def test_stacked_tables_are_each_layers_own_table(corpora, kind, dtype):
    # make_layer_batches writes each layer straight into the stack (no float32 copy of the
    # whole table first): the rows, the zero padding row and the batches are make_batches'
    train, _ = corpora
    stack = make_layer_batches(iter(train["layers"]), kind, train[kind], batch_size=8,
                               n_layers=N_LAYERS, dtype=dtype)
    for layer in range(N_LAYERS):
        alone = make_batches(train["layers"][layer], kind, train[kind], batch_size=8, dtype=dtype)
        assert stack.table[layer].dtype == alone.table.dtype == (dtype or torch.float32)
        assert torch.equal(stack.table[layer], alone.table)
        for a, b in zip(stack.batches, alone.batches, strict=True):
            assert torch.equal(a.index, b.index) and (a.ids == b.ids).all()
    if kind != "sentence":
        assert not stack.table[:, -1].any()  # the padding row
    with pytest.raises(ValueError, match="more than 2 layers"):
        make_layer_batches(iter(train["layers"]), kind, train[kind], n_layers=2)


def test_epoch_loss_sums_stay_on_the_device_and_give_pythons_bits():
    # the epoch's mean loss is summed as float64 tensors (no host sync per step on a GPU):
    # the same bits as adding float(loss) * sentences in Python, as training did before
    from synrob.probe.training.loop import _LossSum

    rng = np.random.default_rng(9)
    for layers in (None, 3):
        shape = () if layers is None else (layers,)
        acc, want, weight = _LossSum(), np.zeros(layers or 1).tolist(), 0.0
        for _ in range(500):
            loss = torch.from_numpy(rng.gamma(2.0, 3.0, shape).astype(np.float32))
            n = int(rng.integers(1, 41))
            acc.add(loss, n)
            for j, v in enumerate(loss.reshape(-1).tolist()):
                want[j] += v * n
            weight += n
        assert acc.means(layers or 1) == [w / weight for w in want]
    assert _LossSum().means(2) == [0.0, 0.0]
