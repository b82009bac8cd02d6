"""The architecture matrix's family registry: tiny random checkpoints of 29 Hugging Face model
families, each with its real kind of fast tokenizer trained offline on EWT text.

Used by ``tests/probe/test_architecture_matrix.py`` and meant for any test that needs the same
families (layer-only loading, device maps, quantization). Tests run under
``--import-mode=importlib``, so ``tests/probe`` is not on ``sys.path``: load this file under the
one module name ``synrob_test_archs``, so that every test module shares one copy (and its
trained tokenizers)::

    from tests.bench_script import load_file
    archs = load_file(Path(__file__).with_name("archs.py"), "synrob_test_archs", shared=True)
    for fam in archs.FAMILIES:
        path = archs.build_family(fam.name, tmp_path)    # config.json, safetensors, tokenizer

A checkpoint is what a hub checkpoint of the family holds, only tiny:

* the model of the family's usual head (``AutoModelForMaskedLM`` for encoders,
  ``AutoModelForCausalLM`` for decoders, ``AutoModelForSeq2SeqLM`` for T5 and BART), random
  weights from ``torch.manual_seed(SEED)``, float32, :data:`N_BLOCKS` blocks of width
  :data:`HIDDEN`, built with ``AutoConfig.for_model(model_type, **sizes)``;
* ``tokenizer.json``: the family's tokenizer pipeline (normalizer, pre-tokenizer, model,
  post-processor: :class:`TokenizerSpec`) with a small vocabulary (:data:`VOCAB`) trained on
  the first :data:`TRAIN_SENTENCES` sentences of EWT train, so that most words split into
  several subwords; ``tokenizer_config.json`` names ``TokenizersBackend``, so that
  ``AutoTokenizer`` loads this tokenizer.json and not a family class that rebuilds its own
  pipeline (transformers 5 does that for ``qwen3``, for example).

Each :class:`Family` also says, independently of synrob's code, what the matrix expects of it:
which token a causal LM's input starts with, and the cell of every capability
(:data:`CAPABILITIES`): ``✓``, ``full pass`` (early exit), ``—`` (not a causal LM) or
``✗ reason``. The matrix's tests check each cell; :func:`table` renders the docs' table.
"""

from __future__ import annotations

import functools
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["CAPABILITIES", "FAMILIES", "Family", "TokenizerSpec", "build_family", "family",
           "table", "train_texts", "EWT_DIR"]

#: Blocks (``num_hidden_layers``) of every model: hidden states 0..N_BLOCKS.
N_BLOCKS = 4
#: Hidden size, attention heads (head size 16) and feed-forward width of every model.
HIDDEN, HEADS, FFN = 32, 2, 64
#: Positions of every model (sentences of the matrix stay far below).
POSITIONS = 256
#: Target vocabulary of every trained tokenizer (specials and byte alphabets included).
VOCAB = 700
#: EWT train sentences the tokenizers are trained on.
TRAIN_SENTENCES = 400
SEED = 0

ROOT = Path(__file__).resolve().parents[2]
EWT_DIR = Path(os.environ.get("SYNROB_EWT_DIR", ROOT.parent / "shared" / "data" / "ud" / "en_ewt"))

#: The matrix's columns: capability -> what its cell says.
CAPABILITIES: dict[str, str] = {
    "words as in text": "each word is tokenized as inside running text (the encoder's word "
                        "tokens, concatenated, are the tokens of the sentence's text)",
    "every layer": "encode_flat at every layer equals the plain model's output_hidden_states, "
                   "mean-pooled over each word's subwords (atol 1e-5, fp32)",
    "early exit": "a pass cut for a low layer gives the same vectors bit for bit (✓), or the "
                  "model always runs every block (full pass)",
    "layer-only": "asked for layer 1, the encoder loads a model of 2 blocks (the config cut, "
                  "the other blocks' weights never read) whose vectors equal the full model's "
                  "bit for bit (✓), or it loads the whole checkpoint (full load)",
    "score": "load_lm + sentence_logprobs equals the plain causal LM's log-probability given "
             "the start token (1e-3)",
    "hook": "at every layer the hook sees output_hidden_states[L], and an identity function "
            "leaves the logits bit-identical",
    "erasure": "an eraser inside the model changes the log-probabilities at every layer; the "
               "identity eraser leaves them bit-identical",
    "counterfactual": "the subject's states at the layer become Eraser.counterfactual of the "
                      "clean ones; with the identity eraser every condition scores as clean",
}
#: Capabilities only a causal LM has (``—`` for the others).
CAUSAL_ONLY = ("score", "hook", "erasure", "counterfactual")


@dataclass(frozen=True)
class TokenizerSpec:
    """A family's tokenizer: ``kind`` (the matrix's column: ``WordPiece``, ``byte-level BPE``,
    ``SentencePiece BPE``, ``SentencePiece Unigram``), ``pipeline`` (which normalizer and
    pre-tokenizer, see :func:`_pipeline`), the special tokens by role (``bos``, ``eos``,
    ``pad``, ``unk``, ``cls``, ``sep``, ``mask``) and the ``template`` of the post-processor
    (``$A`` the text; None: no special token added)."""

    kind: str
    pipeline: str
    specials: tuple[tuple[str, str], ...]
    template: str | None = None
    note: str = ""

    @property
    def roles(self) -> dict[str, str]:
        return dict(self.specials)

    @property
    def tokens(self) -> list[str]:
        """The distinct special tokens, in role order (they get the first ids)."""
        return list(dict.fromkeys(tok for _, tok in self.specials))

    @property
    def adds_start(self) -> bool:
        """Whether the post-processor puts a special token before the text."""
        return self.template is not None and not self.template.startswith("$A")

    @property
    def label(self) -> str:
        """The docs' description: kind, pipeline note and what the tokenizer adds around the
        text (tokens as markdown code, ``|`` escaped for a table cell)."""
        kind = f"{self.kind}, {self.note}" if self.note else self.kind
        if self.template is None:
            return f"{kind}: adds nothing"
        parts = ["…" if t == "$A" else code(t) for t in self.template.split()]
        return f"{kind}: {' '.join(parts)}"


def code(token: str) -> str:
    """``token`` as markdown code inside a table cell."""
    return "`" + token.replace("|", "\\|") + "`"


def _sp(**roles: str) -> tuple[tuple[str, str], ...]:
    return tuple(roles.items())


_ENDOFTEXT = "<|endoftext|>"
WORDPIECE = TokenizerSpec("WordPiece", "bert", _sp(pad="[PAD]", unk="[UNK]", cls="[CLS]",
                                                   sep="[SEP]", mask="[MASK]"),
                          "[CLS] $A [SEP]", "uncased")
ROBERTA = TokenizerSpec("byte-level BPE", "gpt2",
                        _sp(bos="<s>", pad="<pad>", eos="</s>", unk="<unk>", mask="<mask>",
                            cls="<s>", sep="</s>"), "<s> $A </s>")
GPT2 = TokenizerSpec("byte-level BPE", "gpt2", _sp(bos=_ENDOFTEXT, eos=_ENDOFTEXT,
                                                   unk=_ENDOFTEXT))
NEOX = TokenizerSpec("byte-level BPE", "gpt2", _sp(bos=_ENDOFTEXT, eos=_ENDOFTEXT,
                                                   unk=_ENDOFTEXT, pad="<|padding|>"))
EOS_ONLY = TokenizerSpec("byte-level BPE", "gpt2", _sp(eos=_ENDOFTEXT, pad="<|padding|>"))
LLAMA3 = TokenizerSpec("byte-level BPE", "llama3",
                       _sp(bos="<|begin_of_text|>", eos="<|end_of_text|>"),
                       "<|begin_of_text|> $A", "Llama-3 regex")
QWEN = TokenizerSpec("byte-level BPE", "qwen", _sp(eos=_ENDOFTEXT, pad=_ENDOFTEXT),
                     None, "Qwen regex")
OLMO2 = TokenizerSpec("byte-level BPE", "llama3", _sp(eos=_ENDOFTEXT, pad="<|pad|>"),
                      None, "cl100k regex")
GRANITE = TokenizerSpec("byte-level BPE", "gpt2", _sp(bos="<|end_of_text|>",
                                                      eos="<|end_of_text|>",
                                                      pad="<|end_of_text|>"))
OPT = TokenizerSpec("byte-level BPE", "gpt2", _sp(bos="</s>", eos="</s>", pad="<pad>",
                                                  unk="<unk>"), "</s> $A")
BLOOM = TokenizerSpec("byte-level BPE", "bloom", _sp(unk="<unk>", bos="<s>", eos="</s>",
                                                     pad="<pad>"), None, "BLOOM regex")
COHERE = TokenizerSpec("byte-level BPE", "cohere",
                       _sp(pad="<PAD>", unk="<UNK>", cls="<CLS>", sep="<SEP>",
                           mask="<MASK_TOKEN>", bos="<BOS_TOKEN>",
                           eos="<|END_OF_TURN_TOKEN|>"), "<BOS_TOKEN> $A", "single digits")
MODERNBERT = TokenizerSpec("byte-level BPE", "gpt2",
                           _sp(unk="[UNK]", cls="[CLS]", sep="[SEP]", pad="[PAD]",
                               mask="[MASK]"), "[CLS] $A [SEP]")
SP_LLAMA2 = TokenizerSpec("SentencePiece BPE", "metaspace",
                          _sp(unk="<unk>", bos="<s>", eos="</s>"), "<s> $A",
                          "Metaspace, byte fallback")
SP_PHI3 = TokenizerSpec("SentencePiece BPE", "metaspace",
                        _sp(unk="<unk>", bos="<s>", eos=_ENDOFTEXT, pad=_ENDOFTEXT), None,
                        "Metaspace, byte fallback")
SP_GEMMA = TokenizerSpec("SentencePiece BPE", "gemma",
                         _sp(pad="<pad>", eos="<eos>", bos="<bos>", unk="<unk>",
                             mask="<mask>"), "<bos> $A", "no dummy prefix, byte fallback")
UNI_T5 = TokenizerSpec("SentencePiece Unigram", "t5", _sp(pad="<pad>", eos="</s>",
                                                          unk="<unk>"), "$A </s>")
UNI_XLMR = TokenizerSpec("SentencePiece Unigram", "t5",
                         _sp(bos="<s>", pad="<pad>", eos="</s>", unk="<unk>", mask="<mask>",
                             cls="<s>", sep="</s>"), "<s> $A </s>")
UNI_ALBERT = TokenizerSpec("SentencePiece Unigram", "t5",
                           _sp(pad="<pad>", unk="<unk>", cls="[CLS]", sep="[SEP]",
                               mask="[MASK]"), "[CLS] $A [SEP]")
UNI_DEBERTA = TokenizerSpec("SentencePiece Unigram", "deberta",
                            _sp(pad="[PAD]", cls="[CLS]", sep="[SEP]", unk="[UNK]",
                                mask="[MASK]", bos="[CLS]", eos="[SEP]"), "[CLS] $A [SEP]")


@dataclass(frozen=True)
class Family:
    """One row of the matrix: display ``name``, transformers ``model_type``, ``kind``
    (``encoder``, ``causal`` or ``encoder-decoder``: only its encoder is probed), its
    ``tokenizer``, the ``config`` given to ``AutoConfig.for_model`` beyond the common sizes and
    the vocabulary size (a ``"{<role>}"`` string is the id of the tokenizer's special token of
    that role), and ``expected``: the cells that differ from the default (:meth:`cell`: ``✓``,
    and ``—`` for a causal-only capability of a model that is not a causal LM)."""

    name: str
    model_type: str
    kind: str
    tokenizer: TokenizerSpec
    config: Mapping[str, Any] = field(default_factory=dict)
    expected: Mapping[str, str] = field(default_factory=dict)

    @property
    def causal(self) -> bool:
        return self.kind == "causal"

    @property
    def start_token(self) -> str | None:
        """The token a causal LM's input starts with (BOS, else EOS): what scoring puts first;
        None for the other kinds."""
        if not self.causal:
            return None
        roles = self.tokenizer.roles
        return roles.get("bos", roles.get("eos"))

    @property
    def encoder_prepends(self) -> bool:
        """Whether the transformer encoder must put :attr:`start_token` before the words: a
        causal LM whose tokenizer adds no special token before the text."""
        return self.causal and not self.tokenizer.adds_start

    def cell(self, capability: str) -> str:
        """The expected cell of ``capability`` (see :data:`CAPABILITIES`)."""
        if capability in self.expected:
            return self.expected[capability]
        if capability in CAUSAL_ONLY and not self.causal:
            return "—"
        if capability == "layer-only" and self.kind == "encoder-decoder":
            return "full load (encoder-decoder: its encoder is half a checkpoint)"
        return "✓"

    @property
    def start_cell(self) -> str:
        """The docs' start-token cell: the token a causal LM's input starts with and who puts
        it there; ``—`` for the other kinds."""
        if self.start_token is None:
            return "—"
        who = "prepended by synrob" if self.encoder_prepends else "the tokenizer's"
        return f"{code(self.start_token)} ({who})"


#: Common sizes: the names every config below understands (transformers' attribute maps take
#: hidden_size, num_hidden_layers and num_attention_heads for GPT-2, BLOOM, T5, BART, ...).
_COMMON = {"hidden_size": HIDDEN, "num_hidden_layers": N_BLOCKS, "num_attention_heads": HEADS}
_DEC = {"intermediate_size": FFN, "max_position_embeddings": POSITIONS}
_GQA = {**_DEC, "num_key_value_heads": 1}
_IDS = {"bos_token_id": "{bos}", "eos_token_id": "{eos}"}
_ENC = {"intermediate_size": FFN, "max_position_embeddings": POSITIONS, "pad_token_id": "{pad}"}
FAMILIES: list[Family] = [
    # encoders
    Family("BERT", "bert", "encoder", WORDPIECE, _ENC),
    Family("RoBERTa", "roberta", "encoder", ROBERTA,
           {**_ENC, "bos_token_id": "{bos}", "eos_token_id": "{eos}"}),
    Family("XLM-R", "xlm-roberta", "encoder", UNI_XLMR,
           {**_ENC, "bos_token_id": "{bos}", "eos_token_id": "{eos}"}),
    Family("DeBERTa-v2", "deberta-v2", "encoder", UNI_DEBERTA,
           {**_ENC, "relative_attention": True, "pos_att_type": ["p2c", "c2p"],
            "position_buckets": 32, "max_relative_positions": -1,
            "position_biased_input": False, "norm_rel_ebd": "layer_norm", "share_att_key": True,
            "type_vocab_size": 0}),
    Family("ELECTRA", "electra", "encoder", WORDPIECE, {**_ENC, "embedding_size": 16}),
    Family("ALBERT", "albert", "encoder", UNI_ALBERT,
           {**_ENC, "embedding_size": 16, "num_hidden_groups": 1},
           {"early exit": "full pass"}),
    Family("DistilBERT", "distilbert", "encoder", WORDPIECE,
           {"hidden_dim": FFN, "max_position_embeddings": POSITIONS, "pad_token_id": "{pad}"}),
    Family("ModernBERT", "modernbert", "encoder", MODERNBERT,
           {**_ENC, "global_attn_every_n_layers": 3, "local_attention": 16,
            "cls_token_id": "{cls}", "sep_token_id": "{sep}", "bos_token_id": "{cls}",
            "eos_token_id": "{sep}"}),
    # decoders
    Family("GPT-2", "gpt2", "causal", GPT2, {"n_inner": FFN, "n_positions": POSITIONS, **_IDS}),
    Family("GPT-NeoX", "gpt_neox", "causal", NEOX, {**_DEC, **_IDS, "pad_token_id": "{pad}"}),
    Family("OPT", "opt", "causal", OPT,
           {"ffn_dim": FFN, "word_embed_proj_dim": HIDDEN, "max_position_embeddings": POSITIONS,
            **_IDS, "pad_token_id": "{pad}"}),
    Family("Llama", "llama", "causal", LLAMA3, {**_GQA, **_IDS}),
    Family("Mistral", "mistral", "causal", SP_LLAMA2, {**_GQA, **_IDS}),
    Family("Qwen3", "qwen3", "causal", QWEN,
           {**_GQA, "head_dim": HIDDEN // HEADS, "eos_token_id": "{eos}",
            "pad_token_id": "{pad}"}),
    Family("Gemma", "gemma", "causal", SP_GEMMA,
           {**_GQA, "head_dim": HIDDEN // HEADS, **_IDS, "pad_token_id": "{pad}"}),
    Family("Gemma-2", "gemma2", "causal", SP_GEMMA,
           {**_GQA, "head_dim": HIDDEN // HEADS, "sliding_window": 16,
            "query_pre_attn_scalar": HIDDEN // HEADS, **_IDS, "pad_token_id": "{pad}"}),
    Family("Phi-3", "phi3", "causal", SP_PHI3,
           {**_GQA, "original_max_position_embeddings": POSITIONS, **_IDS,
            "pad_token_id": "{pad}"}),
    Family("OLMo", "olmo", "causal", EOS_ONLY,
           {**_DEC, "eos_token_id": "{eos}", "pad_token_id": "{pad}", "bos_token_id": None}),
    Family("OLMo-2", "olmo2", "causal", OLMO2,
           {**_GQA, "eos_token_id": "{eos}", "pad_token_id": "{pad}", "bos_token_id": None}),
    Family("StableLM", "stablelm", "causal", GPT2, {**_DEC, "num_key_value_heads": HEADS, **_IDS}),
    Family("Falcon", "falcon", "causal", EOS_ONLY,
           {"max_position_embeddings": POSITIONS, "eos_token_id": "{eos}",
            "bos_token_id": "{eos}"}),
    Family("Phi", "phi", "causal", GPT2, {**_DEC, **_IDS}),
    Family("BLOOM", "bloom", "causal", BLOOM, {**_IDS, "pad_token_id": "{pad}"}),
    Family("GPTBigCode", "gpt_bigcode", "causal", GPT2,
           {"n_inner": FFN, "n_positions": POSITIONS, **_IDS}),
    Family("Granite", "granite", "causal", GRANITE, {**_GQA, **_IDS, "pad_token_id": "{pad}"}),
    Family("Starcoder2", "starcoder2", "causal", GPT2, {**_GQA, **_IDS}),
    Family("Cohere", "cohere", "causal", COHERE, {**_GQA, **_IDS, "pad_token_id": "{pad}"}),
    # the encoders of encoder-decoder models
    Family("T5 (encoder)", "t5", "encoder-decoder", UNI_T5,
           {"d_kv": HIDDEN // HEADS, "d_ff": FFN, "num_decoder_layers": 2,
            "relative_attention_num_buckets": 8, "pad_token_id": "{pad}",
            "eos_token_id": "{eos}", "decoder_start_token_id": "{pad}"}),
    Family("BART (encoder)", "bart", "encoder-decoder", ROBERTA,
           {"encoder_ffn_dim": FFN, "decoder_ffn_dim": FFN, "decoder_layers": 2,
            "decoder_attention_heads": HEADS, "max_position_embeddings": POSITIONS,
            "pad_token_id": "{pad}", **_IDS, "decoder_start_token_id": "{eos}",
            "forced_eos_token_id": "{eos}"}),
]


def family(name: str) -> Family:
    """The :class:`Family` called ``name``; KeyError naming the known ones otherwise."""
    for fam in FAMILIES:
        if fam.name == name:
            return fam
    raise KeyError(f"no family {name!r}; known: {', '.join(f.name for f in FAMILIES)}")


# ---------------------------------------------------------------------- tokenizers
_LLAMA3_REGEX = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}|"
                 r" ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+")
_QWEN_REGEX = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}|"
               r" ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+")
_BLOOM_REGEX = r" ?[^(\s|[.,!?…。，、।۔،])]+"


@functools.lru_cache(maxsize=1)
def train_texts() -> tuple[str, ...]:
    """The first :data:`TRAIN_SENTENCES` sentences of EWT train, words joined by spaces."""
    from itertools import islice

    from synrob.perturb.corpus import read_conllu

    path = EWT_DIR / "en_ewt-ud-train.conllu"
    return tuple(" ".join(s.forms) for s in islice(read_conllu(path), TRAIN_SENTENCES))


def _byte_level_pre(pipeline: str) -> Any:
    """The byte-level pre-tokenizer of ``pipeline``: GPT-2's regex inside ByteLevel, or a
    family regex split followed by ByteLevel without its own regex."""
    from tokenizers import Regex, pre_tokenizers

    if pipeline == "gpt2":
        return pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    if pipeline == "cohere":
        return pre_tokenizers.Sequence([pre_tokenizers.Digits(individual_digits=True),
                                        pre_tokenizers.ByteLevel(add_prefix_space=False)])
    regex = {"llama3": _LLAMA3_REGEX, "qwen": _QWEN_REGEX, "bloom": _BLOOM_REGEX}[pipeline]
    return pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(regex), behavior="isolated", invert=False),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])


def _train_byte_level(spec: TokenizerSpec, texts: tuple[str, ...]) -> Any:
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = _byte_level_pre(spec.pipeline)
    tok.decoder = decoders.ByteLevel()
    tok.train_from_iterator(texts, trainers.BpeTrainer(
        vocab_size=VOCAB, special_tokens=spec.tokens,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False))
    return tok


def _train_wordpiece(spec: TokenizerSpec, texts: tuple[str, ...]) -> Any:
    from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, trainers

    tok = Tokenizer(models.WordPiece(unk_token=spec.roles["unk"]))
    tok.normalizer = normalizers.BertNormalizer(lowercase=True)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.decoder = decoders.WordPiece()
    tok.train_from_iterator(texts, trainers.WordPieceTrainer(
        vocab_size=VOCAB, special_tokens=spec.tokens, show_progress=False))
    return tok


def _train_sentencepiece_bpe(spec: TokenizerSpec, texts: tuple[str, ...]) -> Any:
    """Llama-2-style BPE (Metaspace, ``prepend_scheme="first"``, no split) or Gemma's (spaces
    replaced by ``▁`` in the normalizer, no dummy prefix), both with byte fallback: the 256
    ``<0xNN>`` tokens follow the specials, as in the real vocabularies. Trained with words
    split at ``▁`` so that no merge crosses a word boundary, as SentencePiece trains."""
    from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, trainers

    trainer = Tokenizer(models.BPE(unk_token=spec.roles["unk"]))
    trainer.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="always",
                                                     split=True)
    trainer.train_from_iterator(texts, trainers.BpeTrainer(
        vocab_size=VOCAB, special_tokens=spec.tokens, show_progress=False))
    state = json.loads(trainer.to_str())["model"]
    vocab = {t: i for i, t in enumerate(spec.tokens + [f"<0x{b:02X}>" for b in range(256)])}
    for piece in sorted(state["vocab"], key=state["vocab"].get):
        vocab.setdefault(piece, len(vocab))
    merges = [tuple(m) if isinstance(m, list) else tuple(m.split(" ")) for m in state["merges"]]
    tok = Tokenizer(models.BPE(vocab=vocab, merges=merges, unk_token=spec.roles["unk"],
                               fuse_unk=True, byte_fallback=True))
    if spec.pipeline == "gemma":  # GemmaTokenizer's own pipeline (transformers 5)
        tok.normalizer = normalizers.Replace(" ", "▁")
        tok.pre_tokenizer = pre_tokenizers.Split(" ", behavior="merged_with_previous")
        tok.decoder = decoders.Sequence([decoders.Replace("▁", " "), decoders.ByteFallback(),
                                         decoders.Fuse()])
    else:  # LlamaTokenizer's (legacy=False)
        tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="first",
                                                     split=False)
        tok.decoder = decoders.Sequence([decoders.Replace("▁", " "), decoders.ByteFallback(),
                                         decoders.Fuse(), decoders.Strip(" ", 1, 0)])
    return tok


def _train_unigram(spec: TokenizerSpec, texts: tuple[str, ...]) -> Any:
    """T5's and XLM-R's Unigram (whitespace split, then Metaspace ``always``) or DeBERTa-v2's
    (Metaspace ``first`` on the whole text)."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tok = Tokenizer(models.Unigram())
    meta = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="always", split=True)
    tok.pre_tokenizer = pre_tokenizers.Sequence([pre_tokenizers.WhitespaceSplit(), meta])
    tok.train_from_iterator(texts, trainers.UnigramTrainer(
        vocab_size=VOCAB, special_tokens=spec.tokens, unk_token=spec.roles["unk"],
        show_progress=False))
    if spec.pipeline == "deberta":
        tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="first")
        tok.decoder = decoders.Metaspace(replacement="▁", prepend_scheme="first")
    else:
        tok.decoder = decoders.Metaspace(replacement="▁", prepend_scheme="always", split=True)
    return tok


_TRAINERS = {"byte-level BPE": _train_byte_level, "WordPiece": _train_wordpiece,
             "SentencePiece BPE": _train_sentencepiece_bpe,
             "SentencePiece Unigram": _train_unigram}


@functools.cache
def _tokenizer_json(spec: TokenizerSpec) -> str:
    """``tokenizer.json`` of ``spec``, trained once per process on :func:`train_texts`."""
    from tokenizers import processors

    tok = _TRAINERS[spec.kind](spec, train_texts())
    if spec.template is not None:
        used = [t for t in spec.template.split() if t != "$A"]
        tok.post_processor = processors.TemplateProcessing(
            single=spec.template, special_tokens=[(t, tok.token_to_id(t)) for t in used])
    return tok.to_str()


def build_tokenizer(spec: TokenizerSpec, dest: Path) -> Any:
    """Save ``spec``'s trained tokenizer in ``dest`` (tokenizer.json and a
    tokenizer_config.json naming ``TokenizersBackend`` and the special tokens) and return it
    as transformers loads it (``PreTrainedTokenizerFast``)."""
    from tokenizers import Tokenizer
    from transformers import PreTrainedTokenizerFast

    backend = Tokenizer.from_str(_tokenizer_json(spec))
    roles = {f"{role}_token": tok for role, tok in spec.specials}
    tok = PreTrainedTokenizerFast(tokenizer_object=backend, model_max_length=POSITIONS,
                                  **roles)
    tok.save_pretrained(dest)
    cfg_path = dest / "tokenizer_config.json"
    cfg = json.loads(cfg_path.read_text(encoding="utf-8"))
    cfg["tokenizer_class"] = "TokenizersBackend"
    cfg_path.write_text(json.dumps(cfg, indent=2), encoding="utf-8")
    return tok


# ---------------------------------------------------------------------- models
def _config_values(fam: Family, tok: Any, n_blocks: int) -> dict[str, Any]:
    """``fam.config`` with ``{role}`` placeholders resolved against ``tok``, on top of the
    common sizes (``n_blocks`` blocks) and ``tok``'s vocabulary size."""
    ids = {role: tok.convert_tokens_to_ids(t) for role, t in fam.tokenizer.specials}
    out: dict[str, Any] = {**_COMMON, "num_hidden_layers": n_blocks, "vocab_size": len(tok)}
    for key, value in fam.config.items():
        if isinstance(value, str) and value.startswith("{"):
            value = ids[value.strip("{}")]
        out[key] = value
    return out


def head_class(fam: Family) -> Any:
    """The auto class of the family's checkpoint (its usual head)."""
    import transformers as tf

    return {"encoder": tf.AutoModelForMaskedLM, "causal": tf.AutoModelForCausalLM,
            "encoder-decoder": tf.AutoModelForSeq2SeqLM}[fam.kind]


def build_family(name: str, root: Path, *, n_blocks: int = N_BLOCKS) -> Path:
    """The checkpoint directory of family ``name`` under ``root`` (``<model_type>``, or
    ``<model_type>-<n_blocks>`` for another depth than :data:`N_BLOCKS`; see the module's
    docstring), built on first use: a directory with a config.json is returned as it is."""
    import torch
    from transformers import AutoConfig

    fam = family(name)
    suffix = "" if n_blocks == N_BLOCKS else f"-{n_blocks}"
    dest = Path(root) / f"{fam.model_type}{suffix}"
    if (dest / "config.json").is_file():
        return dest
    dest.mkdir(parents=True, exist_ok=True)
    tok = build_tokenizer(fam.tokenizer, dest)
    config = AutoConfig.for_model(fam.model_type, **_config_values(fam, tok, n_blocks))
    torch.manual_seed(SEED)
    model = head_class(fam).from_config(config, dtype=torch.float32).eval()
    model.save_pretrained(dest)
    return dest


# ---------------------------------------------------------------------- docs
def table() -> list[str]:
    """The docs' matrix: a markdown header, its rule and one row per family (name,
    model_type, kind, tokenizer, start token, then one cell per capability)."""
    head = ["family", "`model_type`", "kind", "tokenizer", "start token", *CAPABILITIES]
    rows = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for fam in FAMILIES:
        cells = [fam.name, f"`{fam.model_type}`", fam.kind, fam.tokenizer.label,
                 fam.start_cell, *(fam.cell(c) for c in CAPABILITIES)]
        rows.append("| " + " | ".join(cells) + " |")
    return rows
