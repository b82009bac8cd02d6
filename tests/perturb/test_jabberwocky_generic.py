"""Generic Jabberwocky on real Turkish (agglutinative) and Czech (fusional) UD excerpts."""

from __future__ import annotations

import hashlib
import random
import re
from pathlib import Path

import pytest
import wordfreq
from hypothesis import given
from hypothesis import strategies as st
from synrob.perturb.charmodel import CharNgramModel, is_vowel, last_vowel, vowels
from synrob.perturb.corpus import read_conllu
from synrob.perturb.edits import EditRule, RuleBook, edit_rule
from synrob.perturb.generic_pseudowords import ShapeIndex, TreebankLexicon, shape_fits
from synrob.perturb.pipeline import perturb_records, read_blocks
from synrob.perturb.plugins import get_registry

DATA = Path(__file__).resolve().parent.parent / "data" / "ud"
TREEBANKS = {
    "tr": DATA / "tr_boun" / "tr_boun-ud-test.conllu",
    "cs": DATA / "cs_pud" / "cs_pud-ud-test.conllu",
}
CONTENT = ("NOUN", "VERB", "ADJ", "ADV")


# ---------------------------------------------------------------------- building blocks
def test_edit_rules_as_lemmatizers_learn_them() -> None:
    assert edit_rule("kitap", "kitabı") == EditRule("", "", "p", "bı")
    assert edit_rule("ev", "evlerde") == EditRule("", "", "", "lerde")
    assert edit_rule("machen", "gemacht") == EditRule("", "ge", "en", "t")
    assert edit_rule("ser", "fue") == EditRule("s", "fu", "r", "")  # suppletion shares "e"
    assert edit_rule("go", "went") is None
    assert EditRule("", "", "p", "bı").apply("tarap") == "tarabı"
    assert not EditRule("", "", "p", "bı").applies("tarak")


@given(st.text(alphabet="abcçdeğıioöşuü", min_size=1, max_size=12),
       st.text(alphabet="abcçdeğıioöşuü", min_size=1, max_size=14))
def test_a_rule_turns_its_own_lemma_into_its_form(lemma: str, form: str) -> None:
    rule = edit_rule(lemma, form)
    if rule is None:
        assert not set(lemma) & set(form)
    else:
        assert rule.applies(lemma, min_stem=1)
        assert rule.apply(lemma) == form


def test_a_rule_is_attested_only_with_enough_lemmas() -> None:
    book = RuleBook(min_lemmas=2).add_all([("NOUN", "Number=Plur", "ev", "evler"),
                                           ("NOUN", "Number=Plur", "ev", "evler")])
    rule = edit_rule("ev", "evler")
    assert not book.attested("NOUN", "Number=Plur", rule)  # one lemma, twice
    book.add("NOUN", "Number=Plur", "el", "eller")
    assert book.attested("NOUN", "Number=Plur", rule)
    assert not book.attested("NOUN", "Case=Loc", rule)  # another class


def test_the_character_model_is_seeded_and_spells_like_its_words() -> None:
    words = ["kitap", "kalem", "defter", "masa", "sandalye", "pencere", "kapı", "duvar"]
    model = CharNgramModel(3).fit(words)
    a = [model.sample(random.Random(5)) for _ in range(1)]
    b = [model.sample(random.Random(5)) for _ in range(1)]
    assert a == b
    letters = set("".join(words))
    for seed in range(50):
        w = model.sample(random.Random(seed))
        assert w is None or set(w) <= letters


def test_vowels_and_shapes() -> None:
    assert is_vowel("ı") and is_vowel("ä") and is_vowel("é") and not is_vowel("ş")
    assert last_vowel("kitap") == "a" and vowels("göz") == {"ö"}
    assert shape_fits("basap", "kitap")  # a ⊆ {i, a}, ends p, last vowel a
    assert not shape_fits("besap", "kitap")  # e is not in kitap
    assert not shape_fits("basak", "kitap")  # another last letter
    index = ShapeIndex(["basap", "besap", "sirap", "tarak"])
    assert index.fitting("kitap") == ["basap", "sirap"]


# ---------------------------------------------------------------------- on real treebanks
def _perturb(lang: str, seed: int = 0, **params: object) -> list:
    path = TREEBANKS[lang]
    jab = get_registry().get("perturber", "jabberwocky")(lang=lang, reference=str(path), **params)
    return list(perturb_records(jab, read_blocks(path), seed=seed))


_VOWEL_RUN = re.compile(r"V+")


def _abstract(s: str) -> str:
    """``s`` with its vowels abstracted away (harmony may change them)."""
    return _VOWEL_RUN.sub("V", "".join("V" if is_vowel(c) else c for c in s))


@pytest.fixture(scope="module", params=sorted(TREEBANKS))
def perturbed(request: pytest.FixtureRequest) -> tuple[str, list, list]:
    lang = request.param
    return lang, list(read_conllu(TREEBANKS[lang])), _perturb(lang)


def test_most_content_words_are_replaced(perturbed: tuple[str, list, list]) -> None:
    _, originals, records = perturbed
    total = sum(1 for s in originals for w in s.words() if w.upos in CONTENT)
    replaced = sum(len(r.changed) for r in records)
    assert replaced / total >= 0.40, (replaced, total)


def test_every_replaced_word_keeps_its_analysis_and_inflection(
        perturbed: tuple[str, list, list]) -> None:
    lang, originals, records = perturbed
    lexicon = TreebankLexicon.from_specs([str(TREEBANKS[lang])])
    known = wordfreq.get_frequency_dict(lang, wordlist="best")
    checked = 0
    for original, rec in zip(originals, records, strict=True):
        old = {w.id: w for w in original.words()}
        new = {w.id: w for w in rec.sentence.words()}
        assert sorted(old) == sorted(new)
        for wid in rec.changed:
            a, b = old[wid], new[wid]
            assert (a.upos, a.xpos, a.feats, a.head, a.deprel) == (b.upos, b.xpos, b.feats,
                                                                    b.head, b.deprel)
            form = b.form.lower()
            assert form not in lexicon.vocabulary and b.lemma not in lexicon.vocabulary
            assert form not in known and b.lemma not in known
            real, fake = edit_rule(a.lemma, a.form), edit_rule(b.lemma, b.form)
            assert fake is not None and real is not None
            assert _abstract(fake.form_suffix) == _abstract(real.form_suffix), (a, b)
            assert _abstract(fake.form_prefix) == _abstract(real.form_prefix), (a, b)
            checked += 1
        for wid in set(old) - set(rec.changed):  # the other words are untouched
            assert (old[wid].form, old[wid].lemma) == (new[wid].form, new[wid].lemma)
    assert checked > 1000


def test_one_lemma_one_pseudo_lemma_per_sentence(perturbed: tuple[str, list, list]) -> None:
    _, originals, records = perturbed
    for original, rec in zip(originals, records, strict=True):
        old = {w.id: w for w in original.words()}
        new = {w.id: w for w in rec.sentence.words()}
        pseudo_of: dict[tuple[str, str], str] = {}
        real_of: dict[str, tuple[str, str]] = {}
        for wid in rec.changed:
            key = (old[wid].lemma.lower(), old[wid].upos)
            assert pseudo_of.setdefault(key, new[wid].lemma) == new[wid].lemma
            assert real_of.setdefault(new[wid].lemma, key) == key


@pytest.mark.parametrize("lang", sorted(TREEBANKS))
def test_no_two_pseudo_lemmas_share_a_form(lang: str) -> None:
    from collections import defaultdict

    from synrob.perturb.generic_pseudowords import _forms
    from synrob.perturb.perturbers.jabberwocky_generic import GenericJabberwocky

    gen = GenericJabberwocky(lang, [str(TREEBANKS[lang])], seed=0, size=8000, order=4,
                             min_lemmas=2)
    owner: dict[str, str] = {}
    for upos, pool in gen.pools.items():
        by_suffix = defaultdict(list)
        for rule in gen.rules.attested_rules(upos):
            by_suffix[rule.lemma_suffix].append(rule)
        assert len(pool) > 0
        for pseudo in pool:
            assert pseudo not in gen.real
            for form in _forms(pseudo, by_suffix):
                assert owner.setdefault(form, pseudo) == pseudo, (form, pseudo, owner[form])


def test_the_seed_reproduces_byte_for_byte(cli, tmp_path: Path) -> None:
    path = str(TREEBANKS["tr"])
    runs = [cli(["perturb", "--kind", "jabberwocky", "--seed", str(s), path]) for s in (3, 3, 4)]
    assert all(r.exit_code == 0 for r in runs)
    assert runs[0].stdout == runs[1].stdout != runs[2].stdout
    assert "# synrob.lang = tr" in runs[0].stdout
    assert '"reference"' in runs[0].stdout  # the treebanks it learned from are recorded


# ---------------------------------------------------------------------- English unchanged
#: sha256 of ``synrob perturb --kind jabberwocky`` outputs made before the generic generator
#: (commit 40ececf), with the ``# synrob.lang = en`` comment (added since) removed.
_ENGLISH = [
    (["--seed", "0", "ud:en_ewt:test"],
     "091c46dcd9453a9aa4f548ab84c8dc18283d59154963ca5fdfe083c6d6df13d6"),
    (["--seed", "7", "ud:en_ewt:test"],
     "926114c7b835a70215a90d19502d42889549bb44a8a0e06ef869b542a5d59d79"),
    (["--seed", "3", "-p", "rate=0.5", "-p", "gerunds=true", "ud:en_ewt:dev"],
     "d21dac2a95a4de51dd24617af2d5807e7dcd17c81276095ca046fb898f7c2f85"),
]


@pytest.mark.slow
@pytest.mark.parametrize(("args", "digest"), _ENGLISH)
def test_english_output_is_byte_identical_to_before(cli, ewt_dir: Path, args: list[str],
                                                    digest: str) -> None:
    res = cli(["perturb", "--kind", "jabberwocky", *args])
    assert res.exit_code == 0, res.stderr
    lines = res.stdout.splitlines(keepends=True)
    assert sum(line == "# synrob.lang = en\n" for line in lines) > 2000
    kept = "".join(line for line in lines if line != "# synrob.lang = en\n")
    assert hashlib.sha256(kept.encode()).hexdigest() == digest
