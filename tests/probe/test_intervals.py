"""Experiment intervals: resamples shared across runs, paired drops and leads, private fields."""

from __future__ import annotations

import math

import numpy as np
import pytest
from synrob.probe.experiments.intervals import (
    annotate,
    annotate_mean,
    boot_indices,
    boots,
    delta,
    interval,
    p_above_zero,
    public,
)
from synrob.probe.metrics.bootstrap import SentenceStats


def _row(values: np.ndarray, seed: int = 0, n_boot: int = 500) -> dict:
    return annotate_mean({"metric": "m", "value": float(np.mean(values))}, values, seed, n_boot)


def test_resamples_depend_only_on_seed_length_and_count() -> None:
    a, b = boot_indices(0, 50, 200), boot_indices(0, 50, 200)
    assert a is b and a.shape == (200, 50) and not a.flags.writeable
    assert not np.array_equal(boot_indices(1, 50, 200), a)
    assert boot_indices(0, 51, 200).shape == (200, 51)


def test_annotate_mean_matches_a_hand_computed_resample() -> None:
    values = np.arange(10, dtype=float)
    row = _row(values, n_boot=300)
    idx = boot_indices(0, 10, 300)
    assert np.allclose(row["_boot"], values[idx].mean(axis=1))
    assert row["ci_low"] <= 4.5 <= row["ci_high"]
    assert list(interval([row])) == [row["ci_low"], row["ci_high"]]
    assert public(row) == {k: v for k, v in row.items() if k != "_boot"}


def test_annotate_uses_the_metric_form_and_skips_unknown_metrics() -> None:
    right, words = np.array([3.0, 0.0, 5.0, 2.0]), np.array([4.0, 2.0, 5.0, 4.0])
    stats = {"acc": SentenceStats("ratio", right, words)}
    rows = annotate([{"metric": "acc", "value": 10 / 15}, {"metric": "other", "value": 1.0}],
                    stats, seed=3, n_boot=100)
    idx = boot_indices(3, 4, 100)
    assert np.allclose(rows[0]["_boot"], right[idx].sum(1) / words[idx].sum(1))
    assert "_boot" not in rows[1] and "ci_low" not in rows[1]


def test_paired_difference_of_identical_rows_is_exactly_zero() -> None:
    rng = np.random.default_rng(0)
    a = _row(rng.random(40))
    d = delta([a], [dict(a)])
    assert d["value"] == 0.0 and d["ci_low"] == d["ci_high"] == 0.0 and d["p_value"] == 1.0


def test_a_mean_of_equal_draws_has_exactly_no_drop() -> None:
    """(a + a + a) / 3 may differ from a in the last bit: still a drop of exactly 0, p = 1."""
    rng = np.random.default_rng(4)
    a = _row(rng.random(60) / 3)
    d = delta([a], [dict(a), dict(a), dict(a)])
    assert d["ci_low"] == d["ci_high"] == 0.0 and d["p_value"] == 1.0


def test_pairing_narrows_the_interval_of_a_shared_signal() -> None:
    """Two scores that share most of their per-sentence variation: their paired difference
    has a far narrower interval than either score."""
    rng = np.random.default_rng(1)
    base = rng.random(200)
    clean, pert = _row(base + 0.1), _row(base + 0.02 * rng.standard_normal(200))
    d = delta([clean], [pert])
    assert d["value"] == pytest.approx(clean["value"] - pert["value"])
    assert d["ci_high"] - d["ci_low"] < 0.25 * (clean["ci_high"] - clean["ci_low"])
    assert d["ci_low"] > 0 and d["p_value"] < 0.01


def test_means_over_rows_and_missing_resamples() -> None:
    rng = np.random.default_rng(2)
    r1, r2 = _row(rng.random(30)), _row(rng.random(30))
    assert np.allclose(boots([r1, r2]), (np.array(r1["_boot"]) + np.array(r2["_boot"])) / 2)
    bare = {"metric": "m", "value": 0.5}
    assert boots([r1, bare]) is None and math.isnan(interval([bare])[0])
    d = delta([r1], [bare])
    assert d["value"] == pytest.approx(r1["value"] - 0.5) and math.isnan(d["p_value"])
    assert math.isnan(delta([], [r1])["value"])
    assert boots([r1, _row(rng.random(30), n_boot=100)]) is None  # other resample counts


def test_p_value_is_undefined_without_finite_resamples() -> None:
    assert math.isnan(p_above_zero(np.full(10, np.nan)))
    assert p_above_zero(np.array([1.0, 2.0, -1.0, np.nan])) == pytest.approx(2 / 4)
