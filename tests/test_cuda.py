"""CUDA paths, run where torch sees a GPU (skipped elsewhere): extraction, probe training and
prefix-shared coCO on the GPU give what the CPU gives, early exit and the overlapped loop change
no value, and ``auto`` resolves as documented.

The tiny random models come from the ``tiny_ewt_lms`` and ``tiny_deep_models`` fixtures
(tests/conftest.py, built from configs), so no hub access is needed.
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytestmark = [pytest.mark.cuda, pytest.mark.skipif(not torch.cuda.is_available(),
                                                   reason="needs a CUDA device")]


@pytest.fixture(scope="module")
def tiny_bert(tiny_ewt_lms: dict[str, str]) -> Path:
    """The tiny BERT of ``tiny_ewt_lms`` (2 layers, hidden 32), read as an encoder."""
    return Path(tiny_ewt_lms["masked"])


def _encode(model: Path, source: Path, device: str, precision: str) -> list[np.ndarray]:
    from synrob.probe.representations.encoding import encode_corpus

    rs = encode_corpus(str(model), source, layers="all", device=device, dtype="float32",
                       params={"precision": precision})
    return [rs.layer_matrix(layer)[0] for layer in rs.layers]


def test_cuda_extraction_matches_cpu(tiny_bert: Path, sample_dev: Path) -> None:
    """fp32 on the GPU = fp32 on the CPU (1e-4); bf16 on the GPU stays within bf16 rounding."""
    cpu = _encode(tiny_bert, sample_dev, "cpu", "float32")
    gpu = _encode(tiny_bert, sample_dev, "cuda", "float32")
    bf16 = _encode(tiny_bert, sample_dev, "cuda", "bfloat16")
    for c, g, b in zip(cpu, gpu, bf16, strict=True):
        assert c.shape == g.shape == b.shape and c.shape[0] > 1000
        assert np.abs(c - g).max() < 1e-4
        rel = np.linalg.norm(b - c) / np.linalg.norm(c)
        assert 0 < rel < 2e-2  # bf16 differs from fp32, by rounding only


def test_cuda_auto_precision_is_bf16_for_a_checked_model_only(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """On a bf16-capable GPU ``auto`` is bf16 for MiniLM (checked) and fp32 for other models
    (detected: ``SYNROB_NATIVE_BF16``, 0 for the rest of the suite, is unset here)."""
    from synrob.perturb.lm.dtype import NATIVE_BF16_ENV, resolve_dtype_for

    monkeypatch.delenv(NATIVE_BF16_ENV, raising=False)
    assert torch.cuda.is_bf16_supported()
    assert resolve_dtype_for("auto", "cuda", "minilm") == "bfloat16"
    assert resolve_dtype_for("auto", "cuda", "/some/unchecked-model") == "float32"


def test_cuda_probe_scores_like_cpu(tiny_bert: Path, cli, sample_dev: Path) -> None:
    """``synrob probe --device cuda`` trains and scores like the CPU run (same seed)."""
    from synrob.perturb.io.data import sample_path

    scores = {}
    for device in ("cpu", "cuda"):
        r = cli(["probe", "--encoder", str(tiny_bert), "--layer", "2", "--task", "distance",
                 "--train", sample_path("train"), "--dev", sample_dev, "--test",
                 sample_path("test"), "--device", device, "--json", "-p", "epochs=3",
                 "-p", "encoder.precision=float32"])
        assert r.exit_code == 0, r.stderr
        scores[device] = next(iter(json.loads(r.stdout)["results"].values()))
    assert scores["cuda"]["uuas"] == pytest.approx(scores["cpu"]["uuas"], abs=0.01)
    assert scores["cuda"]["dspr"] == pytest.approx(scores["cpu"]["dspr"], abs=0.01)


def test_cuda_prefix_coco_chooses_the_words_of_full_rescoring(
        tiny_ewt_lms: dict[str, str], ewt_dev: Path) -> None:
    """Prefix-shared rescoring on the GPU picks exactly the words full rescoring picks."""
    from synrob.perturb.base import sentence_rng
    from synrob.perturb.corpus import read_conllu
    from synrob.perturb.perturbers.coco import CoCo

    sents = list(itertools.islice(read_conllu(ewt_dev), 20))
    outs = {}
    for mode in ("full", "prefix"):
        p = CoCo(model=tiny_ewt_lms["causal"], budget=2, candidates=8, rescoring=mode,
                 device="cuda", dtype="float32")
        outs[mode] = [r.text for r in p.perturb_batch(
            [(s, sentence_rng(0, i)) for i, s in enumerate(sents)])]
        assert str(p.lm.device).startswith("cuda")
    assert outs["prefix"] == outs["full"]
    assert sum(a != s.text for a, s in zip(outs["prefix"], sents, strict=True)) >= 15


def test_cuda_overlapped_loop_equals_the_serial_loop(tiny_bert: Path, ewt_dev: Path) -> None:
    """On the GPU, overlapping host work with the next forward pass changes no value."""
    from synrob.probe.encoders.resolve import resolve_encoder
    from synrob.probe.representations import encoding as reps

    sents = reps.read_words(ewt_dev)[:600]
    out = {}
    for overlap in (True, False):
        enc = resolve_encoder(str(tiny_bert), {"device": "cuda", "precision": "float32",
                                               "token_budget": 512})
        enc.overlap_host_work = overlap
        out[overlap] = enc.encode_flat(sents, [0, 1, 2])
    for name in ("words", "first", "last"):
        assert np.array_equal(getattr(out[True], name), getattr(out[False], name)), name


@pytest.mark.parametrize("kind", ["bert", "gpt2"])
def test_cuda_early_exit_equals_the_full_pass(kind: str, tiny_deep_models: dict[str, Path],
                                              ewt_dev: Path) -> None:
    """On the GPU, a pass cut after the blocks a layer needs gives the full pass's vectors
    (4-block models; GPT-2 runs one more block, for its final norm)."""
    from synrob.probe.encoders.resolve import resolve_encoder
    from synrob.probe.representations import encoding as reps

    sents = reps.read_words(ewt_dev)[:400]
    enc = resolve_encoder(str(tiny_deep_models[kind]), {"device": "cuda",
                                                        "precision": "float32"})
    enc.load()
    assert enc._exit_plan is not None and enc.blocks_run([1]) == (1 if kind == "bert" else 2)
    for layers in ([1], [0, 2], [4]):
        enc.early_exit = False
        full = enc.encode_flat(sents, layers)
        enc.early_exit = True
        cut = enc.encode_flat(sents, layers)
        for name in ("words", "first", "last"):
            assert np.array_equal(getattr(cut, name), getattr(full, name)), (layers, name)


def test_cuda_perceptron_trees_are_computed_on_the_device_and_equal_the_cpu_trees(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The perceptron loss's trees on CUDA come from synrob.probe.metrics.mst_torch, on the device, and
    are the numpy trees of the CPU path, edge for edge and in order (long sentences too)."""
    from synrob.probe.metrics import trees as metrics
    from synrob.probe.probes.structural import _batch_trees

    rng = np.random.default_rng(0)
    lens = [3, 17, 45, 1, 60]
    width = max(lens)
    x = torch.from_numpy(rng.normal(size=(len(lens), width, 8)).astype(np.float32))
    d = torch.cdist(x, x).pow(2)
    gold = torch.from_numpy(rng.random((len(lens), width, width)) < 0.1)
    calls: list[int] = []
    original = metrics.mst_pairs_batch
    monkeypatch.setattr(metrics, "mst_pairs_batch", lambda *a: calls.append(1) or original(*a))
    on_gpu = _batch_trees(d.cuda(), gold.cuda(), lens, 1.0)
    assert not calls  # no numpy trees on the GPU path
    on_cpu = _batch_trees(d, gold, lens, 1.0)
    assert calls
    assert all(t.device.type == "cuda" for t in on_gpu)
    assert [t.cpu().tolist() for t in on_gpu] == [t.tolist() for t in on_cpu]


def test_cuda_perceptron_training_gives_the_same_weights_every_run() -> None:
    """The same seed trains the same perceptron weights twice on the GPU: the tree scores are
    summed in a fixed order there (``_tree_scores``), not by CUDA's atomic ``index_add_``."""
    from synrob.probe.probes import PerceptronProbe
    from synrob.probe.probes.inputs import Features
    from synrob.probe.tasks.baselines import tree_distances
    from synrob.probe.training.batches import make_batches
    from synrob.probe.training.loop import fit

    rng = np.random.default_rng(0)
    lens = [int(n) for n in rng.integers(2, 30, size=120)]
    feats = Features.from_sentences([rng.normal(size=(n, 32)).astype(np.float32)
                                     for n in lens])
    targets = [tree_distances(n, {(int(rng.integers(0, i)), i) for i in range(1, n)})
               for n in lens]
    weights = []
    for _ in range(2):
        probe = PerceptronProbe(epochs=3, rank=16, train_precision="float32")
        torch.manual_seed(0)
        module = probe.build(32, 0, "distance").cuda()
        data = make_batches(feats, "distance", targets, batch_size=40, device="cuda")
        fit(probe, module, data, data, seed=0)
        weights.append(module.proj.detach().cpu())
    assert torch.equal(weights[0], weights[1])


@pytest.mark.skipif(not torch.cuda.is_available() or torch.cuda.get_device_capability() < (8, 0),
                    reason="needs an NVIDIA GPU with TF32 (compute capability 8.0 or newer)")
def test_cuda_tfloat32_training_runs_in_tf32_and_stays_near_fp32() -> None:
    """``train_precision=tfloat32``: the training's products run in TF32 (other weights than
    fp32's), the distances of the loss in IEEE fp32, the flag is the caller's again after, and
    the trained probe's predictions stay close to fp32 training's."""
    from synrob.probe.probes import StructuralProbe
    from synrob.probe.probes.inputs import Features
    from synrob.probe.training.batches import make_batches
    from synrob.probe.training.loop import fit, predict

    rng = np.random.default_rng(0)
    lens = [int(n) for n in rng.integers(3, 25, size=200)]
    sents = [rng.normal(size=(n, 128)).astype(np.float32) for n in lens]
    for s in sents:
        s[:, 0] += np.arange(len(s))  # distances |i - j| are learnable
    feats = Features.from_sentences(sents)
    targets = [np.abs(np.arange(n)[:, None] - np.arange(n)[None]).astype(np.float32)
               for n in lens]
    before = torch.backends.cuda.matmul.fp32_precision
    out = {}
    for precision in ("float32", "tfloat32"):
        probe = StructuralProbe(epochs=4, rank=64, lr=0.01, train_precision=precision)
        torch.manual_seed(0)
        module = probe.build(128, 0, "distance").cuda()
        data = make_batches(feats, "distance", targets, batch_size=20, device="cuda")
        fit(probe, module, data, data, seed=0)
        out[precision] = (module.proj.detach().cpu(), predict(probe, module, data))
    assert torch.backends.cuda.matmul.fp32_precision == before
    (w32, p32), (w19, p19) = out["float32"], out["tfloat32"]
    assert not torch.equal(w32, w19)  # TF32 really ran
    worst = max(float(np.abs(a - b).max() / (np.abs(a).max() + 1e-6))
                for a, b in zip(p32, p19, strict=True))
    assert worst < 0.05


@pytest.fixture(scope="module")
def tiny_llama(tmp_path_factory: pytest.TempPathFactory, ewt_train: Path) -> Path:
    """A 6-block random Llama (hidden 64, byte-level BPE trained on EWT)."""
    from .probe.tiny_llama import build_llama, ewt_texts

    return build_llama(tmp_path_factory.mktemp("cuda-llama") / "llama",
                       ewt_texts(ewt_train, 400), blocks=6, hidden=64, ffn=256)


def test_cuda_device_map_across_gpu_and_cpu_gives_the_gpu_results(
        tiny_llama: Path, ewt_dev: Path) -> None:
    """``device_map=auto`` with a GPU budget smaller than the model: some blocks on cuda:0,
    the rest on the CPU. The word vectors, the log-probabilities and the erased
    log-probabilities (the hook on a CPU block and on a GPU block) equal the whole model's on
    the GPU (1e-4), and the vectors come back to the host in the cache's dtype."""
    from synrob.perturb.lm.loaded import load_lm
    from synrob.perturb.lm.placement import Placement
    from synrob.probe.causal.behaviour import pair_sentences, score_pairs, split_unchanged
    from synrob.probe.causal.erasure import Eraser
    from synrob.probe.causal.erasure.inside import erasing
    from synrob.probe.encoders.transformer import TransformerEncoder
    from synrob.probe.representations.encoding import read_words

    sents = read_words(ewt_dev)[:10]
    split = {"device_map": "auto", "max_memory": "0=400KB,cpu=1GiB"}
    kw = {"model": str(tiny_llama), "precision": "float32", "device": "cuda"}
    whole = TransformerEncoder(**kw).encode_flat(sents, [1, 5])
    enc = TransformerEncoder(**kw, **split)
    got = enc.encode_flat(sents, [1, 5])
    assert {0, "cpu"} <= set(enc.model.hf_device_map.values()), enc.model.hf_device_map
    assert got.words.dtype == np.float32
    np.testing.assert_allclose(got.words, whole.words, rtol=0, atol=1e-4)
    agreement = Path(__file__).parent / "data" / "agreement"
    pairs = split_unchanged(pair_sentences(agreement / "original.conllu",
                                           agreement / "pairs.conllu")[0])[0]
    plain = load_lm(str(tiny_llama), device="cuda", dtype="float32")
    placed = load_lm(str(tiny_llama), device="cuda", dtype="float32",
                     placement=Placement(**split))
    assert placed.device == "cuda:0"
    g = torch.Generator().manual_seed(0)
    left = torch.randn(64, 2, generator=g)
    eraser = Eraser("leace", left, torch.linalg.pinv(left), torch.randn(64, generator=g),
                    torch.randn(2, 64, generator=g), ["Plur", "Sing"])
    for layer in (None, 1, 5):
        with erasing(plain, eraser if layer else None, layer or 0):
            want = [s.logprob_original for s in score_pairs(plain, pairs)]
        with erasing(placed, eraser if layer else None, layer or 0):
            have = [s.logprob_original for s in score_pairs(placed, pairs)]
        np.testing.assert_allclose(have, want, rtol=0, atol=1e-3)


def test_cuda_layer_only_equals_the_whole_model(tiny_llama: Path, ewt_dev: Path) -> None:
    from synrob.probe.encoders.transformer import TransformerEncoder
    from synrob.probe.representations.encoding import read_words

    sents = read_words(ewt_dev)[:10]
    kw = {"model": str(tiny_llama), "precision": "float32", "device": "cuda"}
    enc = TransformerEncoder(**kw)
    got = enc.encode_flat(sents, [2]).words
    assert enc.blocks_loaded == 3
    full = TransformerEncoder(**kw, layer_only=False).encode_flat(sents, [2]).words
    np.testing.assert_array_equal(got, full)
