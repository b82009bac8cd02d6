"""Model loading: spec resolution, masked/causal detection, devices, offline errors, GGUF cache."""

from __future__ import annotations

import itertools
import time
from pathlib import Path

import pytest
from synrob.perturb.corpus import read_conllu
from synrob.perturb.errors import ResourceError
from synrob.perturb.lm import loaded as lm_mod
from synrob.perturb.lm import models
from synrob.perturb.lm.device import resolve_device
from synrob.perturb.lm.loaded import detect_kind, forward_throughput, load_lm
from synrob.perturb.lm.models import resolve_model


@pytest.fixture(scope="module")
def tiny_dirs(tmp_path_factory: pytest.TempPathFactory, ewt_train: Path) -> dict[str, Path]:
    """A tiny BERT masked LM and a tiny GPT-2, each with a tokenizer trained on EWT text."""
    import torch
    from tokenizers import BertWordPieceTokenizer, ByteLevelBPETokenizer
    from transformers import (
        BertConfig,
        BertForMaskedLM,
        GPT2Config,
        GPT2LMHeadModel,
        PreTrainedTokenizerFast,
    )

    texts = [s.text for s in itertools.islice(read_conllu(ewt_train), 1000)]
    root = tmp_path_factory.mktemp("lm")
    torch.manual_seed(0)
    wp = BertWordPieceTokenizer(lowercase=True)
    wp.train_from_iterator(texts, vocab_size=800)
    btok = PreTrainedTokenizerFast(tokenizer_object=wp, unk_token="[UNK]", pad_token="[PAD]",
                                   cls_token="[CLS]", sep_token="[SEP]", mask_token="[MASK]")
    bert = BertForMaskedLM(BertConfig(vocab_size=len(btok), hidden_size=16, num_hidden_layers=1,
                                      num_attention_heads=2, intermediate_size=32))
    bert.save_pretrained(root / "bert")
    btok.save_pretrained(root / "bert")
    bpe = ByteLevelBPETokenizer()
    bpe.train_from_iterator(texts, vocab_size=800, special_tokens=["<|endoftext|>"])
    gtok = PreTrainedTokenizerFast(tokenizer_object=bpe, bos_token="<|endoftext|>",
                                   eos_token="<|endoftext|>")
    gpt = GPT2LMHeadModel(GPT2Config(vocab_size=len(gtok), n_embd=16, n_layer=1, n_head=2,
                                     n_positions=128))
    gpt.save_pretrained(root / "gpt2")
    gtok.save_pretrained(root / "gpt2")
    return {"masked": root / "bert", "causal": root / "gpt2"}


def test_detect_kind_from_configs():
    from transformers import BertConfig, GPT2Config, LlamaConfig, RobertaConfig

    assert detect_kind(BertConfig(architectures=["BertForMaskedLM"])) == "masked"
    assert detect_kind(BertConfig(architectures=["BertLMHeadModel"])) == "causal"
    assert detect_kind(BertConfig(is_decoder=True)) == "causal"
    assert detect_kind(BertConfig()) == "masked"
    assert detect_kind(RobertaConfig()) == "masked"
    assert detect_kind(GPT2Config()) == "causal"
    assert detect_kind(LlamaConfig()) == "causal"


@pytest.mark.parametrize("kind", ["masked", "causal"])
def test_load_tiny_models_from_directories(tiny_dirs, kind):
    loaded = load_lm(str(tiny_dirs[kind]), device="cpu")
    assert loaded.kind == kind and loaded.device == "cpu"
    assert not loaded.model.training
    assert loaded.vocab_size == len(loaded.tokenizer)
    assert load_lm(str(tiny_dirs[kind]), device="cpu") is loaded  # loaded once per process
    src = resolve_model(str(tiny_dirs[kind]))
    assert src.is_local and src.gguf_file is None


def test_forward_throughput_counts_real_tokens(tiny_dirs):
    loaded = load_lm(str(tiny_dirs["causal"]), device="cpu")
    out = forward_throughput(loaded, [(4, 10, 31), (2, 7, 14)])
    assert out["tokens"] == 45 and out["seconds"] > 0
    assert out["tokens_per_second"] == pytest.approx(45 / out["seconds"])


def test_resolve_alias_and_paths(tmp_path):
    src = resolve_model("smollm2")
    assert src.gguf_file == "SmolLM2-135M-Instruct.Q4_1.gguf"
    assert (Path(src.location) / src.gguf_file).is_file()
    assert src.cache_dir is not None and src.cache_dir.parent.name == "models"
    with pytest.raises(ResourceError, match="no such directory"):
        resolve_model(str(tmp_path / "nowhere"))
    (tmp_path / "empty").mkdir()
    with pytest.raises(ResourceError, match="no config.json"):
        resolve_model(str(tmp_path / "empty"))
    hub = resolve_model("someone/some-model")
    assert not hub.is_local and hub.location == "someone/some-model"


def test_offline_hub_name_is_a_quick_one_line_error(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    start = time.perf_counter()
    with pytest.raises(ResourceError) as err:
        load_lm("synrob-tests/no-such-model-anywhere")
    assert time.perf_counter() - start < 20
    msg = str(err.value)
    assert "\n" not in msg and "unreachable" in msg and "smollm2" in msg


def test_unreachable_hub_detected_without_retries(monkeypatch):
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.setenv("HF_ENDPOINT", "http://127.0.0.1:9")  # discard port: refused at once
    assert models._hub_reachable(timeout=2) is False


def test_devices():
    import torch

    assert resolve_device("cpu") == "cpu"
    assert resolve_device("auto") == ("cuda" if torch.cuda.is_available() else "cpu")
    with pytest.raises(ResourceError):
        resolve_device("quantum")
    if not torch.cuda.is_available():
        with pytest.raises(ResourceError, match="CUDA is not available"):
            resolve_device("cuda")


@pytest.mark.slow
@pytest.mark.model
def test_smollm2_dequantised_once_then_cached(monkeypatch):
    import torch

    first = load_lm("smollm2", device="cpu")
    assert first.kind == "causal"
    cache = resolve_model("smollm2").cache_dir
    assert cache is not None and (cache / "model.safetensors").is_file()
    assert (cache / "tokenizer.json").is_file()
    monkeypatch.setattr(lm_mod, "_LOADED", {})
    start = time.perf_counter()
    second = load_lm("smollm2", device="cpu")
    assert time.perf_counter() - start < 15  # no dequantisation the second time
    tok = second.tokenizer
    ids = torch.tensor([[tok.bos_token_id, *tok("The cat sat on the mat.").input_ids]])
    with torch.inference_mode():
        a = first.model(input_ids=ids).logits
        b = second.model(input_ids=ids).logits
    assert torch.equal(a, b)
    assert tok.decode(a[0, -2].argmax()) .strip() != ""
