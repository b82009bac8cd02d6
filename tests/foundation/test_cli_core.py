"""The CLI shell: instant --help, --version, one error boundary, stats contract."""

from __future__ import annotations

import json
import subprocess
import sys


def test_help_does_not_import_torch() -> None:
    code = (
        "import sys; from synrob.cli.app import run; rc = run(['--help']);"
        "heavy = [m for m in ('torch', 'transformers', 'spacy', 'gensim', 'nltk') if m in sys.modules];"
        "print('HEAVY', heavy); sys.exit(rc)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "HEAVY []" in out.stdout
    for cmd in ("perturb", "probe", "run", "plugins", "conllu"):
        assert cmd in out.stdout


def test_version(cli) -> None:
    res = cli(["--version"])
    assert res.exit_code == 0 and res.stdout.startswith("synrob ")


def test_usage_error_exit_2(cli) -> None:
    res = cli(["conllu", "stats"])
    assert res.exit_code == 2 and "Missing argument" in res.stderr
    assert res.stderr.startswith("synrob: error: ") and res.stderr.count("\n") == 1
    assert "'synrob conllu stats --help'" in res.stderr
    res = cli(["perturb", "--no-such-option"])
    assert res.exit_code == 2 and res.stderr.count("\n") == 1
    assert res.stderr.startswith("synrob: error: No such option: --no-such-option")


def test_no_arguments_shows_the_help(cli) -> None:
    res = cli([])
    assert res.exit_code == 2 and "Commands" in res.stdout + res.stderr


def test_user_error_is_one_line_no_traceback(cli, tmp_path) -> None:
    res = cli(["conllu", "stats", str(tmp_path / "nope.conllu")])
    assert res.exit_code == 1
    assert res.stderr.strip().count("\n") == 0 and "Traceback" not in res.stderr
    assert res.stderr.startswith("synrob: error:")


def _fail_with(exc: BaseException):
    def fail(*args, **kwargs):
        raise exc

    return fail


def _crash(cli, monkeypatch, sample_dev, exc: BaseException, debug: bool = False):
    """``synrob conllu stats`` with input resolution raising ``exc`` (a bug), with or without
    ``SYNROB_DEBUG``; the CLI's result."""
    import synrob.perturb.io.data

    if debug:
        monkeypatch.setenv("SYNROB_DEBUG", "1")
    else:
        monkeypatch.delenv("SYNROB_DEBUG", raising=False)
    monkeypatch.setattr(synrob.perturb.io.data, "resolve_input", _fail_with(exc))
    return cli(["conllu", "stats", sample_dev])


BUG_LINE = ("synrob: internal error: IndexError: list index out of range "
            "(a bug: please report it with SYNROB_DEBUG=1 output)\n")


def test_internal_error_is_one_bug_line_exit_70(cli, monkeypatch, sample_dev) -> None:
    res = _crash(cli, monkeypatch, sample_dev, IndexError("list index out of range"))
    assert res.exit_code == 70
    assert res.stderr == BUG_LINE and res.stdout == ""


def test_internal_error_traceback_with_synrob_debug(cli, monkeypatch, sample_dev) -> None:
    res = _crash(cli, monkeypatch, sample_dev, IndexError("list index out of range"), debug=True)
    assert res.exit_code == 70
    assert res.stderr.startswith("Traceback (most recent call last):")
    assert "in fail" in res.stderr and "IndexError: list index out of range\n" in res.stderr
    assert res.stderr.endswith(BUG_LINE)


def test_internal_error_message_is_one_line(cli, monkeypatch, sample_dev) -> None:
    import synrob.perturb.io.data

    res = _crash(cli, monkeypatch, sample_dev, RuntimeError("first line\nsecond line"))
    assert res.exit_code == 70
    assert res.stderr == ("synrob: internal error: RuntimeError: first line "
                          "(a bug: please report it with SYNROB_DEBUG=1 output)\n")
    monkeypatch.setattr(synrob.perturb.io.data, "resolve_input", _fail_with(AssertionError()))
    res = cli(["conllu", "stats", sample_dev])
    assert res.exit_code == 70 and res.stderr.startswith("synrob: internal error: AssertionError (a bug")


def test_user_error_traceback_only_with_synrob_debug(cli, monkeypatch, tmp_path) -> None:
    monkeypatch.setenv("SYNROB_DEBUG", "1")
    res = cli(["conllu", "stats", str(tmp_path / "nope.conllu")])
    assert res.exit_code == 1 and res.stderr.startswith("Traceback (most recent call last):")
    assert res.stderr.splitlines()[-1].startswith("synrob: error: ")
    monkeypatch.setenv("SYNROB_DEBUG", "0")
    res = cli(["conllu", "stats", str(tmp_path / "nope.conllu")])
    assert res.exit_code == 1 and "Traceback" not in res.stderr and res.stderr.count("\n") == 1


def test_ctrl_c_is_one_line_exit_130(cli, monkeypatch, sample_dev) -> None:
    import synrob.perturb.io.data

    monkeypatch.setattr(synrob.perturb.io.data, "resolve_input", _fail_with(KeyboardInterrupt()))
    res = cli(["conllu", "stats", sample_dev])
    assert res.exit_code == 130 and res.stderr == "synrob: interrupted\n"


def test_real_sigint_exits_130(sample_dev) -> None:
    """A real Ctrl-C (SIGINT) while `synrob perturb` waits for more stdin."""
    import os
    import signal

    first = sample_dev.read_text(encoding="utf-8").split("\n\n")[0] + "\n\n"
    proc = subprocess.Popen(
        [sys.executable, "-c", "from synrob.cli.app import main; main()",
         "perturb", "--kind", "shuffle", "--batch-size", "1"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
        # a runner started in the background ignores SIGINT, and the child would inherit that
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    proc.stdin.write(first)
    proc.stdin.flush()
    assert proc.stdout.readline().startswith("# ")  # the command is running: interrupt it
    proc.send_signal(signal.SIGINT)
    assert proc.wait(timeout=60) == 130
    assert proc.stderr.read() == "synrob: interrupted\n"
    proc.stdin.close()
    proc.stdout.close()
    proc.stderr.close()


def test_closed_stdout_exits_quietly(ewt_train) -> None:
    """`synrob perturb ... | head -1` through a real pipe: no traceback, no message."""
    proc = subprocess.Popen(
        [sys.executable, "-c", "from synrob.cli.app import main; main()",
         "perturb", "--kind", "shuffle", str(ewt_train)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    assert proc.stdout is not None and proc.stderr is not None
    first = proc.stdout.readline()
    proc.stdout.close()  # what head does after its first line
    err = proc.stderr.read()
    assert proc.wait(timeout=120) == 141
    assert first.startswith("# ")
    assert err == ""


def test_stats_contract_on_ewt(cli, ewt_dev) -> None:
    res = cli(["conllu", "stats", "--json", ewt_dev])
    assert res.exit_code == 0
    row = json.loads(res.stdout)
    assert row["file"] == str(ewt_dev)
    assert row["sentences"] == 2001
    assert row["words"] == 25148 - 1  # syntactic words: no ranges, no empty nodes
    assert row["multiword_tokens"] == 359
    assert row["empty_nodes"] == 4
    assert row["max_depth"] == 10


def test_stats_counts_match_a_direct_count(cli, ewt_dev) -> None:
    words = ranges = empties = 0
    for line in ewt_dev.read_text(encoding="utf-8").splitlines():
        if not line or line.startswith("#"):
            continue
        first = line.split("\t", 1)[0]
        if "-" in first:
            ranges += 1
        elif "." in first:
            empties += 1
        else:
            words += 1
    row = json.loads(cli(["conllu", "stats", "--json", ewt_dev]).stdout)
    assert (row["words"], row["multiword_tokens"], row["empty_nodes"]) == (words, ranges, empties)


def test_json_output_is_valid_json_with_undefined_metrics_as_null(capsys) -> None:
    """emit_json is the CLI's one JSON writer: NaN/inf (undefined metrics) become null."""
    from synrob.cli.output import emit_json

    emit_json({"uuas": float("nan"), "rows": [1.5, float("inf"), (float("-inf"), 2)],
               "nested": {"dspr": float("nan"), "n": 3}})
    line = capsys.readouterr().out
    assert "NaN" not in line and "Infinity" not in line
    assert json.loads(line) == {"uuas": None, "rows": [1.5, None, [None, 2]],
                                "nested": {"dspr": None, "n": 3}}
