"""coPOS (WordNet synonym substitution): invariants on EWT dev, re-inflection, determinism."""

from __future__ import annotations

import subprocess
import sys
from itertools import islice
from pathlib import Path

import pytest
from synrob.perturb.base import sentence_rng
from synrob.perturb.corpus import read_conllu, sentences_from_string
from synrob.perturb.errors import ParameterError
from synrob.perturb.plugins import get_registry

from tests.fakes import changed_keeping_tree

SNIPPET = """\
# sent_id = t1
# text = The Dogs barked loudly at bigger cats.
1\tThe\tthe\tDET\tDT\tDefinite=Def|PronType=Art\t2\tdet\t_\t_
2\tDogs\tdog\tNOUN\tNNS\tNumber=Plur\t3\tnsubj\t_\t_
3\tbarked\tbark\tVERB\tVBD\tMood=Ind|Number=Plur|Person=3|Tense=Past|VerbForm=Fin\t0\troot\t_\t_
4\tloudly\tloudly\tADV\tRB\t_\t3\tadvmod\t_\t_
5\tat\tat\tADP\tIN\t_\t7\tcase\t_\t_
6\tbigger\tbig\tADJ\tJJR\tDegree=Cmp\t7\tamod\t_\t_
7\tcats\tcat\tNOUN\tNNS\tNumber=Plur\t3\tobl\t_\tSpaceAfter=No
8\t.\t.\tPUNCT\t.\t_\t3\tpunct\t_\t_

"""


@pytest.fixture(scope="module")
def copos_cls():
    return get_registry().get("perturber", "copos")


@pytest.fixture(scope="module")
def dev_sents(ewt_dev: Path):
    return list(islice(read_conllu(ewt_dev), 600))


@pytest.fixture(scope="module")
def wn():
    from synrob.perturb.lexicon.wordnet import get_wordnet

    return get_wordnet()


_WN_POS = {"NOUN": "n", "VERB": "v", "ADJ": "a", "ADV": "r"}


def _check(orig, pert, wn) -> None:
    """Tags and tree identical; changed words really changed, to a WordNet synonym."""
    a, b = changed_keeping_tree(orig, pert)
    for i in pert.changed:
        x, y = a[i - 1], b[i - 1]
        assert y.form.lower() != x.form.lower() and y.lemma != x.lemma.lower()
        assert y.form.isalpha() and y.lemma.isalpha()
        # the new lemma is a WordNet synonym of the old one, same WordNet POS (nltk's reader)
        names = {n for s in wn.synsets(x.lemma.lower(), _WN_POS[x.upos]) for n in s.lemma_names()}
        assert y.lemma in names, (x.lemma, y.lemma)
        if x.form.isupper() and len(x.form) > 1:
            assert y.form.isupper()
        elif x.form[0].isupper():
            assert y.form[0].isupper() and y.form[1:] == y.form[1:].lower()
        else:
            assert y.form.islower()
    assert pert.text == pert.sentence.text


def test_snippet_reinflects_to_the_original_tag(copos_cls, wn) -> None:
    from lemminflect import getAllInflections

    (sent,) = sentences_from_string(SNIPPET)
    p = copos_cls(budget=10)
    seen = set()
    for seed in range(25):
        out = p.perturb(sent, sentence_rng(seed, 0))
        _check(sent, out, wn)
        new = out.sentence.words()
        for i in out.changed:
            w = new[i - 1]
            seen.add(i)
            # plural stays plural, past stays past, comparative stays comparative
            assert w.form.lower() in getAllInflections(w.lemma, upos=w.upos).get(w.xpos, (w.form.lower(),))
            if w.xpos == "NNS":
                assert w.form.lower() != w.lemma
            if w.xpos == "JJR":
                assert w.form.lower().endswith("er") or w.form.lower() in ("worse", "more", "less")
        assert new[1].form[0].isupper() or 2 not in out.changed  # "Dogs" keeps its capital
    assert {2, 3, 6, 7} <= seen  # nouns, past verb and comparative all get replaced sometimes


@pytest.mark.slow
def test_ewt_dev_through_registry(copos_cls, dev_sents, wn) -> None:
    p = copos_cls(budget=5)
    n_changed = 0
    for i, s in enumerate(dev_sents):
        out = p.perturb_batch([(s, sentence_rng(0, i))])[0]
        _check(s, out, wn)
        assert len(out.changed) <= 5
        possible = sum(1 for w in s.words() if p.options_for(w))
        assert len(out.changed) == min(5, possible)
        if not out.changed:
            assert out.note and out.sentence is s
        n_changed += bool(out.changed)
    assert n_changed > 0.7 * len(dev_sents)


def test_budget_one_changes_exactly_one_word(copos_cls, dev_sents, wn) -> None:
    p = copos_cls()
    for i, s in enumerate(dev_sents[:150]):
        out = p.perturb(s, sentence_rng(1, i))
        _check(s, out, wn)
        assert len(out.changed) == (1 if any(p.options_for(w) for w in s.words()) else 0)


def test_upos_restricts_the_replaced_words(copos_cls, dev_sents) -> None:
    p = copos_cls(budget=50, upos="ADJ,ADV")
    for i, s in enumerate(dev_sents[:150]):
        out = p.perturb(s, sentence_rng(0, i))
        assert all(s.words()[j - 1].upos in ("ADJ", "ADV") for j in out.changed)


def test_seeded_determinism(copos_cls, dev_sents) -> None:
    def run(seed: int) -> list[str]:
        p = copos_cls(budget=2)
        return [p.perturb(s, sentence_rng(seed, i)).sentence.serialize() for i, s in enumerate(dev_sents[:120])]

    first = run(5)
    assert run(5) == first
    assert run(6) != first


def test_parameter_errors(copos_cls) -> None:
    with pytest.raises(ParameterError):
        copos_cls(budget=0)
    with pytest.raises(ParameterError):
        copos_cls(upos="NOUN,PROPN")
    with pytest.raises(ParameterError):
        copos_cls(budget="many")


def test_synonym_table_matches_nltk(wn) -> None:
    from synrob.perturb.perturbers.copos import synonyms

    for lemma, pos in [("dog", "n"), ("big", "a"), ("run", "v"), ("quickly", "r"), ("bank", "n")]:
        ref = {}
        for s in wn.synsets(lemma, pos):
            for n in s.lemma_names():
                if n != lemma and n.isalpha() and n.islower():
                    ref[n] = None
        assert synonyms(lemma, pos) == tuple(ref)


def test_import_loads_nothing_heavy() -> None:
    code = (
        "import sys\n"
        "import synrob.perturb.perturbers.copos, synrob.perturb.perturbers.jabberwocky.perturber\n"
        "import synrob.perturb.lexicon.wordnet as w\n"
        "bad = [m for m in ('torch', 'transformers', 'spacy', 'nltk', 'lemminflect', 'wordfreq') if m in sys.modules]\n"
        "assert not bad and w._READER is None and w._SYNONYMS is None, bad\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_build_nltk_wordnet(tmp_path: Path) -> None:
    from synrob.perturb.errors import ResourceError
    from synrob.perturb.lexicon.wordnet import build_nltk_wordnet, wordnet_source_dir

    root = build_nltk_wordnet(wordnet_source_dir(), tmp_path / "nltk_data")
    target = root / "corpora" / "wordnet"
    lines = (target / "lexnames").read_text().splitlines()
    assert len(lines) == 45 and lines[0] == "00\tadj.all\t3" and lines[44] == "44\tadj.ppl\t3"
    assert lines[3] == "03\tnoun.Tops\t1" and lines[43] == "43\tverb.weather\t2"
    data = target / "data.noun"
    assert not data.is_symlink() and data.stat().st_nlink == 1  # nltk refuses links
    assert data.stat().st_size == (wordnet_source_dir() / "data.noun").stat().st_size
    (tmp_path / "empty").mkdir()
    with pytest.raises(ResourceError, match="apt-get install wordnet-base wordnet-sense-index"):
        build_nltk_wordnet(tmp_path / "empty", tmp_path / "other")
