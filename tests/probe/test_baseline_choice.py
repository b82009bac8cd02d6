"""A model's lead is measured against a baseline chosen on dev (issue 27 item 3a): in the
jabberwocky experiment (clean dev, the same baseline in both conditions) and in senteval; test
scores cannot change the choice, and the lead's interval is the plain paired bootstrap against
that one baseline."""

from __future__ import annotations

import copy

import numpy as np
import pytest
from synrob.perturb.errors import SynrobError
from synrob.probe.experiments.intervals import attach, delta
from synrob.probe.experiments.jabberwocky.stats import chosen_baselines, derived_rows, summarize
from synrob.probe.experiments.senteval.stats import leads

PROBES = ["structural"]
DEV = {"layer0": 0.52, "fast+pos": 0.45, "path": 0.40, "majority": 0.47}


def _row(role: str, split: str, test_on: str, value: float, rng: np.random.Generator,
         layer: int | None = None, draw: int | None = None, metric: str = "uuas") -> dict:
    row = {"probe": "structural", "role": role, "encoder": "minilm" if role != "path" else role,
           "layer": layer, "train_on": "clean", "test_on": test_on, "draw": draw,
           "split": split, "metric": metric, "value": value, "seed": 0}
    if split == "test":  # resamples spread around the value
        row = attach(row, value + rng.normal(0, 0.01, 200))
    return row


def _rows(test: dict[str, float], dev: dict[str, float]) -> list[dict]:
    """Model layer 3 (best on dev) and four baselines, clean test and two Jabberwocky draws."""
    rng = np.random.default_rng(0)
    rows = [_row("model", "dev", "clean", 0.70, rng, layer=3),
            _row("model", "dev", "clean", 0.60, rng, layer=2)]
    for role, layer in (("model", 3), ("layer0", 0), ("fast+pos", 0), ("path", None),
                        ("majority", None)):
        score = test.get(role, 0.72)
        if role != "model":
            rows.append(_row(role, "dev", "clean", dev[role], rng, layer=layer))
        rows.append(_row(role, "test", "clean", score, rng, layer=layer))
        rows += [_row(role, "test", "jabberwocky", score - 0.05 * (role != "path"), rng,
                      layer=layer, draw=d) for d in (0, 1)]
    return rows


def test_the_baseline_is_the_best_on_clean_dev() -> None:
    rows = _rows({"layer0": 0.50, "fast+pos": 0.44, "path": 0.43, "majority": 0.46}, DEV)
    assert chosen_baselines(rows, PROBES) == {("structural", "uuas"): "layer0"}
    dev = {**DEV, "majority": 0.60}
    assert chosen_baselines(_rows({}, dev), PROBES) == {("structural", "uuas"): "majority"}
    tie = {**DEV, "fast+pos": 0.52}  # a tie on dev goes to the first in the report's order
    assert chosen_baselines(_rows({}, tie), PROBES) == {("structural", "uuas"): "layer0"}


def test_changing_test_scores_cannot_change_the_chosen_baseline() -> None:
    fair = _rows({"layer0": 0.50, "fast+pos": 0.44, "path": 0.43, "majority": 0.46}, DEV)
    # on test, path is now far the best baseline in both conditions, layer 0 the worst
    skewed = _rows({"layer0": 0.20, "fast+pos": 0.44, "path": 0.69, "majority": 0.46}, DEV)
    for rows in (fair, skewed):
        lead = summarize(rows, PROBES)["lead"][0]
        assert lead["baseline"] == "layer 0"
        model = [r for r in rows if r["role"] == "model" and r["split"] == "test"]
        base = [r for r in rows if r["role"] == "layer0" and r["split"] == "test"]
        clean = delta([r for r in model if r["test_on"] == "clean"],
                      [r for r in base if r["test_on"] == "clean"])
        jab = delta([r for r in model if r["test_on"] == "jabberwocky"],
                    [r for r in base if r["test_on"] == "jabberwocky"])
        assert lead["lead_clean"] == pytest.approx(clean["value"])
        assert lead["lead_clean_ci"] == [clean["ci_low"], clean["ci_high"]]
        assert lead["lead_jab_ci"] == [jab["ci_low"], jab["ci_high"]]
    derived = [r for r in derived_rows(skewed, PROBES) if r["metric"].startswith("lead_")]
    assert derived and {r["baseline"] for r in derived} == {"layer 0"}


def test_a_baseline_without_a_dev_score_is_an_error() -> None:
    rows = [r for r in _rows({}, DEV) if not (r["role"] == "path" and r["split"] == "dev")]
    with pytest.raises(SynrobError, match="no clean dev uuas .* path"):
        summarize(copy.deepcopy(rows), PROBES)


def _senteval_rows(test: dict[str, float]) -> list[dict]:
    rng = np.random.default_rng(1)
    dev = {"majority": 0.50, "length": 0.55, "nb-uni-tfidf": 0.70, "bov-glove": 0.65,
           "minilm L2 logreg": 0.80}
    rows = []
    for row, value in dev.items():
        kind = "encoder" if row.startswith("minilm") else "baseline"
        fields = {"row": row, "task": "Tense", "kind": kind, "metric": "accuracy",
                  "encoder": "minilm", "layer": 2, "classifier": "logreg"}
        rows.append({**fields, "split": "dev", "value": value})
        score = test.get(row, value)
        rows.append(attach({**fields, "split": "test", "value": score},
                           score + rng.normal(0, 0.02, 200)))
    return rows


def test_senteval_leads_over_the_best_dev_baseline_whatever_the_test_scores() -> None:
    for test in ({}, {"majority": 0.95, "nb-uni-tfidf": 0.30}):
        lead = leads(_senteval_rows(test), ["Tense"])[0]
        assert lead["model"] == "minilm L2 logreg" and lead["baseline"] == "nb-uni-tfidf"
        assert lead["lead"] == pytest.approx(0.80 - test.get("nb-uni-tfidf", 0.70))
