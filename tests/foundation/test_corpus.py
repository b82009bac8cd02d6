"""CoNLL-U corpus model: byte-identical round trip, the syntactic-words view, edits."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from synrob.perturb.corpus import read_conllu, sentences_from_string, write_conllu

SENT = """\
# sent_id = s1
# text = I don't know.
1\tI\tI\tPRON\tPRP\tCase=Nom|Number=Sing|Person=1|PronType=Prs\t4\tnsubj\t4:nsubj\t_
2-3\tdon't\t_\t_\t_\t_\t_\t_\t_\t_
2\tdo\tdo\tAUX\tVBP\tMood=Ind|Tense=Pres|VerbForm=Fin\t4\taux\t4:aux\t_
3\tn't\tnot\tPART\tRB\tPolarity=Neg\t4\tadvmod\t4:advmod\t_
4\tknow\tknow\tVERB\tVB\tVerbForm=Inf\t0\troot\t0:root\tSpaceAfter=No
4.1\tknow\tknow\tVERB\tVB\t_\t_\t_\t4:conj\t_
5\t.\t.\tPUNCT\t.\t_\t4\tpunct\t4:punct\tCxn=free=rc-obj

"""


@pytest.mark.slow
@pytest.mark.parametrize("split", ["train", "dev", "test"])
def test_ewt_round_trip_is_byte_identical(ewt_dir: Path, split: str) -> None:
    path = ewt_dir / f"en_ewt-ud-{split}.conllu"
    out = io.StringIO()
    n = write_conllu(read_conllu(path), out)
    assert n > 1000
    assert out.getvalue() == path.read_text(encoding="utf-8")


def test_round_trip_keeps_ranges_empty_nodes_comments_misc() -> None:
    (s,) = sentences_from_string(SENT)
    assert s.serialize() == SENT
    assert s.sent_id == "s1"
    assert s.ranges() == [(2, 3, "don't")]
    assert s.empty_nodes() == 1


def test_syntactic_words_view() -> None:
    (s,) = sentences_from_string(SENT)
    words = s.words()
    assert [w.form for w in words] == ["I", "do", "n't", "know", "."]
    assert [w.id for w in words] == [1, 2, 3, 4, 5]
    assert words[0].feats_dict["Case"] == "Nom"
    assert words[3].feats == "VerbForm=Inf"
    assert s.heads == [4, 4, 4, 0, 4]
    assert s.root() == 3
    assert s.depths() == [1, 1, 1, 0, 1]
    assert s.max_depth() == 1
    assert s.edges() == {(0, 3), (1, 3), (2, 3), (3, 4)}
    assert s.distances()[0] == [0, 2, 2, 1, 2]
    assert s.surface_text() == "I don't know."
    assert s.space_after() == [True, False, True, False, True]


def test_reorder_keeps_the_tree_with_its_words() -> None:
    (s,) = sentences_from_string(SENT)
    new = s.reorder([4, 1, 2, 3, 5])
    forms = [w.form for w in new.words()]
    assert forms == ["know", "I", "do", "n't", "."]
    # the range 2-3 stays (its words are adjacent and in order), renumbered to 3-4
    assert new.ranges() == [(3, 4, "don't")]
    heads = {w.form: (new.words()[w.head - 1].form if w.head else None) for w in new.words()}
    assert heads == {"know": None, "I": "know", "do": "know", "n't": "know", ".": "know"}
    assert new.empty_nodes() == 0
    assert new.text == "know I don't ."  # glue kept only between old neighbours
    (again,) = sentences_from_string(new.serialize())
    assert again.heads == new.heads


def test_reorder_drops_split_ranges() -> None:
    (s,) = sentences_from_string(SENT)
    new = s.reorder([1, 3, 2, 4, 5])
    assert new.ranges() == []
    assert new.text == "I n't do know."


def test_replace_words_rebuilds_text() -> None:
    (s,) = sentences_from_string(SENT)
    new = s.replace_words({4: {"form": "see", "lemma": "see"}})
    assert new.text == "I don't see."
    assert new.words()[3].lemma == "see"
    assert s.words()[3].form == "know"  # the original is untouched
    new2 = s.replace_words({2: {"form": "did"}})
    assert new2.ranges() == []
    assert new2.text == "I didn't know."


def test_streaming_reads_lazily() -> None:
    fh = io.StringIO(SENT * 3)
    it = read_conllu(fh)
    next(it)
    assert fh.tell() < len(SENT * 3)  # the rest of the file is not read yet


def test_reorder_keeps_deps_sorted_by_head_so_its_output_reads_back() -> None:
    text = (
        "# sent_id = d\n"
        "1\ta\ta\tX\tX\t_\t3\tdep\t2:dep|3:nsubj\t_\n"
        "2\tb\tb\tX\tX\t_\t3\tdep\t3:dep\t_\n"
        "3\tc\tc\tX\tX\t_\t0\troot\t0:root\t_\n\n"
    )
    (s,) = sentences_from_string(text)
    new = s.reorder([3, 2, 1])  # a becomes word 3; its DEPS heads 2, 3 become 2, 1
    (line,) = [x for x in new.serialize().splitlines() if x.startswith("3\t")]
    assert line.split("\t")[1:2] + line.split("\t")[8:9] == ["a", "1:nsubj|2:dep"]
    (again,) = sentences_from_string(new.serialize())
    assert again.heads == [0, 1, 1]


def test_columns_are_split_on_tabs_only() -> None:
    # the conllu library also splits on two spaces, which shifted every later column
    text = (
        "# sent_id = sp\n"
        "1\tNew  York\tNew  York\tPROPN\tNNP\tNumber=Sing\t0\troot\t0:root\tNote=a  b\n\n"
    )
    (s,) = sentences_from_string(text)
    assert s.forms == ["New  York"] and s.words()[0].upos == "PROPN"
    assert s.serialize() == text


def test_read_forms_is_read_conllu_without_sentences(ewt_dev: Path, tmp_path: Path) -> None:
    from synrob.perturb.corpus import read_forms
    from synrob.perturb.errors import ConlluError

    assert read_forms(ewt_dev) == [s.forms for s in read_conllu(ewt_dev)]
    bad = tmp_path / "bad.conllu"
    bad.write_text(SENT + SENT.replace("s1", "s2").replace("2-3\t", "2-9\t"), encoding="utf-8")
    with pytest.raises(ConlluError) as by_forms:
        read_forms(bad)
    with pytest.raises(ConlluError) as by_sentences:
        list(read_conllu(bad))
    assert str(by_forms.value) == str(by_sentences.value)
    assert str(by_forms.value) == f"{bad}:14: multiword token range 2-9 goes past the last word (5)"
