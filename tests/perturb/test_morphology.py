"""Regular English inflection of pseudo-lemmas: hand-checked cases for every spelling rule."""

from __future__ import annotations

import pytest
from synrob.perturb.lexicon.morphology import (
    FORMS,
    comparative,
    inflect,
    match_case,
    past,
    plural,
    present_participle,
    superlative,
    syllables,
    third_singular,
)


@pytest.mark.parametrize(
    ("lemma", "expected"),
    [
        ("blick", "blicks"),
        ("wug", "wugs"),
        ("blish", "blishes"),  # sibilant sh
        ("blatch", "blatches"),  # sibilant ch
        ("blix", "blixes"),  # x
        ("quiz", "quizzes"),  # z doubles after a short vowel
        ("blaze", "blazes"),  # silent e: just -s
        ("blarpy", "blarpies"),  # consonant + y
        ("blay", "blays"),  # vowel + y keeps y
        ("bloto", "blotoes"),  # consonant + o
        ("bloo", "bloos"),  # vowel + o
    ],
)
def test_plural_and_third_singular(lemma: str, expected: str) -> None:
    assert plural(lemma) == expected
    assert third_singular(lemma) == expected


@pytest.mark.parametrize(
    ("lemma", "expected"),
    [
        ("blick", "blicking"),
        ("blake", "blaking"),  # e-drop
        ("glee", "gleeing"),  # ee keeps its e
        ("floe", "floeing"),  # oe keeps its e
        ("tie", "tying"),  # ie -> y
        ("blip", "blipping"),  # CVC monosyllable doubles
        ("quit", "quitting"),  # qu is a consonant
        ("visit", "visiting"),  # two syllables: no doubling (stress unknown)
        ("blook", "blooking"),  # vowel digraph: no doubling
        ("blow", "blowing"),  # w never doubles
        ("blix", "blixing"),  # x never doubles
        ("blarpy", "blarpying"),
    ],
)
def test_present_participle(lemma: str, expected: str) -> None:
    assert present_participle(lemma) == expected


@pytest.mark.parametrize(
    ("lemma", "ed", "er", "est"),
    [
        ("blick", "blicked", "blicker", "blickest"),
        ("blake", "blaked", "blaker", "blakest"),
        ("blarpy", "blarpied", "blarpier", "blarpiest"),
        ("blip", "blipped", "blipper", "blippest"),
        ("bland", "blanded", "blander", "blandest"),
        ("visit", "visited", "visiter", "visitest"),
        ("blay", "blayed", "blayer", "blayest"),
    ],
)
def test_ed_er_est(lemma: str, ed: str, er: str, est: str) -> None:
    assert past(lemma) == ed
    assert comparative(lemma) == er
    assert superlative(lemma) == est


def test_real_english_regulars_come_out_right() -> None:
    # the rules reproduce real regular English words
    assert plural("church") == "churches" and plural("city") == "cities" and plural("day") == "days"
    assert present_participle("make") == "making" and present_participle("run") == "running"
    assert present_participle("see") == "seeing" and present_participle("die") == "dying"
    assert past("stop") == "stopped" and past("try") == "tried" and past("bake") == "baked"
    assert comparative("big") == "bigger" and superlative("happy") == "happiest"
    assert comparative("late") == "later" and superlative("fast") == "fastest"


def test_inflect_dispatch() -> None:
    assert [inflect("blip", f) for f in FORMS] == [
        "blip", "blips", "blips", "blipping", "blipped", "blipper", "blippest"
    ]
    with pytest.raises(KeyError):
        inflect("blip", "dual")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("word", "n"),
    [("blip", 1), ("blake", 1), ("visit", 2), ("blarpy", 2), ("quit", 1), ("yeet", 1), ("banana", 3)],
)
def test_syllables(word: str, n: int) -> None:
    assert syllables(word) == n


def test_match_case() -> None:
    assert match_case("Dogs", "blicks") == "Blicks"
    assert match_case("DOGS", "blicks") == "BLICKS"
    assert match_case("dogs", "blicks") == "blicks"
    assert match_case("I", "blick") == "Blick"  # one capital letter is Title, not UPPER
