"""SentEval classifiers (logistic regression, the sigmoid MLP), the Table 2 baselines and
sentence features, on real SentEval tasks built from EWT."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from synrob.perturb.errors import ParameterError
from synrob.perturb.senteval import TASK_FILES, build_suite, read_task_file, write_suite
from synrob.probe.senteval.classifiers import encode_labels, fit_select, grid
from synrob.probe.senteval.features import (
    conllu_text,
    parse_layer_spec,
    sentence_vectors,
    task_corpus,
)
from synrob.probe.senteval.text_baselines import (
    MultinomialNB,
    TfidfVectorizer,
    length_baseline,
    majority_baseline,
    nb_tfidf_baseline,
    split_examples,
)


@pytest.fixture(scope="module")
def sample_tasks(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """SentLen, Tense and BShift built from the bundled EWT sample."""
    out = tmp_path_factory.mktemp("senteval-sample")
    write_suite(build_suite(["sample:en_ewt"], seed=0, tasks=["SentLen", "Tense", "BShift"]), out)
    return out


@pytest.fixture(scope="module")
def ewt_bshift(tmp_path_factory: pytest.TempPathFactory, ewt_dir: Path) -> Path:
    """BShift built from all of EWT (about 12k sentences)."""
    out = tmp_path_factory.mktemp("senteval-ewt")
    files = [ewt_dir / f"en_ewt-ud-{s}.conllu" for s in ("train", "dev", "test")]
    write_suite(build_suite(files, seed=0, tasks=["BShift"]), out)
    return out / TASK_FILES["BShift"]


def _blobs(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 3, n)
    centers = np.array([[4.0, 0, 0, 0], [0, 4.0, 0, 0], [0, 0, 4.0, 0]])
    return (centers[y] + rng.normal(0, 0.5, (n, 4))).astype(np.float32), y.astype(np.int64)


@pytest.mark.parametrize("classifier", ["logreg", "mlp"])
def test_classifiers_learn_a_separable_task(classifier: str) -> None:
    (xtr, ytr), (xva, yva), (xte, yte) = _blobs(300, 0), _blobs(100, 1), _blobs(100, 2)
    res = fit_select(classifier, xtr, ytr, xva, yva, xte, yte, n_classes=3, seed=0)
    assert res.test_accuracy >= 0.97 and res.dev_accuracy >= 0.97
    again = fit_select(classifier, xtr, ytr, xva, yva, xte, yte, n_classes=3, seed=0)
    assert again.test_accuracy == res.test_accuracy and again.chosen == res.chosen


def test_classifier_training_counts_as_the_runs_training() -> None:
    """A SentEval run's training share (``train_seconds``) includes its classifiers' grid."""
    import time

    from synrob.probe.runtime.clock import TRAINING

    (xtr, ytr), (xva, yva), (xte, yte) = _blobs(300, 0), _blobs(100, 1), _blobs(100, 2)
    before, t0 = TRAINING.seconds, time.perf_counter()
    fit_select("logreg", xtr, ytr, xva, yva, xte, yte, n_classes=3, seed=0)
    wall = time.perf_counter() - t0
    assert 0.5 * wall < TRAINING.seconds - before <= wall


def test_unseen_dev_test_labels_count_as_wrong() -> None:
    classes, (tr, va) = encode_labels(["a", "b", "a"], ["a", "c"])
    assert classes == ["a", "b"] and va.tolist() == [0, -1]


def test_mlp_grid_is_the_papers_and_the_choice_is_the_best_dev_point(sample_tasks: Path) -> None:
    assert len(grid("mlp")) == 9
    assert {(p["hidden"], p["dropout"]) for p in grid("mlp")} == {
        (h, d) for h in (50, 100, 200) for d in (0.0, 0.1, 0.2)}
    with pytest.raises(ParameterError):
        grid("svm")
    examples = read_task_file(sample_tasks / TASK_FILES["Tense"])
    corpus = task_corpus([e.sentence for e in examples], sample_tasks / "corpora")
    vecs = sentence_vectors("minilm", corpus, [0], 0)
    assert vecs.shape == (len(examples), 384)
    split = np.array([e.split for e in examples])
    tr, va, te = split_examples(examples)
    classes, (ytr, yva, yte) = encode_labels(*([e.label for e in s] for s in (tr, va, te)))
    x = {s: vecs[split == s] for s in ("tr", "va", "te")}
    maj = majority_baseline(tr, va, te)
    for clf in ("logreg", "mlp"):
        res = fit_select(clf, x["tr"], ytr, x["va"], yva, x["te"], yte, n_classes=len(classes))
        devs = [g["dev_accuracy"] for g in res.grid]
        assert res.dev_accuracy == max(devs)
        assert res.chosen == res.grid[devs.index(max(devs))]["params"]  # first best on ties
        # a real task: well above the majority label
        assert res.test_accuracy > maj.test_accuracy + 0.15, (clf, res.test_accuracy)


def test_length_baseline_solves_sentlen_and_majority_is_chance(sample_tasks: Path) -> None:
    tr, va, te = split_examples(read_task_file(sample_tasks / TASK_FILES["SentLen"]))
    assert length_baseline(tr, va, te).test_accuracy == 1.0
    assert majority_baseline(tr, va, te).test_accuracy < 0.35
    tr, va, te = split_examples(read_task_file(sample_tasks / TASK_FILES["Tense"]))
    assert abs(length_baseline(tr, va, te).test_accuracy - 0.5) < 0.15


def test_nb_baselines_beat_majority(sample_tasks: Path, ewt_bshift: Path) -> None:
    tr, va, te = split_examples(read_task_file(sample_tasks / TASK_FILES["Tense"]))
    maj = majority_baseline(tr, va, te).test_accuracy
    uni = nb_tfidf_baseline(tr, va, te, max_n=1)
    assert uni.test_accuracy > maj + 0.1 and uni.chosen["alpha"] in (0.01, 0.03, 0.1, 0.3, 1.0)
    # BShift: word order only; bigrams see the swapped pair, unigrams cannot
    tr, va, te = split_examples(read_task_file(ewt_bshift))
    maj = majority_baseline(tr, va, te).test_accuracy
    bi = nb_tfidf_baseline(tr, va, te, max_n=2).test_accuracy
    uni_b = nb_tfidf_baseline(tr, va, te, max_n=1).test_accuracy
    assert bi > maj + 0.03 and bi > uni_b
    assert abs(uni_b - 0.5) < 0.05


def test_tfidf_and_naive_bayes_by_hand() -> None:
    vec = TfidfVectorizer(max_n=2)
    x = vec.fit_transform(["a b", "a c"]).toarray()
    idf = {g: vec.idf[j] for g, j in vec.vocab.items()}
    assert idf["a"] == pytest.approx(1.0) and idf["b"] == pytest.approx(np.log(3 / 2) + 1)
    assert np.allclose(np.linalg.norm(x, axis=1), 1.0)
    assert set(vec.vocab) == {"a", "b", "a b", "c", "a c"}
    assert vec.transform(["B z"]).toarray()[0, vec.vocab["b"]] == pytest.approx(1.0)
    nb = MultinomialNB(alpha=1.0).fit(vec.transform(["a b", "a c"]), np.array([0, 1]), 2)
    assert nb.predict(vec.transform(["b", "c", "c a"])).tolist() == [0, 1, 1]


def test_task_corpus_is_valid_conllu_keyed_by_content(tmp_path: Path) -> None:
    from synrob.perturb.corpus import read_conllu

    sents = ["The cat sat .", "Dogs bark"]
    p = task_corpus(sents, tmp_path)
    assert task_corpus(sents, tmp_path) == p and task_corpus(sents[:1], tmp_path) != p
    parsed = list(read_conllu(p))
    assert [[w.form for w in s.words()] for s in parsed] == [s.split() for s in sents]
    assert [w.head for w in parsed[0].words()] == [0, 1, 2, 3]
    with pytest.raises(ParameterError):
        conllu_text([" "])


def test_layer_spec() -> None:
    n = {"minilm": 7, "glove-6b-50d": 1}
    encs = ["minilm", "glove-6b-50d"]
    assert parse_layer_spec("0,2,4,6", encs, n) == {"minilm": [0, 2, 4, 6], "glove-6b-50d": [0]}
    assert parse_layer_spec("minilm:1,3,glove-6b-50d:0", encs, n) == {
        "minilm": [1, 3], "glove-6b-50d": [0]}
    assert parse_layer_spec("-1,minilm:all", encs, n) == {
        "minilm": list(range(7)), "glove-6b-50d": [0]}
    for bad in ("minilm:9", "3", "bert:1", "x"):
        with pytest.raises(ParameterError):
            parse_layer_spec(bad, encs, n)
