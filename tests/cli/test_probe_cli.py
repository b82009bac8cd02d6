"""``synrob probe`` end to end on EWT slices with the real MiniLM; metrics recomputed from
``--predictions`` with an independent implementation (Prim's algorithm, scipy's spearmanr)."""

from __future__ import annotations

import json
from collections import defaultdict

import numpy as np
import pytest
from scipy.stats import spearmanr
from synrob.perturb.corpus import read_conllu

pytestmark = [pytest.mark.slow, pytest.mark.model]


@pytest.fixture(scope="module")
def files(ewt_slices):
    return ewt_slices


def prim_edges(dist: list[list[float]], keep: list[int]) -> set[tuple[int, int]]:
    """Minimum spanning tree over the words in ``keep`` (Prim's algorithm, O(n^2))."""
    if len(keep) < 2:
        return set()
    inside, edges = {keep[0]}, set()
    while len(inside) < len(keep):
        best = min((dist[i][j], i, j) for i in inside for j in keep if j not in inside)
        _, i, j = best
        inside.add(j)
        edges.add((min(i, j), max(i, j)))
    return edges


def test_distance_probe_json_predictions_and_reload(cli, files, tmp_path):
    preds, saved = tmp_path / "pred.jsonl", tmp_path / "saved"
    args = ["probe", "--encoder", "minilm", "--layer", "3", "--task", "distance",
            "--train", files["train"], "--dev", files["dev"], "--test", files["test"],
            "-p", "rank=32", "-p", "epochs=5", "--seed", "1", "--device", "cpu",
            "--predictions", preds, "--save", saved, "--json"]
    r = cli(args)
    assert r.exit_code == 0, r.stderr
    out = json.loads(r.stdout)
    assert {"encoder", "layer", "task", "seed", "results", "baselines"} <= set(out)
    assert out["encoder"] == "minilm" and out["layer"] == 3 and out["task"] == "distance"
    assert out["seed"] == 1
    test_key = str(files["test"])
    res = out["results"][test_key]
    assert set(out["baselines"]) == {"path", "majority"}
    assert res["uuas"] > out["baselines"]["path"][test_key]["uuas"]

    # recompute UUAS (with / without punctuation) and DSpr from the predictions file
    upos = {s.sent_id: [w.upos for w in s.words()] for s in read_conllu(files["test"])}
    lines = [json.loads(x) for x in preds.read_text().splitlines()]
    assert len(lines) == 80 and all(x["file"] == test_key for x in lines)
    correct = {"p": 0, "np": 0}
    total = {"p": 0, "np": 0}
    by_len = defaultdict(list)
    for x in lines:
        n, heads, d = x["words"], x["gold_heads"], x["pred_distances"]
        assert len(heads) == n and len(d) == n and all(len(row) == n for row in d)
        gold = {(min(i, h - 1), max(i, h - 1)) for i, h in enumerate(heads) if h > 0}
        pred = prim_edges(d, list(range(n)))
        correct["p"] += len(gold & pred)
        total["p"] += len(gold)
        keep = [i for i in range(n) if upos[x["sent_id"]][i] != "PUNCT"]
        gold_np = {e for e in gold if e[0] in keep and e[1] in keep}
        correct["np"] += len(gold_np & prim_edges(d, keep))
        total["np"] += len(gold_np)
        if 5 <= n <= 50:
            gd = np.asarray(_tree_distances(heads))
            by_len[n].append(np.mean([spearmanr(d[i], gd[i]).statistic for i in range(n)]))
    assert res["uuas_punct"] == pytest.approx(correct["p"] / total["p"], abs=1e-9)
    assert res["uuas"] == pytest.approx(correct["np"] / total["np"], abs=2e-3)
    assert res["dspr"] == pytest.approx(np.mean([np.mean(v) for v in by_len.values()]), abs=1e-3)

    # the saved probe evaluates the same file without retraining
    r2 = cli(["probe", "--load", saved, "--test", files["test"], "--device", "cpu", "--json",
              "--no-baselines"])
    assert r2.exit_code == 0, r2.stderr
    again = json.loads(r2.stdout)
    assert again["layer"] == 3 and again["baselines"] == {}
    assert again["results"][test_key]["uuas"] == pytest.approx(res["uuas"])
    assert again["results"][test_key]["dspr"] == pytest.approx(res["dspr"], abs=1e-6)


def _tree_distances(heads: list[int]) -> list[list[int]]:
    from synrob.perturb.io.tree import distances

    return distances(heads)


def test_layer_curve_table_and_pos_predictions(cli, files, tmp_path):
    r = cli(["probe", "--encoder", "minilm", "--layer", "all", "--task", "distance",
             "--train", files["train"], "--dev", files["dev"], "--test", files["test"],
             "-p", "rank=16", "-p", "epochs=2", "--device", "cpu"])
    assert r.exit_code == 0, r.stderr
    rows = r.stdout.strip().splitlines()
    assert rows[0].split()[:4] == ["layer", "file", "uuas", "uuas_punct"]
    body = [row.split()[0] for row in rows[1:]]
    assert [b.rstrip("*") for b in body[:7]] == [str(i) for i in range(7)]
    assert sum(b.endswith("*") for b in body) == 1 and body[7:] == ["path", "majority"]

    preds = tmp_path / "pos.jsonl"
    r = cli(["probe", "--encoder", "minilm", "--layer", "2", "--task", "pos", "--train",
             files["train"], "--dev", files["dev"], "--test", files["test"], "-p", "epochs=3",
             "--device", "cpu", "--predictions", preds, "--json"])
    assert r.exit_code == 0, r.stderr
    out = json.loads(r.stdout)
    lines = [json.loads(x) for x in preds.read_text().splitlines()]
    gold = [[w.upos for w in s.words()] for s in read_conllu(files["test"])]
    right = sum(p == g for x, gs in zip(lines, gold, strict=True)
                for p, g in zip(x["pred_labels"], gs, strict=True))
    assert out["results"][str(files["test"])]["acc"] == pytest.approx(right / sum(map(len, gold)))
    assert out["baselines"]["majority"][str(files["test"])]["acc"] > 0.5


def test_probe_errors_and_listing(cli, files):
    r = cli(["probe", "--encoder", "minilm", "--task", "distance", "--train", files["train"],
             "--dev", files["dev"], "--test", files["test"]])
    assert r.exit_code == 1 and "--layer" in r.stderr
    r = cli(["probe", "--encoder", "minilm", "--layer", "1", "--test", files["test"],
             "--train", files["train"], "--dev", files["dev"], "-p", "bogus=1"])
    assert r.exit_code == 1 and "unknown parameter 'bogus'" in r.stderr
    r = cli(["probe", "--encoder", "minilm", "--layer", "1", "--task", "pos", "--probe",
             "structural", "--test", files["test"], "--train", files["train"], "--dev", files["dev"]])
    assert r.exit_code == 1 and "cannot learn" in r.stderr
    r = cli(["probes", "--json"])
    listing = json.loads(r.stdout)
    assert {"distance", "depth", "parse", "pos", "root", "tree-depth"} <= set(listing["tasks"])
    assert {"structural", "perceptron", "linear", "mlp", "fc3"} <= set(listing["probes"])
