"""The architecture matrix (issue 44, section 1): 29 Hugging Face families (the issue's 28 and
ALBERT, whose one shared layer runs in full), each a tiny random checkpoint with its real kind
of tokenizer (tests/probe/archs.py), checked capability by capability against the plain model -
one test per family and capability, whose cell in docs/encoders.md ("Architecture matrix") is
the registry's expectation:

* ``words as in text``: the encoder's word tokens, concatenated, are the sentence text's tokens;
* ``every layer``: ``TransformerEncoder.encode_flat`` at every layer equals the plain model's
  ``output_hidden_states`` mean-pooled over each word's subwords (fp32, atol 1e-5);
* ``early exit``: the encoder's plan, and vectors of a cut pass equal to a full pass's;
* causal LMs: ``score`` (``load_lm`` + ``sentence_logprobs`` against the plain LM), ``hook``
  (:func:`synrob.probe.causal.intervene.intervene` sees ``output_hidden_states[L]``; identity is
  exact), ``erasure`` (an eraser inside the model) and ``counterfactual``.

A cell ``✗ reason`` is checked too: its check must fail, so a fix shows up as a failing test
until the registry and the docs say ``✓``.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Sequence
from contextlib import nullcontext
from itertools import islice
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests.bench_script import load_file

torch = pytest.importorskip("torch")

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs" / "encoders.md"
AGREEMENT = ROOT / "tests" / "data" / "agreement"
#: EWT dev sentences the checks encode (the first ones of at most MAX_WORDS words).
N_SENTENCES, MAX_WORDS = 6, 30


archs = load_file(Path(__file__).with_name("archs.py"), "synrob_test_archs", shared=True)
FAMILIES = [f.name for f in archs.FAMILIES]
CAUSAL = [f.name for f in archs.FAMILIES if f.causal]


# ---------------------------------------------------------------------- fixtures
@pytest.fixture(scope="module", autouse=True)
def _one_thread() -> Any:
    """One torch thread for the module: the models are tiny, and on 2 shared cores a second
    thread made each (6, 40, 32) x (32, 64) product 20 times slower (1.3 ms against 0.07 ms,
    measured while another process was busy), which tripled the module's time."""
    from synrob.probe.runtime.threads import torch_threads

    with torch_threads(1):
        yield


@pytest.fixture(scope="session")
def checkpoint(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], Path]:
    """``checkpoint(name)``: the family's checkpoint directory, built once per session."""
    from transformers.utils import logging as hf_logging

    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()
    root = tmp_path_factory.mktemp("architectures")
    return functools.cache(lambda name: archs.build_family(name, root))


@pytest.fixture(scope="session")
def sentences(ewt_dev: Path) -> list[list[str]]:
    """The first :data:`N_SENTENCES` EWT dev sentences of at most :data:`MAX_WORDS` words."""
    from synrob.perturb.corpus import read_conllu

    short = (list(s.forms) for s in read_conllu(ewt_dev) if len(s.forms) <= MAX_WORDS)
    return list(islice(short, N_SENTENCES))


@functools.cache
def _encoder(path: Path) -> Any:
    """The loaded fp32 CPU :class:`TransformerEncoder` of ``path`` (one per session)."""
    from synrob.probe.encoders.transformer import TransformerEncoder

    enc = TransformerEncoder(model=str(path), precision="float32", device="cpu")
    enc.load()
    return enc


@functools.cache
def _plain(name: str, path: Path) -> Any:
    """The checkpoint as saved (the family's head class), fp32, eval."""
    return archs.head_class(archs.family(name)).from_pretrained(
        path, dtype=torch.float32).eval()


@functools.cache
def _lm(path: Path) -> Any:
    from synrob.perturb.lm.loaded import load_lm

    return load_lm(str(path), device="cpu", dtype="float32")


def _expect(name: str, capability: str, check: Callable[[], str]) -> None:
    """Run ``check`` (its measured cell: ``✓`` or ``full pass``, or an AssertionError) against
    the registry's cell: a ``✗`` cell's check must fail."""
    want = archs.family(name).cell(capability)
    if want.startswith("✗"):
        with pytest.raises(AssertionError):
            check()
        assert "\n" not in want
    else:
        assert check() == want


# ---------------------------------------------------------------------- plain computations
def _hidden_states(name: str, path: Path, ids: Sequence[int]) -> Any:
    """The plain model's hidden states of one unpadded sequence: (N_BLOCKS + 1, T, D)."""
    model = _plain(name, path)
    fam = archs.family(name)
    x = torch.tensor([list(ids)])
    with torch.inference_mode():
        if fam.kind == "encoder-decoder":
            out = model.get_encoder()(input_ids=x, output_hidden_states=True, return_dict=True)
        else:
            out = model(input_ids=x, output_hidden_states=True, return_dict=True)
    return torch.stack(out.hidden_states)[:, 0]


def _plain_inputs(name: str, path: Path, sents: Sequence[Sequence[str]]
                  ) -> list[tuple[list[int], list[int | None]]]:
    """Per sentence ``(ids, word id per token)`` from transformers' tokenizer
    (``is_split_into_words``; byte-level BPE and Gemma words with their space, as in running
    text), the
    registry's start token first where the encoder must prepend it."""
    from transformers import AutoTokenizer

    fam = archs.family(name)
    tok = AutoTokenizer.from_pretrained(path)
    # running text's space before each word: byte-level BPE, and Gemma's SentencePiece (no
    # dummy prefix: a word alone would lose its "▁")
    spaced = fam.tokenizer.kind == "byte-level BPE" or fam.tokenizer.pipeline == "gemma"
    out = []
    for words in sents:
        enc = tok([" " + w if spaced else w for w in words], is_split_into_words=True)
        ids, wid = list(enc["input_ids"]), list(enc.word_ids())
        if fam.encoder_prepends:
            ids, wid = [tok.convert_tokens_to_ids(fam.start_token), *ids], [None, *wid]
        out.append((ids, wid))
    return out


def _pool(states: Any, wid: Sequence[int | None], n_words: int) -> np.ndarray:
    """Mean of each word's subword states: (L, T, D) -> (L, n_words, D) float32."""
    out = np.zeros((states.shape[0], n_words, states.shape[2]), dtype=np.float32)
    for w in range(n_words):
        rows = [t for t, x in enumerate(wid) if x == w]
        out[:, w] = states[:, rows].mean(dim=1).numpy()
    return out


def _plain_logprob(model: Any, ids: Sequence[int]) -> float:
    """Summed log-probability of ``ids[1:]`` given the tokens before each, unpadded."""
    x = torch.tensor([list(ids)])
    with torch.inference_mode():
        logits = model(input_ids=x).logits[0, :-1].double()
    return float(torch.log_softmax(logits, -1).gather(1, x[0, 1:, None]).sum())


def _padded(seqs: Sequence[Sequence[int]]) -> tuple[Any, Any]:
    """Right-padded (pad 0) ``input_ids`` and ``attention_mask``, both (rows, longest)."""
    longest = max(len(s) for s in seqs)
    ids = torch.zeros((len(seqs), longest), dtype=torch.long)
    mask = torch.zeros_like(ids)
    for r, s in enumerate(seqs):
        ids[r, : len(s)] = torch.tensor(list(s))
        mask[r, : len(s)] = 1
    return ids, mask


# ---------------------------------------------------------------------- the registry
def test_registry_has_the_issues_families() -> None:
    kinds = {f.kind for f in archs.FAMILIES}
    assert len(FAMILIES) == len(set(FAMILIES)) >= 20
    assert kinds == {"encoder", "causal", "encoder-decoder"}
    assert {f.tokenizer.kind for f in archs.FAMILIES} == {
        "WordPiece", "byte-level BPE", "SentencePiece BPE", "SentencePiece Unigram"}
    for fam in archs.FAMILIES:
        for cap in archs.CAPABILITIES:
            cell = fam.cell(cap)
            assert cell in ("✓", "—", "full pass") or re.fullmatch(r"(✗|full load) [^|\n]+",
                                                                 cell), cell
            assert (cell == "—") == (cap in archs.CAUSAL_ONLY and not fam.causal)


@pytest.mark.parametrize("name", FAMILIES)
def test_tokenizer(name: str, checkpoint: Callable[[str], Path],
                   sentences: list[list[str]]) -> None:
    """AutoTokenizer loads the checkpoint's own tokenizer.json, words split into several
    subwords, and the encoder starts a causal LM's input with the registry's start token."""
    from tokenizers import Tokenizer
    from transformers import AutoTokenizer

    path = checkpoint(name)
    fam = archs.family(name)
    tok = AutoTokenizer.from_pretrained(path)
    raw = Tokenizer.from_file(str(path / "tokenizer.json"))
    assert tok.is_fast and tok.backend_tokenizer.to_str() == raw.to_str()
    pieces = [len(raw.encode(w, add_special_tokens=False).ids) for s in sentences for w in s]
    assert np.mean(pieces) > 1.5 and max(pieces) >= 4, pieces
    enc = _encoder(path)
    assert enc.causal == fam.causal
    want = tok.convert_tokens_to_ids(fam.start_token) if fam.encoder_prepends else None
    assert enc._bos_id == want


# ---------------------------------------------------------------------- every family
@pytest.mark.parametrize("name", FAMILIES)
def test_words_as_in_text(name: str, checkpoint: Callable[[str], Path],
                          sentences: list[list[str]]) -> None:
    """The encoder's tokens of the words (specials dropped) are the tokens of the text
    " w1 w2 ...": each word is tokenized as it is inside running text."""
    from synrob.probe.encoders.transformer import word_tokens
    from tokenizers import Tokenizer

    path = checkpoint(name)
    raw = Tokenizer.from_file(str(path / "tokenizer.json"))
    fam = archs.family(name)

    def check() -> str:
        got = word_tokens(_encoder(path).tokenizer, sentences, causal=fam.causal)
        for words, (ids, wid) in zip(sentences, got, strict=True):
            text = raw.encode(" " + " ".join(words), add_special_tokens=False).ids
            assert ids[wid >= 0].tolist() == text, words
        return "✓"

    _expect(name, "words as in text", check)


@pytest.mark.parametrize("name", FAMILIES)
def test_every_layer(name: str, checkpoint: Callable[[str], Path],
                     sentences: list[list[str]]) -> None:
    """``encode_flat(layers=all)`` equals the plain model's hidden states, word-pooled, and
    the encoder's inputs are transformers' tokenization (with the registry's start token)."""
    from synrob.probe.encoders.transformer import word_tokens

    path = checkpoint(name)
    enc = _encoder(path)
    fam = archs.family(name)

    def check() -> str:
        assert enc.num_layers == archs.N_BLOCKS + 1
        plain = _plain_inputs(name, path, sentences)
        ours = word_tokens(enc.tokenizer, sentences, causal=fam.causal)
        for (ids, wid), (our_ids, our_wid) in zip(plain, ours, strict=True):
            assert our_ids.tolist() == ids
            assert our_wid.tolist() == [-1 if w is None else w for w in wid]
        got = enc.encode_flat(sentences, list(range(enc.num_layers)))
        want = np.concatenate([_pool(_hidden_states(name, path, ids), wid, len(words))
                               for words, (ids, wid) in zip(sentences, plain, strict=True)],
                              axis=1)
        assert got.words.shape == want.shape
        np.testing.assert_allclose(got.words, want, rtol=0, atol=1e-5)
        return "✓"

    _expect(name, "every layer", check)


@pytest.mark.parametrize("name", FAMILIES)
def test_early_exit(name: str, checkpoint: Callable[[str], Path],
                    sentences: list[list[str]]) -> None:
    """With a plan, a pass for layer 1 runs fewer blocks and gives the full pass's vectors bit
    for bit; without one, every pass runs every block ("full pass")."""
    enc = _encoder(checkpoint(name))

    def check() -> str:
        if enc._exit_plan is None:
            assert enc.blocks_run([1]) == archs.N_BLOCKS
            return "full pass"
        assert enc.blocks_run([1]) < archs.N_BLOCKS
        cut = enc.encode_flat(sentences, [1]).words
        enc.early_exit = False
        try:
            full = enc.encode_flat(sentences, [1]).words
        finally:
            del enc.early_exit
        assert np.array_equal(cut, full)
        return "✓"

    _expect(name, "early exit", check)


@pytest.mark.parametrize("name", FAMILIES)
def test_layer_only(name: str, checkpoint: Callable[[str], Path],
                    sentences: list[list[str]]) -> None:
    """Asked for layer 1 first, a fresh encoder loads 2 blocks (layer-only loading), and its
    vectors equal those of the whole model's encoder bit for bit; an encoder-decoder's encoder
    loads whole ("full load")."""
    from synrob.probe.encoders.transformer import TransformerEncoder

    path = checkpoint(name)

    def check() -> str:
        enc = TransformerEncoder(model=str(path), precision="float32", device="cpu")
        got = enc.encode_flat(sentences, [1]).words
        full = _encoder(path)
        assert full.blocks_loaded == archs.N_BLOCKS
        np.testing.assert_array_equal(got, full.encode_flat(sentences, [1]).words)
        if enc.blocks_loaded == archs.N_BLOCKS:
            return "full load (encoder-decoder: its encoder is half a checkpoint)"
        assert enc.blocks_loaded == 2
        return "✓"

    _expect(name, "layer-only", check)


# ---------------------------------------------------------------------- causal LMs
@pytest.mark.parametrize("name", CAUSAL)
def test_score(name: str, checkpoint: Callable[[str], Path],
               sentences: list[list[str]]) -> None:
    """``sentence_logprobs`` (padded batches) equals the plain causal LM's summed
    log-probability of the text's tokens given the start token, one unpadded row at a time."""
    from synrob.perturb.lm.scoring import sentence_logprobs
    from tokenizers import Tokenizer
    from transformers import AutoModelForCausalLM

    path = checkpoint(name)
    fam = archs.family(name)

    def check() -> str:
        lm = _lm(path)
        texts = [" ".join(words) for words in sentences]
        got, n_tokens = sentence_logprobs(lm, texts)
        raw = Tokenizer.from_file(str(path / "tokenizer.json"))
        start = raw.token_to_id(fam.start_token)
        model = AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32).eval()
        for text, lp, n in zip(texts, got, n_tokens, strict=True):
            ids = [start, *raw.encode(text, add_special_tokens=False).ids]
            assert n == len(ids) - 1
            assert lp == pytest.approx(_plain_logprob(model, ids), abs=1e-3)
        return "✓"

    _expect(name, "score", check)


def _lm_batch(path: Path, sents: Sequence[Sequence[str]]) -> tuple[Any, Any]:
    """The LM's word-aligned inputs for ``sents`` (as the encoder and the counterfactual
    build them), right-padded: (rows, longest) ids and mask."""
    from synrob.probe.encoders.transformer import word_tokens

    toks = word_tokens(_lm(path).tokenizer, sents, causal=True)
    return _padded([ids.tolist() for ids, _ in toks])


def _forward(model: Any, ids: Any, mask: Any) -> Any:
    """One forward pass with every hidden state: (rows, longest) ``ids`` and ``mask``."""
    with torch.inference_mode():
        return model(input_ids=ids, attention_mask=mask, output_hidden_states=True,
                     return_dict=True)


def _recorder(into: list[Any]) -> Callable[[Any], Any]:
    """An identity intervention that keeps a copy of the (n, d) states it is given."""
    def record(x: Any) -> Any:
        into.append(x.clone())
        return x

    return record


@pytest.mark.parametrize("name", CAUSAL)
def test_hook(name: str, checkpoint: Callable[[str], Path],
              sentences: list[list[str]]) -> None:
    """At every layer L the hook sees ``output_hidden_states[L]`` (padded batch, every
    position), and an identity function leaves the logits bit-identical (every position, and
    all but the start token)."""
    from synrob.probe.causal.intervene import intervene

    path = checkpoint(name)

    def check() -> str:
        model = _lm(path).model
        ids, mask = _lm_batch(path, sentences)
        clean = _forward(model, ids, mask)
        assert len(clean.hidden_states) == archs.N_BLOCKS + 1
        for layer in range(archs.N_BLOCKS + 1):
            seen: list[Any] = []
            with intervene(model, layer, _recorder(seen)):
                out = _forward(model, ids, mask)
            want = clean.hidden_states[layer]
            assert torch.equal(seen[0], want.reshape(-1, want.shape[-1])), f"layer {layer}"
            assert torch.equal(out.logits, clean.logits), f"layer {layer}"
            with intervene(model, layer, lambda x: x, positions=1):
                assert torch.equal(_forward(model, ids, mask).logits, clean.logits)
        return "✓"

    _expect(name, "hook", check)


def _eraser(dim: int, *, identity: bool = False, rank: int = 2, seed: int = 0) -> Any:
    """A random rank-``rank`` affine eraser of ``dim``-vectors (zero projections: identity),
    with two classes ``Plur``, ``Sing`` (the agreement pairs' Number)."""
    from synrob.probe.causal.erasure import Eraser

    g = torch.Generator().manual_seed(seed)
    left = torch.randn(dim, rank, generator=g)
    right = torch.linalg.pinv(left)
    if identity:
        left, right = torch.zeros(dim, rank), torch.zeros(rank, dim)
    return Eraser("leace", left, right, torch.randn(dim, generator=g),
                  3 * torch.randn(2, dim, generator=g), ["Plur", "Sing"])


@pytest.mark.parametrize("name", CAUSAL)
def test_erasure(name: str, checkpoint: Callable[[str], Path]) -> None:
    """Scoring the agreement pairs with an eraser inside the model (:func:`erasing`, every
    token but the start token) at each layer: the identity eraser scores bit for bit as clean,
    a rank-2 eraser changes every original's log-probability."""
    from synrob.probe.causal.behaviour import pair_sentences, score_pairs, split_unchanged
    from synrob.probe.causal.erasure.inside import erasing

    path = checkpoint(name)

    def check() -> str:
        lm = _lm(path)
        dim = int(lm.model.config.hidden_size)
        pairs, _ = split_unchanged(pair_sentences(AGREEMENT / "original.conllu",
                                                  AGREEMENT / "pairs.conllu")[0])

        def scores(eraser: Any, layer: int) -> list[tuple[float, float]]:
            with erasing(lm, eraser, layer):
                return [(s.logprob_original, s.logprob_perturbed) for s in score_pairs(lm, pairs)]

        clean = scores(None, 0)
        for layer in range(archs.N_BLOCKS + 1):
            assert scores(_eraser(dim, identity=True), layer) == clean, f"layer {layer}"
            erased = scores(_eraser(dim), layer)
            assert all(a[0] != b[0] for a, b in zip(erased, clean, strict=True)), f"layer {layer}"
        return "✓"

    _expect(name, "erasure", check)


@pytest.mark.parametrize("name", CAUSAL)
def test_counterfactual(name: str, checkpoint: Callable[[str], Path]) -> None:
    """At a middle layer the counterfactual replaces exactly the subject's token states by
    ``Eraser.counterfactual`` of the clean ones and changes the pairs' scores; with the
    identity eraser every condition scores as clean."""
    from synrob.probe.causal.erasure.counterfactual import (
        _around,
        _prepare,
        agreement_pairs,
        counterfactual_scores,
        subject_first,
    )
    from synrob.probe.causal.intervene import intervene

    path = checkpoint(name)
    layer = archs.N_BLOCKS // 2

    def check() -> str:
        lm = _lm(path)
        dim = int(lm.model.config.hidden_size)
        pairs, _ = subject_first(agreement_pairs(AGREEMENT / "original.conllu",
                                                 AGREEMENT / "pairs.conllu")[0])
        for s in counterfactual_scores(lm, pairs, _eraser(dim, identity=True), layer):
            assert s.logprob["clean"] == s.logprob["counterfactual"] == s.logprob["random"]
        eraser = _eraser(dim)
        prep = _prepare(lm, pairs, eraser, 0, 0)
        rows = list(range(len(prep.seqs)))
        ids, mask = _padded(prep.seqs)

        def states(condition: str | None) -> Any:
            """Layer ``layer``'s states (rows, longest, dim) as the next hook reads them."""
            seen: list[Any] = []
            around = (nullcontext() if condition is None else
                      _around(lm, eraser, layer, prep, condition)(rows, tuple(ids.shape)))
            with around, intervene(lm.model, layer, _recorder(seen)):
                _forward(lm.model, ids, mask)
            return seen[0].reshape(ids.shape[0], ids.shape[1], dim)

        clean, moved = states(None), states("counterfactual")
        chosen = torch.zeros(ids.shape, dtype=torch.bool)
        for r in rows:
            chosen[r, torch.from_numpy(prep.subject[r // 2])] = True
        to = torch.tensor([prep.target[r // 2] for r in rows for _ in prep.subject[r // 2]])
        assert torch.equal(moved[~chosen], clean[~chosen])
        assert torch.equal(moved[chosen], eraser.counterfactual(clean[chosen], to))
        scores = counterfactual_scores(lm, pairs, eraser, layer)
        assert any(s.logprob["counterfactual"] != s.logprob["clean"] for s in scores)
        return "✓"

    _expect(name, "counterfactual", check)


# ---------------------------------------------------------------------- the docs
def test_docs_table_is_the_registry() -> None:
    """docs/encoders.md's "Architecture matrix" table is :func:`archs.table`: every cell the
    tests above check, no more and no fewer rows."""
    text = DOCS.read_text(encoding="utf-8")
    section = re.split(r"\n#+ ", text.split("\n### Architecture matrix\n", 1)[1], maxsplit=1)[0]
    rows = [line for line in section.splitlines() if line.startswith("|")]
    rendered = archs.table()
    assert rows[: len(rendered)] == rendered
    assert len(rows) == len(rendered)
    assert "pytest tests/probe/test_architecture_matrix.py" in section
