"""The field's pair formats through the CLI: ``synrob perturb -k agreement --format
multiblimp|blimp -o FILE`` (atomic, agreement only) and ``synrob score --pairs FILE`` (the same
accuracy, intervals and breakdowns as the CoNLL-U pairs; one-line errors)."""

from __future__ import annotations

import io
import json
from contextlib import redirect_stderr
from pathlib import Path

import pytest
from synrob.perturb.corpus import read_conllu
from synrob.perturb.io.pairs import read_pairs


def _one_error(res, message: str) -> None:
    errors = [x for x in res.stderr.splitlines() if x.startswith("synrob: error:")]
    assert res.exit_code == 1 and len(errors) == 1 and message in errors[0], res.stderr
    assert "Traceback" not in res.stderr


@pytest.fixture(scope="module")
def pair_files(tmp_path_factory, sample_slice):
    """Agreement pairs of 60 sentences of the EWT sample's test split as CoNLL-U, MultiBLiMP
    and BLiMP files written by ``synrob perturb``, and the original slice."""
    from synrob.cli.app import run

    root = tmp_path_factory.mktemp("pair_files")
    out = {"original": Path(sample_slice("test", 60, root))}
    for fmt, name in (("conllu", "pairs.conllu"), ("multiblimp", "pairs.tsv"),
                      ("blimp", "pairs.jsonl")):
        with redirect_stderr(io.StringIO()) as err:
            code = run(["perturb", "-k", "agreement", str(out["original"]), "--format", fmt,
                        "-o", str(root / name)])
        assert code == 0, err.getvalue()
        out[fmt] = root / name
    return out


def test_perturb_writes_pair_files_with_the_conllu_ids(pair_files):
    ids = [s.sent_id for s in read_conllu(pair_files["conllu"])]
    assert len(ids) >= 15
    for fmt in ("multiblimp", "blimp"):
        read = read_pairs(pair_files[fmt])
        assert read.format == fmt and [i.id for i in read.items] == ids


def test_perturb_pair_format_of_another_kind_is_one_line(cli, tmp_path, sample_slice):
    orig = sample_slice("test", 5, tmp_path)
    dest = tmp_path / "bshift.tsv"
    res = cli(["perturb", "-k", "bshift", orig, "--format", "multiblimp", "-o", str(dest)])
    _one_error(res, "--format multiblimp writes agreement minimal pairs: use it with --kind "
                    "agreement, not 'bshift'")
    assert not dest.exists()


def test_perturb_pair_format_refuses_to_overwrite_its_input(cli, tmp_path, sample_slice):
    orig = sample_slice("test", 5, tmp_path)
    before = Path(orig).read_text(encoding="utf-8")
    res = cli(["perturb", "-k", "agreement", orig, "--format", "blimp", "-o", orig])
    assert res.exit_code == 1 and Path(orig).read_text(encoding="utf-8") == before


# ------------------------------------------------------------------ synrob score --pairs
def _json(res) -> tuple[list[dict], dict]:
    assert res.exit_code == 0, res.stderr
    *rows, summary = [json.loads(x) for x in res.stdout.splitlines()]
    return rows, summary


def _score(cli, lm: str, *inputs) -> tuple[list[dict], dict]:
    return _json(cli(["score", "--lm", lm, *map(str, inputs), "--json", "--bootstrap", "300",
                      "--seed", "5", "--device", "cpu"]))


_SAME = ("pairs", "preferred", "ties", "accuracy", "accuracy_ci95", "normalisation",
         "normalised", "breakdown", "breakdown_note", "skipped", "mean_logprob_original",
         "mean_logprob_perturbed")


def test_score_pairs_files_equal_the_conllu_pairs(cli, tiny_ewt_lms, pair_files):
    lm = tiny_ewt_lms["causal"]
    rows, summary = _score(cli, lm, pair_files["original"], pair_files["conllu"])
    assert summary["aligned_by"] == "source" and summary["pairs"] >= 15
    b = summary["breakdown"]
    assert b["pairs_without_metadata"] == 0 and summary["breakdown_note"] is None
    assert sum(c["n"] for c in b["distance"].values()) == summary["pairs"]
    assert sum(c["n"] for c in b["attractors"].values()) == summary["pairs"]
    assert 0 < summary["accuracy"] < 1  # a random tiny LM: a mixed preference
    for fmt in ("multiblimp", "blimp"):
        frows, fsummary = _score(cli, lm, "--pairs", pair_files[fmt])
        assert fsummary["aligned_by"] == "pairs file" and fsummary["pairs_format"] == fmt
        assert fsummary["pairs_file"] == str(pair_files[fmt]) and "original" not in fsummary
        assert {k: fsummary[k] for k in _SAME} == {k: summary[k] for k in _SAME}
        assert frows == rows  # the same ids, sources, log-probabilities and preferences


def test_score_pairs_from_python_equals_the_cli(cli, tiny_ewt_lms, pair_files):
    from synrob.probe.api import score_pairs

    lm = tiny_ewt_lms["causal"]
    _, summary = _score(cli, lm, "--pairs", pair_files["multiblimp"])
    result = score_pairs(pairs=pair_files["multiblimp"], lm=lm, bootstrap=300, seed=5,
                         device="cpu", progress=False)
    assert {k: result.summary[k] for k in _SAME} == {k: summary[k] for k in _SAME}


def test_score_table_shows_normalisations_and_breakdowns(cli, tiny_ewt_lms, pair_files):
    res = cli(["score", "--lm", tiny_ewt_lms["causal"], "--pairs", pair_files["blimp"],
               "--bootstrap", "100"])
    assert res.exit_code == 0, res.stderr
    out = res.stdout
    for label in ("(sum of log-probabilities;", "per token", "per character (lm-eval acc_norm)",
                  "per byte (lm-eval acc_bytes)", "by distance", "1: ", "2-3: ", "4+: ",
                  "by attractors", "0: ", "1+: ", f"{pair_files['blimp']} (blimp)"):
        assert label in out, label


def test_score_a_released_file_has_no_breakdown(cli, tiny_ewt_lms):
    fixture = Path(__file__).resolve().parents[1] / "data" / "pairs" / "blimp_documented.jsonl"
    rows, summary = _score(cli, tiny_ewt_lms["causal"], "--pairs", fixture)
    assert summary["pairs"] == 2 and summary["breakdown"] is None
    assert "no scored pair has synrob.agreement distance/attractor metadata" in (
        summary["breakdown_note"])
    assert [r["sentence"] for r in rows] == [f"{fixture.name}:1", f"{fixture.name}:2"]
    text = cli(["score", "--lm", tiny_ewt_lms["causal"], "--pairs", str(fixture),
                "--bootstrap", "0"])
    line = next(x for x in text.stdout.splitlines() if x.startswith("breakdown "))
    assert line.split(None, 1)[1].startswith("none: no scored pair has synrob.agreement")


@pytest.mark.parametrize(("args", "message"), [
    (["ORIG", "--pairs", "PAIRS"], "--pairs FILE replaces the CoNLL-U pairs (ORIGINAL "
                                   "PERTURBED): give one or the other"),
    (["ORIG"], "give the CoNLL-U pairs (ORIGINAL and PERTURBED) or a MultiBLiMP or BLiMP "
               "file with --pairs FILE"),
    ([], "give the CoNLL-U pairs"),
    (["--pairs", "PAIRS", "--erase", "E", "--counterfactual"],
     "--counterfactual needs the CoNLL-U pairs (ORIGINAL PERTURBED)"),
])
def test_score_input_errors_are_one_line(cli, pair_files, args, message):
    named = {"ORIG": str(pair_files["original"]), "PAIRS": str(pair_files["multiblimp"])}
    res = cli(["score", *[named.get(a, a) for a in args]])
    _one_error(res, message)
    assert res.stdout == ""


@pytest.mark.parametrize(("name", "text", "message"), [
    ("nowrong.tsv", "sen\tprefix\nThe dog runs.\tThe dog\n", "nowrong.tsv: no column "
                                                              "'wrong_sen'"),
    ("empty.jsonl", "", "empty.jsonl: empty pairs file"),
    ("bad.jsonl", '{"sentence_good": "a", "sentence_bad": "b"}\n{"sentence_good": "c"}\n',
     "bad.jsonl:2: no key 'sentence_bad'"),
])
def test_score_bad_pairs_files_are_one_line(cli, tiny_ewt_lms, tmp_path, name, text, message):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    res = cli(["score", "--lm", tiny_ewt_lms["causal"], "--pairs", str(path), "--json"])
    _one_error(res, message)
    assert res.stdout == ""  # no partial output
