"""The forward-pass intervention (:mod:`synrob.probe.causal.intervene`) on tiny BERT, RoBERTa, GPT-2 and
LLaMA LMs built from configs: the state each layer's hook sees is ``output_hidden_states[L]``
(the encoders' ``--layer`` numbering), the identity eraser leaves the logits bit for bit
unchanged, and a real eraser changes exactly layer L's states as ``Eraser.__call__`` says."""

from __future__ import annotations

from typing import Any

import pytest
from synrob.perturb.errors import ParameterError

torch = pytest.importorskip("torch")

N_BLOCKS = 3
DIM = 32
KINDS = ("bert", "roberta", "gpt2", "llama")


def _lm(kind: str) -> Any:
    import transformers as tf

    small = {"vocab_size": 120}
    if kind in ("bert", "roberta"):
        cfg = (tf.BertConfig if kind == "bert" else tf.RobertaConfig)(
            hidden_size=DIM, num_hidden_layers=N_BLOCKS, num_attention_heads=2,
            intermediate_size=64, **small)
        cls = tf.BertForMaskedLM if kind == "bert" else tf.RobertaForMaskedLM
    elif kind == "gpt2":
        cfg = tf.GPT2Config(n_embd=DIM, n_layer=N_BLOCKS, n_head=2, bos_token_id=0,
                            eos_token_id=0, **small)
        cls = tf.GPT2LMHeadModel
    else:
        cfg = tf.LlamaConfig(hidden_size=DIM, num_hidden_layers=N_BLOCKS, num_attention_heads=2,
                             num_key_value_heads=2, intermediate_size=64, **small)
        cls = tf.LlamaForCausalLM
    torch.manual_seed(0)
    return cls(cfg).eval()


@pytest.fixture(scope="module", params=KINDS)
def lm(request: pytest.FixtureRequest) -> Any:
    return _lm(request.param)


def _inputs(length: int = 9) -> tuple[Any, Any]:
    ids = torch.randint(5, 120, (3, length), generator=torch.Generator().manual_seed(1))
    mask = torch.ones_like(ids)
    mask[1, length - 3:] = 0  # one right-padded row
    return ids, mask


def _run(model: Any, ids: Any, mask: Any) -> Any:
    with torch.inference_mode():
        return model(input_ids=ids, attention_mask=mask, output_hidden_states=True,
                     return_dict=True)


def _eraser(kind: str = "leace", rank: int = 2, seed: int = 0, identity: bool = False) -> Any:
    from synrob.probe.causal.erasure import Eraser

    g = torch.Generator().manual_seed(seed)
    left = torch.randn(DIM, rank, generator=g)
    right = torch.linalg.pinv(left)  # a projection onto the span of left's columns
    if identity:
        left, right = torch.zeros(DIM, rank), torch.zeros(rank, DIM)
    return Eraser(kind, left, right, torch.randn(DIM, generator=g),
                  torch.randn(2, DIM, generator=g), ["Sing", "Plur"])


def _recorder(into: list) -> Any:
    def record(x: Any) -> Any:
        into.append(x.clone())
        return x

    return record


def test_site_of_each_layer(lm: Any) -> None:
    from synrob.probe.causal.intervene import layer_site, model_layers

    assert model_layers(lm) == N_BLOCKS + 1
    sites = [layer_site(lm, layer) for layer in range(N_BLOCKS + 1)]
    assert [s.where for s in sites] == ["input"] * N_BLOCKS + ["output"]
    last = sites[-1].name.rsplit(".", 1)[-1]
    final_norm = {"GPT2LMHeadModel": "ln_f", "LlamaForCausalLM": "norm"}
    assert last == final_norm.get(type(lm).__name__, str(N_BLOCKS - 1))
    for bad in (-1, N_BLOCKS + 1):
        with pytest.raises(ParameterError, match="out of range"):
            layer_site(lm, bad)


def test_hook_sees_output_hidden_states(lm: Any) -> None:
    """What the function at layer L receives is hidden_states[L], row by row in row-major
    order of the positions, for every layer and for each kind of ``positions``."""
    from synrob.probe.causal.intervene import intervene

    ids, mask = _inputs()
    clean = _run(lm, ids, mask).hidden_states
    assert len(clean) == N_BLOCKS + 1
    chosen = torch.zeros(ids.shape, dtype=torch.bool)
    chosen[0, 2:4] = chosen[2, 5] = True
    for layer in range(N_BLOCKS + 1):
        h = clean[layer]
        for positions, want in ((None, h.reshape(-1, DIM)), (1, h[:, 1:].reshape(-1, DIM)),
                                (chosen, h[chosen])):
            seen: list = []
            with intervene(lm, layer, _recorder(seen), positions=positions):
                _run(lm, ids, mask)
            assert len(seen) == 1
            assert torch.equal(seen[0], want), (layer, positions)


@pytest.mark.parametrize("positions", [None, 1, "mask"])
def test_identity_eraser_is_exact(lm: Any, positions: Any) -> None:
    """The identity eraser (proj_left = proj_right = 0) leaves the logits bit-identical."""
    from synrob.probe.causal.intervene import intervene

    ids, mask = _inputs()
    if positions == "mask":
        positions = torch.rand(ids.shape, generator=torch.Generator().manual_seed(2)) > 0.5
    clean = _run(lm, ids, mask).logits
    eraser = _eraser(identity=True)
    for layer in range(N_BLOCKS + 1):
        with intervene(lm, layer, eraser, positions=positions):
            assert torch.equal(_run(lm, ids, mask).logits, clean), layer
    assert torch.equal(_run(lm, ids, mask).logits, clean)  # the hook is gone


def test_eraser_changes_layer_l_only(lm: Any) -> None:
    """A real eraser at L: layer L's states become ``Eraser.__call__`` of the clean ones
    (a recorder hooked after it sees them), earlier layers are untouched, the logits change."""
    from synrob.probe.causal.intervene import intervene

    ids, mask = _inputs()
    clean = _run(lm, ids, mask)
    eraser = _eraser()
    for layer in range(N_BLOCKS + 1):
        seen: dict[int, list] = {k: [] for k in range(layer + 1)}
        with intervene(lm, layer, eraser, positions=1):
            hooks = [intervene(lm, k, _recorder(seen[k])) for k in range(layer + 1)]
            for h in hooks:
                h.__enter__()
            try:
                out = _run(lm, ids, mask)
            finally:
                for h in reversed(hooks):
                    h.__exit__(None, None, None)
        for k in range(layer):
            assert torch.equal(seen[k][0], clean.hidden_states[k].reshape(-1, DIM))
        h = clean.hidden_states[layer]
        want = torch.cat([h[:, :1], eraser(h[:, 1:])], dim=1).reshape(-1, DIM)
        assert torch.equal(seen[layer][0], want)
        assert not torch.allclose(out.logits, clean.logits)


def test_counterfactual_at_chosen_positions(lm: Any) -> None:
    """A function of the selected rows (the counterfactual with per-row targets) changes those
    states only."""
    from synrob.probe.causal.intervene import intervene

    ids, mask = _inputs()
    eraser = _eraser()
    chosen = torch.zeros(ids.shape, dtype=torch.bool)
    chosen[0, 3] = chosen[2, 4:6] = True
    target = torch.tensor([1, 0, 1])
    layer = 2
    clean = _run(lm, ids, mask).hidden_states[layer]
    seen: list = []
    with intervene(lm, layer, lambda x: eraser.counterfactual(x, target), positions=chosen), \
            intervene(lm, layer, _recorder(seen)):
        _run(lm, ids, mask)
    want = clean.clone()
    want[chosen] = eraser.counterfactual(clean[chosen], target)
    assert torch.equal(seen[0], want.reshape(-1, DIM))


def test_bad_positions_and_outputs(lm: Any) -> None:
    from synrob.probe.causal.intervene import intervene

    ids, mask = _inputs()
    with pytest.raises(ParameterError, match="bool mask of shape"), \
            intervene(lm, 1, lambda x: x, positions=torch.ones(2, 2, dtype=torch.bool)):
        _run(lm, ids, mask)
    with pytest.raises(ParameterError, match="returned shape"), \
            intervene(lm, 1, lambda x: x[:1]):
        _run(lm, ids, mask)


# ---------------------------------------------------------------------- real models
def _exact_on(model: Any, ids: Any, mask: Any, layers: list[int], dim: int, logits: str) -> None:
    """At each layer: the hook sees hidden_states[L] and the identity eraser (start token left
    out) leaves the output bit for bit unchanged."""
    from synrob.probe.causal.erasure import Eraser
    from synrob.probe.causal.intervene import intervene

    clean = _run(model, ids, mask)
    identity = Eraser("leace", torch.zeros(dim, 1), torch.zeros(1, dim), torch.randn(dim),
                      torch.randn(2, dim), ["a", "b"])
    for layer in layers:
        seen: list = []
        with intervene(model, layer, _recorder(seen)):
            _run(model, ids, mask)
        assert torch.equal(seen[0], clean.hidden_states[layer].reshape(-1, dim)), layer
        with intervene(model, layer, identity, positions=1):
            assert torch.equal(getattr(_run(model, ids, mask), logits), getattr(clean, logits))


@pytest.mark.model
@pytest.mark.slow
def test_real_minilm_and_smollm2_are_exact(ewt_dev: Any) -> None:
    """MiniLM (BERT, the encoder's model) and SmolLM2 (LLaMA from GGUF, the scoring LM): the
    hook sees hidden_states[L] at the first, a middle and the last layer, and the identity
    eraser leaves the outputs bit-identical; and the LM's layer-L states are the states the
    encoder (which the erasers are fitted on) gives for the same word-aligned input."""
    from itertools import islice

    from synrob.perturb.corpus import read_conllu
    from synrob.perturb.lm.loaded import load_lm
    from synrob.perturb.lm.scoring import _pad
    from synrob.probe.encoders.resolve import resolve_encoder
    from synrob.probe.encoders.transformer import word_tokens

    sents = [s.forms for s in islice(read_conllu(ewt_dev), 4)]
    minilm = resolve_encoder("minilm", {"device": "cpu", "precision": "float32"})
    minilm.load()
    ids, mask = _pad([i.tolist() for i, _ in word_tokens(minilm.tokenizer, sents, causal=False)],
                     0, "cpu")
    _exact_on(minilm.model, ids, mask, [0, 3, 6], 384, "last_hidden_state")
    lm = load_lm("smollm2", device="cpu", dtype="float32")
    ids, mask = _pad([i.tolist() for i, _ in word_tokens(lm.tokenizer, sents, causal=True)],
                     0, "cpu")
    _exact_on(lm.model, ids, mask, [0, 15, 30], 576, "logits")
    enc = resolve_encoder("smollm2", {"device": "cpu", "precision": "float32"})
    enc.load()
    theirs = _run(enc.model, ids, mask).hidden_states
    ours = _run(lm.model, ids, mask).hidden_states
    real = mask.bool()
    for layer in (0, 15, 30):
        assert torch.allclose(ours[layer][real], theirs[layer][real], rtol=1e-4, atol=1e-4)
