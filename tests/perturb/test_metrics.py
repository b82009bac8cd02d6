"""Perturbation metrics against their reference implementations (sacrebleu, rapidfuzz)."""

from __future__ import annotations

import random

import pytest
from rapidfuzz.distance import Levenshtein
from sacrebleu.metrics import CHRF
from synrob.perturb.metrics import (
    chrf2,
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


def test_chrf2_equals_sacrebleu_on_random_pairs() -> None:
    for a, b in _random_pairs(3000, seed=7):
        assert chrf2(a, b) == pytest.approx(_sacre(a, b), abs=1e-6), (a, b)


def test_chrf2_equals_sacrebleu_on_ewt_shuffles(ewt_dev) -> None:
    from synrob.perturb.corpus import read_conllu

    rng = random.Random(3)
    for i, s in enumerate(read_conllu(ewt_dev)):
        if i == 400:
            break
        words = s.forms
        rng.shuffle(words)
        shuffled = " ".join(words)
        assert chrf2(s.text, shuffled) == pytest.approx(_sacre(s.text, shuffled), abs=1e-6)


@pytest.mark.parametrize(
    ("original", "perturbed", "expected"),
    [
        ("the cat", "the cat", 1.0),
        ("", "", 0.0),
        ("abc", "", 0.0),
        ("", "abc", 0.0),
        ("ab", "cd", 0.0),
        # swapping two space-delimited words keeps every char 1- and 2-gram: chrF-2 is blind to it
        ("a big dog", "a dog big", 1.0),
        # one of three unigrams and none of the two bigrams match
        ("abc", "axy", (1 + 9) * (1 / 6) * (1 / 6) / (9 * (1 / 6) + 1 / 6)),
    ],
)
def test_chrf2_hand_cases(original: str, perturbed: str, expected: float) -> None:
    assert chrf2(original, perturbed) == pytest.approx(expected, abs=1e-12)
    assert chrf2(original, perturbed) == pytest.approx(_sacre(original, perturbed), abs=1e-6)


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


@pytest.mark.slow
@pytest.mark.model
def test_compression_rates_with_offline_smollm2_tokenizer() -> None:
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
