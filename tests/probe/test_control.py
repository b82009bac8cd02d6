"""Control tasks (Hewitt & Liang 2019): labels and trees determined by word types only."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from synrob.perturb.data import sample_path
from synrob.perturb.errors import ParameterError
from synrob.perturb.tree import depths
from synrob.probe.tasks import CorpusTreeDepthTask, DepthTask, DistanceTask, PosTask, RootTask
from synrob.probe.tasks.base import load_gold
from synrob.probe.tasks.control import BEHAVIOURS, ControlTask, control_heads, control_task


@pytest.fixture(scope="module")
def sample():
    return {s: load_gold(sample_path(s)) for s in ("train", "dev", "test")}


def _fitted(task, train, seed=0):
    ctrl = control_task(task, seed)
    ctrl.fit(train)
    return ctrl


def test_pos_control_labels_are_a_function_of_the_type(sample):
    ctrl = _fitted(PosTask(), sample["train"])
    seen: dict[str, int] = {}
    for split in ("train", "dev", "test"):
        gold = sample[split]
        for forms, ids in zip(gold.forms, ctrl.targets(gold), strict=True):
            for f, k in zip(forms, ids.tolist(), strict=True):
                assert k >= 0
                assert seen.setdefault(f, k) == k  # same type, same label, in every file
    # a fresh control task with the same seed gives the same labels; another seed others
    again = _fitted(PosTask(), sample["train"])
    other = _fitted(PosTask(), sample["train"], seed=1)
    types = sorted(seen)
    assert [again.label_of(t) for t in types] == [ctrl.label_of(t) for t in types]
    assert [other.label_of(t) for t in types] != [ctrl.label_of(t) for t in types]
    assert ctrl.label_of("never-seen-type-xyz") == again.label_of("never-seen-type-xyz")


def test_pos_control_keys_and_perfect_predictions(sample):
    ctrl = _fitted(PosTask(), sample["train"])
    gold = sample["test"]
    m = ctrl.evaluate(gold, ctrl.targets(gold))
    assert set(m) == {"acc", "words_right", "sentences"}
    assert m["acc"] == 1.0 and ctrl.name == "pos-control" and ctrl.kind == "tag"


@pytest.mark.slow
def test_pos_control_distribution_matches_empirical_on_ewt(ewt_train):
    train = load_gold(ewt_train)
    task = PosTask()
    ctrl = _fitted(task, train)
    empirical = Counter(t for sent in train.upos for t in sent)
    total = sum(empirical.values())
    types = sorted({f for sent in train.forms for f in sent})
    drawn = Counter(ctrl.label_of(t) for t in types)
    for label in task.labels:
        assert abs(drawn[label] / len(types) - empirical[label] / total) < 0.02, label


def _is_tree(heads: np.ndarray) -> bool:
    return int(np.sum(heads == 0)) == 1 and min(depths(heads.tolist())) >= 0


def test_control_tree_is_a_tree_determined_by_types(sample):
    seen: dict[str, tuple[int, int]] = {}
    for forms in sample["train"].forms:
        heads = control_heads(forms, seed=0)
        assert heads[0] == 0 and _is_tree(heads)
        n = len(forms)
        if n > 1:
            assert heads[-1] == 1
        for i in range(1, n - 1):
            behaviour = "first" if heads[i] == 1 else ("last" if heads[i] == n else "left")
            if heads[i] == 1 and i == 1:
                behaviour = "first|left"  # word 1's left neighbour is the first word
            key = forms[i]
            if key in seen and "|" not in behaviour and "|" not in seen[key][0]:
                assert seen[key][0] == behaviour, key
            seen.setdefault(key, (behaviour, i))
    assert set(BEHAVIOURS) <= {b for b, _ in seen.values()}
    # the same type sequence gives the same tree, whatever the sentence
    assert control_heads(["a", "b", "c", "d"], 3).tolist() == control_heads(["a", "b", "c", "d"],
                                                                            3).tolist()
    assert control_heads(["solo"], 0).tolist() == [0]
    assert control_heads(["x", "y"], 0).tolist() == [0, 1]


def test_structural_controls_score_their_own_tree(sample):
    gold = sample["test"].subset(30)
    for task in (DistanceTask(), DepthTask()):
        ctrl = _fitted(task, sample["train"])
        m = ctrl.evaluate(gold, ctrl.targets(gold))
        assert set(m) == set(task.evaluate(gold, task.targets(gold)))
        assert m[task.primary_metric] == pytest.approx(1.0)
        cgold = ctrl.control_corpus(gold)
        assert all(_is_tree(h) for h in cgold.heads)


@pytest.mark.parametrize("task", [RootTask(), CorpusTreeDepthTask()])
def test_sentence_level_tasks_have_no_control(task):
    with pytest.raises(ParameterError, match="no control task"):
        ControlTask(task)
