"""Word-vector normalisation against massive activations (synrob.probe.probes.normalize).

Real MiniLM layer-3 vectors of EWT slices (300 train / 100 dev), once as they are and once with a
planted massive activation like a causal LM's attention sink (the first word of every sentence
scaled 400x, as SmolLM2's first word is 100x its layer's median): with ``normalize=auto`` the
probe must do as well on the planted vectors as on the clean ones; with ``none`` it fails,
which is the bug this guards against. (Scaling restores a vector's weight, not information a
single huge dimension may have drowned: the real SmolLM2 curves are in docs/encoders.md.)
"""

from __future__ import annotations

import warnings
from itertools import islice

import numpy as np
import pytest
from synrob.perturb.corpus import read_conllu, write_conllu
from synrob.perturb.errors import SynrobWarning
from synrob.probe.probes import LinearProbe, StructuralProbe, load_probe, normalize, save_probe
from synrob.probe.probes.inputs import Features
from synrob.probe.tasks import DistanceTask, PosTask, load_gold
from synrob.probe.training.probing import evaluate_probe, run_probe, train_probe

FAST = {"epochs": 8, "patience": 1}


def _plant(feats: Features) -> Features:
    """The first word of each sentence made massive: scaled 400x."""
    m = feats.matrix.copy()
    m[feats.offsets[:-1]] *= 400.0
    return Features(m, feats.offsets)


def test_row_norms_are_numpys_norms_chunk_by_chunk():
    # the norms choose the normalisation and scale the vectors: they must not move a bit
    rng = np.random.default_rng(4)
    m = (rng.standard_normal((20_001, 40)) * rng.uniform(1e-3, 1e3, (20_001, 1)))
    for mat in (m.astype(np.float32), m.astype(np.float16), m.astype(np.float32)[:0]):
        want = np.linalg.norm(np.asarray(mat, dtype=np.float32), axis=1)
        for chunk in (1, 7, 8192, 50_000):
            got = normalize.row_norms(mat, chunk)
            assert got.dtype == np.float32 and np.array_equal(got, want)


def test_fit_norm_leaves_ordinary_vectors_alone_and_scales_massive_ones():
    rng = np.random.default_rng(0)
    feats = Features(rng.normal(size=(500, 16)).astype(np.float32), np.array([0, 200, 500]))
    norm = normalize.fit_norm(feats)
    assert norm.method == "none" and not norm.massive and norm.apply(feats) is feats
    planted = _plant(Features(feats.matrix, feats.offsets))
    norm = normalize.fit_norm(planted)
    assert norm.method == "unit" and norm.massive_words == 2 and norm.ratio > 100
    assert norm.scale == pytest.approx(np.median(np.linalg.norm(planted.matrix, axis=1)))
    out = norm.apply(planted)
    np.testing.assert_allclose(np.linalg.norm(out.matrix, axis=1), norm.scale, rtol=1e-5)
    np.testing.assert_array_equal(out.offsets, planted.offsets)
    assert normalize.fit_norm(feats, "unit").method == "unit"
    assert normalize.fit_norm(planted, "none").method == "none"
    # two populations of norms (fast+pos on Turkish: 28 % GloVe + position, the rest position
    # alone) are no massive activation: more than MASSIVE_SHARE of the words over the line
    m = feats.matrix.copy()
    m[::3] *= 20.0
    two = Features(m, feats.offsets)
    norm = normalize.fit_norm(two)
    assert norm.massive_words > normalize.MASSIVE_SHARE * 500 and not norm.massive
    assert norm.method == "none" and norm.apply(two) is two
    zero = Features(np.zeros((3, 4), np.float32), np.array([0, 3]))
    assert normalize.fit_norm(zero, "unit").method == "none"  # nothing to scale to
    assert normalize.WordNorm.from_dict(norm.as_dict()) == norm


def test_standardize_is_one_affine_map_saved_with_the_probe(tmp_path):
    """``standardize``: each dimension to training mean 0 and sd 1 (a constant one only
    shifted); the same map for every word, so it keeps an affine eraser's equal class means."""
    rng = np.random.default_rng(1)
    m = (rng.normal(size=(400, 5)) * [1.0, 3.0, 0.5, 2.0, 0.0] + [0, 5, -2, 1, 7]).astype(np.float32)
    m[::40, 1] = 4000.0  # a massive activation in one dimension
    feats = Features(m, np.array([0, 100, 400]))
    norm = normalize.fit_norm(feats, "standardize")
    assert norm.method == "standardize" and norm.massive and len(norm.mean) == 5
    out = norm.apply(feats).matrix
    np.testing.assert_allclose(out[:, :4].mean(axis=0), 0, atol=1e-4)
    np.testing.assert_allclose(out[:, :4].std(axis=0), 1, atol=1e-4)
    np.testing.assert_allclose(out[:, 4], 0, atol=1e-6)  # constant: shifted, not scaled
    mean_of_50 = Features(m[:50].mean(axis=0, keepdims=True), np.array([0, 1]))
    np.testing.assert_allclose(norm.apply(mean_of_50).matrix[0], out[:50].mean(axis=0),
                               rtol=1e-4, atol=1e-4)  # affine: it maps a mean to the mean
    assert normalize.WordNorm.from_dict(norm.as_dict()) == norm
    assert "mean" not in normalize.fit_norm(feats, "unit").as_dict()  # probe.json unchanged
    assert "standardised" in norm.describe()
    probe, task = LinearProbe(normalize="standardize", epochs=1), PosTask()
    task.labels = ["A", "B"]
    module = normalize.attach(probe.build(5, 2, "tag"), norm)
    save_probe(tmp_path / "p", probe, module, task, {"dim": 5})
    assert normalize.of(load_probe(tmp_path / "p").module) == norm


@pytest.fixture(scope="module")
def data(tmp_path_factory, ewt_train, ewt_dev):
    """{split: (Features of MiniLM layer 3, GoldCorpus)} for 300 train / 100 dev sentences."""
    from synrob.probe.representations.encoding import encode_corpus

    d = tmp_path_factory.mktemp("norm-slices")
    out = {}
    for split, src, n in (("train", ewt_train, 300), ("dev", ewt_dev, 100)):
        path = d / f"{split}.conllu"
        write_conllu(islice(read_conllu(src), 0, n), path)
        m, o = encode_corpus("minilm", path, layers=[3], device="cpu").layer_matrix(3)
        out[split] = (Features(np.asarray(m, dtype=np.float32), np.asarray(o)), load_gold(path))
        out[split + "_path"] = str(path)
    return out


def _score(task, probe, data, plant: bool) -> float:
    train, dev = data["train"], data["dev"]
    if plant:
        train, dev = (_plant(train[0]), train[1]), (_plant(dev[0]), dev[1])
    task.fit(train[1])
    module, _ = train_probe(task, probe, train, dev, seed=0)
    assert normalize.of(module).method == ("unit" if plant and probe.options["normalize"]
                                           != "none" else "none")
    scores, _ = evaluate_probe(task, probe, module, *dev)
    return scores[task.primary_metric]


@pytest.mark.slow
@pytest.mark.model
def test_planted_massive_activation_is_probed_as_well_as_without_it(data):
    probe = StructuralProbe(rank=64, **FAST)
    clean = _score(DistanceTask(), probe, data, plant=False)
    planted = _score(DistanceTask(), probe, data, plant=True)
    broken = _score(DistanceTask(), StructuralProbe(rank=64, normalize="none", **FAST), data,
                    plant=True)
    assert clean > 0.5
    assert planted >= clean - 0.03, (clean, planted)
    assert broken < clean - 0.1, (clean, broken)  # the failure normalisation removes
    pos = LinearProbe(epochs=6, patience=1)
    clean_pos = _score(PosTask(), pos, data, plant=False)
    planted_pos = _score(PosTask(), pos, data, plant=True)
    assert clean_pos > 0.8 and planted_pos >= clean_pos - 0.02, (clean_pos, planted_pos)


@pytest.mark.slow
@pytest.mark.model
def test_saved_probe_keeps_its_normalisation_and_run_probe_warns(data, tmp_path):
    planted = {data["train_path"]: _plant(data["train"][0]), data["dev_path"]: _plant(data["dev"][0])}
    task, probe = PosTask(), LinearProbe(epochs=2, patience=1)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        run = run_probe(encoder="planted", task=task, probe=probe, layers=[3],
                        tests=[data["dev_path"]], features=lambda p, layer: planted[p],
                        train=data["train_path"], dev=data["dev_path"], save=tmp_path / "p",
                        baselines=False)
    lines = [str(w.message) for w in caught if issubclass(w.category, SynrobWarning)]
    assert len(lines) == 1 and lines[0].startswith("planted layer 3: massive activations: 300 of")
    assert "scaled to norm" in lines[0] and "normalize=auto" in lines[0]
    saved = load_probe(tmp_path / "p")
    assert saved.meta["word_norm"]["method"] == "unit"
    assert normalize.of(saved.module) == normalize.WordNorm.from_dict(saved.meta["word_norm"])
    again, _ = evaluate_probe(saved.task, saved.probe, saved.module, planted[data["dev_path"]],
                              data["dev"][1])
    assert again == run.layers[0].results[data["dev_path"]]
    save_probe(tmp_path / "q", saved.probe, saved.module, saved.task, {"dim": 384})
    assert load_probe(tmp_path / "q").meta["word_norm"] == saved.meta["word_norm"]
