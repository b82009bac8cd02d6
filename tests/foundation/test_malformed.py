"""Malformed CoNLL-U: every error names file, line and problem; --skip-invalid skips it."""

from __future__ import annotations

import pytest
from synrob.perturb.corpus import read_conllu
from synrob.perturb.errors import ConlluError

GOOD = "# sent_id = ok\n1\tHi\thi\tINTJ\tUH\t_\t0\troot\t0:root\t_\n\n"


def _sent(*rows: str, sid: str = "bad") -> str:
    return f"# sent_id = {sid}\n" + "".join(r + "\n" for r in rows) + "\n"


def _row(i: int, form: str, head: str, extra: str = "") -> str:
    return f"{i}\t{form}\t{form}\tX\tX\t_\t{head}\tdep\t_\t_{extra}"


CASES = {
    "columns": (_sent(_row(1, "a", "0"), "2\tb\tb\tX\tX\t_\t1\tdep"), 3,
                "expected 10 tab-separated columns, found 8"),
    "head_not_int": (_sent(_row(1, "a", "0"), _row(2, "b", "x")), 3, "non-integer HEAD 'x'"),
    "head_outside": (_sent(_row(1, "a", "0"), _row(2, "b", "7")), 3,
                     "HEAD 7 of word 2 points outside the sentence (0..2)"),
    "no_root": (_sent(_row(1, "a", "2"), _row(2, "b", "1")), 1, "no root"),  # sentence start
    "cycle": (_sent(_row(1, "a", "0"), _row(2, "b", "3"), _row(3, "c", "2")), 3,
              "cycle in HEAD: 2 -> 3 -> 2"),
    "bad_id": (_sent(_row(1, "a", "0"), "x\tb\tb\tX\tX\t_\t1\tdep\t_\t_"), 3, "invalid ID 'x'"),
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


def test_skip_invalid_reports_and_continues(tmp_path) -> None:
    path = tmp_path / "mixed.conllu"
    path.write_text(GOOD + CASES["cycle"][0] + GOOD + CASES["no_root"][0] + GOOD, encoding="utf-8")
    seen: list[ConlluError] = []
    out = list(read_conllu(path, skip_invalid=True, on_invalid=seen.append))
    assert len(out) == 3
    assert [e.problem.split(":")[0] for e in seen] == ["cycle in HEAD", "no root (no word has HEAD 0)"]


def test_missing_file_is_a_domain_error(tmp_path) -> None:
    with pytest.raises(ConlluError, match="no such file"):
        list(read_conllu(tmp_path / "nope.conllu"))


def test_cli_validate_and_stats_skip_invalid(cli, tmp_path) -> None:
    path = tmp_path / "mixed.conllu"
    path.write_text(GOOD + CASES["head_outside"][0] + GOOD, encoding="utf-8")
    res = cli(["conllu", "validate", path])
    assert res.exit_code == 1
    assert res.stderr.strip() == f"{path}:6: HEAD 7 of word 2 points outside the sentence (0..2)"
    res = cli(["conllu", "stats", "--json", path])
    assert res.exit_code == 1 and "Traceback" not in res.stderr
    assert res.stderr.count("\n") == 1
    res = cli(["conllu", "stats", "--json", "--skip-invalid", path])
    assert res.exit_code == 0
    assert '"sentences": 2' in res.stdout and "skipped invalid sentence" in res.stderr
