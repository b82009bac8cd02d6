"""synrob-typo: golden cases for the keyboard and each edit, invariants on EWT dev."""

from __future__ import annotations

import random

import pytest
from synrob.perturb.base import sentence_rng
from synrob.perturb.corpus import read_conllu, sentences_from_string
from synrob.perturb.errors import ParameterError
from synrob_typo.edits import EDITS, delete, insert, substitute, transpose
from synrob_typo.keyboard import neighbors
from synrob_typo.perturber import Typo

AP = """# sent_id = golden-1
# text = From the AP comes this story :
1\tFrom\tfrom\tADP\tIN\t_\t3\tcase\t3:case\t_
2\tthe\tthe\tDET\tDT\tDefinite=Def|PronType=Art\t3\tdet\t3:det\t_
3\tAP\tAP\tPROPN\tNNP\tNumber=Sing\t4\tobl\t4:obl:from\t_
4\tcomes\tcome\tVERB\tVBZ\tMood=Ind|Number=Sing|Person=3|Tense=Pres|VerbForm=Fin\t0\troot\t0:root\t_
5\tthis\tthis\tDET\tDT\tNumber=Sing|PronType=Dem\t6\tdet\t6:det\t_
6\tstory\tstory\tNOUN\tNN\tNumber=Sing\t4\tnsubj\t4:nsubj\t_
7\t:\t:\tPUNCT\t:\t_\t4\tpunct\t4:punct\t_

"""

MWT = """# sent_id = golden-2
# text = We've moved on.
1-2\tWe've\t_\t_\t_\t_\t_\t_\t_\t_
1\tWe\twe\tPRON\tPRP\tCase=Nom|Number=Plur|Person=1|PronType=Prs\t3\tnsubj\t3:nsubj\t_
2\t've\thave\tAUX\tVBP\tMood=Ind|Number=Plur|Person=1|Tense=Pres|VerbForm=Fin\t3\taux\t3:aux\t_
3\tmoved\tmove\tVERB\tVBN\tTense=Past|VerbForm=Part\t0\troot\t0:root\t_
4\ton\ton\tADV\tRB\t_\t3\tadvmod\t3:advmod\tSpaceAfter=No
5\t.\t.\tPUNCT\t.\t_\t3\tpunct\t3:punct\t_

"""


def _ap():
    return sentences_from_string(AP)[0]


# --------------------------------------------------------------------------- keyboard


@pytest.mark.parametrize(
    ("letter", "expected"),
    [("s", "adewxz"), ("g", "bfhtvy"), ("p", "lo"), ("q", "aw"), ("z", "asx"), ("m", "jkn"),
     ("S", "adewxz"), ("é", ""), ("3", ""), ("'", "")],
)
def test_qwerty_neighbors(letter: str, expected: str) -> None:
    assert neighbors(letter) == expected


def test_neighbors_are_symmetric() -> None:
    letters = "abcdefghijklmnopqrstuvwxyz"
    for a in letters:
        assert a not in neighbors(a)
        for b in neighbors(a):
            assert a in neighbors(b), (a, b)


# --------------------------------------------------------------------------- edits (golden)


@pytest.mark.parametrize(
    ("op", "outputs"),
    [
        ("sub", ["hoise", "Sin", "as", "s", None]),
        ("ins", ["houise", "Suin", "aas", "as", None]),
        ("del", ["hose", "Sn", "a", None, None]),
        ("swap", ["hosue", "Snu", None, None, None]),
    ],
)
def test_edit_golden(op: str, outputs: list[str | None]) -> None:
    words = ["house", "Sun", "aa", "a", "é"]
    assert [EDITS[op](w, random.Random(7)) for w in words] == outputs


def test_edits_shape_on_many_draws() -> None:
    rng = random.Random(1)
    for word in ["keyboard", "Typist", "noise", "ab"]:
        for _ in range(200):
            s = substitute(word, rng)
            diff = [i for i, (a, b) in enumerate(zip(word, s, strict=True)) if a != b]
            assert len(diff) == 1 and s[diff[0]].lower() in neighbors(word[diff[0]])
            assert s[diff[0]].isupper() == word[diff[0]].isupper()
            ins = insert(word, rng)
            assert len(ins) == len(word) + 1
            assert any(
                ins[:at] + ins[at + 1 :] == word
                and any(ins[at].lower() in neighbors(word[j]) for j in (at - 1, at)
                        if 0 <= j < len(word))
                for at in range(len(ins))
            )
            d = delete(word, rng)
            assert len(d) == len(word) - 1
            assert any(word[:i] + word[i + 1 :] == d for i in range(len(word)))
            t = transpose(word, rng)
            diff = [i for i, (a, b) in enumerate(zip(word, t, strict=True)) if a != b]
            assert len(diff) == 2 and diff[1] == diff[0] + 1
            assert (t[diff[0]], t[diff[1]]) == (word[diff[1]], word[diff[0]])


# --------------------------------------------------------------------------- perturber (golden)


@pytest.mark.parametrize(
    ("ops", "text"),
    [
        ("sub", "Fron thd AP xomes thiw stiry :"),
        ("ins", "Fronm tyhe AP comses thius storty :"),
        ("del", "Fro th AP come his tory :"),
        ("swap", "Form hte AP ocmes thsi stoyr :"),
    ],
)
def test_typo_golden_each_op(ops: str, text: str) -> None:
    result = Typo(rate=1.0, ops=ops).perturb(_ap(), sentence_rng(0, 0))
    assert result.text == text
    assert result.changed == (1, 2, 4, 5, 6)  # "AP" (2 letters) and ":" are not eligible
    assert [e["op"] for e in result.extra["edits"]] == [ops] * 5


def test_typo_golden_default_ops(ewt_dev_sentences: list) -> None:
    first = ewt_dev_sentences[0]
    result = Typo(rate=0.5).perturb(first, sentence_rng(0, 0))
    assert result.text == "Fronm the AP comes thsi story :"
    assert result.changed == (1, 5)
    assert result.extra["edits"] == [
        {"id": 1, "op": "ins", "from": "From", "to": "Fronm"},
        {"id": 5, "op": "swap", "from": "this", "to": "thsi"},
    ]
    out = result.sentence.serialize()
    assert "# text = Fronm the AP comes thsi story :\n" in out
    assert "1\tFronm\tfrom\tADP\tIN\t_\t3\tcase\t3:case\t_\n" in out


def test_multiword_tokens_are_left_alone() -> None:
    sent = sentences_from_string(MWT)[0]
    typo = Typo(rate=1.0)
    assert typo.eligible(sent) == [3]  # We/'ve are inside 1-2 We've; "on" is too short
    result = typo.perturb(sent, sentence_rng(0, 41))
    assert result.text == "We've movedd on."
    assert result.changed == (3,)
    assert result.sentence.ranges() == [(1, 2, "We've")]


def test_unchanged_sentences_say_why() -> None:
    punct = sentences_from_string(
        "# text = ***\n1\t***\t***\tPUNCT\tNFP\t_\t0\troot\t0:root\t_\n\n"
    )[0]
    result = Typo(rate=1.0).perturb(punct, sentence_rng(0, 0))
    assert (result.changed, result.note, result.text) == ((), "no eligible word", "***")
    result = Typo(rate=0.0).perturb(_ap(), sentence_rng(0, 0))
    assert (result.changed, result.note) == ((), "rate selected no word")
    assert result.sentence.serialize() == _ap().serialize()
    # "aaa" admits no transposition: with ops=swap nothing applies
    aaa = sentences_from_string("1\taaa\taaa\tINTJ\tUH\t_\t0\troot\t0:root\t_\n\n")[0]
    assert Typo(rate=1.0, ops="swap").perturb(aaa, sentence_rng(0, 0)).note == "no edit applies"


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"rate": 1.5}, "rate must be within 0..1"),
        ({"rate": "lots"}, "expects float"),
        ({"ops": "sub,typo"}, "unknown edit 'typo'"),
        ({"ops": " , "}, "unknown edit"),
        ({"min_length": 1}, "min_length must be >= 2"),
        ({"speed": 3}, "unknown parameter 'speed'"),
    ],
)
def test_bad_parameters(params: dict, message: str) -> None:
    with pytest.raises(ParameterError, match=message):
        Typo(**params)


def test_cli_style_string_parameters() -> None:
    typo = Typo(rate="0.25", ops="del, swap,del", min_length="4")
    assert typo.options == {"rate": 0.25, "ops": "del, swap,del", "min_length": 4}
    assert typo.ops == ("del", "swap")


# --------------------------------------------------------------------------- invariants on EWT dev


@pytest.mark.slow
@pytest.mark.parametrize("rate", [0.0, 0.3, 1.0])
def test_invariants_on_ewt_dev(ewt_dev_sentences: list, rate: float) -> None:
    typo = Typo(rate=rate)
    eligible_total = changed_total = 0
    ops_seen: set[str] = set()
    for i, sent in enumerate(ewt_dev_sentences):
        result = typo.perturb(sent, sentence_rng(13, i))
        new = result.sentence
        old_words, new_words = sent.words(), new.words()
        assert len(new_words) == len(old_words)
        eligible = set(typo.eligible(sent))
        eligible_total += len(eligible)
        changed_total += len(result.changed)
        assert set(result.changed) <= eligible
        for o, n in zip(old_words, new_words, strict=True):
            # everything but FORM is the gold annotation of the intended word
            assert (o.lemma, o.upos, o.xpos, o.feats, o.head, o.deprel) == (
                n.lemma, n.upos, n.xpos, n.feats, n.head, n.deprel)
            assert (o.form != n.form) == (o.id in result.changed)
        for edit in result.extra.get("edits", []):
            ops_seen.add(edit["op"])
            assert new_words[edit["id"] - 1].form == edit["to"] != edit["from"]
        assert new.ranges() == sent.ranges()
        assert new.space_after() == sent.space_after()
        assert new.text == new.surface_text()
        # still valid CoNLL-U: parses back to the same sentence
        again = sentences_from_string(new.serialize())[0]
        assert again.serialize() == new.serialize()
    assert eligible_total > 15_000
    share = changed_total / eligible_total
    assert abs(share - rate) < 0.01, share  # rate is the expected share of eligible words
    assert ops_seen == (set() if rate == 0 else set(EDITS))


def test_reproducible_and_seed_dependent(ewt_dev_sentences: list) -> None:
    typo = Typo(rate=0.3)
    sents = ewt_dev_sentences[:300]

    def run(seed: int) -> list[str]:
        return [typo.perturb(s, sentence_rng(seed, i)).text for i, s in enumerate(sents)]

    assert run(5) == run(5)
    differ = sum(a != b for a, b in zip(run(5), run(6), strict=True))
    assert differ > 150


def test_ops_restrict_edits(ewt_dev_sentences: list) -> None:
    typo = Typo(rate=1.0, ops="del", min_length=5)
    for i, sent in enumerate(ewt_dev_sentences[:200]):
        result = typo.perturb(sent, sentence_rng(0, i))
        for edit in result.extra.get("edits", []):
            assert edit["op"] == "del"
            assert len(edit["from"]) >= 5 and len(edit["to"]) == len(edit["from"]) - 1


def test_stream_of_file(tmp_path) -> None:
    path = tmp_path / "ap.conllu"
    path.write_text(AP + MWT, encoding="utf-8")
    out = [Typo(rate=1.0).perturb(s, sentence_rng(2, i)).text
           for i, s in enumerate(read_conllu(path))]
    assert len(out) == 2 and all(a != b for a, b in zip(out, ["From the AP comes this story :",
                                                              "We've moved on."], strict=True))
