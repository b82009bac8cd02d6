"""bench/amnesic.py's pure parts: exclusive phase times, the FLOP counts of the floor, and the
row comparison behind ``rows_identical`` (no model runs)."""

from __future__ import annotations

import json
import math
from pathlib import Path
from types import ModuleType

import pytest

from .bench_script import load_bench

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    return load_bench("amnesic", "amnesic_bench")


def test_a_nested_phase_owns_its_seconds(bench: ModuleType) -> None:
    now = [0.0]
    phases = bench.Phases(clock=lambda: now[0])

    def inner() -> str:
        now[0] += 3.0
        return "inner"

    def outer() -> str:
        now[0] += 1.0
        got = phases.wrap("loading", inner)()
        now[0] += 2.0
        return got

    assert phases.wrap("probe_fits", outer)() == "inner"
    assert phases.seconds == {"probe_fits": 3.0, "loading": 3.0}
    phases.reset()
    assert not phases.seconds


def test_a_phase_that_raises_is_still_timed(bench: ModuleType) -> None:
    now = [0.0]
    phases = bench.Phases(clock=lambda: now[0])

    def fails() -> None:
        now[0] += 2.0
        raise ValueError("no")

    with pytest.raises(ValueError):
        phases.wrap("lm_scoring", fails)()
    assert phases.seconds["lm_scoring"] == 2.0


CONFIG = {"hidden_size": 4, "num_attention_heads": 2, "num_key_value_heads": 1,
          "intermediate_size": 8, "vocab_size": 10, "num_hidden_layers": 3}


def test_lm_flop_counts_every_scored_token_once(bench: ModuleType) -> None:
    # sequences of 3 and 2 tokens (start token included): 2 + 1 scored tokens
    flop = bench.lm_flop(CONFIG, [3, 2])
    tokens, blocks = 3, 3
    assert bench.lm_shapes(CONFIG)["kv"] == (1, 4, 2)  # one KV head of size 4 / 2
    assert flop["qo"] == 2 * tokens * 4 * 4 * 2 * blocks
    assert flop["kv"] == 2 * tokens * 4 * 2 * 2 * blocks
    assert flop["up"] == 2 * tokens * 4 * 8 * 2 * blocks
    assert flop["down"] == 2 * tokens * 8 * 4 * blocks
    assert flop["head"] == 2 * tokens * 4 * 10
    # positions 0 and 1 of the first sequence attend to 1 and 2 positions, the second's 0 to 1
    assert flop["attention"] == 2 * 2 * 4 * (1 + 2 + 1) * blocks
    assert bench.lm_flop(CONFIG, [1]) == dict.fromkeys(flop, 0.0)  # nothing scored


def test_probe_flop_and_floor_seconds(bench: ModuleType) -> None:
    flop = bench.probe_flop({(100, 8, 3): 5})
    assert flop == {(100, 8, 3): 4.0 * 100 * 8 * 3 * 5}
    assert bench.floor_seconds({"a": 4e9, "b": 0.0, "c": 1e9}, {"a": 2.0, "b": 0.0, "c": 1.0}
                               ) == pytest.approx(3.0)


def test_rows_identical_ignores_time_and_run_fields_not_values(bench: ModuleType) -> None:
    row = {"section": "probe", "value": 0.5, "ci_low": math.nan, "run_seconds": 3.0}
    listed = {**row, "experiment": "amnesic", "run": "abc", "seed": 0, "run_seconds": 9.0}
    assert bench.rows_identical([row], [listed])
    assert not bench.rows_identical([row], [{**row, "value": 0.5000001}])
    assert not bench.rows_identical([row], [{**row, "ci_low": 0.0}])
    assert not bench.rows_identical([row], [row, row])
    assert not bench.rows_identical([row, {**row, "value": 1.0}], [{**row, "value": 1.0}, row])


def test_compare_reads_results_json_and_rows_files(bench: ModuleType, tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    rows = [{"section": "damage", "value": 0.25, "run_seconds": 1.0}]
    (tmp_path / "results.json").write_text(json.dumps({"rows": rows}), encoding="utf-8")
    (tmp_path / "rows.json").write_text(json.dumps([{**rows[0], "run_seconds": 2.0}]),
                                        encoding="utf-8")
    (tmp_path / "other.json").write_text(json.dumps([{**rows[0], "value": 0.5}]),
                                         encoding="utf-8")
    bench.main(["--compare", str(tmp_path / "results.json"), str(tmp_path / "rows.json")])
    bench.main(["--compare", str(tmp_path / "results.json"), str(tmp_path / "other.json")])
    assert capsys.readouterr().out.splitlines() == ["rows_identical: 1", "rows_identical: 0"]
