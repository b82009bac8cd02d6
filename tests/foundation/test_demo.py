"""The README's main job: ``synrob demo`` on the bundled sample."""

from __future__ import annotations

import json

from synrob.perturb.corpus import read_conllu


def test_demo_perturbs_the_bundled_sample(cli, tmp_path) -> None:
    res = cli(["demo", "--out", tmp_path, "--json"])
    assert res.exit_code == 0, res.stderr
    report = json.loads(res.stdout)
    runs = {r["run"]: r for r in report["results"]}
    assert {"jabberwocky", "copos-3", "shuffle-word-full", "bshift", "coordinv"} <= set(runs)
    for r in runs.values():
        assert r["sentences"] == 250
        out = list(read_conllu(r["output"]))  # valid CoNLL-U with its tree
        assert len(out) == 250
        assert 0.0 < r["chrf2"] <= 1.0 and 0.0 <= r["lev"] <= 1.5
    assert runs["bshift"]["changed"] > 240 and runs["coordinv"]["changed"] < 50
    table = cli(["demo", "--out", tmp_path])
    assert table.exit_code == 0 and "| jabberwocky |" in table.stdout
