"""SentEval SOMO and CoordInv perturbers on real EWT data."""

from __future__ import annotations

import math
from collections import Counter
from pathlib import Path

import pytest
from synrob.perturb.base import sentence_rng
from synrob.perturb.corpus import Sentence, read_conllu, sentences_from_string
from synrob.perturb.errors import ParameterError
from synrob.perturb.perturbers.senteval import (
    BOS,
    EOS,
    BigramTable,
    CoordInv,
    Somo,
    find_coordinate_clauses,
)
from synrob.perturb.plugins import get_registry

EXAMPLE = """\
# sent_id = example-coordinv
# text = They might be only memories, but I can still feel each one.
1\tThey\tthey\tPRON\tPRP\tCase=Nom|Number=Plur|Person=3|PronType=Prs\t5\tnsubj\t_\t_
2\tmight\tmight\tAUX\tMD\tVerbForm=Fin\t5\taux\t_\t_
3\tbe\tbe\tAUX\tVB\tVerbForm=Inf\t5\tcop\t_\t_
4\tonly\tonly\tADV\tRB\t_\t5\tadvmod\t_\t_
5\tmemories\tmemory\tNOUN\tNNS\tNumber=Plur\t0\troot\t_\tSpaceAfter=No
6\t,\t,\tPUNCT\t,\t_\t11\tpunct\t_\t_
7\tbut\tbut\tCCONJ\tCC\t_\t11\tcc\t_\t_
8\tI\tI\tPRON\tPRP\tCase=Nom|Number=Sing|Person=1|PronType=Prs\t11\tnsubj\t_\t_
9\tcan\tcan\tAUX\tMD\tVerbForm=Fin\t11\taux\t_\t_
10\tstill\tstill\tADV\tRB\t_\t11\tadvmod\t_\t_
11\tfeel\tfeel\tVERB\tVB\tVerbForm=Inf\t5\tconj\t_\t_
12\teach\teach\tDET\tDT\t_\t13\tdet\t_\t_
13\tone\tone\tNUM\tCD\tNumType=Card\t11\tobj\t_\tSpaceAfter=No
14\t.\t.\tPUNCT\t.\t_\t5\tpunct\t_\t_

"""


@pytest.fixture(scope="module")
def dev(ewt_dev: Path) -> list[Sentence]:
    return list(read_conllu(ewt_dev))


@pytest.fixture(scope="module")
def dev_table(ewt_dev: Path) -> BigramTable:
    return BigramTable.from_conllu([ewt_dev])


def _edges_by_order(original: Sentence, new: Sentence, order: tuple[int, ...]) -> None:
    old_edges = {frozenset((i + 1, w.head)) for i, w in enumerate(original.words()) if w.head}
    new_edges = {frozenset((order[i], order[w.head - 1]))
                 for i, w in enumerate(new.words()) if w.head}
    assert new_edges == old_edges


# --------------------------------------------------------------------------- CoordInv

def test_coordinv_on_the_paper_example() -> None:
    (s,) = sentences_from_string(EXAMPLE)
    p = CoordInv().perturb(s, sentence_rng(0, 0))
    assert p.label == "I"
    assert p.text == "I can still feel each one, but they might be only memories."
    assert p.sentence is not None
    (reparsed,) = sentences_from_string(p.sentence.serialize())
    assert reparsed.text == p.text == reparsed.surface_text()
    assert [w.lemma for w in reparsed.words()][:2] == ["I", "can"]
    _edges_by_order(s, reparsed, p.extra["order"])
    assert reparsed.words()[reparsed.root()].form == "memories"


def test_coordinv_leaves_other_sentences_unchanged(dev: list[Sentence]) -> None:
    s = next(s for s in dev if s.text == "From the AP comes this story :")
    p = CoordInv().perturb(s, sentence_rng(0, 0))
    assert (p.label, p.note, p.changed, p.sentence) == ("O", "no two coordinate clauses", (), s)


@pytest.mark.slow
def test_coordinv_on_all_of_ewt_dev(dev: list[Sentence]) -> None:
    perturber = get_registry().get("perturber", "coordinv")()
    outs = perturber.perturb_batch([(s, sentence_rng(0, i)) for i, s in enumerate(dev)])
    inverted = 0
    for s, p in zip(dev, outs, strict=True):
        if p.label == "O":
            assert p.note == "no two coordinate clauses" and p.text == s.text
            assert find_coordinate_clauses(s) is None
            continue
        inverted += 1
        assert p.sentence is not None and p.text != s.text
        (reparsed,) = sentences_from_string(p.sentence.serialize())
        order = p.extra["order"]
        old = s.words()
        # same words (up to the case of the two words whose sentence position changed)
        assert [w.form.lower() for w in reparsed.words()] == [old[i - 1].form.lower()
                                                              for i in order]
        _edges_by_order(s, reparsed, order)
        assert p.changed == tuple(sorted(i for pos, i in enumerate(order, 1) if i != pos))
        assert reparsed.text == reparsed.surface_text()
        # the final punctuation stays final, the first letter stays upper case
        if old[-1].upos == "PUNCT":
            assert reparsed.words()[-1].form == old[-1].form
        first = next(w.form for w in reparsed.words() if w.upos != "PUNCT")
        if next(w.form for w in old if w.upos != "PUNCT")[:1].isupper():
            assert first[:1] == first[:1].upper()
        assert " ," not in p.text or " ," in s.text
    assert 50 <= inverted <= 400


# --------------------------------------------------------------------------- SOMO

def _bigram_counts(sentences: list[Sentence]) -> Counter[tuple[str, str]]:
    """Reference counts computed independently of the implementation."""
    counts: Counter[tuple[str, str]] = Counter()
    for s in sentences:
        toks = [BOS, *(f.lower() for f in s.forms), EOS]
        counts.update(zip(toks, toks[1:], strict=False))
    return counts


def _check_somo(original: Sentence, p, counts: Counter, tol: float,
                analyses: set[tuple[str, str, str, str, str]]) -> str:
    assert p.label == "I" and p.sentence is not None and len(p.changed) == 1
    (reparsed,) = sentences_from_string(p.sentence.serialize())
    old, new = original.words(), reparsed.words()
    (wid,) = p.changed
    diff = [i for i, (a, b) in enumerate(zip(old, new, strict=True)) if a != b]
    assert diff == [wid - 1]
    a, b = old[wid - 1], new[wid - 1]
    assert (a.upos, a.xpos, a.head, a.deprel) == (b.upos, b.xpos, b.head, b.deprel)
    assert a.upos in ("NOUN", "VERB")
    assert a.form.lower() != b.form.lower() and a.lemma.lower() != b.lemma.lower()
    # LEMMA and FEATS come from a reference occurrence of the replacement with this XPOS
    assert (b.form.lower(), b.lemma, b.upos, b.xpos, b.feats) in analyses
    toks = [BOS, *(w.form.lower() for w in old), EOS]
    new_toks = [BOS, *(w.form.lower() for w in new), EOS]
    for left, right in ((wid - 1, wid), (wid, wid + 1)):
        before = math.log1p(counts[(toks[left], toks[right])])
        after = math.log1p(counts[(new_toks[left], new_toks[right])])
        assert abs(before - after) <= tol + 1e-9
    assert reparsed.text == p.text == reparsed.surface_text()
    return b.form.lower()


@pytest.mark.parametrize("tolerance", [1.0, 0.0])
def test_somo_on_all_of_ewt_dev(dev: list[Sentence], ewt_dev: Path, tolerance: float) -> None:
    perturber = get_registry().get("perturber", "somo")(
        reference=str(ewt_dev), tolerance=str(tolerance)
    )
    counts = _bigram_counts(dev)
    analyses = {(w.form.lower(), w.lemma, w.upos, w.xpos, w.feats)
                for s in dev for w in s.words()}
    outs = perturber.perturb_batch([(s, sentence_rng(5, i)) for i, s in enumerate(dev)])
    modified = 0
    for s, p in zip(dev, outs, strict=True):
        if p.label == "O":
            assert p.sentence is s and p.changed == () and p.note
            continue
        modified += 1
        _check_somo(s, p, counts, tolerance, analyses)
    assert modified > (0.6 if tolerance else 0.2) * len(dev)


def test_somo_exclude_and_shared_table(dev: list[Sentence], dev_table: BigramTable) -> None:
    first = Somo.with_table(dev_table)
    used = {p.extra["replacement"].lower()
            for i, s in enumerate(dev[:400])
            if (p := first.perturb(s, sentence_rng(1, i))).label == "I"}
    assert len(used) > 50
    second = Somo(table=dev_table, exclude=used)
    for i, s in enumerate(dev[:400]):
        p = second.perturb(s, sentence_rng(1, i))
        if p.label == "I":
            assert p.extra["replacement"].lower() not in used


def test_somo_seeded_determinism(dev: list[Sentence], dev_table: BigramTable) -> None:
    somo = Somo(table=dev_table)
    a = [somo.perturb(s, sentence_rng(2, i)).text for i, s in enumerate(dev[:200])]
    b = [somo.perturb(s, sentence_rng(2, i)).text for i, s in enumerate(dev[:200])]
    c = [somo.perturb(s, sentence_rng(3, i)).text for i, s in enumerate(dev[:200])]
    assert a == b and a != c


def test_somo_table_counts(dev: list[Sentence], dev_table: BigramTable) -> None:
    counts = _bigram_counts(dev)
    assert dev_table.counts == dict(counts)
    assert dev_table.sentences == len(dev)
    assert BigramTable.from_sentences(dev).counts == dev_table.counts
    assert "area" in dev_table.vocab[("NOUN", "NN")]
    assert dev_table.analyses[("area", "NOUN", "NN")] == ("area", "Number=Sing")


def test_somo_needs_a_reference(dev: list[Sentence]) -> None:
    with pytest.raises(ParameterError, match="reference"):
        Somo().perturb(dev[0], sentence_rng(0, 0))
    with pytest.raises(ParameterError, match="tolerance"):
        Somo(tolerance=-1)
