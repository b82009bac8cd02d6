"""A GGUF model from an empty cache: its file parsed once while it is dequantised, and its
weights read once in a process that loads it as an LM and encodes with it (issue 55: the
card, and ``synrob run amnesic``, read the model once)."""

from __future__ import annotations

import functools
import importlib
from typing import Any

import pytest


def _count(monkeypatch: pytest.MonkeyPatch, calls: list[str]) -> None:
    """Count the GGUF file's full parses (``gguf.GGUFReader`` built), transformers' metadata
    reads and tensor loads (as bench/amnesic.py does)."""
    gguf = importlib.import_module("gguf")
    reader = gguf.GGUFReader

    def built(*a: Any, **k: Any) -> Any:
        calls.append("GGUFReader")
        return reader(*a, **k)

    monkeypatch.setattr(gguf, "GGUFReader", built)
    for module, name in (("transformers.modeling_gguf_pytorch_utils", "load_gguf_checkpoint"),
                         ("transformers.integrations.gguf", "read_gguf_metadata")):
        mod = importlib.import_module(module)
        real = getattr(mod, name)

        def counted(*a: Any, _real: Any = real, _name: str = name, **k: Any) -> Any:
            calls.append(f"{_name}{'+tensors' if k.get('return_tensors') else ''}")
            return _real(*a, **k)

        monkeypatch.setattr(mod, name, functools.wraps(real)(counted))


@pytest.mark.slow
@pytest.mark.model
def test_smollm2_from_an_empty_cache_is_parsed_once_and_its_weights_read_once(
        model_reads: list[str], monkeypatch: pytest.MonkeyPatch, sample_slice: Any,
        tmp_path: Any) -> None:
    import torch
    from synrob.perturb.lm import loaded as lm_mod
    from synrob.perturb.lm.loaded import load_lm
    from synrob.probe.representations.encoding import LoadedEncoders, encode_corpus

    calls: list[str] = []
    _count(monkeypatch, calls)
    held = LoadedEncoders(lm="smollm2")  # as an experiment whose runs score with the LM
    rep = encode_corpus("smollm2", sample_slice("dev", 10, tmp_path), layers=[2],
                        encoders=held, device="cpu")
    lm = load_lm("smollm2", device="cpu")
    assert model_reads == ["LlamaForCausalLM"]  # the dequantisation's read, and no other
    # the file parsed once (one GGUFReader, whose tensors the weight load reads), and each of
    # transformers' reads made once: the fast header reader, the metadata, the tensors
    assert calls == ["read_gguf_metadata", "load_gguf_checkpoint", "GGUFReader",
                     "load_gguf_checkpoint+tensors"]
    assert rep.layers == [2]
    monkeypatch.setattr(lm_mod, "_LOADED", {})
    again = load_lm("smollm2", device="cpu")  # read back from the copy: the same model
    assert again.model is not lm.model and model_reads[-1] == "LlamaForCausalLM"
    tok = lm.tokenizer
    ids = torch.tensor([[tok.bos_token_id, *tok("The keys to the cabinet are here.").input_ids]])
    with torch.inference_mode():
        assert torch.equal(lm.model(input_ids=ids).logits, again.model(input_ids=ids).logits)
