"""The agreement perturber's filters against grammatical twins (issue 54): coordinated and
quantity subjects, notional agreement, the object reading under pro-drop, English was/were in
conditional clauses and informal inversion, the twin's paradigm, animacy and spelling,
lemminflect's forms, the advice line and the refused-candidates file. Hand-made sentences pin
each rule; test_agreement.py checks the pair invariants on real treebanks."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Sequence
from pathlib import Path

import pytest
from synrob.perturb.agreement.collectives import COLLECTIVE_NOUNS, NOT_NOTIONAL
from synrob.perturb.agreement.inflect import english_form, penn_tag
from synrob.perturb.agreement.paradigm import animacy_of, own_paradigm
from synrob.perturb.agreement.spelling import keep_marks
from synrob.perturb.base import sentence_rng
from synrob.perturb.corpus import read_conllu, sentences_from_string
from synrob.perturb.io.refusals import REFUSED_COLUMNS
from synrob.perturb.perturbers import agreement as A
from synrob.perturb.perturbers.agreement import Agreement, note

S3 = "Mood=Ind|Number=Sing|Person=3|Tense=Pres|VerbForm=Fin"
P3 = "Mood=Ind|Number=Plur|Person=3|Tense=Pres|VerbForm=Fin"
S3D = "Mood=Ind|Number=Sing|Person=3|Tense=Past|VerbForm=Fin"
P3D = "Mood=Ind|Number=Plur|Person=3|Tense=Past|VerbForm=Fin"
SG, PL = "Number=Sing", "Number=Plur"


def block(sid: str, rows: Sequence[tuple], text: str | None = None) -> str:
    """A sentence of rows ``(id, form, lemma, upos, feats, head, deprel)`` (``("1-2", form)``
    for a multiword token); ``text``: the forms joined by spaces by default."""
    covered = {i for r in rows if "-" in str(r[0])
               for i in range(int(str(r[0]).split("-")[0]), int(str(r[0]).split("-")[1]) + 1)}
    words = [r[1] for r in rows if "-" in str(r[0]) or r[0] not in covered]
    lines = [f"# sent_id = {sid}", f"# text = {text or ' '.join(words)}"]
    for r in rows:
        if "-" in str(r[0]):
            lines.append(f"{r[0]}\t{r[1]}\t_\t_\t_\t_\t_\t_\t_\t_")
        else:
            lines.append("\t".join(map(str, (r[0], r[1], r[2], r[3], "_", r[4], r[5], r[6],
                                             "_", "_"))))
    return "\n".join(lines) + "\n\n"


def be(sid: str, subject: tuple[str, str, str, str], verb: tuple[str, str],
       pre: Sequence[tuple[str, str, str, str]] = ()) -> str:
    """``[PRE...] SUBJ VERB happy .``: subject (form, lemma, upos, feats) and *be* (form,
    feats) as the copula of *happy*; ``pre``: words before the subject, attached to it."""
    n = len(pre)
    rows = [(i + 1, f, lemma, upos, feats, n + 1, rel) for i, (f, lemma, upos, feats, rel)
            in enumerate((*p, "det") if len(p) == 4 else p for p in pre)]
    rows += [(n + 1, *subject, n + 3, "nsubj"), (n + 2, verb[0], "be", "AUX", verb[1], n + 3,
                                                 "cop"),
             (n + 3, "happy", "happy", "ADJ", "Degree=Pos", 0, "root")]
    return block(sid, rows)


def lexicon(tmp_path: Path, *more: str) -> Path:
    """*is*/*are*/*was*/*were*, *runs*/*run* with ordinary subjects, and ``more``."""
    rows = [be("l1", ("dog", "dog", "NOUN", SG), ("is", S3)),
            be("l2", ("dogs", "dog", "NOUN", PL), ("are", P3)),
            be("l3", ("dog", "dog", "NOUN", SG), ("was", S3D)),
            be("l4", ("dogs", "dog", "NOUN", PL), ("were", P3D))]
    path = tmp_path / "lexicon.conllu"
    path.write_text("".join(rows) + "".join(more), encoding="utf-8")
    return path


def outputs(text: str, lex: Path, **params) -> list:
    (sentence,) = sentences_from_string(text)
    return Agreement(reference=str(lex), **params).perturb_all(sentence, sentence_rng(0, 0))


def why(text: str, lex: Path, **params) -> str:
    outs = outputs(text, lex, **params)
    assert len(outs) == 1 and not outs[0].changed, outs
    return outs[0].note


def pair(text: str, lex: Path, **params) -> tuple[str, dict]:
    outs = outputs(text, lex, **params)
    assert len(outs) == 1 and outs[0].changed, outs[0].note
    return outs[0].text, outs[0].comments["synrob.agreement"]


# ---------------------------------------------------------------------- English
def test_collective_and_organisation_subjects_are_refused_or_marked(tmp_path: Path) -> None:
    lex = lexicon(tmp_path)
    government = be("t", ("government", "government", "NOUN", SG), ("is", S3), [("The", "the",
                                                                              "DET", "_")])
    assert why(government, lex) == note(A._NOTIONAL)
    text, comment = pair(government, lex, notional="keep")
    assert text == "The government are happy" and comment["notional"] == "yes"
    # a name built on an organisation noun: the Museum of Flight
    museum = block("m", [(1, "The", "the", "DET", "_", 2, "det"),
                         (2, "Museum", "Museum", "PROPN", SG, 6, "nsubj"),
                         (3, "of", "of", "ADP", "_", 4, "case"),
                         (4, "Flight", "Flight", "PROPN", SG, 2, "nmod"),
                         (5, "was", "be", "AUX", S3D, 6, "cop"),
                         (6, "happy", "happy", "ADJ", "Degree=Pos", 0, "root")])
    assert why(museum, lex) == note(A._NOTIONAL)
    # an ordinary subject, a plural collective and a plural-only noun keep their pairs
    assert pair(be("t", ("dog", "dog", "NOUN", SG), ("is", S3)), lex)[0] == "dog are happy"
    teams = be("t", ("teams", "team", "NOUN", PL), ("are", P3))
    assert pair(teams, lex)[0] == "teams is happy"
    assert pair(be("t", ("people", "people", "NOUN", PL), ("are", P3)), lex)[1]
    assert "government" in COLLECTIVE_NOUNS and "people" in NOT_NOTIONAL


def test_the_notional_sources_are_recorded_in_the_params(tmp_path: Path) -> None:
    lex = lexicon(tmp_path)
    recorded = Agreement(reference=str(lex)).recorded_options
    assert recorded["notional"] == "refuse"
    assert {"list", "names", "treebank"} <= set(recorded["notional_sources"])
    czech = Agreement(reference=str(lex), lang="cs").recorded_options
    assert "notional" not in czech and "notional_sources" not in czech
    assert "lemminflect" not in czech


def test_was_and_were_in_a_conditional_clause_are_refused_without_mood(tmp_path: Path) -> None:
    lex = lexicon(tmp_path)
    pron = "Case=Nom|Number=Sing|Person=3|PronType=Prs"
    for mark in ("if", "unless"):
        text = block("t", [(1, mark, mark, "SCONJ", "_", 4, "mark"),
                           (2, "it", "it", "PRON", pron, 4, "nsubj"),
                           (3, "was", "be", "AUX", S3D, 4, "cop"),
                           (4, "happy", "happy", "ADJ", "Degree=Pos", 0, "root")])
        assert why(text, lex) == note(A._SUBJUNCTIVE)
    wish = block("t", [(1, "I", "I", "PRON", "Case=Nom|Number=Sing|Person=1|PronType=Prs", 2,
                        "nsubj"),
                       (2, "wish", "wish", "VERB", "Mood=Ind|Number=Sing|Person=1|Tense=Pres|"
                        "VerbForm=Fin", 0, "root"),
                       (3, "it", "it", "PRON", pron, 5, "nsubj"),
                       (4, "was", "be", "AUX", S3D, 5, "cop"),
                       (5, "happy", "happy", "ADJ", "Degree=Pos", 2, "ccomp")])
    assert why(wish, lex).startswith("subjunctive") or why(wish, lex) == note(A._NO_FORM)
    # outside such a clause was -> were is a pair
    assert pair(be("t", ("dog", "dog", "NOUN", SG), ("was", S3D)), lex)[0] == "dog were happy"


def test_informal_inversion_is_refused_one_way(tmp_path: Path) -> None:
    lex = lexicon(tmp_path)
    rows = [(1, "What", "what", "PRON", "PronType=Int", 0, "root"),
            (2, "are", "be", "AUX", P3, 1, "cop"),
            (3, "the", "the", "DET", "_", 4, "det"),
            (4, "thoughts", "thought", "NOUN", PL, 1, "nsubj")]
    assert why(block("t", rows), lex) == note(A._INVERSION)
    rows[1], rows[3] = (2, "is", "be", "AUX", S3, 1, "cop"), (4, "dog", "dog", "NOUN", SG, 1,
                                                               "nsubj")
    assert pair(block("t", rows), lex)[0] == "What are the dog"


def test_an_english_coordination_is_refused_only_after_the_verb(tmp_path: Path) -> None:
    lex = lexicon(tmp_path)
    there = block("t", [(1, "Where", "where", "ADV", "PronType=Int", 2, "advmod"),
                        (2, "are", "be", "AUX", P3, 0, "root"),
                        (3, "dogs", "dog", "NOUN", PL, 2, "nsubj"),
                        (4, "and", "and", "CCONJ", "_", 5, "cc"),
                        (5, "cats", "cat", "NOUN", PL, 3, "conj")])
    assert why(there, lex, direction="to_sing") == note(A._COORDINATION)
    after = block("t", [(1, "dogs", "dog", "NOUN", PL, 5, "nsubj"),
                        (2, "and", "and", "CCONJ", "_", 3, "cc"),
                        (3, "cats", "cat", "NOUN", PL, 1, "conj"),
                        (4, "are", "be", "AUX", P3, 5, "cop"),
                        (5, "happy", "happy", "ADJ", "Degree=Pos", 0, "root")])
    assert pair(after, lex)[0] == "dogs and cats is happy"
    # a singular verb treats the coordination as one (its plural twin is standard); "or"
    # lets the verb agree with the nearest conjunct
    one = after.replace("dogs\tdog\tNOUN\t_\tNumber=Plur", "dog\tdog\tNOUN\t_\tNumber=Sing")
    one = one.replace("are\tbe\tAUX\t_\t" + P3, "is\tbe\tAUX\t_\t" + S3)
    assert "\tis\t" in one and why(one, lex) == note(A._COORDINATION)
    either = after.replace("and\tand", "or\tor")
    assert why(either, lex) == note(A._COORDINATION)


def test_quantity_subjects_are_refused(tmp_path: Path) -> None:
    lex = lexicon(tmp_path)
    majority = block("t", [(1, "The", "the", "DET", "_", 2, "det"),
                           (2, "majority", "majority", "NOUN", SG, 6, "nsubj"),
                           (3, "of", "of", "ADP", "_", 4, "case"),
                           (4, "dogs", "dog", "NOUN", PL, 2, "nmod"),
                           (5, "is", "be", "AUX", S3, 6, "cop"),
                           (6, "happy", "happy", "ADJ", "Degree=Pos", 0, "root")])
    assert why(majority, lex) == note(A._QUANTITY)
    number = be("t", ("number", "number", "NOUN", SG), ("is", S3), [("The", "the", "DET", "_")])
    assert pair(number, lex)[0] == "The number are happy"  # no of-phrase: no quantity


def test_the_twin_keeps_the_original_apostrophe(tmp_path: Path) -> None:
    assert keep_marks("’re", "'s") == "’s" and keep_marks("is", "are") == "are"
    they = "Case=Nom|Number=Plur|Person=3|PronType=Prs"
    # the lexicon spells the singular clitic after "They" with a straight apostrophe
    lex = lexicon(tmp_path, block("l5", [("1-2", "They's"), (1, "They", "they", "PRON", they, 3,
                                                              "nsubj"),
                                         (2, "'s", "be", "AUX", S3, 3, "cop"),
                                         (3, "big", "big", "ADJ", "Degree=Pos", 0, "root")],
                                  "They's big"))
    curly = block("t", [("1-2", "They’re"), (1, "They", "they", "PRON", they, 3, "nsubj"),
                        (2, "’re", "be", "AUX", P3, 3, "cop"),
                        (3, "big", "big", "ADJ", "Degree=Pos", 0, "root")], "They’re big")
    text, comment = pair(curly, lex)
    assert text == "They’s big" and comment["form_to"] == "’s"


def test_lemminflect_makes_an_unattested_english_form(tmp_path: Path) -> None:
    assert penn_tag({"VerbForm": "Fin", "Tense": "Pres", "Number": "Sing"}) == "VBZ"
    assert english_form("reconcile", {"VerbForm": "Fin", "Tense": "Pres",
                                      "Number": "Plur"}) == "reconcile"
    assert english_form("be", {"VerbForm": "Fin", "Tense": "Past", "Number": "Plur"}) == "were"
    lex = lexicon(tmp_path)
    text = block("t", [(1, "dog", "dog", "NOUN", SG, 2, "nsubj"),
                       (2, "reconciles", "reconcile", "VERB", S3, 0, "root")])
    got, comment = pair(text, lex)
    assert got == "dog reconcile" and comment["via"] == "lemminflect"
    assert why(text, lex, lemminflect="false", rules="false") == note(A._NO_FORM)
    # a present plural spelled like the past has a grammatical past reading: it let them
    lets = block("t", [(1, "it", "it", "PRON", "Number=Sing|Person=3", 2, "nsubj"),
                       (2, "lets", "let", "VERB", S3, 0, "root")])
    assert why(lets, lex) == note(A._READING)


def test_advice_names_the_lexicon_when_forms_are_missing(tmp_path: Path) -> None:
    agreement = Agreement(reference=str(lexicon(tmp_path)))
    missing = {note(A._NO_FORM): 30}
    assert "-p lexicon=ud:<a treebank of the language>:train" in agreement.advice(missing, 0)
    assert "ud:en_ewt:train" in agreement.advice(missing, 40)
    assert agreement.advice(missing, 100) is None and agreement.advice({}, 0) is None


# ---------------------------------------------------------------------- Czech
PART = "Polarity=Pos|Tense=Past|VerbForm=Part|Voice=Act"
MASC_SG = f"Gender=Masc|Number=Sing|{PART}"
ANIM_PL = f"Animacy=Anim|Gender=Masc|Number=Plur|{PART}"
INAN_PL = f"Animacy=Inan|Gender=Fem,Masc|Number=Plur|{PART}"
ANIM = "Animacy=Anim|Case=Nom|Gender=Masc|Number=Sing"


def cs(sid: str, subj: tuple[str, str, str, str], verb: tuple[str, str, str],
       more: Sequence[tuple] = ()) -> str:
    """``SUBJ VERB [more]``: subj (form, lemma, upos, feats), verb (form, lemma, feats)."""
    return block(sid, [(1, *subj, 2, "nsubj"), (2, *verb[:2], "VERB", verb[2], 0, "root"),
                       *more])


def czech_lexicon(tmp_path: Path) -> Path:
    """*začal*/*začali*/*začaly* (the inanimate plural the most frequent), *dal*/*dali* and
    *psal*/*psali* (the rule ~l -> ~li), *stal*/*stál* and their plurals."""
    men = ("muži", "muž", "NOUN", "Animacy=Anim|Case=Nom|Gender=Masc|Number=Plur")
    man = ("muž", "muž", "NOUN", ANIM)
    rows = [cs("z1", man, ("začal", "začít", MASC_SG)), cs("z2", men, ("začali", "začít",
                                                                       ANIM_PL))]
    rows += [cs(f"z{i}", ("stroje", "stroj", "NOUN", "Animacy=Inan|Case=Nom|Gender=Masc|"
                          "Number=Plur"), ("začaly", "začít", INAN_PL)) for i in range(3, 7)]
    for lemma in ("dát", "psát"):
        stem = lemma[:-2].replace("á", "a")
        rows += [cs(f"{lemma}1", man, (f"{stem}al", lemma, MASC_SG)),
                 cs(f"{lemma}2", men, (f"{stem}ali", lemma, ANIM_PL))]
    rows += [cs("s1", man, ("stal", "stát", MASC_SG)), cs("s2", man, ("stál", "stát", MASC_SG)),
             cs("s3", men, ("stáli", "stát", ANIM_PL)), cs("s4", men, ("stáli", "stát",
                                                                       ANIM_PL)),
             cs("s5", men, ("stali", "stát", ANIM_PL))]
    path = tmp_path / "cs_lexicon.conllu"
    path.write_text("".join(rows), encoding="utf-8")
    return path


def test_a_czech_plural_participle_takes_the_subjects_animacy(tmp_path: Path) -> None:
    lex = czech_lexicon(tmp_path)
    mishima = cs("t", ("Mišima", "Mišima", "PROPN", ANIM), ("začal", "začít", MASC_SG))
    text, comment = pair(mishima, lex, lang="cs")
    assert text == "Mišima začali" and comment["attested_feats"] == ANIM_PL
    assert animacy_of({"Gender": "Masc", "Number": "Plur"}, [ANIM_PL, INAN_PL], {}) is None
    relative = cs("t", ("který", "který", "DET", "Case=Nom|Gender=Masc|Number=Sing"),
                  ("začal", "začít", MASC_SG))
    assert why(relative, lex, lang="cs") == note(A._ANIMACY)


def test_a_lemma_of_two_paradigms_takes_the_form_of_the_originals(tmp_path: Path) -> None:
    assert own_paradigm(["stáli", "stali"], ["stali"]) == ["stali"]
    assert own_paradigm(["stáli", "stali"], []) is None
    lex = czech_lexicon(tmp_path)
    stal = cs("t", ("Petr", "Petr", "PROPN", ANIM), ("stal", "stát", MASC_SG))
    text, comment = pair(stal, lex, lang="cs", rules="true")
    assert text == "Petr stali"  # "became", as stal; never stáli ("stood")


def test_czech_coordination_quantity_and_object_reading_are_refused(tmp_path: Path) -> None:
    lex = czech_lexicon(tmp_path)
    fem = "Case=Nom|Gender=Fem|Number=Sing"
    coordinated = cs("t", ("Británie", "Británie", "PROPN", fem), ("začala", "začít",
                                                                    f"Gender=Fem|Number=Sing|"
                                                                    f"{PART}"),
                     [(3, "a", "a", "CCONJ", "_", 4, "cc"),
                      (4, "Francie", "Francie", "PROPN", fem, 1, "conj")])
    assert why(coordinated, lex, lang="cs") == note(A._COORDINATION)
    most = cs("t", ("většina", "většina", "NOUN", fem), ("začala", "začít",
                                                        f"Gender=Fem|Number=Sing|{PART}"),
              [(3, "lidí", "člověk", "NOUN", "Case=Gen|Number=Plur", 1, "nmod")])
    assert why(most, lex, lang="cs") == note(A._QUANTITY)
    neut = "Case=Nom|Gender=Neut|Number=Sing"
    acc = cs("a1", ("muž", "muž", "NOUN", ANIM), ("začal", "začít", MASC_SG),
             [(3, "vyšetřování", "vyšetřování", "NOUN", "Case=Acc|Gender=Neut|Number=Sing", 2,
               "obj")])
    lex.write_text(lex.read_text(encoding="utf-8") + acc, encoding="utf-8")
    began = cs("t", ("vyšetřování", "vyšetřování", "NOUN", neut),
               ("začalo", "začít", f"Gender=Neut|Number=Sing|{PART}"))
    assert why(began, lex, lang="cs", feature="Gender") == note(A._OBJECT)
    # with an object of its own the verb has no object reading
    with_obj = cs("t", ("vyšetřování", "vyšetřování", "NOUN", neut),
                  ("začalo", "začít", f"Gender=Neut|Number=Sing|{PART}"),
                  [(3, "muže", "muž", "NOUN", "Animacy=Anim|Case=Acc|Gender=Masc|Number=Sing",
                    2, "obj")])
    assert pair(with_obj, lex, lang="cs", feature="Gender")[0] == "vyšetřování začal muže"


# ---------------------------------------------------------------------- --refused FILE
@pytest.mark.parametrize("suffix", [".tsv", ".jsonl"])
def test_the_refused_file_lists_every_refused_candidate(cli, tmp_path: Path, suffix: str
                                                        ) -> None:
    lex = lexicon(tmp_path)
    government = be("g", ("government", "government", "NOUN", SG), ("is", S3))
    data = tmp_path / "in.conllu"
    data.write_text(lex.read_text(encoding="utf-8") + government, encoding="utf-8")
    refused = tmp_path / f"refused{suffix}"
    res = cli(["perturb", "-k", "agreement", str(data), "--refused", str(refused)])
    assert res.exit_code == 0, res.stderr
    lines = refused.read_text(encoding="utf-8").splitlines()
    if suffix == ".tsv":
        assert lines[0].split("\t") == list(REFUSED_COLUMNS)
        rows = list(csv.DictReader(io.StringIO("\n".join(lines)), delimiter="\t"))
    else:
        rows = [json.loads(line) for line in lines]
    notional = [r for r in rows if r["reason"] == "notional"]
    assert [(r["sent_id"], r["verb"], r["subject"]) for r in notional] == [("g", "is",
                                                                             "government")]
    assert notional[0]["text"] == "government is happy"
    counted = res.stderr.split("candidates without an output (")[1].split(")")[0]
    assert int(counted) == len(rows)


def test_refused_is_for_minimal_pair_generators_only(cli, tmp_path: Path) -> None:
    data = lexicon(tmp_path)
    res = cli(["perturb", "-k", "shuffle", str(data), "--refused", str(tmp_path / "r.tsv")])
    assert res.exit_code != 0 and "--refused" in res.stderr
    assert not (tmp_path / "r.tsv").exists()


def test_a_subject_of_the_same_form_in_both_numbers_is_refused(tmp_path: Path) -> None:
    """Czech *práce* is "work" and "works": like *organizace* and *stanice*, whose nominative
    plural the treebank attests, it keeps *-ce*, so *naše práce bude* may be plural."""
    lex = czech_lexicon(tmp_path)
    rows = [cs(f"o{i}", (form, lemma, "NOUN", f"Case=Nom|Gender=Fem|Number={num}"),
               ("začal", "začít", MASC_SG))
            for i, (form, lemma, num) in enumerate((("organizace", "organizace", "Sing"),
                                                    ("organizace", "organizace", "Plur"),
                                                    ("stanice", "stanice", "Sing"),
                                                    ("stanice", "stanice", "Plur")))]
    lex.write_text(lex.read_text(encoding="utf-8") + "".join(rows), encoding="utf-8")
    work = cs("t", ("práce", "práce", "NOUN", "Case=Nom|Gender=Fem|Number=Sing"),
              ("začala", "začít", f"Gender=Fem|Number=Sing|{PART}"))
    assert why(work, lex, lang="cs") == note(A._AMBIGUOUS)


def test_an_object_that_reads_as_the_twins_subject_is_refused(tmp_path: Path) -> None:
    """*To má tři kaple* ("it has three chapels") -> *To mají tři kaple* reads "three chapels
    have it": *kaple* is also a nominative plural, *to* also an accusative."""
    lex = czech_lexicon(tmp_path)
    neut = "Case=Nom|Gender=Neut|Number=Sing|PronType=Dem"
    attested = (cs("k1", ("kaple", "kaple", "NOUN", "Case=Nom|Gender=Fem|Number=Plur"),
                   ("mají", "mít", P3))
                + cs("k2", ("muž", "muž", "NOUN", ANIM), ("má", "mít", S3),
                     [(3, "to", "ten", "DET", "Case=Acc|Gender=Neut|Number=Sing", 2, "obj")])
                + cs("k3", ("muž", "muž", "NOUN", ANIM), ("má", "mít", S3)))
    lex.write_text(lex.read_text(encoding="utf-8") + attested, encoding="utf-8")
    has = cs("t", ("To", "ten", "DET", neut), ("má", "mít", S3),
             [(3, "kaple", "kaple", "NOUN", "Case=Acc|Gender=Fem|Number=Plur", 2, "obj")])
    assert why(has, lex, lang="cs") == note(A._OBJECT)


def test_lemminflect_makes_no_clitic_after_its_host(tmp_path: Path) -> None:
    """GUM's *Im* (I + m, no apostrophe) gave *Iare*: a word after its host in a multiword
    token takes attested forms only."""
    lex = lexicon(tmp_path)
    pron = "Case=Nom|Number=Sing|Person=1|PronType=Prs"
    im = block("t", [("1-2", "Im"), (1, "I", "I", "PRON", pron, 3, "nsubj"),
                     (2, "m", "be", "AUX", "Mood=Ind|Number=Sing|Person=1|Tense=Pres|"
                      "VerbForm=Fin", 3, "cop"),
                     (3, "happy", "happy", "ADJ", "Degree=Pos", 0, "root")], "Im happy")
    assert why(im, lex) == note(A._NO_FORM)


def test_a_form_kept_by_the_lemmas_of_its_kind_reads_as_the_other_cell() -> None:
    from synrob.perturb.lexicon.paradigms import Paradigms

    par = Paradigms()
    sing, plur = "Case=Nom|Gender=Fem|Number=Sing", "Case=Nom|Gender=Fem|Number=Plur"
    for lemma in ("organizace", "stanice", "ulice"):
        par.add(lemma, lemma, "NOUN", "_", sing)
        par.add(lemma, lemma, "NOUN", "_", plur)
    par.add("žena", "žena", "NOUN", "_", sing)
    par.add("ženy", "žena", "NOUN", "_", plur)
    assert par.kept_form("NOUN", sing, plur, "práce") == (3, 0)  # ends like them
    assert par.kept_form("NOUN", sing, plur) == (3, 1)  # every lemma of the cells


@pytest.mark.slow
def test_the_refused_tsv_reads_back_with_csv_on_ewt_test(cli, ewt_dir: Path, tmp_path: Path
                                                         ) -> None:
    """EWT test's texts hold quotes (*" Another generation ...*): read with csv (as pandas
    reads a TSV), the file has every refused candidate the summary counts, each text whole."""
    source = ewt_dir / "en_ewt-ud-test.conllu"
    refused = tmp_path / "refused.tsv"
    res = cli(["perturb", "-k", "agreement", str(source), "-o", str(tmp_path / "pairs.conllu"),
               "--refused", str(refused)])
    assert res.exit_code == 0, res.stderr
    with refused.open(encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh, delimiter="\t"))
    counted = int(res.stderr.split("candidates without an output (")[1].split(")")[0])
    assert len(rows) == counted > 1000
    texts = {s.sent_id: s.text for s in read_conllu(source)}
    assert all(r["text"] == texts[r["sent_id"]] for r in rows)
    assert any(r["text"].startswith('"') for r in rows)
