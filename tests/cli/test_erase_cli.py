"""``synrob erase``: the --json contract, the eraser files (-o), --load and its one-line checks;
the majority rate as the training majority's test accuracy (issue 43: xpos on EWT), the
displacement-matched random control, and only the settings a fit used in the JSON.

A cheap encoder: a 16-dimensional word2vec-text file of random vectors for the words of small
EWT sample slices (the ``static`` encoder, real gensim loading), so a run takes seconds.
"""

from __future__ import annotations

import json
from itertools import islice
from pathlib import Path

import pytest
from synrob.perturb.corpus import read_conllu, write_conllu
from synrob.perturb.io.data import sample_path

from tests.fakes import write_vectors

pytest.importorskip("concept_erasure")


def _slices(d: Path, train: int, dev: int, test: int) -> tuple[dict[str, Path], set[str]]:
    """The first ``train``/``dev``/``test`` sentences of the EWT sample's splits written under
    ``d``, and their word forms."""
    out: dict[str, Path] = {}
    vocab: set[str] = set()
    for split, n in (("train", train), ("dev", dev), ("test", test)):
        sents = list(islice(read_conllu(sample_path(split)), n))
        vocab.update(w.form for s in sents for w in s.words())
        out[split] = d / f"{split}.conllu"
        write_conllu(sents, out[split])
    return out, vocab


@pytest.fixture(scope="module")
def data(tmp_path_factory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("erase-cli")
    out, vocab = _slices(d, 150, 40, 60)
    out["vec"] = write_vectors(d / "vec.txt", sorted(vocab), 16, 0)
    out["other"] = write_vectors(d / "other.txt", sorted(vocab), 16, 1)
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
    for key in ("majority", "majority_label", "accuracy_before", "accuracy_after",
                "accuracy_random", "accuracy_random_matched", "rank", "drop_leace",
                "drop_random", "drop_random_matched", "leace_vs_random",
                "leace_vs_random_matched", "also", "seed", "encoder_identity", "layer", "task",
                "lang", "labels", "dim", "class_mean_gap", "displacement_leace",
                "displacement_random", "displacement_random_matched", "displacement_test",
                "random_matched", "steps", "l2", "lbfgs"):
        assert key in out, key
    assert out["task"] == "pos" and out["layer"] == 0 and out["seed"] == 0 and out["dim"] == 16
    assert out["lang"]["code"] == "en" and out["encoder_identity"]["encoder"] == "static"
    assert out["rank"] == len(out["labels"]) - 1
    assert out["probe_params"] == {"normalize": "standardize"} and out["fit"] == "lbfgs"
    assert out["accuracy_after"] <= out["majority"] + 0.01
    assert out["accuracy_before"] > out["majority"] + 0.1  # random type vectors, 150 sentences
    d = out["drop_leace"]
    assert d["ci95"][0] <= d["value"] <= d["ci95"][1] and 0 < d["p_value"] <= 1
    assert set(out["also"]) == {"feats", "deprel:subtype=strip"}
    assert out["also"]["deprel:subtype=strip"]["task_params"] == {"subtype": "strip"}
    for r_ in out["also"].values():
        assert {"majority", "accuracy_before", "accuracy_after", "accuracy_random",
                "accuracy_random_matched", "drop_random_matched", "steps", "l2"} <= set(r_)
    assert out["class_mean_gap"]["leace"] < 1e-5


def test_displacements_and_the_matched_control(fitted):
    out = json.loads(fitted["result"].stdout)
    leace, rand, matched = (out[f"displacement_{k}"] for k in ("leace", "random",
                                                                "random_matched"))
    assert leace > rand > 0  # LEACE's oblique projection moves the vectors more
    assert abs(matched - leace) <= 0.05 * leace  # issue 43's criterion (it is ~1e-7 here)
    assert set(out["displacement_test"]) == {"leace", "random", "random_matched"}
    assert out["random_matched"]["construction"] == "oblique"
    assert out["random_matched"]["oblique"] > 0 and out["random_matched"]["seed"] == 0
    # the matched control removes a random subspace: the class means stay apart
    assert out["class_mean_gap"]["random_matched"] > 0.1
    d = out["drop_random_matched"]
    assert d["ci95"][0] <= d["value"] <= d["ci95"][1]
    assert out["leace_vs_random_matched"]["value"] == pytest.approx(
        out["accuracy_random_matched"] - out["accuracy_after"])


def test_lbfgs_records_its_own_settings_and_the_chosen_fits_steps(fitted, data):
    from synrob.probe.causal.erasure.softmax import L2_GRID, SETTINGS

    out = json.loads(fitted["result"].stdout)
    assert out["lbfgs"] == json.loads(json.dumps(SETTINGS))
    assert "lr" not in out["probe_params"] and "epochs" not in out["probe_params"]
    conditions = {"before", "leace", "random", "random_matched"}
    assert set(out["steps"]) == set(out["l2"]) == conditions
    assert all(v in L2_GRID for v in out["l2"].values())
    # one fit's iterations, never the sum over the penalties tried
    assert all(0 <= v <= SETTINGS["max_iter_per_l2"] for v in out["steps"].values())


def test_adam_records_adams_settings_and_no_lbfgs(cli, data):
    r = cli(_args(data, "--encoder", data["vec"], "--layer", "0", "--task", "pos", "--fit",
                  "adam", "-p", "epochs=3", "--bootstrap", "0", "--json"))
    assert r.exit_code == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["fit"] == "adam" and out["probe_params"]["epochs"] == 3
    assert "lr" in out["probe_params"] and "lbfgs" not in out and "l2" not in out
    assert all(1 <= v <= 3 for v in out["steps"].values())


def test_adam_settings_with_lbfgs_are_one_error_line(cli, data):
    r = cli(_args(data, "--encoder", data["vec"], "--layer", "0", "--task", "pos", "-p",
                  "lr=0.01", "-p", "epochs=3"))
    assert r.exit_code == 1
    assert r.stderr.strip() == ("synrob: error: probe parameters epochs, lr apply to --fit adam "
                                "only; --fit lbfgs uses the probe's normalize")


def test_output_files_and_progress(fitted):
    from synrob.probe.causal.erasure import load_eraser

    f = fitted["file"]
    leace, control = load_eraser(f), load_eraser(f.with_name("pos.random.safetensors"))
    assert leace.kind == "leace" and control.kind == "random" and control.rank == leace.rank
    matched = load_eraser(f.with_name("pos.random_matched.safetensors"))
    assert matched.kind == "random_matched" and matched.rank == leace.rank
    out = json.loads(fitted["result"].stdout)
    assert matched.meta["displacement"] == pytest.approx(out["displacement_random_matched"])
    assert matched.meta["displacement_target"] == pytest.approx(out["displacement_leace"])
    assert matched.meta["control_of"] == "leace" and matched.meta["seed"] == 0
    assert matched.meta["construction"] == "oblique" and matched.meta["task"] == "pos"
    assert torch_equal(matched.proj_right, control.proj_right)  # the same random subspace Q
    meta = leace.meta
    assert meta["task"] == "pos" and meta["layer"] == 0 and meta["seed"] == 0
    assert len(meta["train_sha256"]) == 64 and meta["encoder_identity"]["encoder"] == "static"
    assert "synrob_version" in meta and meta["control"] is False
    assert f"wrote {f}" in fitted["result"].stderr
    assert "pos.random_matched.safetensors (displacement-matched" in fitted["result"].stderr


def torch_equal(a, b) -> bool:
    import torch

    return bool(torch.equal(a, b))


def test_load_gives_the_same_result(cli, fitted, data):
    r = cli(_args(data, "--load", fitted["file"], "--json"))
    assert r.exit_code == 0, r.stderr
    a, b = json.loads(fitted["result"].stdout), json.loads(r.stdout)
    for key in ("majority", "accuracy_before", "accuracy_after", "accuracy_random",
                "accuracy_random_matched", "displacement_random_matched", "rank"):
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
    assert "drop_leace:" in r.stdout and "drop_random_matched:" in r.stdout
    assert "mean displacement on the training words: LEACE" in r.stdout
    header = next(line for line in r.stdout.splitlines() if line.startswith("task "))
    assert header.split()[-2:] == ["random", "matched"]
    row = next(line.split() for line in r.stdout.splitlines() if line.startswith("pos "))
    majority, after = float(row[2]), float(row[4])
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


@pytest.fixture(scope="module")
def xpos_data(tmp_path_factory) -> dict[str, Path]:
    """EWT sample slices whose most frequent XPOS differ: IN in the 150 training sentences
    (380 against NN's 328), NNP in the first 250 test sentences (577 against IN's 542), as on
    all of EWT (issue 43); 64-dimensional random type vectors, so LEACE's rank (one less than
    the tags) stays below the dimension."""
    d = tmp_path_factory.mktemp("erase-xpos")
    out, vocab = _slices(d, 150, 40, 250)
    out["vec"] = write_vectors(d / "vec.txt", sorted(vocab), 64, 2)
    return out


def _xpos_share(path: Path, tag: str) -> float:
    tags = [w.xpos for s in read_conllu(path) for w in s.words()]
    return tags.count(tag) / len(tags)


def test_majority_is_the_training_majority_scored_on_test(cli, xpos_data):
    """After LEACE the converged probe predicts the training majority (IN) for every word, so
    its accuracy is IN's test share; the test file's own most frequent tag (NNP) has a larger
    share, which the majority rate used to report (0.1213 against 0.1139 on all of EWT)."""
    r = cli(_args(xpos_data, "--encoder", xpos_data["vec"], "--layer", "0", "--task", "pos",
                  "-p", "tagset=xpos", "--bootstrap", "0", "--json"))
    assert r.exit_code == 0, r.stderr
    out = json.loads(r.stdout)
    test = xpos_data["test"]
    assert _xpos_share(test, "NNP") > _xpos_share(test, "IN")  # the two majorities differ
    assert out["majority_label"] == "IN"
    assert out["majority"] == pytest.approx(_xpos_share(test, "IN"), abs=1e-12)
    assert out["accuracy_after"] == pytest.approx(out["majority"], abs=1e-12)
    assert out["accuracy_before"] > out["majority"] + 0.3
    # rank above dim / 2: the matched control's second basis is not orthonormal (bisection)
    assert 2 * out["rank"] > out["dim"] and out["random_matched"]["construction"] == "oblique"
    assert out["displacement_random_matched"] == pytest.approx(out["displacement_leace"],
                                                               rel=1e-6)
