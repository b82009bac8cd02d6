"""bench/big_model.py on small shapes: the layer-by-layer builder writes a LlamaForCausalLM
checkpoint that transformers loads whole and that matches its sharded index, a byte-level BPE
of the exact vocabulary size, a block-by-block reference equal to the plain model's hidden
states and to ``synrob encode``'s vectors, and a positive peak RSS of a child process."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from .bench_script import load_bench

ROOT = Path(__file__).resolve().parents[1]


def _bench():
    return load_bench("big_model")


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory):
    """``(bench module, checkpoint dir, shapes)``: a small checkpoint built in a temporary
    cache, its tokenizer trained on the bundled EWT sample."""
    from synrob.perturb.io.data import sample_path

    bench = _bench()
    shapes = bench.Shapes(hidden=64, layers=6, ffn=160, heads=4, kv_heads=2, vocab=2048,
                          max_positions=512)
    texts = [line[9:].rstrip("\n") for line in
             sample_path("train").read_text(encoding="utf-8").splitlines(True)
             if line.startswith("# text = ")]
    root = tmp_path_factory.mktemp("cache") / "big_model"
    ckpt, made = bench.build_checkpoint(shapes, root, texts=texts)
    assert made
    return bench, ckpt, shapes


def test_a_second_build_reuses_the_finished_checkpoint(built) -> None:
    bench, ckpt, shapes = built
    stamp = (ckpt / "build.json").stat().st_mtime_ns
    again, made = bench.build_checkpoint(shapes, ckpt.parent)
    assert again == ckpt and not made
    assert (ckpt / "build.json").stat().st_mtime_ns == stamp
    assert not [p for p in ckpt.parent.iterdir() if p.name.startswith(".")]  # no temp dirs left


def test_the_checkpoint_loads_whole_and_matches_its_index(built) -> None:
    import torch
    from safetensors import safe_open
    from transformers import AutoModelForCausalLM

    bench, ckpt, shapes = built
    index = json.loads((ckpt / "model.safetensors.index.json").read_text())
    shards = sorted(set(index["weight_map"].values()))
    assert len(shards) == shapes.layers + 2  # embeddings, one per block, norm + head
    stored = {}
    for shard in shards:
        with safe_open(str(ckpt / shard), framework="pt") as f:
            for k in f.keys():  # noqa: SIM118 - safe_open is not iterable
                assert index["weight_map"][k] == shard
                stored[k] = f.get_tensor(k)
    assert set(stored) == set(index["weight_map"])
    assert index["metadata"]["total_size"] == sum(t.numel() * 2 for t in stored.values())
    assert all(t.dtype == torch.bfloat16 for t in stored.values())

    model, info = AutoModelForCausalLM.from_pretrained(ckpt, output_loading_info=True)
    assert not info["missing_keys"] and not info["unexpected_keys"]
    state = model.state_dict()
    assert set(state) == set(stored)
    for k, t in stored.items():
        assert torch.equal(state[k], t), k
    assert not torch.equal(state["lm_head.weight"], state["model.embed_tokens.weight"])
    assert torch.equal(stored["model.norm.weight"], torch.ones(shapes.hidden, dtype=torch.bfloat16))
    w = stored["model.layers.0.mlp.up_proj.weight"].float()
    assert abs(float(w.std()) - shapes.std) < 0.002
    assert model.config.rope_parameters["rope_theta"] == shapes.rope_theta
    probe = json.loads((ckpt / "build.json").read_text())["probe"]
    assert len(probe["hidden_max_abs"]) == shapes.layers + 1


def test_a_slice_with_fewer_blocks_holds_the_same_tensors(built, tmp_path: Path) -> None:
    """The 8-block slice of the offload check: the same names give the same values."""
    import dataclasses

    bench, ckpt, shapes = built
    sliced, _ = bench.build_checkpoint(dataclasses.replace(shapes, layers=2), ckpt.parent)
    big, small = bench.Shards(ckpt), bench.Shards(sliced)
    names = list(small.weight_map)
    assert "model.layers.1.self_attn.q_proj.weight" in names
    assert not any(n.startswith("model.layers.2.") for n in names)
    import torch

    got, want = small.get(names), big.get(names)
    assert all(torch.equal(got[n], want[n]) for n in names)


def test_the_tokenizer_is_a_fast_byte_level_bpe_of_the_vocabulary_size(built) -> None:
    from synrob.probe.encoders.transformer import is_byte_level
    from transformers import AutoTokenizer

    bench, ckpt, shapes = built
    tok = AutoTokenizer.from_pretrained(ckpt)
    assert tok.is_fast and is_byte_level(tok)
    assert len(tok) == shapes.vocab
    assert tok.bos_token == bench.BOS and tok.bos_token_id == shapes.vocab - bench.N_SPECIAL
    ids = tok("The unbelievably long word")["input_ids"]
    assert ids[0] == tok.bos_token_id and len(ids) > 5  # words split into subwords
    assert tok.decode(ids[1:]) == "The unbelievably long word"


def test_the_block_by_block_reference_is_the_plain_models_hidden_state(built) -> None:
    import torch
    from transformers import AutoModel

    bench, ckpt, _ = built
    sents = [["The", "dogs", "bark", "."], ["Colorless", "green", "ideas", "sleep", "furiously",
                                            "in", "Saskatchewan", "."], ["Hi"]]
    batches, targets, n_words = bench.synrob_batches(ckpt, sents, device="cpu",
                                                     precision="bfloat16")
    assert n_words == 13 and sum(int((t >= 0).sum()) for t in targets) > n_words  # subwords
    # and one right-padded batch of all three (synrob pads only within 10 % of a length)
    rows = [(b[r], m[r]) for b, m in batches for r in range(len(b))]
    ids = torch.zeros((len(rows), max(len(b) for b, _ in rows)), dtype=torch.long)
    mask = torch.zeros_like(ids)
    for i, (b, m) in enumerate(rows):
        n = int(m.sum())
        ids[i, :n], mask[i, :n] = b[:n], 1
    assert int(mask.sum()) < mask.numel()
    batches = [*batches, (ids, mask)]
    ref = bench.run_blocks(ckpt, batches, 4, device="cpu", dtype=torch.bfloat16,
                           attention="eager")
    model = AutoModel.from_pretrained(ckpt, dtype=torch.bfloat16, attn_implementation="eager")
    with torch.inference_mode():
        for (ids, mask), r in zip(batches, ref, strict=True):
            want = model(input_ids=ids, attention_mask=mask,
                         output_hidden_states=True).hidden_states[4]
            real = mask.bool()
            assert torch.equal(r[real], want[real])
        last = bench.run_blocks(ckpt, batches[:1], 6, device="cpu", dtype=torch.bfloat16,
                                attention="eager")[0]
        ids, mask = batches[0]
        want = model(input_ids=ids, attention_mask=mask, output_hidden_states=True)
        assert torch.equal(last[mask.bool()], want.hidden_states[6][mask.bool()])  # final norm


def test_the_reference_vectors_equal_synrob_encodes(built, tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """``layer_only_equal`` on small shapes: the cache entry's layer-4 vectors (float16)."""
    import numpy as np
    from synrob.perturb.io.data import sample_path
    from synrob.probe.api import encode

    bench, ckpt, _ = built
    monkeypatch.setenv("SYNROB_CACHE", str(tmp_path / "cache"))
    corpus = bench.first_sentences(sample_path("dev"), 12, tmp_path / "dev12.conllu")
    got = encode(corpus, str(ckpt), layers=[4], device="cpu",
                 params={"precision": "bfloat16"}).layer_matrix(4)[0]
    ref = bench.reference_vectors(ckpt, corpus, 4, device="cpu", precision="bfloat16")
    assert ref.dtype == np.float16 and ref.shape == got.shape
    assert np.array_equal(np.asarray(got), ref)


def test_layer_bytes_counts_the_embeddings_and_the_blocks(built) -> None:
    bench, ckpt, shapes = built
    h, f, kv = shapes.hidden, shapes.ffn, shapes.hidden // shapes.heads * shapes.kv_heads
    block = 2 * (2 * h * h + 2 * h * kv + 3 * h * f + 2 * h)
    assert bench.layer_bytes(ckpt, 5) == 2 * shapes.vocab * h + 5 * block


def test_the_peak_rss_of_a_child_is_measured(tmp_path: Path) -> None:
    bench = _bench()
    run = bench.run_measured([sys.executable, "-c", "x = bytearray(200 << 20); x[::4096] = "
                              "b'1' * len(x[::4096]); print('ok')"], logs=tmp_path)
    assert run.ok and run.stdout.strip() == "ok"
    assert run.rss_bytes >= 200 << 20
    small = bench.run_python(["-c", "print(1)"], logs=tmp_path / "small")
    assert 0 < small.rss_bytes < run.rss_bytes and small.cuda_peak_bytes is None


def test_sizes_parse_like_accelerate() -> None:
    bench = _bench()
    assert bench.parse_bytes("6GiB") == 6 << 30
    assert bench.parse_bytes("2GB") == 2 * 10**9
    assert bench.parse_bytes("512MiB") == 512 << 20
