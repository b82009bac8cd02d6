"""The word classification tasks ``deprel`` and ``feats`` (and ``pos`` through the same base) on
real EWT sentences: labels from the gold columns, words without the feature outside the task
(never scored, never a majority), their control tasks, bootstrap statistics and baselines."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from synrob.perturb.corpus import read_conllu
from synrob.perturb.errors import ParameterError
from synrob.probe.tasks import EXCLUDED, DeprelTask, FeatsTask, PosTask, load_gold
from synrob.probe.tasks.baselines import baseline_predictions
from synrob.probe.tasks.control import control_task
from synrob.probe.tasks.scores import score


@pytest.fixture(scope="module")
def dev(ewt_dev):
    return load_gold(ewt_dev, limit=150)


def test_gold_corpus_reads_deprel_and_feats(ewt_dev, dev):
    sents = [s for _, s in zip(range(150), read_conllu(ewt_dev), strict=False)]
    for i, s in enumerate(sents):
        words = s.words()
        assert dev.deprel[i] == [w.deprel for w in words]
        assert dev.feats[i] == [w.feats for w in words]
    sub = dev.select([3, 1])
    assert sub.deprel == [dev.deprel[3], dev.deprel[1]] and sub.feats[1] == dev.feats[1]
    assert dev.subset(5).deprel == dev.deprel[:5]
    with pytest.raises(TypeError):
        dev.with_columns(lemma=[])


def test_registered_with_their_parameters():
    from synrob.perturb.plugins import get_registry

    reg = get_registry()
    assert reg.get("task", "deprel") is DeprelTask and reg.get("task", "feats") is FeatsTask
    with pytest.raises(ParameterError):
        FeatsTask(missing="maybe")
    assert FeatsTask().options == {"feature": "Number", "missing": "exclude"}


def test_deprel_labels_and_subtypes(dev):
    full, plain = DeprelTask(), DeprelTask(subtype="strip")
    full.fit(dev)
    plain.fit(dev)
    assert "nsubj" in full.labels and any(":" in lab for lab in full.labels)
    assert not any(":" in lab for lab in plain.labels)
    perfect = full.targets(dev)
    assert full.evaluate(dev, perfect)["acc"] == 1.0
    flat = [d for sent in dev.deprel for d in sent]
    assert sum(t.size for t in perfect) == len(flat)


def test_feats_number_excludes_words_without_the_feature(dev):
    task = FeatsTask(feature="Number")
    task.fit(dev)
    assert {"Plur", "Sing"} <= set(task.labels) <= {"Plur", "Sing", "Ptan"}  # EWT: Ptan too
    targets = task.targets(dev)
    flat_feats = [f for sent in dev.feats for f in sent]
    flat = np.concatenate(targets)
    has = np.array(["Number=" in f for f in flat_feats])
    assert (flat[~has] == EXCLUDED).all() and (flat[has] >= 0).all()
    assert 0.2 < has.mean() < 0.8  # many words (ADP, DET without Number, PUNCT) are left out
    # predictions on excluded words do not count: all-wrong there, right elsewhere, scores 1
    preds = [np.where(t == EXCLUDED, 0, t) for t in targets]
    preds = [np.where(t == EXCLUDED, (p + 1) % len(task.labels), p)
             for t, p in zip(targets, preds, strict=True)]
    metrics, stats = score(task, dev, preds)
    assert metrics["acc"] == 1.0 == stats["acc"].value()
    # a constant "Sing": its accuracy is the share of Sing among the words with Number
    sing = task.labels.index("Sing")
    const = [np.full(t.size, sing) for t in targets]
    share = float(np.mean(flat[has] == sing))
    metrics, stats = score(task, dev, const)
    assert metrics["acc"] == pytest.approx(share) and stats["acc"].value() == pytest.approx(share)


def test_feats_missing_label_makes_a_none_class(dev):
    task = FeatsTask(missing="label")
    task.fit(dev)
    assert task.labels[-1] == "_none" and {"Plur", "Sing"} <= set(task.labels)
    assert all((t >= 0).all() for t in task.targets(dev))


def test_majority_baseline_ignores_words_outside_the_task(dev):
    task = FeatsTask()
    task.fit(dev)
    preds = baseline_predictions("majority", task, dev, dev)
    flat = np.concatenate(preds)
    assert set(flat.tolist()) <= set(range(len(task.labels)))  # never EXCLUDED, though
    counts = Counter(np.concatenate(task.targets(dev)).tolist())   # most words have it
    assert counts[EXCLUDED] > max(counts[k] for k in range(len(task.labels)))


@pytest.mark.parametrize("task", [DeprelTask(), FeatsTask(), PosTask()])
def test_control_relabels_where_the_task_reads(dev, task):
    control = control_task(task, seed=3)
    control.fit(dev)
    corpus = control.control_corpus(dev)
    targets = control.targets(dev)
    base = task.targets(dev)
    for t, b in zip(targets, base, strict=True):
        assert ((t == EXCLUDED) == (b == EXCLUDED)).all()  # the same words are in the task
    label_of = {}
    for forms, t in zip(dev.forms, targets, strict=True):
        for f, k in zip(forms, t.tolist(), strict=True):
            if k != EXCLUDED:
                assert label_of.setdefault(f, k) == k  # one label per word type
    assert control.evaluate(dev, targets)["acc"] == 1.0
    assert corpus.heads is dev.heads and corpus.forms is dev.forms
    if isinstance(task, FeatsTask):
        assert corpus.upos is dev.upos
        for fs, cs in zip(dev.feats, corpus.feats, strict=True):
            for f, c in zip(fs, cs, strict=True):
                assert ("Number=" in f) == ("Number=" in c)
