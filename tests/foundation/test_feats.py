"""The one FEATS parser and formatter (synrob.perturb.io.feats) and the three modules that use it."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from synrob.perturb.corpus import Word, sentences_from_string
from synrob.perturb.io.feats import feats_value, format_feats, parse_feats

# A FEATS name or value: no '|', no '=' in names, not empty (values may hold '=', e.g. in MISC-
# like extensions; the parser splits at the first '=').
_NAME = st.text(st.characters(blacklist_characters="|=\n\t", blacklist_categories=("Cs",)),
                min_size=1, max_size=8)
_VALUE = st.text(st.characters(blacklist_characters="|\n\t", blacklist_categories=("Cs",)),
                 min_size=1, max_size=8)
_FEATS = st.dictionaries(_NAME, _VALUE, max_size=6)


@given(_FEATS)
def test_format_then_parse_round_trip(feats: dict[str, str]) -> None:
    text = format_feats(feats)
    assert parse_feats(text) == feats
    assert parse_feats(text, strict=False) == feats
    assert feats_value(text) == (feats or None)
    assert list(parse_feats(text)) == list(feats)  # column order kept


@given(_FEATS)
def test_parse_then_format_round_trip(feats: dict[str, str]) -> None:
    text = format_feats(feats)
    assert format_feats(parse_feats(text)) == text
    assert format_feats(feats_value(text)) == text


def test_empty() -> None:
    for empty in ("_", ""):
        assert parse_feats(empty) == {} == parse_feats(empty, strict=False)
        assert feats_value(empty) is None
    assert format_feats(None) == format_feats({}) == "_"


def test_examples() -> None:
    assert parse_feats("Number=Plur|Person=3") == {"Number": "Plur", "Person": "3"}
    assert parse_feats("A=b=c") == {"A": "b=c"}  # split at the first '='
    assert format_feats({"Number": "Sing", "Case": "Nom"}) == "Number=Sing|Case=Nom"


def test_malformed_strict_raises_lenient_skips() -> None:
    for bad in ("Number", "Number=Plur|Foreign", "|Number=Plur"):
        with pytest.raises(ValueError):
            parse_feats(bad)
        with pytest.raises(ValueError):
            feats_value(bad)
    assert parse_feats("Number=Plur|Foreign", strict=False) == {"Number": "Plur"}
    assert parse_feats("Foreign", strict=False) == {}


def test_word_feats_dict_and_words_view() -> None:
    """Word.feats_dict is the strict parser; Sentence.words() formats the conllu dict."""
    w = Word(1, "dogs", "dog", "NOUN", "NNS", "Number=Plur", 0, "root")
    assert w.feats_dict == {"Number": "Plur"}
    with pytest.raises(ValueError):
        _ = Word(1, "x", "x", "X", "_", "Bad", 0, "root").feats_dict
    block = ("1\tDogs\tdog\tNOUN\tNNS\tNumber=Plur\t2\tnsubj\t_\t_\n"
             "2\tbark\tbark\tVERB\tVBP\t_\t0\troot\t_\t_\n\n")
    (sent,) = sentences_from_string(block)
    assert [w.feats for w in sent.words()] == ["Number=Plur", "_"]


def test_senteval_labels_parse_leniently() -> None:
    """The SentEval labels skip a malformed part instead of failing."""
    from synrob.perturb.senteval.labels import subject_number
    from synrob.perturb.senteval.source import SourceSentence

    words = [Word(1, "Dogs", "dog", "NOUN", "NNS", "Number=Plur|Junk", 2, "nsubj"),
             Word(2, "bark", "bark", "VERB", "VBP", "Mood=Ind|Tense=Pres", 0, "root")]
    s = SourceSentence(0, words, [], "<memory>")
    assert subject_number(s) == ("NNS", "dogs")
