"""Tiny random BERT, RoBERTa, GPT-2 and T5 built from configs, with tokenizers trained here on
EWT text, saved with save_pretrained and loaded back through the user path (resolve_encoder on
the directory). Word alignment is checked word by word against a manual computation that maps
tokens to words by character offsets of the plain text."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from synrob.perturb.corpus import read_conllu

KINDS = ("bert", "roberta", "gpt2", "t5")


def _ewt_sentences(path: Path, n: int) -> list[list[str]]:
    out = []
    for s in read_conllu(path):
        out.append(s.forms)
        if len(out) >= n:
            break
    return out


def _train_tokenizer(kind: str, texts: list[str]):
    from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors
    from tokenizers import trainers as tr

    if kind == "bert":
        tok = Tokenizer(models.WordPiece(unk_token="[UNK]"))
        tok.normalizer = normalizers.BertNormalizer(lowercase=True)
        tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
        specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
        tok.train_from_iterator(texts, tr.WordPieceTrainer(vocab_size=600, special_tokens=specials))
        cls, sep = tok.token_to_id("[CLS]"), tok.token_to_id("[SEP]")
        tok.post_processor = processors.TemplateProcessing(
            single="[CLS] $A [SEP]", special_tokens=[("[CLS]", cls), ("[SEP]", sep)])
        tok.decoder = decoders.WordPiece()
        return tok, {"unk_token": "[UNK]", "pad_token": "[PAD]", "cls_token": "[CLS]",
                     "sep_token": "[SEP]", "mask_token": "[MASK]"}
    if kind in ("roberta", "gpt2"):
        tok = Tokenizer(models.BPE())
        tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
        tok.decoder = decoders.ByteLevel()
        specials = ["<s>", "<pad>", "</s>", "<unk>"] if kind == "roberta" else ["<|endoftext|>"]
        tok.train_from_iterator(texts, tr.BpeTrainer(
            vocab_size=700, special_tokens=specials,
            initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
        if kind == "roberta":
            tok.post_processor = processors.RobertaProcessing(
                ("</s>", tok.token_to_id("</s>")), ("<s>", tok.token_to_id("<s>")),
                trim_offsets=True)
            return tok, {"bos_token": "<s>", "eos_token": "</s>", "pad_token": "<pad>",
                         "unk_token": "<unk>", "cls_token": "<s>", "sep_token": "</s>"}
        return tok, {"bos_token": "<|endoftext|>", "eos_token": "<|endoftext|>"}
    tok = Tokenizer(models.Unigram())
    tok.pre_tokenizer = pre_tokenizers.Metaspace()
    tok.decoder = decoders.Metaspace()
    tok.train_from_iterator(texts, tr.UnigramTrainer(
        vocab_size=600, special_tokens=["<pad>", "</s>", "<unk>"], unk_token="<unk>"))
    tok.post_processor = processors.TemplateProcessing(
        single="$A </s>", special_tokens=[("</s>", tok.token_to_id("</s>"))])
    return tok, {"pad_token": "<pad>", "eos_token": "</s>", "unk_token": "<unk>"}


def _config(kind: str, vocab: int, tok):
    from transformers import BertConfig, GPT2Config, RobertaConfig, T5Config

    if kind == "bert":
        return BertConfig(vocab_size=vocab, hidden_size=32, num_hidden_layers=2,
                          num_attention_heads=2, intermediate_size=64,
                          max_position_embeddings=512)
    if kind == "roberta":
        return RobertaConfig(vocab_size=vocab, hidden_size=32, num_hidden_layers=2,
                             num_attention_heads=2, intermediate_size=64,
                             max_position_embeddings=514, pad_token_id=tok.token_to_id("<pad>"),
                             bos_token_id=0, eos_token_id=2)
    if kind == "gpt2":
        return GPT2Config(vocab_size=vocab, n_embd=32, n_layer=2, n_head=2, n_positions=512,
                          bos_token_id=0, eos_token_id=0)
    return T5Config(vocab_size=vocab, d_model=32, d_ff=64, d_kv=16, num_layers=2,
                    num_decoder_layers=1, num_heads=2, pad_token_id=0, eos_token_id=1,
                    decoder_start_token_id=0)


@pytest.fixture(scope="module")
def tiny_models(tmp_path_factory: pytest.TempPathFactory, ewt_train: Path) -> dict[str, Path]:
    import torch
    from transformers import AutoModel, PreTrainedTokenizerFast

    texts = [" ".join(s) for s in _ewt_sentences(ewt_train, 2000)]
    root = tmp_path_factory.mktemp("tiny-models")
    out = {}
    for kind in KINDS:
        tok, special = _train_tokenizer(kind, texts)
        hf_tok = PreTrainedTokenizerFast(tokenizer_object=tok, model_max_length=512, **special)
        torch.manual_seed(0)
        model = AutoModel.from_config(_config(kind, tok.get_vocab_size(), tok))
        d = root / kind
        model.save_pretrained(d)
        hf_tok.save_pretrained(d)
        out[kind] = d
    return out


@pytest.fixture(scope="module")
def dev_sentences(ewt_dev: Path) -> list[list[str]]:
    sents = _ewt_sentences(ewt_dev, 400)
    long = sorted(sents, key=len)[-3:]
    return sents[:25] + long  # short ones plus the three longest (many subwords)


def _reference(enc, words: list[str], pooling: str, bos: bool = False) -> np.ndarray:
    """(n_layers, n_words, dim) by hand: plain-text tokenization, offsets -> words, one pass;
    with ``bos`` the tokenizer's BOS token first (a causal LM's start token, owned by no word)."""
    import torch

    tok = enc.tokenizer
    text = " ".join(words)
    if enc._prefix_space:  # GPT-2 style add_prefix_space: the first word has a space too
        text = " " + text
    starts, pos = [], 1 if enc._prefix_space else 0
    for w in words:
        starts.append((pos, pos + len(w)))
        pos += len(w) + 1
    e = tok(text, return_offsets_mapping=True)
    owner = []
    for (a, b), tid in zip(e["offset_mapping"], e.input_ids, strict=True):
        if tid in tok.all_special_ids:
            owner.append(-1)
        else:  # a bare byte-level space token covers no word: it belongs to the next one
            hit = [i for i, (s, t) in enumerate(starts) if a < t and b > s]
            owner.append(hit[0] if hit else None)
    for t in range(len(owner) - 2, -1, -1):
        if owner[t] is None:
            owner[t] = owner[t + 1]
    ids = list(e.input_ids)
    if bos:
        ids, owner = [tok.bos_token_id, *ids], [-1, *owner]
    with torch.inference_mode():
        out = enc.model(input_ids=torch.tensor([ids]), output_hidden_states=True)
    hs = torch.stack(out.hidden_states)[:, 0].numpy()  # (L, T, D)
    ref = np.zeros((hs.shape[0], len(words), hs.shape[2]), dtype=np.float32)
    for i in range(len(words)):
        toks = [t for t, o in enumerate(owner) if o == i]
        assert toks, f"word {words[i]!r} has no token"
        if pooling == "mean":
            ref[:, i] = hs[:, toks].mean(axis=1)
        else:
            ref[:, i] = hs[:, toks[0] if pooling == "first" else toks[-1]]
    return ref, ids


@pytest.mark.parametrize("kind", KINDS)
def test_alignment_matches_manual_pooling(kind, tiny_models, dev_sentences):
    from synrob.probe.encoders.resolve import resolve_encoder

    for pooling in ("mean", "first", "last"):
        enc = resolve_encoder(str(tiny_models[kind]), {"pooling": pooling, "device": "cpu",
                                                       "token_budget": 700})
        assert type(enc).__name__ == "TransformerEncoder"
        layers = list(range(enc.num_layers))
        assert layers == [0, 1, 2]
        enc.load()
        assert enc._prefix_space == (kind in ("roberta", "gpt2"))
        assert enc.causal == (kind == "gpt2")
        outs = enc.encode(dev_sentences, layers)
        seqs = enc.sequences(dev_sentences)
        split_words = 0
        for words, got, seq in zip(dev_sentences, outs, seqs, strict=True):
            assert got.shape == (3, len(words), 32)
            ref, ids = _reference(enc, words, pooling, bos=kind == "gpt2")
            assert list(seq.ids) == list(ids)  # pre-split words tokenize like the plain text
            np.testing.assert_allclose(got, ref, atol=2e-4, rtol=1e-3)
            counts = np.bincount(seq.target[seq.target >= 0] - seq.target[seq.target >= 0].min(),
                                 minlength=len(words))
            assert (counts >= 1).all()
            split_words += int((counts > 1).sum())
        assert split_words > 20  # the small vocabularies really split words into subwords


def test_causal_lm_gets_its_bos_never_pooled(tiny_models, dev_sentences):
    """GPT-2's tokenizer adds no start token: synrob prepends BOS (<|endoftext|>), which no
    word owns, so every word's vector is the state with BOS as the first position; bos=no
    gives the old input, and an encoder-only model gets nothing added."""
    from synrob.probe.encoders.resolve import resolve_encoder

    path = str(tiny_models["gpt2"])
    enc = resolve_encoder(path, {"device": "cpu"})
    plain = resolve_encoder(path, {"device": "cpu", "bos": "no"})
    enc.load()
    bos = enc.tokenizer.bos_token_id
    assert bos is not None and enc._n_prefix == 1 and enc._n_suffix == 0
    words = dev_sentences[0]
    seq, old = enc.sequences([words])[0], plain.sequences([words])[0]
    assert seq.ids[0] == bos and seq.target[0] == -1          # BOS first, pooled into no word
    assert list(seq.ids[1:]) == list(old.ids)                  # the words' tokens unchanged
    assert list(seq.target[1:]) == list(old.target)
    got, without = enc.encode([words], [1, 2])[0], plain.encode([words], [1, 2])[0]
    ref, _ = _reference(enc, words, "mean", bos=True)
    np.testing.assert_allclose(got, ref[1:], atol=2e-4, rtol=1e-3)
    assert not np.allclose(got[:, 0], without[:, 0], atol=1e-3)  # the first word now has a BOS
    assert enc.identity()["options"]["bos"] == "auto" != plain.identity()["options"]["bos"]
    bert = resolve_encoder(str(tiny_models["bert"]), {"device": "cpu"})
    bert.load()
    assert bert._bos_id is None and bert.sequences([words])[0].ids[0] == bert.tokenizer.cls_token_id


def test_batch_order_and_budget_do_not_change_vectors(tiny_models, dev_sentences):
    from synrob.probe.encoders.resolve import resolve_encoder

    big = resolve_encoder(str(tiny_models["bert"]), {"token_budget": 100000})
    small = resolve_encoder(str(tiny_models["bert"]), {"token_budget": 64})
    a = big.encode_flat(dev_sentences, [0, 2])
    b = small.encode_flat(dev_sentences[::-1], [0, 2])
    rev = np.concatenate(b.split()[::-1], axis=1)
    np.testing.assert_allclose(a.words, rev, atol=2e-4)
    assert len(small.batches(small.sequences(dev_sentences))) > 5


def test_windows_causal_first_window_equals_unwindowed(tiny_models, dev_sentences):
    from synrob.probe.encoders.resolve import resolve_encoder

    long = max(dev_sentences, key=len)
    full = resolve_encoder(str(tiny_models["gpt2"]))
    win = resolve_encoder(str(tiny_models["gpt2"]), {"window": 24})
    seqs = win.sequences([long])
    assert len(seqs) >= 3 and seqs[0].is_first and seqs[-1].is_last
    owned = np.concatenate([np.unique(s.target[s.target >= 0]) for s in seqs])
    assert sorted(owned.tolist()) == list(range(len(long)))  # each word owned by one window
    a = full.encode([long], [0, 1, 2])[0]
    b = win.encode([long], [0, 1, 2])[0]
    first_words = np.unique(seqs[0].target[seqs[0].target >= 0])
    np.testing.assert_allclose(b[:, first_words], a[:, first_words], atol=2e-4)
    later = np.setdiff1d(np.arange(len(long)), first_words)
    assert later.size and not np.allclose(b[2][later], a[2][later], atol=1e-3)
    np.testing.assert_allclose(b[0], a[0][:, :], atol=0.5)  # same token embeddings ...
    assert np.abs(np.linalg.norm(b, axis=-1)).min() > 0  # ... every word has a vector


def test_windows_bidirectional_owner_has_most_context(tiny_models, dev_sentences):
    from synrob.probe.encoders.resolve import resolve_encoder

    long = max(dev_sentences, key=len)
    win = resolve_encoder(str(tiny_models["bert"]), {"window": 20})
    seqs = win.sequences([long])
    assert len(seqs) >= 3
    n = len(long)
    owners = np.concatenate([np.unique(s.target[s.target >= 0]) for s in seqs])
    assert sorted(owners.tolist()) == list(range(n))
    # a word owned by window k has at least as much context (min of left/right words) there
    # as in any other window that holds it
    for s in seqs:
        for w in np.unique(s.target[s.target >= 0]):
            a, b = s.span
            mine = min(w - a, b - 1 - w)
            others = [min(w - c, d - 1 - w) for c, d in (t.span for t in seqs) if c <= w < d]
            assert mine == max(others)
    out = win.encode([long], [0, 2])[0]
    assert out.shape == (2, n, 32) and (np.linalg.norm(out, axis=-1) > 0).all()


def test_random_init_is_seeded_and_differs(tiny_models, dev_sentences):
    from synrob.probe.encoders.resolve import resolve_encoder

    d = str(tiny_models["bert"])
    a = resolve_encoder("random-init", {"model": d, "seed": 1}).encode(dev_sentences[:3], [2])
    b = resolve_encoder("random-init", {"model": d, "seed": 1}).encode(dev_sentences[:3], [2])
    c = resolve_encoder("random-init", {"model": d, "seed": 2}).encode(dev_sentences[:3], [2])
    t = resolve_encoder(d).encode(dev_sentences[:3], [2])
    np.testing.assert_array_equal(a[0], b[0])
    assert not np.allclose(a[0], c[0]) and not np.allclose(a[0], t[0])
    ra = resolve_encoder("random-init", {"model": d, "seed": 1})
    assert ra.identity() != resolve_encoder(d).identity()


class _Done:
    """A marker that is always reached: stands in for a recorded ``torch.cuda.Event``."""

    def synchronize(self) -> None:
        pass


@pytest.mark.parametrize("pooling", ["mean", "first", "last"])
def test_overlapped_loop_writes_what_the_serial_loop_writes(tiny_models, dev_sentences,
                                                             pooling, monkeypatch):
    """The CUDA loop (host work of batch i-1 after batch i is queued) run on the CPU gives
    byte-identical words and sentence states, over many small batches."""
    from synrob.probe.encoders import transformer as tr
    from synrob.probe.encoders.resolve import resolve_encoder

    enc = resolve_encoder(str(tiny_models["bert"]), {"token_budget": 96, "pooling": pooling})
    sents = dev_sentences[:120]
    serial = enc.encode_flat(sents, [0, 1, 2])
    calls = []
    loop = tr.TransformerEncoder._encode_overlapped

    def overlapped(self, batches, layers, pool, out, mark, pin):
        calls.append(len(batches))
        return loop(self, batches, layers, pool, out, mark, pin=False)

    monkeypatch.setattr(enc, "device", "cuda:0")  # takes the CUDA branch...
    monkeypatch.setattr(tr.TransformerEncoder, "_encode_overlapped", overlapped)
    monkeypatch.setattr(tr, "_cuda_marker", lambda device: _Done)
    monkeypatch.setattr(enc, "hidden", lambda b, layers: tr.TransformerEncoder.hidden(
        _OnCpu(enc), b, layers))  # ...while the model stays on the CPU
    got = enc.encode_flat(sents, [0, 1, 2])
    assert calls and calls[0] > 10
    for name in ("words", "first", "last"):
        assert np.array_equal(getattr(got, name), getattr(serial, name)), name
    assert got.oov == serial.oov


class _OnCpu:
    """The encoder's model and tokenizer, seen with ``device`` = cpu."""

    def __init__(self, enc) -> None:
        self.model, self.device = enc.model, "cpu"
        self._active_exit = enc._active_exit


def test_fast_pos_takes_sinusoidal_positions_for_a_rotary_model(tiny_models, dev_sentences,
                                                                tmp_path):
    """A LLaMA-style model (rotary positions, like SmolLM2) has no learned absolute position
    embeddings: fast+pos (positions=auto) says so in one warning and uses Vaswani et al.'s
    sinusoidal encodings of the model's size, at the positions the encoder gives the words
    (after the start token); a model with learned positions (GPT-2) keeps its own."""
    import shutil
    import warnings

    import torch
    from synrob.perturb.errors import SynrobWarning
    from synrob.probe.encoders.control_encoders import FastPosEncoder, sinusoidal_positions
    from synrob.probe.encoders.resolve import resolve_encoder
    from transformers import LlamaConfig, LlamaModel

    llama = tmp_path / "llama"
    shutil.copytree(tiny_models["gpt2"], llama)
    for f in llama.glob("*.safetensors"):
        f.unlink()
    (llama / "config.json").unlink()
    torch.manual_seed(0)
    LlamaModel(LlamaConfig(vocab_size=800, hidden_size=32, intermediate_size=64,
                           num_hidden_layers=2, num_attention_heads=2, bos_token_id=0,
                           eos_token_id=0, max_position_embeddings=256)).save_pretrained(llama)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        enc = FastPosEncoder(model=str(llama))
    assert enc.options["positions"] == "sinusoidal" and enc.identity()["version"] == "1.1"
    assert [w for w in caught if issubclass(w.category, SynrobWarning)
            and "sinusoidal position encodings" in str(w.message)]
    words = dev_sentences[0]
    out = enc.encode([words], [0])[0]
    glove = resolve_encoder("glove-6b-50d")
    np.testing.assert_array_equal(out[0, :, :50], glove.lookup(words)[0])
    table = sinusoidal_positions(256, 32)
    np.testing.assert_array_equal(out[0, :, 50:], table[1:len(words) + 1])  # BOS is position 0
    assert table[0, 0] == 0 and table[0, 1] == 1 and np.allclose(table[5, 0], np.sin(5))
    learned = FastPosEncoder(model=str(tiny_models["gpt2"]))
    assert learned.options["positions"] == "learned"
    got = learned.encode([words], [0])[0]
    wpe = learned.pos
    np.testing.assert_array_equal(got[0, :, 50:], wpe[1:len(words) + 1])


@pytest.mark.parametrize("kind", KINDS)
def test_layer_count_without_transformers_equals_the_config(kind, tiny_models):
    """num_layers reads a local config.json's num_hidden_layers without transformers when the
    file writes it (BERT, RoBERTa), else asks AutoConfig (GPT-2's n_layer, T5's num_layers):
    the same count either way."""
    from synrob.probe.encoders.resolve import resolve_encoder
    from transformers import AutoConfig

    enc = resolve_encoder(str(tiny_models[kind]), {"device": "cpu"})
    plain = enc._plain_config_int("num_hidden_layers")
    assert (plain is not None) == (kind in ("bert", "roberta"))
    assert enc.num_layers == AutoConfig.from_pretrained(tiny_models[kind]).num_hidden_layers + 1
