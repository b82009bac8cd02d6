"""Raw text -> UD CoNLL-U: the spaCy path for real on EWT text; stanza where its models exist."""

from __future__ import annotations

import io
import itertools
import subprocess
import sys
from pathlib import Path

import pytest
from synrob.perturb.corpus import read_conllu
from synrob.perturb.errors import ResourceError
from synrob.perturb.parsing import (
    SPACY_COMMENT,
    ParserWarning,
    choose_backend,
    parse_texts,
    stanza_available,
)

STANZA_SKIP = "stanza's English models are not installed (no registry ships them; offline here)"


@pytest.fixture(scope="module")
def ewt_gold(ewt_dev: Path):
    return list(itertools.islice(read_conllu(ewt_dev), 150))


def _spacy(texts):
    with pytest.warns(ParserWarning, match="not UD"):
        return list(parse_texts(texts, backend="spacy"))


def test_spacy_path_on_ewt_text(ewt_gold):
    texts = [s.text for s in ewt_gold]
    parsed = _spacy(texts)
    assert len(parsed) == len(texts)
    agree = total = same_tok = 0
    for n, (gold, s) in enumerate(zip(ewt_gold, parsed, strict=True), start=1):
        assert s.sent_id == f"text-{n}"
        assert s.metadata["text"] == " ".join(gold.text.split())
        assert s.metadata["synrob.parser"] == SPACY_COMMENT
        assert s.surface_text() == s.metadata["text"]  # FORM + SpaceAfter rebuild the line
        assert sum(1 for w in s.words() if w.head == 0) == 1
        assert all(w.deprel == "root" for w in s.words() if w.head == 0)
        assert all(w.upos != "SPACE" for w in s.words())
        if s.forms == gold.forms:
            same_tok += 1
            for g, w in zip(gold.words(), s.words(), strict=True):
                agree += g.upos == w.upos
                total += 1
    assert same_tok >= 80  # spaCy tokenises most EWT sentences like UD
    assert agree / total > 0.85  # UPOS columns are really spaCy's UD-style tags


def test_output_rereads_as_valid_conllu(ewt_gold):
    parsed = _spacy(s.text for s in ewt_gold[:60])
    text = "".join(s.serialize() for s in parsed)
    again = list(read_conllu(io.StringIO(text)))
    assert [s.serialize() for s in again] == [s.serialize() for s in parsed]


def test_one_tree_per_line_and_numbering():
    lines = ["The cats  were sleeping.   Then they woke up!", "", "   ", "Short one."]
    a, b = _spacy(lines)
    assert (a.sent_id, b.sent_id) == ("text-1", "text-2")
    assert a.metadata["text"] == "The cats were sleeping. Then they woke up!"
    roots = [w for w in a.words() if w.head == 0]
    assert len(roots) == 1 and roots[0].form == "sleeping"
    woke = next(w for w in a.words() if w.form == "woke")
    assert (woke.head, woke.deprel) == (roots[0].id, "parataxis")
    assert a.space_after()[3] is False  # "sleeping" is glued to "."
    assert len(a) == 10


def test_feats_are_sorted_ud_pairs():
    (s,) = _spacy(["She has eaten three apples."])
    for w in s.words():
        if w.feats != "_":
            keys = list(w.feats_dict)
            assert keys == sorted(keys, key=str.lower)
    assert s.words()[4].feats_dict.get("Number") == "Plur"


def test_streams_lazily():
    def gen():
        yield "First sentence here."
        raise RuntimeError("consumed too far")

    with pytest.warns(ParserWarning):
        it = parse_texts(gen(), backend="spacy", batch_size=1)
        first = next(it)
    assert first.forms[0] == "First"


def test_backend_choice():
    expected = "stanza" if stanza_available() else "spacy"
    assert choose_backend("auto") == expected
    assert choose_backend("spacy") == "spacy"
    with pytest.raises(ResourceError):
        choose_backend("udpipe")  # type: ignore[arg-type]


@pytest.mark.skipif(stanza_available(), reason="stanza's English models are installed here")
def test_stanza_requested_without_models_is_a_clear_error():
    with pytest.raises(ResourceError, match="stanza's English models are not installed"):
        list(parse_texts(["A sentence."], backend="stanza"))


def test_stanza_document_conversion():
    """The stanza -> CoNLL-U conversion (ids shifted across sentences, one root, MWT ranges)
    on a stanza Document read from CoNLL-U, which needs no model."""
    pytest.importorskip("stanza")
    from stanza.utils.conll import CoNLL
    from synrob.perturb.parsing import _stanza_to_sentence

    conll = (
        "1-2\tdon't\t_\t_\t_\t_\t_\t_\t_\t_\n"
        "1\tdo\tdo\tAUX\tVBP\t_\t3\taux\t_\tstart_char=0|end_char=2\n"
        "2\tn't\tnot\tPART\tRB\t_\t3\tadvmod\t_\t_\n"
        "3\tgo\tgo\tVERB\tVB\tVerbForm=Inf\t0\troot\t_\tSpaceAfter=No\n"
        "4\t.\t.\tPUNCT\t.\t_\t3\tpunct\t_\t_\n\n"
        "1\tStay\tstay\tVERB\tVB\tVerbForm=Inf\t0\troot\t_\tSpaceAfter=No\n"
        "2\t!\t!\tPUNCT\t.\t_\t1\tpunct\t_\t_\n\n"
    )
    doc = CoNLL.conll2doc(input_str=conll)
    s = _stanza_to_sentence(doc, 7, "don't go. Stay!")
    assert s.sent_id == "text-7" and s.metadata["synrob.parser"] == "stanza:en"
    assert s.forms == ["do", "n't", "go", ".", "Stay", "!"]
    assert s.heads == [3, 3, 0, 3, 3, 5]
    assert s.words()[4].deprel == "parataxis"
    assert s.ranges() == [(1, 2, "don't")]
    assert "start_char" not in s.serialize()


@pytest.mark.skipif(not stanza_available(), reason=STANZA_SKIP)
def test_stanza_path_on_ewt_text(ewt_gold):  # pragma: no cover - needs stanza's models
    parsed = list(parse_texts([s.text for s in ewt_gold[:30]], backend="stanza"))
    assert len(parsed) == 30
    for s in parsed:
        assert s.metadata["synrob.parser"] == "stanza:en"
        assert sum(1 for w in s.words() if w.head == 0) == 1
    text = "".join(s.serialize() for s in parsed)
    assert len(list(read_conllu(io.StringIO(text)))) == 30


def test_import_is_light():
    code = ("import sys, synrob.perturb.parsing, synrob.perturb.lm.loaded, "
            "synrob.perturb.perturbers.coco; "
            "heavy = [m for m in ('torch', 'transformers', 'spacy', 'stanza') if m in sys.modules]; "
            "print(heavy); sys.exit(1 if heavy else 0)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr
