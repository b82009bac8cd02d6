"""Order perturbers (shuffle, flip, bshift): permutations, trees that travel, rho limits."""

from __future__ import annotations

import random
from collections import Counter
from pathlib import Path

import pytest
from synrob.perturb.base import Perturbation, sentence_rng
from synrob.perturb.corpus import Sentence, read_conllu, sentences_from_string
from synrob.perturb.errors import ParameterError
from synrob.perturb.perturbers.order import (
    Flip,
    Shuffle,
    flip_order,
    full_shuffle_order,
    phrase_shuffle_order,
    subword_units,
)
from synrob.perturb.plugins import get_registry


@pytest.fixture(scope="module")
def dev(ewt_dev: Path) -> list[Sentence]:
    return list(read_conllu(ewt_dev))


def _make(kind: str, **params: object):
    return get_registry().get("perturber", kind)(**params)


def _check_word_level(original: Sentence, p: Perturbation) -> None:
    """Permutation of the words; CoNLL-U re-parses; same undirected edges between same words."""
    assert p.sentence is not None
    (reparsed,) = sentences_from_string(p.sentence.serialize())
    order = p.extra.get("order", tuple(range(1, len(original) + 1)))
    old, new = original.words(), reparsed.words()
    assert sorted(order) == list(range(1, len(old) + 1))
    assert [w.form for w in new] == [old[i - 1].form for i in order]
    assert [(w.upos, w.deprel) for w in new] == [(old[i - 1].upos, old[i - 1].deprel) for i in order]
    old_edges = {frozenset((i + 1, w.head)) for i, w in enumerate(old) if w.head}
    new_edges = {frozenset((order[i], order[w.head - 1])) for i, w in enumerate(new) if w.head}
    assert new_edges == old_edges
    assert old[order[reparsed.root()] - 1].head == 0
    assert reparsed.text == reparsed.surface_text() == p.text
    assert set(p.changed) == {i for pos, i in enumerate(order, 1) if i != pos}


# --------------------------------------------------------------------------- pure orders

@pytest.mark.parametrize("n", [0, 1, 2, 7, 30])
@pytest.mark.parametrize("rho", [0.0, 0.3, 1.0])
def test_orders_are_permutations(n: int, rho: float) -> None:
    rng = random.Random(n * 10 + int(rho * 10))
    for order in (full_shuffle_order(n, rng), phrase_shuffle_order(n, rho, rng),
                  flip_order(n, rho, rng)):
        assert sorted(order) == list(range(n))


def test_rho_zero_is_identity_and_rho_one_flip_rotates() -> None:
    rng = random.Random(0)
    assert phrase_shuffle_order(9, 0.0, rng) == list(range(9))
    assert flip_order(9, 0.0, rng) == list(range(9))
    # each swap acts on the current sequence: the first unit is carried to the end
    assert flip_order(5, 1.0, rng) == [1, 2, 3, 4, 0]


def test_phrase_shuffle_rho_one_is_full_shuffle() -> None:
    for seed in range(50):
        assert phrase_shuffle_order(12, 1.0, random.Random(seed)) == full_shuffle_order(
            12, random.Random(seed)
        )
    # and its distribution over the 24 permutations of 4 units is uniform
    from scipy.stats import chisquare

    rng = random.Random(7)
    counts = Counter(tuple(phrase_shuffle_order(4, 1.0, rng)) for _ in range(4800))
    assert len(counts) == 24
    assert chisquare(list(counts.values())).pvalue > 1e-3


def test_phrase_shuffle_keeps_adjacency_inside_phrases() -> None:
    rng = random.Random(3)
    n, rho = 50, 0.1
    kept = [
        sum(b == a + 1 for a, b in zip(o, o[1:], strict=False))
        for o in (phrase_shuffle_order(n, rho, rng) for _ in range(400))
    ]
    # about (1 - rho)(n - 1) = 44.1 within-phrase adjacencies, plus a few by chance
    assert 42.0 < sum(kept) / len(kept) < 47.0


def test_flip_swap_rate_follows_rho() -> None:
    rng = random.Random(5)
    moved = [sum(i != p for p, i in enumerate(flip_order(40, 0.2, rng))) for _ in range(300)]
    full = [sum(i != p for p, i in enumerate(flip_order(40, 1.0, rng))) for _ in range(3)]
    assert 0 < sum(moved) / len(moved) < 40 and full == [40, 40, 40]


# --------------------------------------------------------------------------- word level

@pytest.mark.parametrize(
    ("kind", "params", "min_changed"),
    [
        ("shuffle", {}, 0.85),
        ("shuffle", {"mode": "phrase", "rho": "0.3"}, 0.65),
        ("flip", {"rho": "0.5"}, 0.8),
        ("bshift", {}, 0.85),
    ],
)
def test_word_level_on_all_of_ewt_dev(
    dev: list[Sentence], kind: str, params: dict, min_changed: float
) -> None:
    perturber = _make(kind, **params)
    assert perturber.writes_conllu
    items = [(s, sentence_rng(11, i)) for i, s in enumerate(dev)]
    outs = perturber.perturb_batch(items)
    changed = 0
    for s, p in zip(dev, outs, strict=True):
        _check_word_level(s, p)
        changed += bool(p.changed)
    assert changed > min_changed * len(dev)  # EWT dev has many one- and two-word sentences


def test_rho_zero_leaves_sentences_unchanged(dev: list[Sentence]) -> None:
    for perturber in (Flip(rho=0.0), Shuffle(mode="phrase", rho=0.0),
                      Flip(rho=0.0, unit="char")):
        for i, s in enumerate(dev[:200]):
            p = perturber.perturb(s, sentence_rng(0, i))
            assert p.changed == () and p.text == s.text


def test_flip_rho_one_moves_first_word_to_the_end(dev: list[Sentence]) -> None:
    s = next(s for s in dev if len(s) > 5 and not s.ranges())
    p = Flip(rho=1.0).perturb(s, sentence_rng(0, 0))
    assert p.sentence is not None
    assert p.sentence.forms == s.forms[1:] + s.forms[:1]
    _check_word_level(s, p)


def test_split_multiword_token_is_dropped_and_kept_one_survives(dev: list[Sentence]) -> None:
    s = next(s for s in dev if s.ranges())
    first, last, form = s.ranges()[0]
    n = len(s)
    keep = list(range(1, n + 1))
    keep = keep[first - 1:] + keep[: first - 1]  # rotate: the range stays contiguous
    assert form in [f for _, _, f in s.reorder(keep).ranges()]
    split = list(range(1, n + 1))
    split[first - 1], split[last - 1] = split[last - 1], split[first - 1]
    assert form not in [f for _, _, f in s.reorder(split).ranges()]


def test_seeded_determinism(dev: list[Sentence]) -> None:
    perturber = _make("shuffle", mode="phrase", rho="0.4")
    a = [perturber.perturb(s, sentence_rng(3, i)).text for i, s in enumerate(dev[:100])]
    b = [perturber.perturb(s, sentence_rng(3, i)).text for i, s in enumerate(dev[:100])]
    c = [perturber.perturb(s, sentence_rng(4, i)).text for i, s in enumerate(dev[:100])]
    assert a == b
    assert a != c


def test_bad_parameters() -> None:
    with pytest.raises(ParameterError, match="rho"):
        Flip(rho=1.5)
    with pytest.raises(ParameterError, match="unit"):
        Shuffle(unit="sentence")
    with pytest.raises(ParameterError, match="mode"):
        Shuffle(mode="partial")


# --------------------------------------------------------------------------- char / subword

def test_char_units_permute_characters(dev: list[Sentence]) -> None:
    for perturber in (Shuffle(unit="char"), Flip(unit="char", rho=0.3),
                      Shuffle(unit="char", mode="phrase", rho=0.2)):
        assert not perturber.writes_conllu
        for i, s in enumerate(dev):
            p = perturber.perturb(s, sentence_rng(1, i))
            assert p.sentence is None
            assert sorted(p.text) == sorted(s.text)
            if p.text != s.text:
                assert p.changed


def test_char_keep_spaces_leaves_whitespace_in_place(dev: list[Sentence]) -> None:
    perturber = Shuffle(unit="char", keep_spaces=True)
    for i, s in enumerate(dev[:300]):
        p = perturber.perturb(s, sentence_rng(2, i))
        assert sorted(p.text) == sorted(s.text)
        assert [k for k, c in enumerate(p.text) if c == " "] == [
            k for k, c in enumerate(s.text) if c == " "
        ]


def test_char_flip_rho_one() -> None:
    (s,) = sentences_from_string(
        "# text = ab c\n1\tab\tab\tX\tX\t_\t0\troot\t_\t_\n2\tc\tc\tX\tX\t_\t1\tdep\t_\t_\n\n"
    )
    p = Flip(unit="char", rho=1.0).perturb(s, sentence_rng(0, 0))
    assert p.text == "b ca"
    assert p.changed == (1, 2)


def test_subword_units_default_tokenizer(dev: list[Sentence]) -> None:
    from synrob.perturb.perturbers.order import load_tokenizer

    tok = load_tokenizer()  # the bundled RoBERTa/GPT-2 BPE: Clouatre et al.'s subword units
    assert Shuffle(unit="subword").options["tokenizer"] == "roberta"
    units = subword_units("The scholar is typesetting.", tok)
    assert units == ["The", " scholar", " is", " types", "etting", "."]
    for perturber in (Shuffle(unit="subword"), Flip(unit="subword", rho=0.5)):
        assert not perturber.writes_conllu
        outs = perturber.perturb_batch([(s, sentence_rng(9, i)) for i, s in enumerate(dev)])
        for s, p in zip(dev, outs, strict=True):
            assert p.sentence is None
            assert "".join(subword_units(s.text, tok)) == s.text
            assert sorted(p.text) == sorted(s.text)
        assert sum(p.text != s.text for s, p in zip(dev, outs, strict=True)) > 0.9 * len(dev)


@pytest.mark.slow
@pytest.mark.model
def test_subword_units_smollm2_tokenizer() -> None:
    from synrob.perturb.io.data import cache_dir
    from synrob.perturb.perturbers.order import load_tokenizer

    tok = load_tokenizer("smollm2")
    assert (cache_dir() / "tokenizers" / "smollm2-135m" / "tokenizer.json").is_file()
    units = subword_units("They might be only memories.", tok)
    assert units == ["They", " might", " be", " only", " memories", "."]
