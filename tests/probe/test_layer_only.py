"""Layer-only loading: a request below the last layer loads only the blocks it needs, and its
vectors are the full model's bit for bit; a request of the last layer still gets the final norm;
a checkpoint without the needed blocks is one error, never random vectors."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from synrob.perturb.errors import ResourceError
from synrob.probe.encoders.layer_only import blocks_needed, check_loaded, truncated_config
from synrob.probe.encoders.transformer import TransformerEncoder

from .tiny_llama import build_llama, ewt_texts

N_BLOCKS = 6


@pytest.fixture(scope="module")
def llama(tmp_path_factory: pytest.TempPathFactory, ewt_train: Path) -> Path:
    return build_llama(tmp_path_factory.mktemp("layer-only") / "llama",
                       ewt_texts(ewt_train, 400), blocks=N_BLOCKS)


@pytest.fixture(scope="module")
def sentences(ewt_dev: Path) -> list[list[str]]:
    from synrob.probe.representations.encoding import read_words

    return read_words(ewt_dev)[:12]


def _encoder(model: Path, **kw) -> TransformerEncoder:
    return TransformerEncoder(model=str(model), precision="float32", device="cpu", **kw)


def test_blocks_needed_keeps_one_block_past_the_layer_and_the_whole_model_at_the_top():
    assert [blocks_needed(L, 6) for L in range(7)] == [1, 2, 3, 4, 5, 6, 6]


def test_truncated_config_cuts_the_count_and_every_per_block_list():
    from transformers import AutoConfig

    qwen = AutoConfig.for_model("qwen3", hidden_size=32, intermediate_size=64,
                                num_hidden_layers=6, num_attention_heads=2,
                                num_key_value_heads=1, head_dim=16, use_sliding_window=True,
                                max_window_layers=2, sliding_window=8)
    short = truncated_config(qwen, 3)
    assert short.num_hidden_layers == 3 and short.layer_types == qwen.layer_types[:3]
    rest = {k: v for k, v in short.to_dict().items() if k not in ("num_hidden_layers",
                                                                    "layer_types")}
    assert rest == {k: v for k, v in qwen.to_dict().items() if k in rest}
    gpt2 = AutoConfig.for_model("gpt2", n_layer=5, n_embd=32, n_head=2)
    assert truncated_config(gpt2, 2).n_layer == 2  # GPT-2 calls its count n_layer
    assert truncated_config(gpt2, 5) is None  # not fewer: the whole model
    t5 = AutoConfig.for_model("t5", num_layers=4, d_model=32, num_heads=2)
    assert truncated_config(t5, 2) is None  # encoder-decoder: loads whole


@pytest.mark.parametrize("layer", [0, 1, 3, N_BLOCKS - 1, N_BLOCKS])
def test_layer_only_vectors_equal_the_full_models(llama, sentences, layer):
    full = _encoder(llama, layer_only=False).encode_flat(sentences, [layer])
    enc = _encoder(llama)
    got = enc.encode_flat(sentences, [layer])
    assert enc.blocks_loaded == blocks_needed(layer, N_BLOCKS)
    np.testing.assert_array_equal(got.words, full.words)
    np.testing.assert_array_equal(got.first, full.first)
    np.testing.assert_array_equal(got.last, full.last)


def test_the_last_layer_is_the_final_norms_output_as_before(llama, sentences):
    """Layer N loads every block and the final norm: it equals the plain model's last hidden
    state (the normed one), as it did before layer-only loading."""
    import torch
    from transformers import AutoModel

    enc = _encoder(llama)
    got = enc.encode_flat(sentences[:1], [N_BLOCKS]).words[0]
    assert enc.blocks_loaded == N_BLOCKS
    model = AutoModel.from_pretrained(llama, dtype=torch.float32).eval()
    ids, wid = enc._tokenize(sentences[:1])[0]
    with torch.inference_mode():
        out = model(input_ids=torch.from_numpy(ids)[None], output_hidden_states=True)
    states = out.hidden_states[N_BLOCKS][0].numpy()
    expect = np.stack([states[wid == w].mean(0) for w in range(len(sentences[0]))])
    np.testing.assert_allclose(got, expect, rtol=0, atol=1e-5)


def test_a_deeper_request_loads_the_model_again_with_more_blocks(llama, sentences):
    enc = _encoder(llama)
    enc.encode_flat(sentences, [1])
    assert enc.blocks_loaded == 2
    deep = enc.encode_flat(sentences, [1, 4])
    assert enc.blocks_loaded == 5
    full = _encoder(llama, layer_only=False).encode_flat(sentences, [1, 4])
    np.testing.assert_array_equal(deep.words, full.words)
    enc.encode_flat(sentences, [2])  # a shallower request keeps the deeper model
    assert enc.blocks_loaded == 5


def test_the_option_is_not_part_of_the_cache_key(llama):
    assert _encoder(llama).identity() == _encoder(llama, layer_only=False).identity()


def test_a_checkpoint_without_the_needed_blocks_is_one_error(llama, sentences, tmp_path):
    """A config that promises more blocks than the weights hold: a cut load would leave block
    6 random; it is refused instead."""
    broken = tmp_path / "broken"
    shutil.copytree(llama, broken)
    cfg = json.loads((broken / "config.json").read_text())
    cfg["num_hidden_layers"] = N_BLOCKS + 2
    (broken / "config.json").write_text(json.dumps(cfg))
    with pytest.raises(ResourceError, match="no weights for layers.6"):
        _encoder(broken).encode_flat(sentences[:1], [N_BLOCKS])
    check_loaded(["pooler.dense.weight"], "m")  # a head the states do not read is no loss


_RSS = ("import resource, subprocess, sys; out = subprocess.run(sys.argv[1:], check=True, "
        "capture_output=True, text=True).stdout; print(out.splitlines()[-1]); "
        "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")


def _encode_rss(model: Path, layers: str, corpus: Path, cache: Path) -> tuple[int, str]:
    """Peak RSS (KiB) of ``synrob encode --layers LAYERS`` in a process of its own, and the
    cache entry it wrote."""
    import os

    env = {**os.environ, "SYNROB_CACHE": str(cache)}
    cmd = [sys.executable, "-m", "synrob.cli", "encode", "--encoder", "transformer", "-p",
           f"model={model}", "-p", "precision=float32", "--device", "cpu", "--layers", layers,
           str(corpus)]
    summary, rss = subprocess.run([sys.executable, "-c", _RSS, *cmd], env=env, check=True,
                                  capture_output=True, text=True).stdout.splitlines()[-2:]
    return int(rss), json.loads(summary)["cache_path"]


@pytest.mark.slow
def test_cli_layer_one_of_sixteen_blocks_takes_at_most_half_the_memory(
        tmp_path, ewt_train, ewt_dev):
    """The issue's contract: ``synrob encode --layers 1`` of a 16-block checkpoint peaks at
    most at half the RSS of ``--layers 1,14``, and its layer-1 vectors are byte-identical."""
    from synrob.probe.representations.encoding import RepresentationSet

    model = build_llama(tmp_path / "m16", ewt_texts(ewt_train, 400), blocks=16, hidden=1024,
                        ffn=4096)
    corpus = tmp_path / "dev5.conllu"
    blocks = ewt_dev.read_text(encoding="utf-8").split("\n\n", 5)[:5]
    corpus.write_text("\n\n".join(blocks) + "\n\n", encoding="utf-8")
    one, one_path = _encode_rss(model, "1", corpus, tmp_path / "c1")
    both, both_path = _encode_rss(model, "1,14", corpus, tmp_path / "c2")
    assert one <= 0.5 * both, (one, both)
    a = RepresentationSet(one_path).layer_matrix(1)[0]
    b = RepresentationSet(both_path).layer_matrix(1)[0]
    assert a.dtype == b.dtype and a.tobytes() == b.tobytes()


def _probe_layer(model: Path, layer: int | str, sample: dict[str, str]) -> Any:
    from synrob.probe.api import probe

    return probe(sample["test"], encoder="transformer", layer=layer, task="pos",
                 train=sample["train"], dev=sample["dev"], device="cpu", baselines=False,
                 params={"model": str(model), "precision": "float32"})


def _model_test_rows(result: Any, layer: int) -> list[tuple[str, float]]:
    return sorted((r["metric"], r["value"]) for r in result.rows
                  if r.get("role") == "model" and r.get("split") == "test"
                  and r.get("layer") == layer)


def test_probe_of_one_layer_encodes_only_that_layer_and_reuses_a_sweep(llama, tmp_path,
                                                                      monkeypatch):
    """``probe(layer=1)`` caches layer 1 only (so layer-only loading applies); its results equal those
    of layer 1 of an every-layer probe; after that sweep, a one-layer probe of the same files
    encodes nothing new."""
    from synrob.probe.representations import cache as _cache

    sample = {s: f"sample:en_ewt:{s}" for s in ("train", "dev", "test")}
    monkeypatch.setenv("SYNROB_CACHE", str(tmp_path / "one"))
    alone = _probe_layer(llama, 1, sample)
    assert {tuple(e["layers"]) for e in _cache.list_entries()} == {(1,)}
    monkeypatch.setenv("SYNROB_CACHE", str(tmp_path / "sweep"))
    sweep = _probe_layer(llama, "all", sample)
    before = {e["key"] for e in _cache.list_entries()}
    again = _probe_layer(llama, 1, sample)
    assert {e["key"] for e in _cache.list_entries()} == before  # read from the sweep's entries
    assert _model_test_rows(alone, 1) == _model_test_rows(sweep, 1) == _model_test_rows(again, 1)
    assert _model_test_rows(alone, 1)
