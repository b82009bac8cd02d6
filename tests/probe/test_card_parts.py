"""The card's parts that need no model: presets and layers, treebanks (defaults, LANG=SPEC,
the seeded 80/10/10 split), the rules of the headline, the bootstrap that resamples seeds,
the flat rows, and the board's comparability (issue 55)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from synrob.perturb.errors import LayerError, ParameterError
from synrob.perturb.io.language import LanguageError
from synrob.probe.cards.headline import fmt2, headline
from synrob.probe.cards.numbers import flat_rows
from synrob.probe.cards.presets import PRESETS, pick, preset, spread
from synrob.probe.cards.probing import decodable_from
from synrob.probe.cards.settings import CardSettings, check_request, split_languages
from synrob.probe.cards.treebanks import (
    default_treebank,
    parse_treebank_options,
    resolve_treebank,
)
from synrob.probe.metrics.bootstrap import SentenceStats, bootstrap_values, seed_draws

ROOT = Path(__file__).resolve().parents[2]
CS = ROOT / "tests" / "data" / "ud" / "cs_pud" / "cs_pud-ud-test.conllu"


def test_layers_are_spread_over_the_model_and_the_causal_ones_inside_them() -> None:
    assert spread(31, 8) == [1, 5, 9, 13, 18, 22, 26, 30]
    assert spread(31, 2) == [1, 30] and spread(7, 8) == [1, 2, 3, 4, 5, 6]
    assert spread(31, 0) == list(range(1, 31))
    with pytest.raises(LayerError):
        spread(1, 2)
    assert pick([1, 5, 9, 13, 18, 22, 26, 30], 2) == [9, 22]
    assert pick([2, 4], 1) == [4] and pick([2, 4], 5) == [2, 4]
    assert PRESETS["test"].layers == 2 and PRESETS["test"].train_sentences <= 50
    assert max(PRESETS["test"].dev_sentences, PRESETS["test"].test_sentences) <= 50
    with pytest.raises(ParameterError, match="known: test, sample, default"):
        preset("fast")


def test_languages_and_treebank_options_fail_in_one_line_before_any_model() -> None:
    assert split_languages("en, cs") == ("en", "cs")
    for bad in ("", "en,en", "english"):
        with pytest.raises(ParameterError):
            split_languages(bad)
    assert parse_treebank_options(["cs=a.conllu", "tr=ud:tr_boun"]) == {
        "cs": "a.conllu", "tr": "ud:tr_boun"}
    for bad in (["cs"], ["cs="], ["cs=a", "cs=b"]):
        with pytest.raises(ParameterError):
            parse_treebank_options(bad)
    assert default_treebank("en", "sample:en_ewt") == "sample:en_ewt"
    assert default_treebank("cs", "sample:en_ewt") == "ud:cs_pud:test"
    with pytest.raises(LanguageError, match="unknown language 'xx'"):
        default_treebank("xx", "ud:en_ewt")
    with pytest.raises(ParameterError, match="which languages= does not"):
        check_request("smollm2", ("en",), {"cs": "x"}, PRESETS["test"], {})
    with pytest.raises(ParameterError, match="fidelity check"):
        check_request("smollm2", ("en",), {}, PRESETS["test"], {"quantization": "int8"})
    with pytest.raises(ParameterError, match="not a key a card takes"):
        check_request("smollm2", ("en",), {}, PRESETS["test"], {"epochs": 3})


def test_a_single_file_is_split_80_10_10_by_a_seeded_permutation(tmp_path: Path) -> None:
    first = {"train": 0, "dev": 0, "test": 0}
    tb = resolve_treebank("cs", str(CS), tmp_path / "a", seed=0, first=first)
    again = resolve_treebank("cs", str(CS), tmp_path / "b", seed=0, first=first)
    other = resolve_treebank("cs", str(CS), tmp_path / "c", seed=1, first=first)
    rec = tb.record()
    assert rec["split"]["sentences"] == {"train": 240, "dev": 30, "test": 30}
    assert rec["split"]["seed"] == 0 and len(rec["split"]["source_sha256"]) == 64
    assert {s: f["sha256"] for s, f in rec["files"].items()} == {
        s: f["sha256"] for s, f in again.record()["files"].items()}
    assert rec["files"]["test"]["sha256"] != other.record()["files"]["test"]["sha256"]
    ids = {s: [ln for ln in Path(p).read_text(encoding="utf-8").splitlines()
               if ln.startswith("# sent_id")] for s, p in tb.files.items()}
    everything = [ln for ln in CS.read_text(encoding="utf-8").splitlines()
                  if ln.startswith("# sent_id")]
    assert sorted(sum(ids.values(), [])) == sorted(everything)  # a partition
    assert all(ids[s] == [x for x in everything if x in set(ids[s])] for s in ids)  # in order
    assert all(Path(p).name.endswith(f"-ud-{s}.conllu") for s, p in tb.files.items())
    cut = resolve_treebank("cs", str(CS), tmp_path / "d", seed=0,
                           first={"train": 40, "dev": 20, "test": 30})
    assert [cut.record()["files"][s]["sentences"] for s in ("train", "dev", "test")] == [40, 20,
                                                                                         30]
    assert CS.stat().st_size > 0  # the input is never written over


def _task(sel: list[tuple[int, float, float]]) -> dict:
    return {"metric": "acc", "best_layer": sel[0][0], "baselines": {}, "layers": [
        {"layer": layer, "measures": {"selectivity_acc": {"value": (lo + hi) / 2,
                                                          "ci95": [lo, hi], "settings": "s"}}}
        for layer, lo, hi in sel]}


def test_decodable_from_needs_the_lower_end_above_005_from_l_on() -> None:
    assert decodable_from(_task([(1, 0.01, 0.2), (2, 0.06, 0.2), (3, 0.07, 0.3)])) == 2
    assert decodable_from(_task([(1, 0.1, 0.2), (2, 0.04, 0.2), (3, 0.07, 0.3)])) == 3
    assert decodable_from(_task([(1, 0.1, 0.2), (2, 0.2, 0.3), (3, 0.05, 0.3)])) is None


def test_headline_sentences_show_the_numbers_they_list() -> None:
    sections = {
        "structure": {"status": "absent", "reason": "x"},
        "morphosyntax": {"status": "ok", "tasks": {
            "pos": _task([(1, 0.2, 0.3), (2, 0.25, 0.35)]),
            "feats:Number": _task([(1, 0.01, 0.2), (2, 0.01, 0.2)])}},
        "jabberwocky": {"status": "absent", "reason": "x"},
        "behaviour": {"status": "ok", "features": {"Number": {
            "accuracy": {"value": 0.9, "ci95": [0.8, 0.95], "settings": "b"}, "pairs": 40,
            "attractors": {"0": {"n": 30, "value": 0.95, "ci95": [0.9, 1.0], "settings": "b"},
                           "1+": {"n": 10, "value": 0.7, "ci95": [0.4, 0.9],
                                  "settings": "b"}}}}},
        "causal": {"status": "absent", "reason": "x"}}
    claims = headline("en", sections, "m")
    assert [c["rule"] for c in claims] == ["decodable", "behaviour", "absent"]
    assert claims[2] == {"rule": "absent", "numbers": [],
                         "text": "No structure, Jabberwocky and causal sections: x."}
    assert claims[0]["text"] == ("POS is decodable from layer 1 on (selectivity 0.25 [0.20, "
                                 "0.30]); Number is decodable at no probed layer.")
    assert "0.90 [0.80, 0.95] of 40 Number agreement pairs" in claims[1]["text"]
    for c in claims:
        for n in c["numbers"]:
            assert n["pointer"].startswith("/languages/en/sections/") and n["shown"] in c["text"]
    assert fmt2(None) == "n/a" and fmt2(0.125) == "0.12"


def test_intervals_resample_the_seeds_too_with_several_seeds() -> None:
    rng = np.random.default_rng(0)
    stats = [SentenceStats("ratio", rng.random(50) + off, np.ones(50)) for off in (0.0, 0.5)]
    idx = np.random.default_rng(1).integers(0, 50, size=(400, 50))
    assert seed_draws(1, 400, rng) is None
    plain = bootstrap_values(stats, idx)
    assert np.array_equal(plain, bootstrap_values(stats, idx, None))
    drawn = seed_draws(2, 400, np.random.default_rng(2))
    assert drawn.shape == (400, 2)
    wide = bootstrap_values(stats, idx, drawn)
    assert np.std(wide) > 2 * np.std(plain)  # the seeds' difference is in the interval now
    same = bootstrap_values([stats[0], stats[0]], idx, drawn)
    assert np.allclose(same, bootstrap_values([stats[0]], idx))


def test_flat_rows_name_every_number_of_a_card() -> None:
    data = {"languages": {"en": {"sections": {
        "structure": {"status": "ok", "tasks": {"distance": {
            "metric": "uuas", "best_layer": 2, "baselines": {"path": {"uuas": {
                "value": 0.4, "ci95": [0.3, 0.5], "settings": "s"}}},
            "layers": [{"layer": 2, "measures": {"uuas": {"value": 0.6, "ci95": [0.5, 0.7],
                                                          "settings": "s"}}}]}}},
        "behaviour": {"status": "ok", "features": {"Number": {
            "accuracy": {"value": 0.9, "ci95": [0.8, 1.0], "settings": "b"},
            "distance": {"1": {"n": 3, "value": 1.0, "ci95": [1.0, 1.0], "settings": "b"}}}}},
        "causal": {"status": "absent", "reason": "none"}}}}}
    rows = flat_rows(data)
    assert {"lang": "en", "section": "structure", "task": "distance", "baseline": "path",
            "measure": "uuas", "value": 0.4, "ci_low": 0.3, "ci_high": 0.5,
            "settings": "s"} in rows
    assert {"lang": "en", "section": "structure", "task": "distance", "layer": 2,
            "measure": "uuas", "value": 0.6, "ci_low": 0.5, "ci_high": 0.7,
            "settings": "s"} in rows
    assert {"lang": "en", "section": "behaviour", "feature": "Number", "distance": "1",
            "measure": "agreement_accuracy", "value": 1.0, "ci_low": 1.0, "ci_high": 1.0,
            "settings": "b"} in rows
    assert len(rows) == 4


def test_settings_read_back_from_card_json() -> None:
    s = CardSettings("smollm2", ("en", "cs"), {"en": "sample:en_ewt", "cs": "x.conllu"},
                     PRESETS["test"], (2, 4), (4,), {"layer_only": True}, 3)
    data = json.loads(json.dumps(s.as_json()))
    assert CardSettings.from_json(data) == s and data["seeds"] == [3]
    data["preset"]["epochs"] = 99
    with pytest.raises(ParameterError, match="has changed"):
        CardSettings.from_json(data)
    with pytest.raises(ParameterError, match="incomplete"):
        CardSettings.from_json({"model": "x"})
