"""Small files the tests write themselves."""

from __future__ import annotations

from pathlib import Path

import numpy as np


def write_vectors(path: Path, words: list[str], dim: int, seed: int) -> Path:
    """Random word vectors in word2vec text format (a header line, then ``word v1 ... vdim``),
    drawn from ``seed``: a static encoder any test can load."""
    rng = np.random.default_rng(seed)
    lines = [f"{len(words)} {dim}"]
    lines += [w + " " + " ".join(f"{x:.5f}" for x in rng.normal(size=dim)) for w in words]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def changed_keeping_tree(orig: object, pert: object) -> tuple[list, list]:
    """Check that a word-substituting perturbation kept every tag and the tree, and that its
    ``changed`` ids are exactly the words whose form or lemma changed; the two word lists."""
    a, b = orig.words(), pert.sentence.words()  # type: ignore[attr-defined]
    assert len(a) == len(b)
    for x, y in zip(a, b, strict=True):
        assert (x.upos, x.xpos, x.feats, x.head, x.deprel) == (y.upos, y.xpos, y.feats, y.head,
                                                               y.deprel)
    changed = {x.id for x, y in zip(a, b, strict=True) if (x.form, x.lemma) != (y.form, y.lemma)}
    assert changed == set(pert.changed)  # type: ignore[attr-defined]
    return a, b
