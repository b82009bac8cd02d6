"""``synrob probe --control --mdl --bootstrap N --seeds ...`` on the bundled EWT sample with
GloVe (offline static vectors): JSON keys, exact selectivity, MDL compression, paired drops."""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import numpy as np
import pytest
from synrob.perturb.io.data import sample_path

GLOVE = "glove-6b-50d"
BASE = ["probe", "--encoder", GLOVE, "--layer", "0", "--train", "sample:en_ewt:train",
        "--dev", "sample:en_ewt:dev", "--device", "cpu"]


@pytest.mark.parametrize(("args", "message"), [
    (["--task", "distance", "--mdl"], "--mdl needs a classification task"),
    (["--task", "root", "--control"], "has no control task"),
    (["--task", "pos", "--seeds", "0,x"], "--seeds must be"),
])
def test_refused_combinations_are_one_line_errors(cli, args, message):
    r = cli([*BASE, "--test", "sample:en_ewt:test", *args])
    assert r.exit_code != 0
    assert message in r.stderr and len(r.stderr.strip().splitlines()) == 1


@pytest.mark.slow
@pytest.mark.model
def test_control_mdl_bootstrap_json(cli, tmp_path):
    copy = tmp_path / "copy.conllu"
    shutil.copy(sample_path("test"), copy)
    test = str(sample_path("test"))
    r = cli([*BASE, "--task", "pos", "--test", test, "--test", copy, "-p", "epochs=5",
             "--control", "--mdl", "--bootstrap", "200", "--json"])
    assert r.exit_code == 0, r.stderr
    out = json.loads(r.stdout)
    for f in (test, str(copy)):
        res = out["results"][f]
        assert {"control", "selectivity", "mdl", "control_mdl", "acc_ci95"} <= set(res)
        for key in ("acc", "words_right"):
            assert res["selectivity"][key] == res[key] - res["control"][key]
            low, high = res[f"{key}_ci95"]
            assert low <= res[key] <= high
            low, high = res["control"][f"{key}_ci95"]
            assert low <= res["control"][key] <= high
            low, high = res["selectivity"][f"{key}_ci95"]
            assert low <= res["selectivity"][key] <= high
        for mdl in ("mdl", "control_mdl"):
            m = res[mdl]
            assert m["compression"] == pytest.approx(m["uniform_bits"] / m["online_bits"])
        assert res["mdl"]["compression"] > 1
        assert res["mdl"]["uniform_bits"] == res["control_mdl"]["uniform_bits"]
    rows = [x.split("\t") for x in Path(sample_path("train")).read_text(encoding="utf-8")
            .splitlines() if x[:1].isdigit()]
    rows = [r for r in rows if "-" not in r[0] and "." not in r[0]]  # syntactic words
    words, k = len(rows), len({r[3] for r in rows})
    assert out["results"][test]["mdl"]["uniform_bits"] == pytest.approx(words * math.log2(k))
    _check_baseline_intervals(out, test, 200)
    d = out["deltas"][str(copy)]  # the copy is the same sentences: no drop at all
    assert d["reference"] == test and d["aligned_by"] == "position" and d["pairs"] == 250
    assert d["acc"] == 0 and d["acc_ci95"] == [0, 0] and d["p_value"] == 1


@pytest.mark.slow
@pytest.mark.model
def test_seeds_mean_std_and_table(cli):
    r = cli([*BASE, "--task", "pos", "--test", "sample:en_ewt:test", "-p", "epochs=2",
             "--seeds", "0,1", "--json"])
    assert r.exit_code == 0, r.stderr
    out = json.loads(r.stdout)
    res = next(iter(out["results"].values()))
    assert out["seeds"] == [0, 1] and len(res["acc_seeds"]) == 2
    assert res["acc"] == pytest.approx(np.mean(res["acc_seeds"]))
    assert res["acc_std"] == pytest.approx(np.std(res["acc_seeds"]))
    r = cli([*BASE, "--task", "pos", "--test", "sample:en_ewt:test", "-p", "epochs=2",
             "--seeds", "0,1", "--bootstrap", "50"])
    assert r.exit_code == 0, r.stderr
    header = r.stdout.splitlines()[0].split()
    assert "std" in header and "ci95" in header and "acc_seeds" not in header


def _check_baseline_intervals(out: dict, test: str, n_boot: int) -> None:
    """The majority baseline's interval is the percentile interval of its per-sentence
    statistics on the layer's own resamples (default_rng(seed), stats.resample_indices), and
    the layer's lead over it is the paired difference."""
    from synrob.probe.metrics import bootstrap as st
    from synrob.probe.tasks import PosTask, load_gold, scores
    from synrob.probe.tasks.baselines import baseline_predictions

    base, res = out["baselines"]["majority"][test], out["results"][test]
    task, train, gold = PosTask(), load_gold(str(sample_path("train"))), load_gold(test)
    task.fit(train)
    _, stats = scores.score(task, gold, baseline_predictions("majority", task, train, gold))
    idx = st.resample_indices(len(gold), n_boot, np.random.default_rng(out["seed"]))
    assert base["acc_ci95"] == st.percentile_interval(st.bootstrap_values([stats["acc"]], idx))
    lead = res["lead"]["majority"]
    assert lead["acc"] == res["acc"] - base["acc"]
    low, high = lead["acc_ci95"]
    assert low <= lead["acc"] <= high
    values = np.asarray(st.bootstrap_values([stats["acc"]], idx))
    assert high - low < (base["acc_ci95"][1] - base["acc_ci95"][0]) + (
        res["acc_ci95"][1] - res["acc_ci95"][0])  # paired: narrower than the two added
    assert values.shape == (n_boot,)
