"""``synrob probe --load DIR``: a saved probe is applied only to what it was trained on.

What is not given on the command line is taken from ``probe.json``; what is given (encoder and
its parameters, layer, task and its parameters, probe and its parameters) must agree with it,
and so must the representations' dimension: each mismatch is one ``synrob: error:`` line naming
both values. Cheap encoders: a small word2vec-text vector file written here (the ``static``
encoder, real gensim loading) and, for subword pooling, the offline MiniLM.
"""

from __future__ import annotations

import json
import shutil
from itertools import islice
from pathlib import Path

import pytest
from synrob.perturb.corpus import read_conllu, write_conllu
from synrob.perturb.io.data import sample_path

from tests.fakes import write_vectors


@pytest.fixture(scope="module")
def data(tmp_path_factory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("probe-load")
    out = {}
    vocab: set[str] = set()
    for split, n in (("train", 60), ("dev", 20), ("test", 20)):
        sents = list(islice(read_conllu(sample_path(split)), n))
        vocab.update(w.form for s in sents for w in s.words())
        out[split] = d / f"{split}.conllu"
        write_conllu(sents, out[split])
    out["vocab"] = d / "vocab.json"
    out["vocab"].write_text(json.dumps(sorted(vocab)))
    return out


def _train(cli, data, vec: Path, saved: Path, *extra: str) -> dict:
    r = cli(["probe", "--encoder", vec, "--layer", "0", "--task", "distance",
             "--train", data["train"], "--dev", data["dev"], "--test", data["test"],
             "-p", "epochs=2", "-p", "rank=4", "--device", "cpu", "--no-baselines",
             "--save", saved, "--json", *extra])
    assert r.exit_code == 0, r.stderr
    return json.loads(r.stdout)


@pytest.fixture
def trained(cli, data, tmp_path):
    """A distance probe on layer 0 of an 8-dimensional static encoder, saved."""
    vec = write_vectors(tmp_path / "vec.txt", json.loads(data["vocab"].read_text()), 8, 0)
    out = _train(cli, data, vec, tmp_path / "probe")
    return {"vec": vec, "dir": tmp_path / "probe", "out": out}


def _load(cli, data, saved: Path, *extra) -> object:
    return cli(["probe", "--load", saved, "--test", data["test"], "--device", "cpu",
                "--no-baselines", "--json", *extra])


def _error(res, saved: Path, expected: str) -> None:
    assert res.exit_code == 1, res.stdout
    assert res.stderr == f"synrob: error: probe in {saved} was trained on {expected}\n"


def test_load_takes_the_saved_setup(cli, data, trained) -> None:
    """No --encoder/--layer/--task: the saved ones; the scores are those of training."""
    meta = json.loads((trained["dir"] / "probe.json").read_text())
    assert meta["encoder"] == str(trained["vec"]) and meta["layer"] == 0 and meta["dim"] == 8
    assert meta["encoder_identity"]["encoder"] == "static"
    assert meta["encoder_identity"]["options"]["casing"] == "fallback"
    assert meta["encoder_identity"]["resource"]["files"]["vec.txt"]
    res = _load(cli, data, trained["dir"])
    assert res.exit_code == 0, res.stderr
    out = json.loads(res.stdout)
    assert (out["encoder"], out["layer"], out["task"]) == (str(trained["vec"]), 0, "distance")
    test = str(data["test"])
    assert out["results"][test]["uuas"] == pytest.approx(trained["out"]["results"][test]["uuas"])
    # giving the same values explicitly is no mismatch
    same = _load(cli, data, trained["dir"], "--encoder", trained["vec"], "--layer", "0",
                 "--task", "distance", "--probe", "structural", "-p", "rank=4",
                 "-p", "encoder.casing=fallback")
    assert same.exit_code == 0, same.stderr


def test_plot_of_a_one_layer_probe_is_refused_before_any_work(cli, data, trained,
                                                              tmp_path) -> None:
    """--load of a one-layer probe with --plot: one line, exit 1, nothing written; refused
    before the probe is evaluated (a test file that does not exist is never opened)."""
    png = tmp_path / "curve.png"
    res = cli(["probe", "--load", trained["dir"], "--test", str(tmp_path / "missing.conllu"),
               "--plot", png])
    assert res.exit_code == 1
    assert res.stderr == "synrob: error: --plot draws the layer curve: it needs --layer all\n"
    assert not png.exists()


def test_layer_mismatch(cli, data, trained) -> None:
    _error(_load(cli, data, trained["dir"], "--layer", "1"), trained["dir"],
           "layer 0, not layer 1")


def test_task_and_probe_mismatch(cli, data, trained) -> None:
    _error(_load(cli, data, trained["dir"], "--task", "depth"), trained["dir"],
           "task 'distance', not task 'depth'")
    _error(_load(cli, data, trained["dir"], "--probe", "linear"), trained["dir"],
           "probe 'structural', not probe 'linear'")
    _error(_load(cli, data, trained["dir"], "-p", "rank=8"), trained["dir"],
           "probe parameter rank=4, not rank=8")


def test_task_parameter_mismatch(cli, data, tmp_path) -> None:
    """tree-depth pools word vectors into a sentence vector: max is not the saved mean."""
    vec = write_vectors(tmp_path / "vec.txt", json.loads(data["vocab"].read_text()), 8, 1)
    r = cli(["probe", "--encoder", vec, "--layer", "0", "--task", "tree-depth", "--train",
             data["train"], "--dev", data["dev"], "--test", data["test"], "-p", "epochs=2",
             "--device", "cpu", "--no-baselines", "--save", tmp_path / "p"])
    assert r.exit_code == 0, r.stderr
    _error(_load(cli, data, tmp_path / "p", "-p", "pooling=max"), tmp_path / "p",
           "task parameter pooling='mean', not pooling='max'")


def test_encoder_name_mismatch(cli, data, trained) -> None:
    _error(_load(cli, data, trained["dir"], "--encoder", "glove-6b-50d"), trained["dir"],
           f"encoder '{trained['vec']}', not encoder 'glove-6b-50d'")


def test_encoder_parameter_mismatch(cli, data, trained) -> None:
    _error(_load(cli, data, trained["dir"], "-p", "encoder.casing=lower"), trained["dir"],
           f"encoder '{trained['vec']}' with casing='fallback', not casing='lower'")


def test_encoder_identity_mismatch(cli, data, tmp_path) -> None:
    """The vector file at the saved path was replaced: its fingerprint names both versions."""
    vocab = json.loads(data["vocab"].read_text())
    vec = write_vectors(tmp_path / "vec.txt", vocab, 8, 2)
    _train(cli, data, vec, tmp_path / "p")
    old = json.loads((tmp_path / "p" / "probe.json").read_text())[
        "encoder_identity"]["resource"]["files"]["vec.txt"]
    write_vectors(vec, vocab, 8, 3)  # same path, same size class, other vectors
    from synrob.probe.encoders.base import file_fingerprint

    new = file_fingerprint(vec)
    assert new != old
    _error(_load(cli, data, tmp_path / "p"), tmp_path / "p",
           f"encoder '{vec}' with resource.files.vec.txt='{old}', "
           f"not resource.files.vec.txt='{new}'")


def test_dimension_mismatch(cli, data, tmp_path) -> None:
    """A probe.json without an encoder identity (written by an older synrob) is compared by
    encoder name; a vector file replaced by one of another dimension is still refused."""
    vocab = json.loads(data["vocab"].read_text())
    vec = write_vectors(tmp_path / "vec.txt", vocab, 8, 4)
    _train(cli, data, vec, tmp_path / "p")
    cfg_file = tmp_path / "p" / "probe.json"
    cfg = json.loads(cfg_file.read_text())
    del cfg["encoder_identity"], cfg["encoder_params"]
    cfg_file.write_text(json.dumps(cfg))
    ok = _load(cli, data, tmp_path / "p")
    assert ok.exit_code == 0, ok.stderr
    write_vectors(vec, vocab, 6, 5)
    _error(_load(cli, data, tmp_path / "p"), tmp_path / "p",
           "representations of dimension 8, not dimension 6")


def test_not_a_saved_probe(cli, data, tmp_path) -> None:
    res = _load(cli, data, tmp_path)
    assert res.exit_code == 1
    assert res.stderr == f"synrob: error: {tmp_path}: not a saved probe (no probe.json)\n"


@pytest.mark.slow
@pytest.mark.model
def test_pooling_and_saved_layers_mismatch_minilm(cli, data, tmp_path) -> None:
    """MiniLM pools subword vectors into word vectors (mean by default): a probe trained on
    mean-pooled words is not applied to first-subword vectors; a probe saved for every layer
    has no layer 9."""
    saved = tmp_path / "all"
    r = cli(["probe", "--encoder", "minilm", "--layer", "all", "--task", "distance",
             "--train", data["train"], "--dev", data["dev"], "--test", data["test"],
             "-p", "epochs=1", "-p", "rank=4", "--device", "cpu", "--no-baselines",
             "--save", saved])
    assert r.exit_code == 0, r.stderr
    assert sorted(p.name for p in saved.iterdir()) == [f"layer-{i}" for i in range(7)]
    _error(_load(cli, data, saved, "-p", "encoder.pooling=first"), saved,
           "representations pooled by 'mean', not pooled by 'first'")
    _error(_load(cli, data, saved, "--layer", "9"), saved,
           "layers 0, 1, 2, 3, 4, 5, 6, not layer 9")
    one = _load(cli, data, saved, "--layer", "2")
    assert one.exit_code == 0, one.stderr
    assert json.loads(one.stdout)["layer"] == 2
    shutil.rmtree(saved / "layer-2")
    _error(_load(cli, data, saved, "--layer", "2"), saved,
           "layers 0, 1, 3, 4, 5, 6, not layer 2")
