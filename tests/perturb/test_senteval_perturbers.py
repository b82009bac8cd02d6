"""SentEval generators (CoordInv, BShift, SOMO) on real EWT data and constructed cases."""

from __future__ import annotations

import json
import math
import random
from collections import Counter
from pathlib import Path

import pytest
from synrob.perturb.base import sentence_rng
from synrob.perturb.corpus import Sentence, read_conllu, sentences_from_string
from synrob.perturb.errors import ParameterError
from synrob.perturb.perturbers.order import BShift
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

# Brackets and quotes, counted independently of the implementation: openers/closers nest, a
# straight quote closes the innermost open item when that is the same quote, else opens one.
_PAIRS = {")": "(", "]": "[", "}": "{", "”": "“", "’": "‘", "»": "«"}


def _balanced(words: list) -> bool:
    stack: list[str] = []
    for w in words:
        if w.upos != "PUNCT":
            continue
        for ch in w.form:
            if ch in "\"'":
                if stack[-1:] == [ch]:
                    stack.pop()
                else:
                    stack.append(ch)
            elif ch in _PAIRS.values():
                stack.append(ch)
            elif ch in _PAIRS:
                if stack[-1:] != [_PAIRS[ch]]:
                    return False
                stack.pop()
    return not stack


def _has_brackets(words: list) -> bool:
    return any(w.upos == "PUNCT" and any(ch in "()[]{}\"'“”‘’«»" for ch in w.form)
               for w in words)


def _subtree(heads: list[int], top: int) -> set[int]:
    """0-based positions of the subtree of 0-based ``top``."""
    out = {top}
    grew = True
    while grew:
        grew = False
        for i, h in enumerate(heads):
            if h - 1 in out and i not in out:
                out.add(i)
                grew = True
    return out


def _check_whole_conjuncts(s: Sentence, p) -> None:
    """The output is ``prefix B separator A final`` with B the conjunct's whole subtree (minus
    its opening cc/punctuation) and A every other word of the root clause, each in order."""
    old = s.words()
    heads = [w.head for w in old]
    r = heads.index(0)
    (c,) = [i for i, w in enumerate(old) if w.head == r + 1 and w.deprel == "conj"]
    b_sub = _subtree(heads, c)
    order = [i - 1 for i in p.extra["order"]]  # 0-based old positions, in output order
    # B: one contiguous run of the output, in source order, ending with the conjunct's last word
    b_pos = [k for k, i in enumerate(order) if i in b_sub]
    sep_and_b = [order[k] for k in b_pos]
    sep = sorted(b_sub)[: len(b_sub) - len([i for i in sep_and_b if i >= sep_and_b[0]])]
    assert sep_and_b == sorted(b_sub)[len(sep):] + sep
    separator = [old[i] for i in sep]
    assert any(w.deprel == "cc" and w.head == c + 1 for w in separator)
    assert all(w.deprel == "cc" or (w.deprel == "punct" and not _has_brackets([w]))
               for w in separator)
    # the words between B and A are exactly the separator, and A is the rest, in order
    start_b = b_pos[0]
    end_sep = b_pos[-1] + 1
    prefix, rest = order[:start_b], order[end_sep:]
    assert prefix == list(range(len(prefix)))
    final = [i for i in rest if i > max(b_sub)]
    first = [i for i in rest if i < min(b_sub)]
    assert rest == first + final
    assert first == list(range(len(prefix), min(b_sub)))
    assert final == list(range(max(b_sub) + 1, len(old)))
    assert all(old[i].deprel == "punct" for i in final)
    assert r in first


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
    _check_whole_conjuncts(s, p)


def test_coordinv_leaves_other_sentences_unchanged(dev: list[Sentence]) -> None:
    s = next(s for s in dev if s.text == "From the AP comes this story :")
    p = CoordInv().perturb(s, sentence_rng(0, 0))
    assert (p.label, p.note, p.changed, p.sentence) == ("O", "no two coordinate clauses", (), s)


# ---- constructed sentences: rows are (form, upos, head, deprel, space_after)

def _sentence(rows: list[tuple[str, str, int, str, bool]]) -> Sentence:
    text = "".join(f + (" " if sp else "") for f, _, _, _, sp in rows).rstrip()
    lines = ["# sent_id = constructed", f"# text = {text}"]
    for i, (form, upos, head, deprel, sp) in enumerate(rows, 1):
        misc = "_" if sp else "SpaceAfter=No"
        lines.append(f"{i}\t{form}\t{form.lower()}\t{upos}\t_\t_\t{head}\t{deprel}\t_\t{misc}")
    (s,) = sentences_from_string("\n".join(lines) + "\n\n")
    return s


P, Y, N = "PUNCT", True, False
#: He left, but she stayed. -- with brackets or quotes inside either conjunct
CONSTRUCTED = {
    "parentheses in A": (
        [("He", "PRON", 2, "nsubj", Y), ("left", "VERB", 0, "root", Y), ("(", P, 4, "punct", N),
         ("quickly", "ADV", 2, "advmod", N), (")", P, 4, "punct", N), (",", P, 9, "punct", Y),
         ("but", "CCONJ", 9, "cc", Y), ("she", "PRON", 9, "nsubj", Y),
         ("stayed", "VERB", 2, "conj", N), (".", P, 2, "punct", N)],
        "She stayed, but he left (quickly)."),
    "square brackets in B": (
        [("He", "PRON", 2, "nsubj", Y), ("left", "VERB", 0, "root", N), (",", P, 6, "punct", Y),
         ("but", "CCONJ", 6, "cc", Y), ("she", "PRON", 6, "nsubj", Y),
         ("stayed", "VERB", 2, "conj", Y), ("[", P, 10, "punct", N), ("for", "ADP", 10, "case", Y),
         ("a", "DET", 10, "det", Y), ("while", "NOUN", 6, "obl", N), ("]", P, 10, "punct", N),
         (".", P, 2, "punct", N)],
        "She stayed [for a while], but he left."),
    "quotes closing A before the comma": (
        [("He", "PRON", 2, "nsubj", Y), ("said", "VERB", 0, "root", Y), ('"', P, 4, "punct", N),
         ("no", "INTJ", 2, "ccomp", N), ('"', P, 4, "punct", N), (",", P, 9, "punct", Y),
         ("and", "CCONJ", 9, "cc", Y), ("she", "PRON", 9, "nsubj", Y),
         ("laughed", "VERB", 2, "conj", N), (".", P, 2, "punct", N)],
        'She laughed, and he said "no".'),
    "quotes inside B": (
        [("He", "PRON", 2, "nsubj", Y), ("left", "VERB", 0, "root", N), (",", P, 6, "punct", Y),
         ("and", "CCONJ", 6, "cc", Y), ("she", "PRON", 6, "nsubj", Y),
         ("said", "VERB", 2, "conj", Y), ("“", P, 8, "punct", N), ("bye", "INTJ", 6, "ccomp", N),
         ("”", P, 8, "punct", N), (".", P, 2, "punct", N)],
        "She said “bye”, and he left."),
    "quotes around the whole sentence": (
        [('"', P, 3, "punct", N), ("He", "PRON", 3, "nsubj", Y), ("left", "VERB", 0, "root", N),
         (",", P, 7, "punct", Y), ("but", "CCONJ", 7, "cc", Y), ("she", "PRON", 7, "nsubj", Y),
         ("stayed", "VERB", 3, "conj", N), (".", P, 3, "punct", N), ('"', P, 3, "punct", N)],
        '"She stayed, but he left."'),
    "quotes around A only": (
        [('"', P, 3, "punct", N), ("He", "PRON", 3, "nsubj", Y), ("left", "VERB", 0, "root", N),
         ('"', P, 3, "punct", Y), ("and", "CCONJ", 7, "cc", Y), ("she", "PRON", 7, "nsubj", Y),
         ("stayed", "VERB", 3, "conj", N), (".", P, 3, "punct", N)],
        'She stayed and "he left".'),
    "parentheses around B, with its own final mark": (
        [("He", "PRON", 2, "nsubj", Y), ("left", "VERB", 0, "root", Y), ("(", P, 6, "punct", N),
         ("and", "CCONJ", 6, "cc", Y), ("she", "PRON", 6, "nsubj", Y),
         ("stayed", "VERB", 2, "conj", N), (".", P, 6, "punct", N), (")", P, 6, "punct", N)],
        None),  # the opening bracket is B's own: never part of the separator -> no cc -> O
    "an unclosed opening quote stays in front": (
        [('"', P, 3, "punct", N), ("He", "PRON", 3, "nsubj", Y), ("left", "VERB", 0, "root", N),
         (",", P, 7, "punct", Y), ("but", "CCONJ", 7, "cc", Y), ("she", "PRON", 7, "nsubj", Y),
         ("stayed", "VERB", 3, "conj", N), (".", P, 3, "punct", N)],
        '"She stayed, but he left.'),
    "But and Well stay in front": (
        [("But", "CCONJ", 5, "cc", Y), ("well", "INTJ", 5, "discourse", N),
         (",", P, 2, "punct", Y), ("he", "PRON", 5, "nsubj", Y), ("left", "VERB", 0, "root", Y),
         ("and", "CCONJ", 8, "cc", Y), ("Ann", "PROPN", 8, "nsubj", Y),
         ("stayed", "VERB", 5, "conj", N), ("!", P, 5, "punct", N)],
        "But well, Ann stayed and he left!"),
}


@pytest.mark.parametrize("case", sorted(CONSTRUCTED))
def test_coordinv_moves_whole_conjuncts_with_their_brackets(case: str) -> None:
    rows, expected = CONSTRUCTED[case]
    s = _sentence(rows)
    p = CoordInv().perturb(s, sentence_rng(0, 0))
    if expected is None:
        assert (p.label, p.text, p.sentence) == ("O", s.text, s)
        return
    assert (p.label, p.text) == ("I", expected)
    assert _balanced(s.words()) == _balanced(p.sentence.words())
    (reparsed,) = sentences_from_string(p.sentence.serialize())
    assert reparsed.text == reparsed.surface_text() == expected
    _edges_by_order(s, reparsed, p.extra["order"])
    _check_whole_conjuncts(s, p)


@pytest.mark.parametrize(("rows", "note"), [
    # He left (and she stayed). -- "(" on the root, ")" in B: the brackets span the conjuncts
    ([("He", "PRON", 2, "nsubj", Y), ("left", "VERB", 0, "root", Y), ("(", P, 2, "punct", N),
      ("and", "CCONJ", 6, "cc", Y), ("she", "PRON", 6, "nsubj", Y),
      ("stayed", "VERB", 2, "conj", N), (")", P, 6, "punct", N), (".", P, 2, "punct", N)],
     "brackets or quotes span the two conjuncts"),
    # He left -- and she stayed. -- the dash belongs to A and would dangle before the "."
    ([("He", "PRON", 2, "nsubj", Y), ("left", "VERB", 0, "root", Y), ("--", P, 2, "punct", Y),
      ("and", "CCONJ", 6, "cc", Y), ("she", "PRON", 6, "nsubj", Y),
      ("stayed", "VERB", 2, "conj", N), (".", P, 2, "punct", N)],
     "the first conjunct ends in punctuation"),
])
def test_coordinv_refuses_what_cannot_move_whole(rows, note: str) -> None:
    s = _sentence(rows)
    p = CoordInv().perturb(s, sentence_rng(0, 0))
    assert (p.label, p.note, p.text, p.changed) == ("O", note, s.text, ())
    assert find_coordinate_clauses(s) is None


_OPEN_CLOSE = [("(", ")"), ("[", "]"), ('"', '"'), ("“", "”"), ("'", "'")]


def _random_clause(rng: random.Random, subj: str, verb: str, top: int, depth: int = 0
                   ) -> list[tuple[str, str, int, str, bool]]:
    """``subj verb`` plus random nested bracketed/quoted words after the verb; heads are
    offsets from the clause start (``top`` is the clause's own head, 0-based global id)."""
    rows: list[tuple[str, str, int, str, bool]] = [(subj, "PRON", 2, "nsubj", Y),
                                                   (verb, "VERB", top, "x", Y)]

    def inner(head: int, level: int) -> None:
        for _ in range(rng.randrange(0, 3 if level < 2 else 1)):
            o, c = rng.choice(_OPEN_CLOSE)
            rows[-1] = (*rows[-1][:4], Y)
            at = len(rows)
            rows.append((o, P, at + 2, "punct", N))
            rows.append((rng.choice(["red", "blue", "Tom", "now"]), "NOUN", head, "obl", Y))
            inner(at + 2, level + 1)
            rows[-1] = (*rows[-1][:4], N)
            rows.append((c, P, at + 2, "punct", Y))

    inner(2, depth)
    return rows


def _random_coordination(rng: random.Random) -> tuple[Sentence, str, str]:
    """A random ``A , but B .`` with brackets/quotes inside either conjunct; returns the
    sentence and the texts of its conjuncts (computed here, from the rows)."""
    a = _random_clause(rng, "He", "left", 0)
    b = _random_clause(rng, "she", "stayed", 0)
    n_a = len(a)
    rows: list[tuple[str, str, int, str, bool]] = []
    for form, upos, head, deprel, sp in a:
        rows.append((form, upos, 0 if deprel == "x" else head, "root" if deprel == "x" else deprel,
                     sp))
    rows[-1] = (*rows[-1][:4], N)
    off = n_a + 2  # B's words come after ", but"
    rows += [(",", P, off + 2, "punct", Y), ("but", "CCONJ", off + 2, "cc", Y)]
    for form, upos, head, deprel, sp in b:
        rows.append((form, upos, 2 if deprel == "x" else head + off,
                     "conj" if deprel == "x" else deprel, sp))
    rows[-1] = (*rows[-1][:4], N)
    rows.append((".", P, 2, "punct", N))

    def text(part: list) -> str:
        return "".join(f + (" " if sp else "") for f, *_, sp in part).strip()

    a_text = text([(*x[:4], x[4]) for x in a[:-1]] + [(*a[-1][:4], N)])
    b_text = text([(*x[:4], x[4]) for x in b[:-1]] + [(*b[-1][:4], N)])
    return _sentence(rows), a_text, b_text


def test_coordinv_random_brackets_in_either_conjunct() -> None:
    """Property over 500 seeded random sentences: the output is ``B, but a.`` exactly, the
    brackets stay balanced, and the tree travels with its words."""
    rng = random.Random(20181)
    with_brackets = 0
    for i in range(500):
        s, a_text, b_text = _random_coordination(rng)
        assert _balanced(s.words())
        p = CoordInv().perturb(s, sentence_rng(0, i))
        assert p.label == "I", s.text
        assert p.text == f"{b_text[0].upper()}{b_text[1:]}, but {a_text[0].lower()}{a_text[1:]}."
        assert _balanced(p.sentence.words()), p.text
        (reparsed,) = sentences_from_string(p.sentence.serialize())
        _edges_by_order(s, reparsed, p.extra["order"])
        _check_whole_conjuncts(s, p)
        with_brackets += _has_brackets(s.words())
    assert with_brackets > 300


@pytest.fixture(scope="module")
def ewt_all(ewt_train: Path, ewt_dev: Path, ewt_test: Path) -> list[Sentence]:
    return [s for path in (ewt_train, ewt_dev, ewt_test) for s in read_conllu(path)]


@pytest.mark.slow
def test_coordinv_on_all_of_ewt(ewt_all: list[Sentence]) -> None:
    """Every sentence of EWT train+dev+test: emitted ones move whole conjuncts and keep
    balanced brackets/quotes balanced; the others are unchanged with a reason."""
    perturber = get_registry().get("perturber", "coordinv")()
    outs = perturber.perturb_batch([(s, sentence_rng(0, i)) for i, s in enumerate(ewt_all)])
    notes: Counter[str] = Counter()
    inverted = balanced = with_brackets = 0
    for s, p in zip(ewt_all, outs, strict=True):
        if p.label == "O":
            assert p.text == s.text and p.changed == () and p.sentence is s
            assert find_coordinate_clauses(s) is None
            notes[p.note] += 1
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
        _check_whole_conjuncts(s, p)
        if _balanced(old):
            balanced += 1
            assert _balanced(reparsed.words()), (s.text, p.text)
        with_brackets += _has_brackets(old)
        first = next(w.form for w in reparsed.words() if w.upos != "PUNCT")
        if next(w.form for w in old if w.upos != "PUNCT")[:1].isupper():
            assert first[:1] == first[:1].upper()
        assert " ," not in p.text or " ," in s.text
    assert set(notes) <= {"no two coordinate clauses", "brackets or quotes span the two conjuncts",
                          "the first conjunct ends in punctuation"}
    # measured: 1,132 of 16,622 inverted, 120 of them with brackets or quotes, 1,117 balanced
    assert 1000 <= inverted <= 1300
    assert with_brackets >= 80 and balanced >= inverted - 30


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


# --------------------------------------------------------------------------- BShift

def test_bshift_never_swaps_punctuation_by_default(dev: list[Sentence]) -> None:
    default = get_registry().get("perturber", "bshift")()
    with_punct = get_registry().get("perturber", "bshift")(punct="true")
    swapped_punct = 0
    for i, s in enumerate(dev):
        words = s.words()
        pairs = [k for k in range(1, len(words))
                 if words[k - 1].upos != "PUNCT" and words[k].upos != "PUNCT"]
        p = default.perturb(s, sentence_rng(4, i))
        if not pairs:
            assert (p.label, p.changed, p.text) == ("O", (), s.text) and p.note
            continue
        assert p.label == "I"
        a, b = p.changed
        assert b == a + 1 and a in pairs
        assert p.sentence is not None
        assert p.sentence.forms == [*s.forms[:a - 1], s.forms[b - 1], s.forms[a - 1], *s.forms[b:]]
        q = with_punct.perturb(s, sentence_rng(4, i))
        swapped_punct += any(words[k - 1].upos == "PUNCT" for k in q.changed)
    # punct=true restores the old behaviour: pairs with punctuation are drawn too
    assert swapped_punct > 0.1 * len(dev)


def test_bshift_draws_uniformly_among_the_eligible_pairs() -> None:
    # Yes , he did it . -- eligible pairs: (3, 4) and (4, 5) only
    s = _sentence([("Yes", "INTJ", 4, "discourse", N), (",", P, 1, "punct", Y),
                   ("he", "PRON", 4, "nsubj", Y), ("did", "VERB", 0, "root", Y),
                   ("it", "PRON", 4, "obj", N), (".", P, 4, "punct", N)])
    drawn = Counter(BShift().perturb(s, sentence_rng(0, i)).changed for i in range(2000))
    assert set(drawn) == {(3, 4), (4, 5)}
    assert abs(drawn[(3, 4)] - 1000) < 120
    everything = Counter(BShift(punct=True).perturb(s, sentence_rng(0, i)).changed
                         for i in range(2000))
    assert set(everything) == {(1, 2), (2, 3), (3, 4), (4, 5), (5, 6)}


def test_bshift_without_an_eligible_pair_is_left_unchanged() -> None:
    s = _sentence([("Thanks", "NOUN", 0, "root", N), ("!", P, 1, "punct", N)])
    p = BShift().perturb(s, sentence_rng(0, 0))
    assert (p.label, p.note, p.changed, p.sentence) == (
        "O", "no two adjacent words without punctuation", (), s)
    assert BShift(punct=True).perturb(s, sentence_rng(0, 0)).sentence.forms == ["!", "Thanks"]


def test_bshift_never_labels_an_unchanged_text_inverted() -> None:
    """A drawn pair of identical forms ("very very") would leave the text as it was: label O
    with a note, the sentence untouched; the draw is the same, so other pairs still swap."""
    s = _sentence([("very", "ADV", 2, "advmod", Y), ("very", "ADV", 3, "advmod", Y),
                   ("good", "ADJ", 0, "root", N)])
    outs = [BShift().perturb(s, sentence_rng(0, i)) for i in range(200)]
    same = [p for p in outs if p.changed == ()]
    assert same and all(p.label == "O" and p.sentence is s and "identical" in p.note
                        for p in same)
    swapped = [p for p in outs if p.changed]
    assert swapped and all(p.label == "I" and p.changed == (2, 3)
                           and p.sentence.text != s.text for p in swapped)


def test_bshift_punct_is_a_typed_documented_parameter(cli, sample_dev: Path) -> None:
    with pytest.raises(ParameterError, match="punct"):
        BShift(punct="maybe")
    described = cli(["perturb", "--describe", "bshift"])
    assert described.exit_code == 0 and "punct" in described.stdout
    assert "bool" in described.stdout and "False" in described.stdout
    bad = cli(["perturb", "--kind", "bshift", "-p", "punct=maybe", str(sample_dev)])
    assert bad.exit_code == 1 and "punct" in bad.stderr
    out = {}
    for flag in ("false", "true"):
        res = cli(["perturb", "--kind", "bshift", "-p", f"punct={flag}", "--format", "jsonl",
                   str(sample_dev)])
        assert res.exit_code == 0, res.stderr
        out[flag] = [json.loads(line) for line in res.stdout.splitlines()]
        assert all(r["params"] == {"punct": flag == "true"} for r in out[flag])
    sents = list(read_conllu(sample_dev))
    moved = {flag: sum(any(sents[k].words()[i - 1].upos == "PUNCT" for i in r["changed"])
                       for k, r in enumerate(recs)) for flag, recs in out.items()}
    assert moved["false"] == 0 < moved["true"]
