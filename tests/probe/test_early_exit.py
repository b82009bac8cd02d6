"""Early exit (:mod:`synrob.probe.encoders.early_exit`): the plan found for each architecture,
hidden states of a cut pass bit-identical to the full pass's, fewer blocks really run, and the
encoder's vectors unchanged - on tiny models built from configs and on MiniLM with EWT."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from synrob.probe.representations.encoding import read_words

#: blocks of every model built here
N_BLOCKS = 4


def _config(kind: str) -> Any:
    import transformers as tf

    small = {"vocab_size": 120}
    if kind in ("bert", "roberta", "albert"):
        cls = {"bert": tf.BertConfig, "roberta": tf.RobertaConfig, "albert": tf.AlbertConfig}
        extra = {"embedding_size": 16} if kind == "albert" else {}
        return cls[kind](hidden_size=32, num_hidden_layers=N_BLOCKS, num_attention_heads=2,
                         intermediate_size=64, **small, **extra)
    if kind == "gpt2":
        return tf.GPT2Config(n_embd=32, n_layer=N_BLOCKS, n_head=2, bos_token_id=0,
                             eos_token_id=0, **small)
    if kind == "llama":
        return tf.LlamaConfig(hidden_size=32, num_hidden_layers=N_BLOCKS, num_attention_heads=2,
                              num_key_value_heads=2, intermediate_size=64, **small)
    return tf.T5Config(d_model=32, num_layers=N_BLOCKS, num_heads=2, d_ff=64, d_kv=16, **small)


# architecture -> expected ``extra`` of its plan (None: no plan, it runs in full)
EXPECTED_EXTRA = {"bert": 0, "roberta": 0, "gpt2": 1, "llama": 1, "t5": 1, "albert": None}


def _model(kind: str) -> Any:
    import torch
    from transformers import AutoModel, T5EncoderModel

    torch.manual_seed(0)
    cfg = _config(kind)
    return (T5EncoderModel(cfg) if kind == "t5" else AutoModel.from_config(cfg)).eval()


def _runner(seed: int = 1, length: int = 11) -> Any:
    import torch

    ids = torch.randint(5, 120, (2, length), generator=torch.Generator().manual_seed(seed))
    mask = torch.ones_like(ids)
    mask[1, length - 3:] = 0  # one padded row

    def run(model: Any) -> Any:
        with torch.inference_mode():
            return model(input_ids=ids, attention_mask=mask, output_hidden_states=True,
                         return_dict=True).hidden_states

    return run


@pytest.mark.parametrize("kind", sorted(EXPECTED_EXTRA))
def test_plan_per_architecture_and_cut_states_equal_full(kind):
    import torch
    from synrob.probe.encoders.early_exit import find_blocks, plan

    model = _model(kind)
    exit_ = plan(model, N_BLOCKS, _runner(seed=1, length=7))
    if EXPECTED_EXTRA[kind] is None:  # ALBERT shares one layer: no list of 4 blocks
        assert exit_ is None
        return
    assert exit_ is not None and exit_.extra == EXPECTED_EXTRA[kind]
    run = _runner(seed=2, length=13)  # another input than the plan's check
    full = run(model)
    assert len(full) == N_BLOCKS + 1
    for k in range(N_BLOCKS + 1):
        with exit_.cut([k]) as depth:
            cut = run(model)
            assert len(getattr(exit_.parent, exit_.attr)) == depth  # the model runs a cut list
        assert depth == min(N_BLOCKS, max(1, k + exit_.extra))
        assert torch.equal(cut[k], full[k]), f"{kind}: hidden state {k} differs when cut"
    assert find_blocks(model, N_BLOCKS)[2] is exit_.blocks  # the full list is back


def test_a_model_that_indexes_its_blocks_runs_in_full():
    import torch
    from synrob.probe.encoders.early_exit import plan

    class Indexing(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.emb = torch.nn.Embedding(120, 8)
            self.blocks = torch.nn.ModuleList(torch.nn.Linear(8, 8) for _ in range(N_BLOCKS))

        def forward(self, input_ids, attention_mask, output_hidden_states, return_dict):
            h = self.emb(input_ids)
            states = [h]
            for i in range(N_BLOCKS):  # by number: a cut list raises IndexError
                h = self.blocks[i](h)
                states.append(h)
            return type("Out", (), {"hidden_states": tuple(states)})()

    model = Indexing().eval()
    assert plan(model, N_BLOCKS, _runner()) is None
    assert len(model.blocks) == N_BLOCKS  # restored after the failed try


def test_no_plan_without_a_unique_block_list():
    import torch
    from synrob.probe.encoders.early_exit import find_blocks, plan

    twice = torch.nn.Module()
    twice.a = torch.nn.ModuleList(torch.nn.Linear(2, 2) for _ in range(3))
    twice.b = torch.nn.ModuleList(torch.nn.Linear(2, 2) for _ in range(3))
    assert find_blocks(twice, 3) is None
    assert plan(_model("bert"), 1, _runner()) is None  # one block: nothing to cut


# ---------------------------------------------------------------- through the encoder
def _assert_same(a: Any, b: Any) -> None:
    for name in ("words", "first", "last", "offsets"):
        assert np.array_equal(getattr(a, name), getattr(b, name)), name
    assert a.oov == b.oov


@pytest.mark.parametrize("kind", ["bert", "gpt2", "llama"])
def test_encoder_vectors_equal_the_full_pass_and_fewer_blocks_run(kind, tiny_deep_models, ewt_dev):
    from synrob.probe.encoders.resolve import resolve_encoder

    sents = read_words(ewt_dev)[:150]
    enc = resolve_encoder(str(tiny_deep_models[kind]), {"device": "cpu", "token_budget": 400})
    enc.load()
    extra = EXPECTED_EXTRA[kind]
    assert enc._exit_plan is not None and enc._exit_plan.extra == extra
    calls: list[int] = []
    for i, block in enumerate(enc._exit_plan.blocks):
        block.register_forward_hook(lambda m, a, o, i=i: calls.append(i))
    for layers in ([0], [1], [2], [1, 3], [0, 4], [4]):
        enc.early_exit = False
        full = enc.encode_flat(sents, layers)
        calls.clear()
        enc.early_exit = True
        cut = enc.encode_flat(sents, layers)
        _assert_same(cut, full)
        depth = min(N_BLOCKS, max(1, max(layers) + extra))
        assert enc.blocks_run(layers) == depth
        assert set(calls) == set(range(depth)), (layers, sorted(set(calls)))
    assert len(enc._exit_plan.blocks) == N_BLOCKS


@pytest.mark.slow
def test_minilm_one_layer_runs_half_the_blocks_with_the_same_vectors(ewt_dev):
    from synrob.probe.encoders.resolve import resolve_encoder

    sents = read_words(ewt_dev)[:300]
    enc = resolve_encoder("minilm", {"device": "cpu", "precision": "float32"})
    enc.load()
    assert enc._exit_plan is not None and enc._exit_plan.extra == 0  # BERT: no final norm
    assert enc.blocks_run([3]) == 3 and enc.blocks_run(range(7)) == 6
    for layers in ([3], [0, 2], [5]):
        enc.early_exit = False
        full = enc.encode_flat(sents, layers)
        enc.early_exit = True
        _assert_same(enc.encode_flat(sents, layers), full)
