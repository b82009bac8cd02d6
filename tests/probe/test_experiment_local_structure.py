"""The ``local-structure`` experiment (Clouatre et al. 2022, Figs. 4-5): the perturbation grid,
carrier CoNLL-U of text-only sets, the Spearman table, and a real CLI run on the bundled sample
(MiniLM, GloVe, SmolLM2) that is then resumed from its run files."""

from __future__ import annotations

import json
import math
import re
import time

import pytest
from synrob.perturb.errors import ParameterError
from synrob.probe.experiments.local_structure.data import (
    PerturbedSet,
    build_set,
    grid,
    read_texts,
)
from synrob.probe.experiments.local_structure.experiment import LocalStructure, parse_models
from synrob.probe.experiments.local_structure.stats import spearman_table
from synrob.probe.tasks.base import load_gold


def test_grid_names_and_perturbers() -> None:
    sets = grid(["word", "char"], [0.25, 0.5], ["shuffle", "phrase", "flip"])
    names = [s.name for s in sets]
    assert names[0] == "none"
    assert len(sets) == 1 + 2 + 2 * 2 * 2
    assert len(set(names)) == len(names)
    assert "phrase/char/0.25" in names and "shuffle/word" in names
    kind, params = PerturbedSet("phrase", "subword", 0.25).perturber("smollm2", False)
    assert kind == "shuffle" and params == {"unit": "subword", "tokenizer": "smollm2",
                                            "mode": "phrase", "rho": 0.25}
    assert PerturbedSet("flip", "char", 0.5).perturber("smollm2", True) == (
        "flip", {"unit": "char", "keep_spaces": True, "rho": 0.5})
    with pytest.raises(ParameterError):
        grid(["word"], [1.0], ["flip"])
    with pytest.raises(ParameterError):
        grid(["byte"], [0.5], ["flip"])
    # the default preset is the documented grid: 1 + 3 full shuffles + 2 x 3 x 5 rhos
    assert len(LocalStructure().sets()) == 34


def test_parse_models() -> None:
    assert parse_models("minilm:3, glove-6b-50d:0") == [("minilm", 3), ("glove-6b-50d", 0)]
    for bad in ("minilm", "minilm:x", "minilm:3,minilm:3"):
        with pytest.raises(ParameterError):
            parse_models(bad)


def test_sets_keep_sentences_and_gold(tmp_path, sample_dev) -> None:
    clean = build_set(PerturbedSet("none"), sample_dev, seed=0, dest=tmp_path, limit=25,
                      tokenizer="smollm2", keep_spaces=False)
    words = build_set(PerturbedSet("shuffle", "word"), sample_dev, seed=0, dest=tmp_path,
                      limit=25, tokenizer="smollm2", keep_spaces=False)
    chars = build_set(PerturbedSet("flip", "char", 0.5), sample_dev, seed=0, dest=tmp_path,
                      limit=25, tokenizer="smollm2", keep_spaces=False)
    g_clean, g_words, g_chars = (load_gold(f.conllu) for f in (clean, words, chars))
    assert len(g_clean) == len(g_words) == len(g_chars) == 25
    assert clean.word_gold and words.word_gold and not chars.word_gold
    # word shuffles move tags with their words and keep the tree's depth
    for i in range(25):
        assert sorted(zip(g_clean.forms[i], g_clean.upos[i], strict=True)) == sorted(
            zip(g_words.forms[i], g_words.upos[i], strict=True))
        assert g_clean.max_depth(i) == g_words.max_depth(i)
    # the carrier CoNLL-U holds the perturbed text's whitespace tokens
    recs = read_texts(chars.jsonl)
    assert [r["perturbed"].split() for r in recs] == g_chars.forms
    assert any(r["chrf2"] < 1.0 for r in recs)
    assert all(r["chrf2"] == 1.0 and r["lev"] == 0.0 for r in read_texts(clean.jsonl))
    # built once: a second call returns the same files untouched
    mtime = chars.conllu.stat().st_mtime_ns
    again = build_set(PerturbedSet("flip", "char", 0.5), sample_dev, seed=0, dest=tmp_path,
                      limit=25, tokenizer="smollm2", keep_spaces=False)
    assert again == chars and chars.conllu.stat().st_mtime_ns == mtime


def test_spearman_table() -> None:
    struct = {s: {"chrf2": c, "lev": lv, "compression": 4.0}
              for s, c, lv in [("a", 1.0, 0.0), ("b", 0.9, 0.5), ("c", 0.8, 0.2), ("d", 0.5, 0.9)]}
    perf = {"p": {"a": 0.9, "b": 0.8, "c": 0.7, "d": 0.1}, "q": {"a": 0.5, "b": 0.4}}
    table = spearman_table(struct, perf)
    assert table["chrf2"]["p"] == (pytest.approx(1.0), 4)
    assert table["lev"]["p"][0] == pytest.approx(-0.8)
    assert math.isnan(table["compression"]["p"][0])  # constant metric
    assert math.isnan(table["chrf2"]["q"][0]) and table["chrf2"]["q"][1] == 2


@pytest.mark.slow
def test_cli_run_sample_and_resume(cli, tmp_path) -> None:
    out = tmp_path / "ls"
    args = ["run", "local-structure", "--preset", "sample", "-o", out, "--json",
            "-p", "test_limit=30", "-p", "lm_limit=6", "-p", "kinds=shuffle,flip",
            "-p", "units=word,char", "-p", "epochs=4"]
    res = cli(args)
    assert res.exit_code == 0, res.stderr
    data = json.loads(res.stdout)
    assert data["executed"] == len(data["runs"]) == 4 + 5 * 2  # probes + structure/LM per set
    rows = data["rows"]

    def value(**where):
        hits = [r["value"] for r in rows if all(r.get(k) == v for k, v in where.items())]
        assert len(hits) == 1, where
        return hits[0]

    def has(**where):
        return any(all(r.get(k) == v for k, v in where.items()) for r in rows)

    assert value(set="none", metric="chrf2") == 1.0 and value(set="none", metric="lev") == 0.0
    # character shuffles destroy local structure far more than word shuffles
    assert value(set="shuffle/char", metric="chrf2") < value(set="shuffle/word", metric="chrf2")
    assert value(set="shuffle/char", metric="compression") < value(set="none",
                                                                   metric="compression")
    # POS is word-level only; tree-depth is scored on every set
    assert not has(task="pos", set="shuffle/char")
    assert has(task="tree-depth", encoder="minilm", set="flip/char/0.5")
    # static vectors cannot see word order: identical scores on word-level sets
    for task in ("pos", "tree-depth"):
        clean = value(task=task, encoder="glove-6b-50d", set="none", split="test")
        for s in ("shuffle/word", "flip/word/0.5"):
            assert value(task=task, encoder="glove-6b-50d", set=s) == pytest.approx(clean)
    # a contextual encoder does: POS drops under a full word shuffle
    assert value(task="pos", encoder="minilm", set="shuffle/word") < value(
        task="pos", encoder="minilm", set="none", split="test")
    assert value(metric="loglik_per_char", set="shuffle/char") < value(
        metric="loglik_per_char", set="none")
    # every probe score on a set has its bootstrap interval; every rho is a derived row, and a
    # probe's rho has an interval from the same resamples of every set
    probe_tests = [r for r in rows if r.get("encoder") and r["split"] == "test"]
    assert probe_tests and all(r["ci_low"] <= r["value"] <= r["ci_high"] for r in probe_tests)
    rhos = {(r["structure_metric"], r["performance"]): r for r in rows if r.get("derived")}
    rho = rhos[("chrf2", "tree-depth minilm:3")]
    assert rho["metric"] == "spearman_rho" and rho["sets"] == 5 and rho["seeds"] == [0]
    assert -1 <= rho["ci_low"] <= rho["ci_high"] <= 1
    report = (out / "report.md").read_text(encoding="utf-8")
    assert "## Spearman correlation" in report and "| chrF-2 |" in report
    assert re.search(r"-?\d\.\d\d \[-?\d\.\d\d, -?\d\.\d\d\] \(5\)", report)
    assert (out / "local-structure-scatter.png").stat().st_size > 10_000

    # finished: a re-run executes nothing and is fast
    t0 = time.perf_counter()
    again = json.loads(cli(args).stdout)
    assert again["executed"] == 0 and time.perf_counter() - t0 < 20
    # an interrupted run (one run file missing) re-executes only that run, same numbers
    victim = next(r for r in again["runs"] if r["label"] == "glove-6b-50d:0 tree-depth")
    (out / "runs" / f"{victim['id']}.json").unlink()
    resumed = json.loads(cli(args).stdout)
    assert resumed["executed"] == 1
    assert [r["value"] for r in resumed["rows"]] == [r["value"] for r in rows]
