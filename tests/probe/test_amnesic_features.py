"""The ``amnesic`` experiment on Person (English EWT sample) and Gender (Czech PUD excerpt,
participles), end to end with SmolLM2 (issue 43): the pairs are the feature's, LEACE erases the
feature's labels to the majority rate, and scoring and the counterfactual run on those pairs.
Small settings: each run is one layer on 100-200 sentences and six pairs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from synrob.perturb.corpus import read_conllu

CS = Path(__file__).resolve().parent.parent / "data" / "ud" / "cs_pud" / "cs_pud-ud-test.conllu"


def _rows(cli, out: Path, *params: str) -> list[dict]:
    args = ["run", "amnesic", "-o", out, "--json", "-p", "layers=12", "-p", "bootstrap=20",
            "-p", "pair_limit=6", "-p", "also="]
    for p in params:
        args += ["-p", p]
    res = cli(args)
    assert res.exit_code == 0, res.stderr
    return json.loads(res.stdout)["rows"]


def _one(rows: list[dict], **where) -> dict:
    hits = [r for r in rows if all(r.get(k) == v for k, v in where.items())]
    assert len(hits) == 1, (where, len(hits))
    return hits[0]


def _check(rows: list[dict], out: Path, feature: str) -> None:
    acc = {c: _one(rows, section="probe", metric="accuracy", erased_task=True, condition=c,
                   contrast="")["value"] for c in ("before", "leace")}
    majority = _one(rows, section="probe", metric="majority", erased_task=True)["value"]
    assert acc["leace"] == pytest.approx(majority, abs=0.02) and acc["before"] > majority
    for c in ("clean", "erased", "random", "random_matched"):
        assert _one(rows, section="behaviour", metric="agreement_accuracy", condition=c,
                    contrast="")["pairs"] == 6
    flips = _one(rows, section="counterfactual", metric="flip_rate", condition="counterfactual")
    assert 0.0 <= flips["value"] <= 1.0
    pairs = [p for p in (out / "data").iterdir()
             if "agreement" in p.name and p.suffix == ".conllu"]
    assert pairs, list((out / "data").iterdir())
    comments = [json.loads(s.metadata["synrob.agreement"]) for s in read_conllu(pairs[0])]
    assert comments and {c["feature"] for c in comments} == {feature}
    report = (out / "report.md").read_text(encoding="utf-8")
    assert f"feats:{feature}" in report


@pytest.mark.slow
def test_person_on_the_english_sample(cli, tmp_path: Path) -> None:
    out = tmp_path / "person"
    rows = _rows(cli, out, "train=sample:en_ewt:train", "dev=sample:en_ewt:dev",
                 "test=sample:en_ewt:test", "feature=Person", "train_sentences=100",
                 "dev_sentences=30", "test_sentences=60")
    _check(rows, out, "Person")


@pytest.mark.slow
def test_gender_on_czech_participles(cli, tmp_path: Path) -> None:
    """PUD has a test split only: the first 100 sentences of its excerpt serve as train, dev
    and test at once (encoded once; the probe's numbers are a smoke test, not a finding)."""
    out = tmp_path / "gender"
    rows = _rows(cli, out, f"train={CS}", f"dev={CS}", f"test={CS}", "feature=Gender",
                 "train_sentences=100", "dev_sentences=100", "test_sentences=100",
                 "pairs_lexicon=none")
    _check(rows, out, "Gender")
    pairs = [p for p in (out / "data").iterdir()
             if "agreement" in p.name and p.suffix == ".conllu"][0]
    assert "VerbForm=Part" in pairs.read_text(encoding="utf-8")
