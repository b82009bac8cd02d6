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
from synrob.perturb.corpus import read_conllu
from synrob.perturb.lexicon.charmodel import CharNgramModel, is_vowel, last_vowel, vowels
from synrob.perturb.lexicon.edits import EditRule, RuleBook, edit_rule
from synrob.perturb.lexicon.generic_pseudowords import ShapeIndex, TreebankLexicon, shape_fits
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

    from synrob.perturb.lexicon.generic_pseudowords import _forms
    from synrob.perturb.perturbers.jabberwocky.generic import GenericJabberwocky

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


# ---------------------------------------------------------------------- Hunspell, sibling splits
#: The dictionaries dev.sh installs for the tests (Debian hunspell-tr, hunspell-cs).
DICTIONARIES = {"tr": "tr_TR", "cs": "cs_CZ"}
_SPYLLS: dict[str, object] = {}


def _dictionary(lang: str):  # noqa: ANN202 - a spylls Dictionary
    """``lang``'s Hunspell dictionary read by spylls itself (not through synrob's cache)."""
    from spylls.hunspell import Dictionary
    from synrob.perturb.lexicon.hunspell import find_dictionary

    if lang not in _SPYLLS:
        files = find_dictionary(lang)
        if files is None or files.name != DICTIONARIES[lang]:
            pytest.fail(f"no {DICTIONARIES[lang]} Hunspell dictionary: bash dev.sh setup "
                        "installs hunspell-tr and hunspell-cs")
        _SPYLLS[lang] = Dictionary.from_files(str(files.base))
    return _SPYLLS[lang]


def _pseudowords(originals: list, records: list) -> set[str]:
    """Every replaced form (as written and lower-cased) and pseudo-lemma of ``records``."""
    out: set[str] = set()
    for original, rec in zip(originals, records, strict=True):
        new = {w.id: w for w in rec.sentence.words()}
        old = {w.id: w for w in original.words()}
        for wid in rec.changed:
            assert new[wid].form != old[wid].form
            out |= {new[wid].form, new[wid].form.lower(), new[wid].lemma}
    return out


def test_no_replaced_form_or_lemma_is_a_hunspell_word(perturbed: tuple[str, list, list]) -> None:
    """Turkish (agglutinative) and Czech: the dictionary rejects every pseudoword, and the
    output records which dictionary decided."""
    lang, originals, records = perturbed
    words = _pseudowords(originals, records)
    assert len(words) > 1000
    dictionary = _dictionary(lang)
    assert [w for w in sorted(words) if dictionary.lookup(w)] == []
    recorded = records[0].params["hunspell"]
    assert recorded["dictionary"] == DICTIONARIES[lang] and recorded["reader"].startswith("spylls")


def test_a_missing_dictionary_is_a_warning_naming_the_package(cli, tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch
                                                              ) -> None:
    """Without tr_TR the run still works (one warning line), checks the treebank and wordfreq
    only, and then makes words the dictionary knows: the check is what keeps them out."""
    monkeypatch.setenv("SYNROB_HUNSPELL_DIR", str(tmp_path))  # an empty folder
    path = TREEBANKS["tr"]
    res = cli(["perturb", "--kind", "jabberwocky", "--seed", "0", str(path),
               "-o", str(tmp_path / "out.conllu")])
    assert res.exit_code == 0, res.stderr
    warning = [line for line in res.stderr.splitlines() if line.startswith("synrob: warning:")]
    assert len(warning) == 1 and "no Hunspell dictionary for tr" in warning[0]
    assert "apt-get install hunspell-tr" in warning[0]
    records = [r for r in read_conllu(tmp_path / "out.conllu")]
    assert '"hunspell": null' in records[0].metadata["synrob.params"]
    words = {w.form.lower() for r in records for w in r.words()
             if str(w.id) in (r.metadata.get("synrob.changed") or "").split(",")}
    accepted = [w for w in sorted(words) if _dictionary("tr").lookup(w)]
    assert len(accepted) > 0.02 * len(words), (len(accepted), len(words))


def test_answers_are_cached_by_dictionary_content(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    from synrob.perturb.lexicon import hunspell

    folder = tmp_path / "dicts"
    folder.mkdir()
    (folder / "xx_XX.aff").write_text("SET UTF-8\nSFX S Y 1\nSFX S 0 lar .\n", encoding="utf-8")
    (folder / "xx_XX.dic").write_text("2\nkitap/S\nev\n", encoding="utf-8")
    (folder / "xx_YY.dic").write_text("1\nev\n", encoding="utf-8")  # no .aff: not a dictionary
    monkeypatch.setenv("SYNROB_HUNSPELL_DIR", str(folder))
    monkeypatch.setenv("SYNROB_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(hunspell, "_ANSWERS", {})
    files = hunspell.find_dictionary("xx")
    assert files is not None and files.name == "xx_XX"
    words = hunspell.HunspellWords(files)
    assert [words.accepts(w) for w in ("kitaplar", "ev", "evlar", "Kitap")] == [True, True,
                                                                                False, True]
    assert words.loaded
    words.save()
    monkeypatch.setattr(hunspell, "_ANSWERS", {})  # a new process: the answers come from disk
    again = hunspell.HunspellWords(files)
    assert again.path == words.path
    assert [again.accepts(w) for w in ("kitaplar", "evlar")] == [True, False]
    assert not again.loaded
    (folder / "xx_XX.dic").write_text("3\nkitap/S\nev/S\nel\n", encoding="utf-8")
    changed = hunspell.HunspellWords(files)  # another dictionary content: another cache
    assert changed.path != words.path and changed.accepts("evlar")


def test_the_dictionary_of_a_language_and_its_debian_package(tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch
                                                             ) -> None:
    from synrob.perturb.lexicon.hunspell import debian_package, find_dictionary

    for name in ("de_AT", "de_CH", "de_DE"):
        (tmp_path / f"{name}.dic").write_text("1\nHaus\n", encoding="utf-8")
        (tmp_path / f"{name}.aff").write_text("SET UTF-8\n", encoding="utf-8")
    monkeypatch.setenv("SYNROB_HUNSPELL_DIR", str(tmp_path))
    assert find_dictionary("de").name == "de_DE"  # type: ignore[union-attr]
    (tmp_path / "de_DE.aff").unlink()
    assert find_dictionary("de").name == "de_AT"  # type: ignore[union-attr]
    assert find_dictionary("tr") is None
    assert (debian_package("tr"), debian_package("cs"), debian_package("de")) == (
        "hunspell-tr", "hunspell-cs", "hunspell-de-de")
    assert debian_package("ja") is None


def _split_excerpt(folder: Path, name: str) -> tuple[Path, Path]:
    """The Turkish excerpt as two splits of treebank ``name``: sentences 1-150 train, the rest
    test."""
    blocks = TREEBANKS["tr"].read_text(encoding="utf-8").strip("\n").split("\n\n")
    folder.mkdir(parents=True, exist_ok=True)
    train, test = folder / f"{name}-ud-train.conllu", folder / f"{name}-ud-test.conllu"
    train.write_text("\n\n".join(blocks[:150]) + "\n\n", encoding="utf-8")
    test.write_text("\n\n".join(blocks[150:]) + "\n\n", encoding="utf-8")
    return train, test


def test_sibling_splits_are_found_beside_a_file_and_for_ud_names(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from synrob.perturb.lexicon.generic_pseudowords import sibling_splits

    train, test = _split_excerpt(tmp_path / "beside", "tr_x")
    assert sibling_splits([str(test)]) == (train,)
    assert sibling_splits([str(test), str(train)]) == ()  # named already
    assert sibling_splits([str(TREEBANKS["tr"])]) == ()  # no other split there
    # ud:NAME:SPLIT: the other splits in any local folder of NAME; nothing is downloaded
    monkeypatch.setenv("SYNROB_DATA", str(tmp_path / "data"))
    monkeypatch.setenv("SYNROB_CACHE", str(tmp_path / "cache"))
    _, data_test = _split_excerpt(tmp_path / "data" / "ud" / "tr_y", "tr_y")
    cache_train, _ = _split_excerpt(tmp_path / "cache" / "data" / "ud" / "tr_y", "tr_y")
    data_test.with_name("tr_y-ud-train.conllu").unlink()
    assert sibling_splits(["ud:tr_y:test"]) == (cache_train,)


def test_a_sibling_split_joins_the_lexicon(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                          ) -> None:
    from synrob.perturb.lexicon.hunspell import HunspellWarning

    train, test = _split_excerpt(tmp_path, "tr_x")
    monkeypatch.setenv("SYNROB_HUNSPELL_DIR", str(tmp_path / "none"))  # the lexicon alone
    with pytest.warns(HunspellWarning, match="hunspell-tr"):
        jab = get_registry().get("perturber", "jabberwocky")(lang="tr", reference=str(test))
    records = list(perturb_records(jab, read_blocks(test), seed=0))
    assert records[0].params["siblings"] == [str(train)]
    assert jab._generic is not None
    train_words = TreebankLexicon.from_specs([str(train)]).vocabulary
    assert train_words - TreebankLexicon.from_specs([str(test)]).vocabulary  # words only it has
    assert all(w in jab._generic.real for w in train_words)
    made = _pseudowords(list(read_conllu(test)), records)
    assert len(made) > 500 and not {w.lower() for w in made} & train_words


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


#: sha256 of ``synrob perturb --kind jabberwocky ... -o FILE`` on the bundled EWT sample, made
#: before Hunspell and sibling splits came to the generic generator (commit 517cce8).
_ENGLISH_SAMPLE = [
    (["--seed", "0", "sample:en_ewt:dev"],
     "9b072fed594665151f050868a63391fbde9c1f127909269bbaaf8b52a351868b"),
    (["--seed", "0", "sample:en_ewt:test"],
     "d9afe4a27082031343ac4c2556da6a9ad723d698c23b290255c410f05306aa2c"),
    (["--seed", "5", "-p", "rate=0.5", "-p", "gerunds=true", "sample:en_ewt:dev"],
     "8193d81c40043451a8cdbfa0f39f076fca25c9c089472f60fb7d06f8e9d73e68"),
]


@pytest.mark.parametrize(("args", "digest"), _ENGLISH_SAMPLE)
def test_english_output_on_the_sample_is_byte_identical(cli, tmp_path: Path, args: list[str],
                                                        digest: str) -> None:
    out = tmp_path / "out.conllu"
    res = cli(["perturb", "--kind", "jabberwocky", *args, "-o", str(out)])
    assert res.exit_code == 0, res.stderr
    assert "warning" not in res.stderr  # English needs no dictionary
    assert hashlib.sha256(out.read_bytes()).hexdigest() == digest


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
