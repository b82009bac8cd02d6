"""Pair files in the field's formats (synrob.perturb.io.pairs): MultiBLiMP 1.0's TSV and BLiMP's
JSONL, written from real agreement pairs (EWT sample, Czech PUD) and read back; the released
layouts (tests/data/pairs fixtures); one-line errors for bad files; a hypothesis round trip."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from synrob.perturb.api import make_perturber
from synrob.perturb.corpus import read_conllu, sentences_from_string
from synrob.perturb.errors import ParameterError, SynrobError
from synrob.perturb.io.data import resolve_one
from synrob.perturb.io.pairs import (
    MULTIBLIMP_COLUMNS,
    PairOut,
    PairWords,
    blimp_line,
    multiblimp_header,
    multiblimp_row,
    read_pairs,
    text_prefix,
)
from synrob.perturb.pipeline import format_header, perturb_formatted

DATA = Path(__file__).resolve().parent.parent / "data"
MB_FIXTURE = DATA / "pairs" / "multiblimp_eng_reconstructed.tsv"
BLIMP_FIXTURE = DATA / "pairs" / "blimp_documented.jsonl"
CS = DATA / "ud" / "cs_pud" / "cs_pud-ud-test.conllu"


def _write(perturber, source: Path, fmt: str, dest: Path) -> Path:
    items = read_conllu(source)
    dest.write_text(format_header(fmt) + "".join(perturb_formatted(perturber, items, fmt)),
                    encoding="utf-8")
    return dest


@pytest.fixture(scope="module")
def ewt_pairs(tmp_path_factory):
    """Agreement pairs of the EWT sample's dev split in all three formats."""
    root = tmp_path_factory.mktemp("pairs")
    dev = resolve_one("sample:en_ewt:dev", "corpus")
    agreement = make_perturber("agreement", reference=str(dev))
    return {fmt: _write(agreement, dev, fmt, root / f"pairs.{ext}")
            for fmt, ext in (("conllu", "conllu"), ("multiblimp", "tsv"), ("blimp", "jsonl"))}


# ------------------------------------------------------------------ the released layouts
def test_reads_the_multiblimp_release_layout():
    read = read_pairs(MB_FIXTURE)
    assert read.format == "multiblimp" and len(read.items) == 2
    first, second = read.items
    assert (first.good, first.bad) == ("From the AP comes this story :",
                                       "From the AP come this story :")
    assert second.bad == "they has n't heard from you in a while."
    assert first.id == f"{MB_FIXTURE.name}:2" and second.id == f"{MB_FIXTURE.name}:3"
    assert first.source == first.id and second.source == second.id  # two sentences
    assert first.agreement is None and second.agreement is None


def test_reads_the_blimp_release_layout():
    read = read_pairs(BLIMP_FIXTURE)
    assert read.format == "blimp" and [i.line for i in read.items] == [1, 2]
    assert read.items[1].good == "The cats annoy Tim."
    assert read.items[1].bad == "The cats annoys Tim."
    assert all(i.agreement is None and i.source == i.id for i in read.items)


def test_written_columns_follow_the_release():
    with MB_FIXTURE.open(encoding="utf-8") as fh:
        released = next(csv.reader(fh, delimiter="\t"))
    ours = next(csv.reader([multiblimp_header()], delimiter="\t"))
    assert tuple(ours) == MULTIBLIMP_COLUMNS and ours[-1] == "synrob"
    positions = [released.index(c) for c in ours[:-1]]  # every column is a released one
    assert positions == sorted(positions)  # in the release's order
    blimp_keys = set(json.loads(BLIMP_FIXTURE.read_text(encoding="utf-8").splitlines()[0]))
    written = json.loads(blimp_line(_pair_out("a b", "a c")))
    assert blimp_keys <= set(written) and set(written) - blimp_keys == {"synrob"}


# ------------------------------------------------------------------ synrob's pairs, written and read
def test_every_format_holds_the_same_pairs_and_ids(ewt_pairs):
    sentences = list(read_conllu(ewt_pairs["conllu"]))
    originals = {s.sent_id: s.text for s in read_conllu(resolve_one("sample:en_ewt:dev", "c"))}
    assert len(sentences) > 100
    for fmt in ("multiblimp", "blimp"):
        read = read_pairs(ewt_pairs[fmt])
        assert read.format == fmt
        assert [i.id for i in read.items] == [s.sent_id for s in sentences]
        for item, s in zip(read.items, sentences, strict=True):
            assert item.source == s.metadata["synrob.source"]
            assert (item.good, item.bad) == (originals[item.source], s.text)
            assert item.agreement == json.loads(s.metadata["synrob.agreement"])
            assert {"distance", "attractors"} <= set(item.agreement)


def test_multiblimp_rows_name_the_agreeing_words(ewt_pairs):
    with ewt_pairs["multiblimp"].open(encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh, delimiter="\t"))
    sentences = {s.sent_id: s for s in read_conllu(ewt_pairs["conllu"])}
    cops = 0
    for row in rows:
        meta = json.loads(row["synrob"])
        words = sentences[meta["id"]].words()
        a = meta["agreement"]
        assert words[int(row["child_idx"])].id == a["subject"]
        assert row["child"] == words[a["subject"] - 1].form
        assert int(row["head_idx"]) == a["target"] - 1 and row["head"] == a["form_from"]
        assert row["swap_head"] == a["form_to"] == words[a["target"] - 1].form
        assert abs(int(row["distance"])) == a["distance"]
        assert row["wo"] == ("SV" if int(row["distance"]) > 0 else "VS")
        assert row["phenomenon"] == "SV-#"
        assert row["feature_vals"] == (f"{row['grammatical_feature']} -> "
                                       f"{row['ungrammatical_feature']}")
        assert {row["grammatical_feature"], row["ungrammatical_feature"]} == {"SG", "PL"}
        assert row["sen"].startswith(row["prefix"])
        assert row["sen"][len(row["prefix"]):].lstrip().startswith(row["head"])
        assert row["wrong_sen"].startswith(row["prefix"])
        if row["cop"]:
            cops += 1
            assert row["cop"] == row["head"] and row["cop_idx"] == row["head_idx"]
            assert int(row["verb_idx"]) == words[a["subject"] - 1].head - 1
        else:
            assert row["verb"] == row["head"] and row["verb_idx"] == row["head_idx"]
        assert meta["perturber"] == "agreement" and meta["lang"] == "en"
        assert meta["seed"] == 0 and meta["version"] and meta["params"]["feature"] == "Number"
    assert cops > 10


def test_czech_participles_are_subject_participle_pairs(tmp_path):
    agreement = make_perturber("agreement", lang="cs", reference=str(CS), feature="Gender")
    path = _write(agreement, CS, "multiblimp", tmp_path / "cs.tsv")
    with path.open(encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh, delimiter="\t"))
    codes = {r["phenomenon"] for r in rows}
    assert codes <= {"SV-G", "SP-G"} and "SP-G" in codes
    assert {r["grammatical_feature"] for r in rows} <= {"MASC", "FEM", "NEUT"}
    assert len(read_pairs(path).items) == len(rows)


def test_pair_formats_are_for_agreement_only():
    bshift = make_perturber("bshift")
    one = sentences_from_string("1\tA\ta\tDET\t_\t_\t2\tdet\t_\t_\n2\tb\tb\tNOUN\t_\t_\t0\troot\t_\t_\n\n")
    with pytest.raises(ParameterError, match="writes agreement minimal pairs: use it with "
                                             "--kind agreement, not 'bshift'"):
        list(perturb_formatted(bshift, one, "multiblimp"))


def test_text_prefix():
    assert text_prefix("From the AP comes this", "From the AP come this", "comes") == "From the AP"
    assert text_prefix("They’re here", "They's here", "’re") == "They"
    assert text_prefix("It has gone", "It have gone", "has") == "It"
    assert text_prefix("is it", "are it", "is") == ""


# ------------------------------------------------------------------ bad files: one line
def _bad(tmp_path: Path, name: str, text: str | bytes) -> Path:
    path = tmp_path / name
    (path.write_bytes if isinstance(text, bytes) else path.write_text)(text)
    return path


@pytest.mark.parametrize(("name", "text", "message"), [
    ("empty.tsv", "", r"empty\.tsv: empty pairs file"),
    ("blank.jsonl", "\n \n", r"blank\.jsonl: empty pairs file"),
    ("nosen.tsv", "wrong_sen\tx\na\tb\n", r"nosen\.tsv: no column 'sen' in the header"),
    ("nowrong.tsv", "sen\tprefix\na\tb\n", r"nowrong\.tsv: no column 'wrong_sen'"),
    ("header.tsv", "sen\twrong_sen\n", r"header\.tsv: no pair \(a header and no row\)"),
    ("short.tsv", "sen\twrong_sen\tx\na b\ta c\tq\nd e\td f\n", r"short\.tsv:3: 2 columns, "
                                                                  r"the header has 3"),
    ("blanksen.tsv", "sen\twrong_sen\na b\ta c\n \td f\n", r"blanksen\.tsv:3: empty sen"),
    ("badjson.jsonl", '{"sentence_good": "a", "sentence_bad": "b"}\n{"sentence_good": \n',
     r"badjson\.jsonl:2: not a JSON object"),
    ("nokey.jsonl", '{"sentence_good": "a b"}\n', r"nokey\.jsonl:1: no key 'sentence_bad'"),
    ("list.jsonl", '["a", "b"]\n', r"list\.jsonl:1: not a JSON object"),
    ("synrob.tsv", "sen\twrong_sen\tsynrob\na b\ta c\t{oops\n",
     r"synrob\.tsv:2: column synrob is not JSON"),
    ("noid.jsonl", '{"sentence_good": "a", "sentence_bad": "b", "synrob": {"source": "s"}}\n',
     r"noid\.jsonl:1: column synrob has no id"),
    ("latin1.tsv", "sen\twrong_sen\ncaf\xe9 a\tcaf\xe9 b\n".encode("latin-1"),
     r"latin1\.tsv: not UTF-8"),
])
def test_bad_files_are_one_line_errors(tmp_path, name, text, message):
    with pytest.raises(SynrobError, match=message) as err:
        read_pairs(_bad(tmp_path, name, text))
    assert "\n" not in str(err.value)


def test_a_missing_file_is_one_line(tmp_path):
    with pytest.raises(SynrobError, match=r"nothing\.tsv: no such pairs file"):
        read_pairs(tmp_path / "nothing.tsv")


def test_the_format_is_sniffed_without_a_known_suffix(tmp_path):
    tsv = _bad(tmp_path, "pairs.txt", "sen\twrong_sen\na b\ta c\n")
    jsonl = _bad(tmp_path, "pairs.dat", '{"sentence_good": "a b", "sentence_bad": "a c"}\n')
    assert read_pairs(tsv).format == "multiblimp" and read_pairs(jsonl).format == "blimp"


# ------------------------------------------------------------------ any text survives the round trip
def _pair_out(good: str, bad: str, pair_id: str = "s1.synrob-agreement-v0-0") -> PairOut:
    words = PairWords("a", 0, "NOUN", "b", 1, None, None, "b", 1, "VERB", False)
    agreement = {"target": 2, "subject": 1, "feature": "Number", "from": "Sing", "to": "Plur",
                 "form_from": "b", "form_to": "c", "distance": 1, "attractors": 0}
    return PairOut(pair_id, "s1", good, bad, agreement, words, {"lang": "en"})


_TEXT = st.text(min_size=1).filter(lambda t: t.strip() != "")


@settings(max_examples=200, deadline=None)
@given(good=_TEXT, bad=_TEXT, pair_id=_TEXT)
def test_any_text_round_trips(tmp_path_factory, good, bad, pair_id):
    root = tmp_path_factory.mktemp("rt")
    pair = _pair_out(good, bad, pair_id)
    tsv = root / "p.tsv"
    tsv.write_text(multiblimp_header() + multiblimp_row(pair), encoding="utf-8", newline="")
    jsonl = root / "p.jsonl"
    jsonl.write_text(blimp_line(pair), encoding="utf-8", newline="")
    for path in (tsv, jsonl):
        (item,) = read_pairs(path).items
        assert (item.id, item.source, item.good, item.bad) == (pair_id, "s1", good, bad)
        assert item.agreement == pair.agreement
