"""The baselines of Conneau et al. (2018), Table 2, on SentEval task files.

* ``majority``: the most frequent training label.
* ``length``: a classifier whose only input is the sentence length in tokens: the majority
  training label of each length (the Bayes-optimal rule on that feature; a length never seen in
  training takes the label of the nearest seen length, ties to the shorter).
* ``nb-uni-tfidf`` / ``nb-bi-tfidf``: multinomial Naive Bayes on tf-idf weighted lowercased
  unigrams (plus bigrams), smoothing chosen on dev. Sparse matrices (scipy), no scikit-learn.
* ``bov-glove``: the bag of vectors: the mean GloVe 6B 50d vector of the words, then the
  logistic-regression classifier (the paper averages fastText vectors: BoV-fastText); computed
  by the experiment from the representation cache (:mod:`.features`).

Every function takes the examples of one task (train, dev, test lists of ``(label, sentence)``
through :class:`~synrob.perturb.senteval.SentEvalExample`) and returns a :class:`BaselineResult`.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy import sparse
from synrob.perturb.errors import ParameterError
from synrob.perturb.senteval import SentEvalExample

__all__ = ["BASELINES", "TEXT_BASELINES", "TEXT_BASELINE_FUNCS", "BaselineResult", "split_examples", "majority_baseline",
           "length_baseline", "nb_tfidf_baseline", "TfidfVectorizer", "MultinomialNB"]

#: Baselines computed here from the text alone (``bov-glove`` needs vectors: see the experiment).
TEXT_BASELINES = ("majority", "length", "nb-uni-tfidf", "nb-bi-tfidf")
BASELINES = (*TEXT_BASELINES, "bov-glove")
#: Additive smoothing values tried for Naive Bayes (chosen on dev accuracy).
NB_ALPHAS = (0.01, 0.03, 0.1, 0.3, 1.0)


@dataclass
class BaselineResult:
    """Dev and test accuracy (fractions) and the setting chosen on dev."""

    baseline: str
    dev_accuracy: float
    test_accuracy: float
    chosen: dict[str, Any] = field(default_factory=dict)
    test_predictions: list[str] | None = field(default=None, repr=False)  # one label per test ex.


def split_examples(examples: Sequence[SentEvalExample]
                   ) -> tuple[list[SentEvalExample], list[SentEvalExample], list[SentEvalExample]]:
    """(train, dev, test) examples of a task file, in file order."""
    parts: dict[str, list[SentEvalExample]] = {"tr": [], "va": [], "te": []}
    for ex in examples:
        parts[ex.split].append(ex)
    if not parts["tr"] or not parts["va"] or not parts["te"]:
        sizes = {k: len(v) for k, v in parts.items()}
        raise ParameterError(f"a SentEval task needs tr, va and te examples; got {sizes}")
    return parts["tr"], parts["va"], parts["te"]


def _acc(pred: Sequence[str], gold: Sequence[SentEvalExample]) -> float:
    return sum(p == g.label for p, g in zip(pred, gold, strict=True)) / len(gold) if gold else 0.0


def _ranked_labels(train: Sequence[SentEvalExample]) -> list[str]:
    """Training labels by decreasing frequency, ties by label (deterministic)."""
    counts = Counter(ex.label for ex in train)
    return sorted(counts, key=lambda c: (-counts[c], c))


def majority_baseline(train: Sequence[SentEvalExample], dev: Sequence[SentEvalExample],
                      test: Sequence[SentEvalExample]) -> BaselineResult:
    """Always the most frequent training label."""
    top = _ranked_labels(train)[0]
    return BaselineResult("majority", _acc([top] * len(dev), dev), _acc([top] * len(test), test),
                          {"label": top}, [top] * len(test))


def length_baseline(train: Sequence[SentEvalExample], dev: Sequence[SentEvalExample],
                    test: Sequence[SentEvalExample]) -> BaselineResult:
    """The majority training label per sentence length (tokens); nearest seen length otherwise."""
    rank = {c: i for i, c in enumerate(_ranked_labels(train))}
    per_len: dict[int, Counter[str]] = defaultdict(Counter)
    for ex in train:
        per_len[len(ex.sentence.split())][ex.label] += 1
    rule = {n: min(c, key=lambda lab: (-c[lab], rank[lab])) for n, c in per_len.items()}
    seen = np.array(sorted(rule))

    def predict(ex: SentEvalExample) -> str:
        n = len(ex.sentence.split())
        if n in rule:
            return rule[n]
        return rule[int(seen[np.argmin(np.abs(seen - n))])]  # argmin: first = shorter on ties

    pred = [predict(e) for e in test]
    return BaselineResult("length", _acc([predict(e) for e in dev], dev), _acc(pred, test),
                          {"lengths_seen": len(rule)}, pred)


class TfidfVectorizer:
    """Lowercased n-gram (1..``max_n``) tf-idf: raw counts x smoothed idf
    ``ln((1 + n) / (1 + df)) + 1``, rows L2-normalised; vocabulary from the fitted sentences."""

    def __init__(self, max_n: int = 1) -> None:
        self.max_n = max_n
        self.vocab: dict[str, int] = {}
        self.idf: np.ndarray = np.zeros(0)

    def _grams(self, sentence: str) -> list[str]:
        toks = sentence.lower().split()
        return [" ".join(toks[i:i + n]) for n in range(1, self.max_n + 1)
                for i in range(len(toks) - n + 1)]

    def _counts(self, sentences: Sequence[str], grow: bool) -> sparse.csr_matrix:
        rows, cols, vals = [], [], []
        for r, s in enumerate(sentences):
            c = Counter(self._grams(s))
            for g, k in c.items():
                j = self.vocab.get(g)
                if j is None and grow:
                    j = self.vocab[g] = len(self.vocab)
                if j is not None:
                    rows.append(r)
                    cols.append(j)
                    vals.append(float(k))
        return sparse.csr_matrix((vals, (rows, cols)), shape=(len(sentences), len(self.vocab)))

    def fit_transform(self, sentences: Sequence[str]) -> sparse.csr_matrix:
        """Learn vocabulary and idf. Shape: (n_sentences, n_features)."""
        self.vocab = {}
        x = self._counts(sentences, grow=True)
        df = np.bincount(x.indices, minlength=x.shape[1])
        self.idf = np.log((1 + x.shape[0]) / (1 + df)) + 1.0
        return self._weight(x)

    def transform(self, sentences: Sequence[str]) -> sparse.csr_matrix:
        """Known n-grams only. Shape: (n_sentences, n_features)."""
        return self._weight(self._counts(sentences, grow=False))

    def _weight(self, x: sparse.csr_matrix) -> sparse.csr_matrix:
        x = sparse.csr_matrix(x.multiply(self.idf[None, :]))
        norms = np.sqrt(np.asarray(x.multiply(x).sum(axis=1)).ravel())
        norms[norms == 0] = 1.0
        return sparse.csr_matrix(sparse.diags(1.0 / norms) @ x)


class MultinomialNB:
    """Multinomial Naive Bayes with additive smoothing ``alpha`` on (tf-idf) feature weights."""

    def __init__(self, alpha: float = 1.0) -> None:
        self.alpha = alpha
        self.log_prior: np.ndarray = np.zeros(0)
        self.log_prob: np.ndarray = np.zeros((0, 0))

    def fit(self, x: sparse.csr_matrix, y: np.ndarray, n_classes: int) -> MultinomialNB:
        """``x`` (n, V) non-negative, ``y`` (n,) in 0..n_classes-1."""
        onehot = sparse.csr_matrix((np.ones(y.size), (y, np.arange(y.size))),
                                   shape=(n_classes, y.size))
        counts = np.asarray((onehot @ x).todense()) + self.alpha        # (C, V)
        self.log_prob = np.log(counts) - np.log(counts.sum(axis=1, keepdims=True))
        class_n = np.bincount(y, minlength=n_classes).astype(np.float64)
        self.log_prior = np.log(np.maximum(class_n, 1e-300) / y.size)
        return self

    def predict(self, x: sparse.csr_matrix) -> np.ndarray:
        """(n,) class indices."""
        scores = np.asarray(x @ self.log_prob.T) + self.log_prior[None, :]
        return scores.argmax(axis=1)


def nb_tfidf_baseline(train: Sequence[SentEvalExample], dev: Sequence[SentEvalExample],
                      test: Sequence[SentEvalExample], *, max_n: int = 1,
                      alphas: Sequence[float] = NB_ALPHAS) -> BaselineResult:
    """Naive Bayes on tf-idf n-grams (``max_n`` 1: unigrams, 2: uni+bigrams); alpha on dev."""
    classes = sorted({ex.label for ex in train})
    index = {c: i for i, c in enumerate(classes)}
    vec = TfidfVectorizer(max_n)
    x_tr = vec.fit_transform([e.sentence for e in train])
    x_va, x_te = vec.transform([e.sentence for e in dev]), vec.transform([e.sentence for e in test])
    y_tr = np.array([index[e.label] for e in train], dtype=np.int64)
    best: tuple[float, float, MultinomialNB] | None = None
    for a in alphas:
        nb = MultinomialNB(a).fit(x_tr, y_tr, len(classes))
        acc = _acc([classes[i] for i in nb.predict(x_va)], dev)
        if best is None or acc > best[0]:
            best = (acc, a, nb)
    assert best is not None
    dev_acc, alpha, nb = best
    pred = [classes[i] for i in nb.predict(x_te)]
    name = "nb-uni-tfidf" if max_n == 1 else "nb-bi-tfidf"
    return BaselineResult(name, dev_acc, _acc(pred, test),
                          {"alpha": alpha, "features": len(vec.vocab)}, pred)


#: The text-only baselines by name.
TEXT_BASELINE_FUNCS: dict[str, Callable[..., BaselineResult]] = {
    "majority": majority_baseline,
    "length": length_baseline,
    "nb-uni-tfidf": lambda tr, va, te: nb_tfidf_baseline(tr, va, te, max_n=1),
    "nb-bi-tfidf": lambda tr, va, te: nb_tfidf_baseline(tr, va, te, max_n=2),
}
