"""``synrob metrics ORIGINAL PERTURBED``: per-sentence and mean scores of aligned files."""

from __future__ import annotations

import itertools
import json

import pytest
from synrob.perturb.corpus import read_conllu
from synrob.perturb.metrics import chrf2, levenshtein


@pytest.fixture(scope="module")
def dev50(ewt_dev, tmp_path_factory):
    sents = list(itertools.islice(read_conllu(ewt_dev), 50))
    d = tmp_path_factory.mktemp("metrics")
    conllu = d / "dev50.conllu"
    conllu.write_text("".join(s.serialize() for s in sents), encoding="utf-8")
    text = d / "dev50.txt"
    text.write_text("".join(s.text + "\n" for s in sents), encoding="utf-8")
    return sents, conllu, text


def _rows(stdout: str) -> tuple[list[dict], dict]:
    rows = [json.loads(line) for line in stdout.splitlines()]
    return rows[:-1], rows[-1]


@pytest.mark.slow
@pytest.mark.model
def test_text_files_aligned_by_line(cli, dev50, tmp_path) -> None:
    sents, _, text = dev50
    reversed_words = [" ".join(reversed(s.text.split())) for s in sents]
    pert = tmp_path / "pert.txt"
    pert.write_text("\n".join(reversed_words) + "\n", encoding="utf-8")
    res = cli(["metrics", str(text), str(pert), "--json"])
    assert res.exit_code == 0, res.stderr
    rows, avg = _rows(res.stdout)
    assert len(rows) == 50 and avg["sentences"] == 50
    for row, s, p in zip(rows, sents, reversed_words, strict=True):
        assert row["chrf2"] == pytest.approx(chrf2(s.text, p), abs=1e-6)
        assert row["lev"] == pytest.approx(levenshtein(s.text, p), abs=1e-6)
        assert row["compression_original"] > 0
    mean_chrf = sum(r["chrf2"] for r in rows) / 50
    assert avg["average"]["chrf2"] == pytest.approx(mean_chrf, abs=1e-5)
    assert 0 < avg["average"]["words_changed"] <= 1
    # a file against itself: nothing changed
    res = cli(["metrics", str(text), str(text), "--json"])
    _, avg = _rows(res.stdout)
    assert avg["average"]["chrf2"] == 1.0 and avg["average"]["lev"] == 0.0
    assert avg["average"]["words_changed"] == 0.0
    assert avg["average"]["compression_original"] == avg["average"]["compression_perturbed"]


@pytest.mark.slow
@pytest.mark.model
def test_perturb_output_aligned_by_source(cli, dev50) -> None:
    sents, conllu, _ = dev50
    res = cli(["perturb", "--kind", "bshift", "--variants", "2", str(conllu)])
    pert = conllu.parent / "bshift.conllu"
    pert.write_text(res.stdout, encoding="utf-8")
    res = cli(["metrics", str(conllu), str(pert)])
    assert res.exit_code == 0, res.stderr
    lines = res.stdout.splitlines()
    assert lines[0].split("\t")[0] == "sentence"
    assert len(lines) == 1 + 100 + 1
    assert lines[-1].startswith("mean (100 sentences)")
    # the chrF-2 column equals the synrob.chrf2 comments written by perturb
    comments = [line.split(" = ")[1] for line in pert.read_text().splitlines()
                if line.startswith("# synrob.chrf2")]
    assert [row.split("\t")[1] for row in lines[1:-1]] == comments


def test_misaligned_and_missing_files(cli, dev50, tmp_path) -> None:
    _, _, text = dev50
    short = tmp_path / "short.txt"
    short.write_text("one line\n", encoding="utf-8")
    res = cli(["metrics", str(short), str(text), "--tokenizer", "smollm2"])
    assert res.exit_code == 1 and "not aligned" in res.stderr and "50" in res.stderr
    res = cli(["metrics", str(tmp_path / "none.txt"), str(text)])
    assert res.exit_code == 1 and "no such file" in res.stderr
