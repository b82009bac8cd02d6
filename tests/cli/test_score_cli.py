"""``synrob score ORIGINAL PERTURBED``: the JSON contract, the summary, one-line errors."""

from __future__ import annotations

import json

import pytest

PAIR_KEYS = {"source", "sentence", "logprob_original", "logprob_perturbed",
             "logprob_per_token_original", "logprob_per_token_perturbed", "tokens_original",
             "tokens_perturbed", "chars_original", "chars_perturbed", "bytes_original",
             "bytes_perturbed", "prefers_original", "prefers_original_per_token",
             "prefers_original_per_char", "prefers_original_per_byte"}
SUMMARY_KEYS = {"original", "perturbed", "original_path", "perturbed_path", "pairs", "accuracy", "accuracy_ci95", "lm", "lm_kind", "skipped", "seed",
                "bootstrap", "aligned_by", "preferred", "ties", "mean_logprob_original",
                "mean_logprob_perturbed", "logprob_per_token_original",
                "logprob_per_token_perturbed", "dtype", "normalisation", "normalised",
                "breakdown", "breakdown_note"}
#: The inputs of --pairs FILE in place of the CoNLL-U files'.
PAIRS_FILE_KEYS = (SUMMARY_KEYS - {"original", "perturbed", "original_path", "perturbed_path"}
                   | {"pairs_file", "pairs_format"})
NORMALISED_KEYS = {"preferred", "ties", "accuracy", "accuracy_ci95"}


def _perturb(cli, kind: str, original: str, dest) -> str:
    res = cli(["perturb", "--kind", kind, "--seed", "1", original])
    assert res.exit_code == 0, res.stderr
    path = dest / f"{kind}.conllu"
    path.write_text(res.stdout, encoding="utf-8")
    return str(path)


def _check_contract(stdout: str, keys: set[str] = SUMMARY_KEYS) -> tuple[list[dict], dict]:
    rows = [json.loads(line) for line in stdout.splitlines()]
    pairs, summary = rows[:-1], rows[-1]
    assert set(summary) == keys
    assert summary["pairs"] == len(pairs) and summary["normalisation"] == "sum"
    assert set(summary["normalised"]) == {"per_token", "per_char", "per_byte"}
    for norm, cell in summary["normalised"].items():
        assert set(cell) == NORMALISED_KEYS
        assert cell["preferred"] == sum(r[f"prefers_original_{norm}"] for r in pairs)
    for row in pairs:
        assert set(row) == PAIR_KEYS
        assert row["prefers_original"] == (row["logprob_original"] > row["logprob_perturbed"])
        assert row["prefers_original_per_char"] == (
            row["logprob_original"] / row["chars_original"]
            > row["logprob_perturbed"] / row["chars_perturbed"])
    if pairs:
        share = sum(r["prefers_original"] for r in pairs) / len(pairs)
        assert summary["accuracy"] == pytest.approx(share)
        lo, hi = summary["accuracy_ci95"]
        assert 0.0 <= lo <= summary["accuracy"] <= hi <= 1.0
    return pairs, summary


def test_score_tiny_causal_json_and_text(cli, tiny_lms, sample_slice, tmp_path):
    orig = sample_slice("test", 30, tmp_path)
    pert = _perturb(cli, "coordinv", orig, tmp_path)  # most sentences stay unchanged
    res = cli(["score", "--lm", tiny_lms["causal"], orig, pert, "--json", "--seed", "2",
               "--bootstrap", "200", "--device", "cpu"])
    assert res.exit_code == 0, res.stderr
    pairs, summary = _check_contract(res.stdout)
    assert summary["pairs"] + summary["skipped"] == 30 and summary["skipped"] > 0
    assert summary["aligned_by"] == "source" and summary["lm_kind"] == "causal"
    assert summary["dtype"] == "float32"  # auto: the tiny model was never bf16-checked
    assert summary["seed"] == 2 and summary["bootstrap"] == 200
    again = cli(["score", "--lm", tiny_lms["causal"], orig, pert, "--json", "--seed", "2",
                 "--bootstrap", "200", "--device", "cpu", "--batch-size", "1"])
    assert [json.loads(x)["prefers_original"] for x in again.stdout.splitlines()[:-1]] == [
        p["prefers_original"] for p in pairs]
    text = cli(["score", "--lm", tiny_lms["causal"], orig, pert])
    assert text.exit_code == 0 and "prefers original" in text.stdout
    assert f"{summary['skipped']} unchanged pairs skipped" in text.stdout
    assert not text.stdout.lstrip().startswith("{")


def test_score_tiny_masked_limit(cli, tiny_lms, sample_slice, tmp_path):
    orig = sample_slice("test", 12, tmp_path)
    pert = _perturb(cli, "bshift", orig, tmp_path)
    res = cli(["score", "--lm", tiny_lms["masked"], orig, pert, "--json", "--limit", "5"])
    assert res.exit_code == 0, res.stderr
    pairs, summary = _check_contract(res.stdout)
    assert summary["pairs"] + summary["skipped"] == 5 and summary["lm_kind"] == "masked"


@pytest.mark.parametrize(("extra", "message"), [
    (["--bootstrap", "-1"], "--bootstrap must be 0 or more, not -1"),
    (["--batch-size", "0"], "--batch-size must be at least 1, not 0"),
    (["--limit", "0"], "--limit must be at least 1, not 0"),
    (["--device", "tpu"], "tpu"),
])
def test_score_bad_options_are_one_line(cli, sample_slice, tmp_path, extra, message):
    orig = sample_slice("test", 3, tmp_path)
    res = cli(["score", orig, orig, *extra])
    errors = [x for x in res.stderr.splitlines() if x.startswith("synrob: error:")]
    assert res.exit_code == 1 and len(errors) == 1 and message in errors[0], res.stderr


def test_score_misaligned_files_are_one_line(cli, sample_slice, tmp_path):
    a = sample_slice("test", 3, tmp_path)
    b = sample_slice("test", 4, tmp_path)
    res = cli(["score", a, b])
    assert res.exit_code == 1 and "Traceback" not in res.stderr
    assert res.stderr.strip().splitlines()[-1].startswith(
        "synrob: error: files are not aligned:")
    assert "has 3 sentences" in res.stderr and "has 4" in res.stderr


@pytest.mark.slow
@pytest.mark.model
def test_score_smollm2_on_the_sample(cli, tmp_path):
    res = cli(["perturb", "--kind", "bshift", "--seed", "1", "sample:en_ewt:test"])
    assert res.exit_code == 0, res.stderr
    pert = tmp_path / "bshift.conllu"
    pert.write_text(res.stdout, encoding="utf-8")
    res = cli(["score", "--lm", "smollm2", "sample:en_ewt:test", pert, "--json", "--limit", "20"])
    assert res.exit_code == 0, res.stderr
    pairs, summary = _check_contract(res.stdout)
    assert summary["lm"] == "smollm2" and summary["lm_kind"] == "causal"
    assert summary["pairs"] + summary["skipped"] == 20 and summary["pairs"] >= 15
    assert summary["seed"] == 0 and summary["bootstrap"] == 1000
    for row in pairs:
        assert row["logprob_original"] < 0 and row["tokens_original"] > 0
        assert row["logprob_per_token_original"] == pytest.approx(
            row["logprob_original"] / row["tokens_original"])
    assert summary["accuracy"] > 0.5  # a real LM prefers real English to a bigram swap
