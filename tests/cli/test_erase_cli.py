"""``synrob erase``: the --json contract, the eraser files (-o), --load and its one-line checks.

A cheap encoder: a 16-dimensional word2vec-text file of random vectors for the words of small
EWT sample slices (the ``static`` encoder, real gensim loading), so a run takes seconds.
"""

from __future__ import annotations

import json
from itertools import islice
from pathlib import Path

import numpy as np
import pytest
from synrob.perturb.corpus import read_conllu, write_conllu
from synrob.perturb.data import sample_path

pytest.importorskip("concept_erasure")


def _vectors(path: Path, words: list[str], dim: int, seed: int) -> Path:
    rng = np.random.default_rng(seed)
    lines = [f"{len(words)} {dim}"]
    lines += [w + " " + " ".join(f"{x:.5f}" for x in rng.normal(size=dim)) for w in words]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def data(tmp_path_factory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("erase-cli")
    out: dict[str, Path] = {}
    vocab: set[str] = set()
    for split, n in (("train", 150), ("dev", 40), ("test", 60)):
        sents = list(islice(read_conllu(sample_path(split)), n))
        vocab.update(w.form for s in sents for w in s.words())
        out[split] = d / f"{split}.conllu"
        write_conllu(sents, out[split])
    out["vec"] = _vectors(d / "vec.txt", sorted(vocab), 16, 0)
    out["other"] = _vectors(d / "other.txt", sorted(vocab), 16, 1)
    return out


def _args(data, *extra) -> list:
    return ["erase", "--train", data["train"], "--dev", data["dev"], "--test", data["test"],
            "--device", "cpu", "--bootstrap", "200", *extra]


@pytest.fixture(scope="module")
def fitted(data, tmp_path_factory) -> dict:
    from tests.conftest import _run_cli

    out = tmp_path_factory.mktemp("eraser") / "pos.safetensors"
    r = _run_cli(_args(data, "--encoder", data["vec"], "--layer", "0", "--task", "pos",
                       "--also", "feats,deprel:subtype=strip", "-o", out, "--json"))
    assert r.exit_code == 0, r.stderr
    return {"result": r, "file": out}


def test_json_contract(fitted, data):
    r = fitted["result"]
    lines = r.stdout.splitlines()
    assert len(lines) == 1
    out = json.loads(lines[0])
    for key in ("majority", "accuracy_before", "accuracy_after", "accuracy_random", "rank",
                "drop_leace", "drop_random", "leace_vs_random", "also", "seed",
                "encoder_identity", "layer", "task", "lang", "labels", "dim", "class_mean_gap"):
        assert key in out, key
    assert out["task"] == "pos" and out["layer"] == 0 and out["seed"] == 0 and out["dim"] == 16
    assert out["lang"]["code"] == "en" and out["encoder_identity"]["encoder"] == "static"
    assert out["rank"] == len(out["labels"]) - 1
    assert out["probe_params"]["normalize"] == "standardize" and out["fit"] == "lbfgs"
    assert out["accuracy_after"] <= out["majority"] + 0.01
    assert out["accuracy_before"] > out["majority"] + 0.1  # random type vectors, 150 sentences
    d = out["drop_leace"]
    assert d["ci95"][0] <= d["value"] <= d["ci95"][1] and 0 < d["p_value"] <= 1
    assert set(out["also"]) == {"feats", "deprel:subtype=strip"}
    assert out["also"]["deprel:subtype=strip"]["task_params"] == {"subtype": "strip"}
    for r_ in out["also"].values():
        assert {"majority", "accuracy_before", "accuracy_after", "accuracy_random"} <= set(r_)
    assert out["class_mean_gap"]["leace"] < 1e-5


def test_output_files_and_progress(fitted):
    from synrob.probe.erasure import load_eraser

    f = fitted["file"]
    leace, control = load_eraser(f), load_eraser(f.with_name("pos.random.safetensors"))
    assert leace.kind == "leace" and control.kind == "random" and control.rank == leace.rank
    meta = leace.meta
    assert meta["task"] == "pos" and meta["layer"] == 0 and meta["seed"] == 0
    assert len(meta["train_sha256"]) == 64 and meta["encoder_identity"]["encoder"] == "static"
    assert "synrob_version" in meta and meta["control"] is False
    assert f"wrote {f}" in fitted["result"].stderr


def test_load_gives_the_same_result(cli, fitted, data):
    r = cli(_args(data, "--load", fitted["file"], "--json"))
    assert r.exit_code == 0, r.stderr
    a, b = json.loads(fitted["result"].stdout), json.loads(r.stdout)
    for key in ("majority", "accuracy_before", "accuracy_after", "accuracy_random", "rank"):
        assert a[key] == b[key], key
    assert b["eraser"]["loaded"] == str(fitted["file"]) and b["task"] == "pos"


@pytest.mark.parametrize(("extra", "message"), [
    (["--layer", "1"], "was fitted on layer 0, not layer 1"),
    (["--task", "deprel"], "was fitted on task 'pos', not task 'deprel'"),
    (["--control"], "was fitted on the task's labels, not its control labels"),
    (["-p", "tagset=xpos"], "was fitted on task parameter tagset='upos', not tagset='xpos'"),
])
def test_load_mismatch_is_one_error_line(cli, fitted, data, extra, message):
    r = cli(_args(data, "--load", fitted["file"], *extra))
    assert r.exit_code == 1
    assert r.stderr.startswith("synrob: error: eraser in ") and message in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and r.stdout == ""


def test_load_for_another_encoder(cli, fitted, data):
    r = cli(_args(data, "--load", fitted["file"], "--encoder", data["other"]))
    assert r.exit_code == 1 and "was fitted on encoder" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1


def test_control_and_the_human_summary(cli, data):
    r = cli(_args(data, "--encoder", data["vec"], "--layer", "0", "--task", "pos", "--control"))
    assert r.exit_code == 0, r.stderr
    assert "erased pos (control labels) at" in r.stdout and "LEACE" in r.stdout
    assert "drop_leace:" in r.stdout
    row = next(line.split() for line in r.stdout.splitlines() if line.startswith("pos "))
    majority, after = float(row[1]), float(row[3])
    assert after <= majority + 0.01


@pytest.mark.parametrize(("extra", "message"), [
    (["-p", "normalize=auto"], "use standardize or none"),
    (["--task", "distance"], "word classification tasks"),
    (["--fit", "sgd"], "fit must be one of lbfgs, adam"),
    (["--also", "nope"], "nope"),
])
def test_bad_setups_are_one_error_line(cli, data, extra, message):
    base = ["--encoder", data["vec"], "--layer", "0", "--task", "pos"]
    r = cli(_args(data, *base, *extra))
    assert r.exit_code == 1, r.stderr
    assert r.stderr.startswith("synrob: error: ") and message in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1


def test_encoder_is_required_without_load(cli, data):
    r = cli(_args(data, "--layer", "0", "--task", "pos"))
    assert r.exit_code == 1 and "--encoder is required" in r.stderr
