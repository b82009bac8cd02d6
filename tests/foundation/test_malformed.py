"""Malformed CoNLL-U: every error names file, line and problem; --skip-invalid skips it.

Each case is a sentence block placed after a good sentence (3 lines), so its line numbers are
offsets inside the block (line 1 is its ``# sent_id`` comment).
"""

from __future__ import annotations

import itertools
import warnings

import pytest
from synrob.perturb.corpus import ConlluWarning, read_conllu, sentences_from_string
from synrob.perturb.errors import ConlluError
from synrob.perturb.io.validate import validate_block

_ids = itertools.count()


def good(sid: str | None = None) -> str:
    sid = sid or f"ok-{next(_ids)}"
    return f"# sent_id = {sid}\n1\tHi\thi\tINTJ\tUH\t_\t0\troot\t0:root\t_\n\n"


GOOD = good("ok")


def _sent(*rows: str, sid: str = "bad") -> str:
    return f"# sent_id = {sid}\n" + "".join(r + "\n" for r in rows) + "\n"


def _row(i: int, form: str, head: str, extra: str = "") -> str:
    return f"{i}\t{form}\t{form}\tX\tX\t_\t{head}\tdep\t_\t_{extra}"


def _r(ident: str, head: str = "_", deprel: str = "dep", deps: str = "_", feats: str = "_",
       form: str = "w") -> str:
    return f"{ident}\t{form}\t{form}\tX\tX\t{feats}\t{head}\t{deprel}\t{deps}\t_"


def _mwt(ident: str, head: str = "_") -> str:
    return f"{ident}\tww\t_\t_\t_\t_\t{head}\t_\t_\t_"


def _empty(ident: str, deps: str = "1:dep", head: str = "_") -> str:
    return f"{ident}\te\te\tX\tX\t_\t{head}\t_\t{deps}\t_"


THREE = (_r("1", "3"), _r("2", "3"), _r("3", "0", "root"))

CASES = {
    # columns, IDs, HEAD, tree
    "columns": (_sent(_row(1, "a", "0"), "2\tb\tb\tX\tX\t_\t1\tdep"), 3,
                "expected 10 tab-separated columns, found 8"),
    "empty_column": (_sent(_row(1, "a", "0"), "2\tb\tb\t\tX\t_\t1\tdep\t_\t_"), 3,
                     "empty UPOS column (write _ for no value)"),
    "head_not_int": (_sent(_row(1, "a", "0"), _row(2, "b", "x")), 3, "non-integer HEAD 'x'"),
    "head_leading_zero": (_sent(_row(1, "a", "0"), _row(2, "b", "01")), 3,
                          "HEAD with a leading zero or sign: '01'"),
    "head_outside": (_sent(_row(1, "a", "0"), _row(2, "b", "7")), 3,
                     "HEAD 7 of word 2 points outside the sentence (0..2)"),
    "no_root": (_sent(_row(1, "a", "2"), _row(2, "b", "1")), 1, "no root"),  # sentence start
    "cycle": (_sent(_row(1, "a", "0"), _row(2, "b", "3"), _row(3, "c", "2")), 3,
              "cycle in HEAD: 2 -> 3 -> 2"),
    "bad_id": (_sent(_row(1, "a", "0"), "x\tb\tb\tX\tX\t_\t1\tdep\t_\t_"), 3, "invalid ID 'x'"),
    "unicode_digit_id": (_sent(_row(1, "a", "0"), _r("\u00b2", "1")), 3, "invalid ID '\u00b2'"),
    "word_id_gap": (_sent(_row(1, "a", "0"), _row(3, "c", "1")), 3,
                    "word ID 3 out of sequence (expected 2)"),
    "feats": (_sent(_r("1", "0", "root", feats="Number")), 2, "invalid FEATS 'Number' (expected"),
    "feats_repeated": (_sent(_r("1", "0", "root", feats="A=1|A=2")), 2,
                       "invalid FEATS 'A=1|A=2': a feature is repeated"),
    "misc_empty_item": (_sent(_row(1, "a", "0").rsplit("\t", 1)[0] + "\tA=1||B"), 2,
                        "invalid MISC 'A=1||B': empty item, name or value in ''"),
    "misc_no_value": (_sent(_row(1, "a", "0").rsplit("\t", 1)[0] + "\tSpaceAfter="), 2,
                      "invalid MISC 'SpaceAfter=': empty item, name or value in 'SpaceAfter='"),
    "misc_no_name": (_sent(_row(1, "a", "0").rsplit("\t", 1)[0] + "\t=x"), 2,
                     "invalid MISC '=x': empty item, name or value in '=x'"),
    "misc_repeated": (_sent(_row(1, "a", "0").rsplit("\t", 1)[0] + "\tA=1|A=2"), 2,
                      "invalid MISC 'A=1|A=2': 'A' is repeated"),
    "comment_inside": (_sent(_row(1, "a", "0"), "# late comment", _row(2, "b", "1")), 3,
                       "comment line inside a sentence"),
    "bom_inside": (_sent(_row(1, "a", "0")).replace("# sent", "\ufeff# sent"), 1,
                   "byte-order mark (U+FEFF) inside the file"),
    # multiword token ranges
    "range_past_end": (_sent(_mwt("1-4"), *THREE), 2,
                       "multiword token range 1-4 goes past the last word (3)"),
    "range_reversed": (_sent(_mwt("2-1"), *THREE), 2,
                       "multiword token range 2-1: its first word must come before its last"),
    "range_single": (_sent(_r("1", "3"), _mwt("2-2"), *THREE[1:]), 3,
                     "multiword token range 2-2: its first word"),
    "range_misplaced": (_sent(_mwt("2-3"), *THREE), 2,
                        "multiword token range 2-3 must come right before word 2 (the next word "
                        "here is 1)"),
    "range_after_its_word": (_sent(_r("1", "3"), _mwt("1-2"), *THREE[1:]), 3,
                             "multiword token range 1-2 must come right before word 1"),
    "range_overlap": (_sent(_mwt("1-2"), _r("1", "3"), _mwt("2-3"), *THREE[1:]), 4,
                      "multiword token range 2-3 overlaps the range ending at word 2"),
    "range_with_head": (_sent(_mwt("1-2", head="3"), *THREE), 2,
                        "multiword token 1-2 must have _ in HEAD, DEPREL and DEPS"),
    # empty nodes
    "empty_misplaced": (_sent(_r("1", "3"), _empty("2.1"), *THREE[1:]), 3,
                        "empty node 2.1 must come right after word 2 (it comes after word 1)"),
    "empty_before_first": (_sent(_empty("1.1"), *THREE), 2,
                           "empty node 1.1 must come right after word 1 (it comes before word 1)"),
    "empty_sequence": (_sent(_r("1", "3"), _empty("1.2"), *THREE[1:]), 3,
                       "empty node 1.2 out of sequence (expected 1.1)"),
    "empty_repeated": (_sent(_r("1", "3"), _empty("1.1"), _empty("1.1"), *THREE[1:]), 4,
                       "empty node 1.1 out of sequence (expected 1.2)"),
    "empty_with_head": (_sent(_r("1", "3"), _empty("1.1", head="3"), *THREE[1:]), 3,
                        "empty node 1.1 must have _ in HEAD and DEPREL"),
    "empty_without_deps": (_sent(_r("1", "3"), _empty("1.1", deps="_"), *THREE[1:]), 3,
                           "empty node 1.1 has no DEPS"),
    # enhanced DEPS
    "deps_garbage": (_sent(_r("1", "0", "root", deps="root")), 2,
                     "invalid DEPS 'root' of word 1: 'root' is not HEAD:DEPREL"),
    "deps_no_deprel": (_sent(_r("1", "0", "root", deps="0:")), 2,
                       "invalid DEPS '0:' of word 1: '0:' is not HEAD:DEPREL"),
    "deps_bad_deprel": (_sent(_r("1", "0", "root", deps="0:_x")), 2,
                        "invalid DEPS '0:_x' of word 1"),
    "deps_empty_part": (_sent(_r("1", "0", "root", deps="0:root|")), 2,
                        "invalid DEPS '0:root|' of word 1: '' is not HEAD:DEPREL"),
    "deps_head_outside": (_sent(_r("1", "0", "root", deps="5:dep")), 2,
                          "DEPS '5:dep' of word 1: head 5 is not in the sentence"),
    "deps_missing_empty_node": (_sent(_r("1", "0", "root", deps="0:root|1.1:dep")), 2,
                                "DEPS '0:root|1.1:dep' of word 1: head 1.1 is not in the sentence"),
    "deps_unsorted": (_sent(_r("1", "2", deps="2:dep|0:root"), _r("2", "0", "root", deps="0:root")),
                      2, "DEPS '2:dep|0:root' of word 1 are not sorted by head"),
    "deps_empty_node_unsorted": (_sent(_r("1", "3"), _empty("1.1", deps="3:dep"),
                                       _r("2", "3", deps="3:dep|1.1:dep"), THREE[2]), 4,
                                 "DEPS '3:dep|1.1:dep' of word 2 are not sorted by head"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_error_names_file_line_problem(tmp_path, case: str) -> None:
    text, line, problem = CASES[case]
    path = tmp_path / "bad.conllu"
    path.write_text(GOOD + text, encoding="utf-8")
    with pytest.raises(ConlluError) as info:
        list(read_conllu(path))
    err = info.value
    assert err.path == str(path)
    assert err.line == line + 3  # the good sentence takes 3 lines
    assert problem in err.problem
    assert str(err).startswith(f"{path}:{line + 3}: ")


@pytest.mark.parametrize("case", sorted(CASES))
def test_skip_invalid_skips_exactly_the_bad_sentence(tmp_path, case: str) -> None:
    path = tmp_path / "mixed.conllu"
    path.write_text(good("before") + CASES[case][0] + good("after"), encoding="utf-8")
    seen: list[ConlluError] = []
    out = list(read_conllu(path, skip_invalid=True, on_invalid=seen.append))
    assert [s.sent_id for s in out] == ["before", "after"]
    assert len(seen) == 1 and seen[0].line == CASES[case][1] + 3


VALID = _sent(
    _empty("0.1", deps="3:dep"),
    _mwt("1-2"),
    _r("1", "3", deps="0.1:dep|3:dep"),
    _r("2", "3", deps="3:dep"),
    _empty("2.1", deps="3:conj"),
    _empty("2.2", deps="2.1:dep"),
    _r("3", "0", "root", deps="0:root|2.1:dep"),
    _mwt("4-5"),
    _r("4", "3", deps="3:dep"),
    _r("5", "3", deps="3:dep:sub|3:obj"),
    sid="valid",
)


def test_ranges_empty_nodes_and_deps_where_ud_allows_them() -> None:
    (s,) = sentences_from_string(VALID)
    assert s.serialize() == VALID
    assert s.ranges() == [(1, 2, "ww"), (4, 5, "ww")]
    assert s.empty_nodes() == 3
    assert s.heads == [3, 3, 0, 3, 3]
    words = dict((t["id"], t) for t in s.tokens if isinstance(t["id"], int))
    assert words[1]["deps"] == [("dep", (0, ".", 1)), ("dep", 3)]
    assert words[3]["deps"] == [("root", 0), ("dep", (2, ".", 1))]


def test_validate_block_is_the_readers_check() -> None:
    lines = list(enumerate(CASES["range_past_end"][0].strip().splitlines(), start=1))
    with pytest.raises(ConlluError, match=r"^x\.conllu:2: multiword token range 1-4"):
        validate_block(lines, "x.conllu")
    validate_block(list(enumerate(VALID.strip().splitlines(), start=1)), "x.conllu")


def test_skip_invalid_reports_and_continues(tmp_path) -> None:
    path = tmp_path / "mixed.conllu"
    path.write_text(good() + CASES["cycle"][0] + good() + CASES["no_root"][0] + good(),
                    encoding="utf-8")
    seen: list[ConlluError] = []
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the two "bad" sent_ids repeat: a warning, not an error
        with pytest.raises(ConlluWarning):
            list(read_conllu(path, skip_invalid=True, on_invalid=seen.append))
    seen.clear()
    with pytest.warns(ConlluWarning):
        out = list(read_conllu(path, skip_invalid=True, on_invalid=seen.append))
    assert len(out) == 3
    assert [e.problem.split(":")[0] for e in seen] == ["cycle in HEAD", "no root (no word has HEAD 0)"]


def test_missing_file_is_a_domain_error(tmp_path) -> None:
    with pytest.raises(ConlluError, match="no such file"):
        list(read_conllu(tmp_path / "nope.conllu"))


# ------------------------------------------------------------------ encoding


def test_utf8_byte_order_mark_at_the_start_is_accepted(tmp_path) -> None:
    path = tmp_path / "bom.conllu"
    text = good("first") + good("second")
    path.write_bytes(b"\xef\xbb\xbf" + text.encode("utf-8"))
    out = list(read_conllu(path))
    assert [s.sent_id for s in out] == ["first", "second"]
    assert "".join(s.serialize() for s in out) == text  # the mark is not data
    assert [s.sent_id for s in read_conllu(path.open(encoding="utf-8"))] == ["first", "second"]


def test_non_utf8_byte_names_its_real_line(tmp_path) -> None:
    path = tmp_path / "latin1.conllu"
    bad = "# sent_id = cafe\n1\tcaf\u00e9\tcaf\u00e9\tNOUN\tNN\t_\t0\troot\t0:root\t_\n\n"
    path.write_bytes(good("a").encode() + bad.encode("latin-1") + good("b").encode())
    with pytest.raises(ConlluError) as info:
        list(read_conllu(path))
    assert str(info.value) == f"{path}:5: not UTF-8: byte 0xe9 at byte 6 of the line"
    seen: list[ConlluError] = []
    out = list(read_conllu(path, skip_invalid=True, on_invalid=seen.append))
    assert [s.sent_id for s in out] == ["a", "b"]
    assert [(e.line, e.sent_id) for e in seen] == [(5, "cafe")]


def test_non_utf8_in_a_comment_and_after_multibyte_text(tmp_path) -> None:
    path = tmp_path / "mixed.conllu"
    body = "1\t\u00fcber\t\u00fcber\tADP\tIN\t_\t0\troot\t0:root\t_\n\n"
    path.write_bytes(b"# sent_id = x\n# text = \xc3\xbcber \xff\n" + body.encode())
    with pytest.raises(ConlluError) as info:
        list(read_conllu(path))
    # "# text = " is 9 bytes, "\u00fc" 2 more, "ber " 4: the bad byte is the 16th
    assert str(info.value) == f"{path}:2: not UTF-8: byte 0xff at byte 16 of the line"


# ------------------------------------------------------------------ duplicate sent_id


def test_duplicate_sent_id_is_one_warning_per_file(tmp_path) -> None:
    path = tmp_path / "dup.conllu"
    path.write_text(good("a") + good("b") + good("a") + good("b") + good("c"), encoding="utf-8")
    with pytest.warns(ConlluWarning) as record:
        out = list(read_conllu(path))
    assert len(out) == 5
    assert [str(w.message) for w in record] == [
        f"{path}:7: duplicate sent_id 'a' (first at line 1); 2 sentences of this file repeat "
        "an earlier sent_id"
    ]


def test_unique_sent_ids_give_no_warning(tmp_path) -> None:
    path = tmp_path / "uniq.conllu"
    path.write_text(good() + good() + good(), encoding="utf-8")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert len(list(read_conllu(path))) == 3


# ------------------------------------------------------------------ CLI


def test_cli_validate_and_stats_skip_invalid(cli, tmp_path) -> None:
    path = tmp_path / "mixed.conllu"
    path.write_text(good() + CASES["head_outside"][0] + good(), encoding="utf-8")
    res = cli(["conllu", "validate", path])
    assert res.exit_code == 1
    assert res.stderr.strip() == f"{path}:6: HEAD 7 of word 2 points outside the sentence (0..2)"
    res = cli(["conllu", "stats", "--json", path])
    assert res.exit_code == 1 and "Traceback" not in res.stderr
    assert res.stderr.count("\n") == 1
    res = cli(["conllu", "stats", "--json", "--skip-invalid", path])
    assert res.exit_code == 0
    assert '"sentences": 2' in res.stdout and '"skipped": 1' in res.stdout
    assert "skipped invalid sentence" in res.stderr


def test_cli_validate_bom_latin1_and_duplicates(cli, tmp_path) -> None:
    path = tmp_path / "enc.conllu"
    bad = "# sent_id = c\n1\tcaf\u00e9\tcafe\tNOUN\tNN\t_\t0\troot\t0:root\t_\n\n"
    path.write_bytes(b"\xef\xbb\xbf" + good("b").encode() + bad.encode("latin-1")
                     + good("b").encode())
    res = cli(["conllu", "validate", path])
    assert res.exit_code == 1
    assert res.stderr.splitlines() == [
        f"{path}:5: not UTF-8: byte 0xe9 at byte 6 of the line",
        f"synrob: warning: {path}:7: duplicate sent_id 'b' (first at line 1)",
    ]
    ok = tmp_path / "ok.conllu"
    ok.write_bytes(b"\xef\xbb\xbf" + good("b").encode() + good("b").encode())
    res = cli(["conllu", "validate", ok])
    assert res.exit_code == 0  # a duplicate sent_id is a warning, not an error
    assert res.stderr.splitlines() == [
        f"synrob: warning: {ok}:4: duplicate sent_id 'b' (first at line 1)"]


def test_cli_validate_stdin_names_the_line(cli) -> None:
    res = cli(["conllu", "validate", "-"], stdin=GOOD + CASES["range_past_end"][0])
    assert res.exit_code == 1
    assert res.stderr.strip().endswith(":5: multiword token range 1-4 goes past the last word (3)")


JABBER_OK = """\
# sent_id = good
# text = Dogs bark.
1\tDogs\tdog\tNOUN\tNNS\tNumber=Plur\t2\tnsubj\t2:nsubj\t_
2\tbark\tbark\tVERB\tVBP\tMood=Ind|Number=Plur|Person=3|Tense=Pres|VerbForm=Fin\t0\troot\t0:root\tSpaceAfter=No
3\t.\t.\tPUNCT\t.\t_\t2\tpunct\t2:punct\t_

"""
JABBER_BAD_RANGE = """\
# sent_id = bad-range
# text = Cats don't go
1-4\tdon't\t_\t_\t_\t_\t_\t_\t_\t_
1\tdo\tdo\tAUX\tVBP\tMood=Ind|Tense=Pres|VerbForm=Fin\t3\taux\t3:aux\t_
2\tnot\tnot\tPART\tRB\tPolarity=Neg\t3\tadvmod\t3:advmod\t_
3\tgo\tgo\tVERB\tVB\tVerbForm=Inf\t0\troot\t0:root\t_

"""


def test_cli_jabberwocky_on_a_bad_range_is_one_error_line(cli, tmp_path) -> None:
    path = tmp_path / "range.conllu"
    path.write_text(JABBER_OK + JABBER_BAD_RANGE, encoding="utf-8")
    res = cli(["perturb", "--kind", "jabberwocky", "--seed", "1", path])
    assert res.exit_code == 1
    assert "Traceback" not in res.stderr and "IndexError" not in res.stderr
    errors = [line for line in res.stderr.splitlines() if line.startswith("synrob: error:")]
    assert errors == [f"synrob: error: {path}:9: multiword token range 1-4 goes past the last "
                      "word (3)"]
    res = cli(["perturb", "--kind", "jabberwocky", "--seed", "1", "--skip-invalid", path])
    assert res.exit_code == 0, res.stderr
    out = sentences_from_string(res.stdout)
    assert [s.metadata["synrob.source"] for s in out] == ["good"]
    assert len(out[0]) == 3 and out[0].heads == [2, 0, 2]
    assert out[0].forms[0] != "Dogs" and out[0].forms[2] == "."  # the noun became a pseudoword
    assert f"skipped invalid sentence: {path}:9: multiword token range 1-4" in res.stderr
    assert "skipped 1 invalid" in res.stderr


@pytest.mark.model
@pytest.mark.parametrize("command", ["encode", "probe", "metrics"])
def test_cli_every_command_reads_through_the_same_checks(cli, tmp_path, command: str) -> None:
    """encode, probe and metrics reject the bad range with the same one line as validate."""
    bad = tmp_path / "range.conllu"
    bad.write_text(JABBER_OK + JABBER_BAD_RANGE, encoding="utf-8")
    ok = tmp_path / "ok.conllu"
    ok.write_bytes(b"\xef\xbb\xbf" + JABBER_OK.encode())  # a byte-order mark is fine
    args = {
        "encode": ["encode", "--encoder", "glove-6b-50d", bad],
        "probe": ["probe", "--encoder", "glove-6b-50d", "--layer", "0", "--task", "distance",
                  "--train", bad, "--dev", ok, "--test", ok],
        "metrics": ["metrics", ok, bad],
    }[command]
    res = cli(args)
    assert res.exit_code == 1
    assert "Traceback" not in res.stderr
    assert [line for line in res.stderr.splitlines() if line.startswith("synrob: error:")] == [
        f"synrob: error: {bad}:9: multiword token range 1-4 goes past the last word (3)"]
