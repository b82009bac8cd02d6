"""Perturbation metrics against hand-computed values and reference implementations (nltk,
sacrebleu, rapidfuzz)."""

from __future__ import annotations

import random

import pytest
from nltk.translate.chrf_score import sentence_chrf
from rapidfuzz.distance import Levenshtein
from sacrebleu.metrics import CHRF
from synrob.perturb.metrics import (
    DEFAULT_TOKENIZER,
    chrf2,
    chrf_sacrebleu,
    compression_rates,
    levenshtein,
    load_token_counter,
    upos_agreement,
    words_changed,
)

_SACRE = CHRF(char_order=2, word_order=0, beta=3, whitespace=True)
_ALPHABET = "ab cdé\u4e2d\u00a0\t\n.,'ß"


def _sacre(original: str, perturbed: str) -> float:
    return _SACRE.sentence_score(perturbed, [original]).score / 100


def _random_pairs(n: int, seed: int) -> list[tuple[str, str]]:
    rng = random.Random(seed)
    pairs = []
    for _ in range(n):
        a = "".join(rng.choice(_ALPHABET) for _ in range(rng.randrange(0, 15)))
        if rng.random() < 0.5:  # a perturbation of a: shuffled or edited
            chars = list(a)
            rng.shuffle(chars)
            b = "".join(chars[: rng.randrange(0, len(chars) + 1)]) + rng.choice(["", " ", "x"])
        else:
            b = "".join(rng.choice(_ALPHABET) for _ in range(rng.randrange(0, 15)))
        pairs.append((a, b))
    return pairs


def _nltk_chrf2(original: str, perturbed: str) -> float:
    return sentence_chrf(original, perturbed, min_len=2, max_len=2, beta=3,
                         ignore_whitespace=False)


def _ewt_pairs(path, n: int, seed: int) -> list[tuple[str, str]]:
    """``n`` (original, perturbed) pairs from EWT: word shuffles, flips, char edits, other
    sentences, so that scores spread over [0, 1]."""
    from synrob.perturb.corpus import read_conllu

    texts = [s.text for s in read_conllu(path) if len(s.text) >= 2]
    rng = random.Random(seed)
    pairs = []
    for _ in range(n):
        a = rng.choice(texts)
        how = rng.randrange(4)
        if how == 0:  # word shuffle
            words = a.split(" ")
            rng.shuffle(words)
            b = " ".join(words)
        elif how == 1:  # one neighbour flip of words
            words = a.split(" ")
            if len(words) > 1:
                i = rng.randrange(len(words) - 1)
                words[i], words[i + 1] = words[i + 1], words[i]
            b = " ".join(words)
        elif how == 2:  # character shuffle of a prefix
            chars = list(a)
            k = rng.randrange(1, len(chars) + 1)
            head = chars[:k]
            rng.shuffle(head)
            b = "".join(head + chars[k:])
        else:  # an unrelated sentence
            b = rng.choice(texts)
        pairs.append((a, b))
    return pairs


def test_chrf2_equals_nltk_on_3000_ewt_pairs(ewt_dev) -> None:
    """The paper's definition: nltk's chrF with 2-grams only, beta 3, whitespace kept."""
    pairs = _ewt_pairs(ewt_dev, 3000, seed=11)
    scores = [chrf2(a, b) for a, b in pairs]
    for (a, b), ours in zip(pairs, scores, strict=True):
        ref = _nltk_chrf2(a, b)
        # nltk returns 1e-16 instead of 0.0 when no bigram matches
        assert ours == pytest.approx(ref, abs=1e-12), (a, b)
    assert min(scores) < 0.5 < max(scores)  # the pairs cover the range


def test_chrf2_equals_nltk_on_random_strings() -> None:
    for a, b in _random_pairs(3000, seed=7):
        if len(a) >= 2 and len(b) >= 2 and a != b:
            assert chrf2(a, b) == pytest.approx(_nltk_chrf2(a, b), abs=1e-12), (a, b)


def _f3(match: int, n_hyp: int, n_ref: int) -> float:
    p, r = match / n_hyp, match / n_ref
    return 10 * p * r / (9 * p + r)


@pytest.mark.parametrize(
    ("original", "perturbed", "expected"),
    [
        ("the cat", "the cat", 1.0),
        # word order matters: 9 of 10 bigrams shared ("_s" vs "_t"), P = R = 0.9
        ("the cat sat", "sat the cat", 0.9),
        # repeated bigrams count with multiplicity: "aa" twice in the reference, once in "aa"
        ("aaa", "aa", _f3(1, 1, 2)),
        ("aa", "aaa", _f3(1, 2, 1)),
        ("abab", "baba", _f3(2, 3, 3)),  # ab,ba,ab vs ba,ab,ba: one ab and one ba match
        # recall-weighted (beta 3): a short hypothesis with perfect precision still scores low
        ("abcd", "ab", 10 / 28),
        ("abc", "abd", 0.5),
        ("ab", "cd", 0.0),
        # whitespace is a character: "b c" has bigrams "b " and " c"
        ("ab cd", "abcd", _f3(2, 3, 4)),
        # one-character sentences: no bigram; unchanged is 1.0, changed is 0.0
        ("a", "a", 1.0),
        ("a", "b", 0.0),
        ("a", "ab", 0.0),
        ("ab", "a", 0.0),
        # empty strings
        ("", "", 0.0),
        ("abc", "", 0.0),
        ("", "abc", 0.0),
    ],
)
def test_chrf2_hand_cases(original: str, perturbed: str, expected: float) -> None:
    assert chrf2(original, perturbed) == pytest.approx(expected, abs=1e-12)


def test_chrf2_sees_word_swaps_that_sacrebleu_chrf_barely_sees() -> None:
    # unigrams are permutation-invariant, so the 1-2-gram average moves half as much
    assert chrf2("the cat sat", "sat the cat") == pytest.approx(0.9)
    assert chrf_sacrebleu("the cat sat", "sat the cat") == pytest.approx(0.95)


def test_chrf_sacrebleu_equals_sacrebleu_on_random_pairs() -> None:
    for a, b in _random_pairs(3000, seed=7):
        assert chrf_sacrebleu(a, b) == pytest.approx(_sacre(a, b), abs=1e-6), (a, b)


def test_chrf2_counts_whitespace() -> None:
    # the only difference is whitespace: a whitespace-blind chrF would score 1.0
    assert chrf2("ab cd", "abcd") < 1.0
    assert chrf2("ab cd", "ab  cd") < 1.0


def test_levenshtein_matches_rapidfuzz() -> None:
    for a, b in _random_pairs(2000, seed=11):
        expected = Levenshtein.distance(a, b) / len(a) if a else float(bool(b))
        assert levenshtein(a, b) == pytest.approx(expected, abs=1e-12)


def test_levenshtein_hand_cases() -> None:
    assert levenshtein("kitten", "sitting") == pytest.approx(3 / 6)
    assert levenshtein("abc", "abc") == 0.0
    assert levenshtein("", "") == 0.0
    assert levenshtein("ab", "abcdef") == pytest.approx(2.0)  # longer output: above 1


def test_words_changed() -> None:
    assert words_changed(["a", "b", "c", "d"], ["a", "x", "c", "d"]) == 0.25
    assert words_changed(["a", "b"], ["b", "a"]) == 1.0
    assert words_changed(["a", "b", "c"], ["a"]) == pytest.approx(2 / 3)
    assert words_changed([], []) == 0.0


def test_roberta_tokenizer_is_the_papers() -> None:
    """The default tokenizer is RoBERTa-base's (= GPT-2's) byte-level BPE, bundled."""
    counter = load_token_counter()
    assert counter.name == DEFAULT_TOKENIZER == "roberta"
    assert "|".join(counter.tokenize("The scholar is typesetting.")) == (
        "The|Ġscholar|Ġis|Ġtypes|etting|.")
    assert load_token_counter("gpt2-bpe").tokenize("The scholar is typesetting.") == (
        counter.tokenize("The scholar is typesetting."))
    assert compression_rates(["The scholar is typesetting."]) == [pytest.approx(27 / 6)]


def test_roberta_tokenizer_is_byte_level_and_lossless(ewt_dev) -> None:
    from synrob.perturb.corpus import read_conllu
    from synrob.perturb.lm.subword import load_tokenizer

    tok = load_tokenizer("roberta")
    texts = [s.text for s in read_conllu(ewt_dev)][:300] + ["naïve café \u4e2d\u6587 \U0001f600"]
    for text, enc in zip(texts, tok.encode_batch(texts, add_special_tokens=False), strict=True):
        assert tok.decode(enc.ids) == text  # every byte is covered, nothing is <unk>
        assert enc.offsets[0][0] == 0 and enc.offsets[-1][1] == len(text)


def test_compression_rates_default_tokenizer() -> None:
    text = "The quick brown fox jumps over the lazy dog."
    counter = load_token_counter()
    tokens = counter.tokenize(text)
    assert "".join(tokens).replace("Ġ", " ") == text  # byte-level BPE covers the text
    (rate,) = compression_rates([text])
    assert rate == pytest.approx(len(text) / len(tokens))
    # characters in a random order compress worse than English
    chars = list(text)
    random.Random(0).shuffle(chars)
    assert compression_rates(["".join(chars)])[0] < rate
    assert compression_rates([""]) == [0.0]


@pytest.mark.slow
@pytest.mark.model
def test_compression_rates_with_offline_smollm2_tokenizer() -> None:
    text = "The quick brown fox jumps over the lazy dog."
    tokens = load_token_counter("smollm2").tokenize(text)
    assert "".join(tokens).replace("Ġ", " ") == text
    (rate,) = compression_rates([text], "smollm2")
    assert rate == pytest.approx(len(text) / len(tokens))


@pytest.mark.slow
@pytest.mark.model
def test_upos_agreement_with_spacy() -> None:
    original = [["The", "cat", "sat", "on", "the", "mat", "."]]
    same_pos = [["The", "dog", "sat", "on", "the", "rug", "."]]
    other_pos = [["The", "cat", "sat", "on", "the", "quickly", "."]]
    assert upos_agreement(original, same_pos) == [1.0]
    assert upos_agreement(original, same_pos, positions=[[1, 5]]) == [1.0]
    (score,) = upos_agreement(original, other_pos, positions=[[5]])
    assert score == 0.0
    with pytest.raises(ValueError):
        upos_agreement(original, [["The", "cat"]])
