"""Control tasks (Hewitt & Liang 2019): labels and trees determined by word types only."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from synrob.perturb.errors import ParameterError
from synrob.perturb.io.data import sample_path
from synrob.perturb.io.tree import depths
from synrob.probe.tasks import CorpusTreeDepthTask, DepthTask, DistanceTask, PosTask, RootTask
from synrob.probe.tasks.base import load_gold
from synrob.probe.tasks.control import (
    BEHAVIOURS,
    ControlTask,
    behaviour,
    control_heads,
    control_task,
    type_uniform,
)


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


def _types_with(seed: int, want: str, n: int) -> list[str]:
    """``n`` word types whose control behaviour (seed ``seed``) is ``want``."""
    found = [t for t in (f"w{k}" for k in range(2000)) if behaviour(seed, t) == want]
    return found[:n]


def _check_control_tree(forms: list[str], punct: np.ndarray, heads: np.ndarray, seed: int) -> None:
    """The invariants of the module docstring, read off one control tree."""
    assert _is_tree(heads)
    anchors = np.flatnonzero(~punct) if not punct.all() else np.arange(len(forms))
    root = int(np.flatnonzero(heads == 0)[0])
    scores = [type_uniform(seed, forms[a], "root") for a in anchors]
    assert root == anchors[int(np.argmax(scores))]  # the root: the highest root score
    first, last = int(anchors[0]), int(anchors[-1])
    for i, h in enumerate(heads.tolist()):
        if i == root:
            continue
        assert h - 1 in (root, first, last) and h - 1 in anchors  # never a punctuation head
        if i not in (first, last):  # inner and punctuation words follow their type
            want = behaviour(seed, forms[i])
            assert h - 1 == {"root": root, "first": first, "last": last}[want]


def test_control_tree_follows_the_types_and_leaves_punctuation_out(sample):
    seen_roots: set[int] = set()
    for split in ("train", "test"):
        gold = sample[split]
        for i, forms in enumerate(gold.forms):
            heads = control_heads(forms, 0, gold.punct(i))
            _check_control_tree(forms, gold.punct(i), heads, 0)
            seen_roots.add(int(np.flatnonzero(heads == 0)[0]))
    assert len(seen_roots) > 5  # the root's position is not fixed
    assert set(BEHAVIOURS) == {"root", "first", "last"}
    assert {behaviour(0, f) for sent in sample["train"].forms for f in sent} == set(BEHAVIOURS)


def test_control_tree_by_hand():
    root_, first_, last_ = (_types_with(0, b, 4) for b in BEHAVIOURS)
    # the root: the anchor of highest root score, whatever its position
    types = [first_[0], last_[0], root_[0], first_[1]]
    top = max(range(4), key=lambda k: type_uniform(0, types[k], "root"))
    heads = control_heads(types, 0)
    assert heads[top] == 0 and _is_tree(heads)
    # a middle word whose root score beats the ends': it is the root of [end, mid, end]
    a, b, c = last_[0], first_[0], last_[1]
    mid = max((f"w{k}" for k in range(2000)), key=lambda t: type_uniform(0, t, "root"))
    assert mid not in (a, b, c)
    assert control_heads([a, mid, b], 0).tolist() == [2, 0, 2]  # ends naming each other: root
    assert control_heads([b, mid, c], 0).tolist() == [2, 0, 2]  # each end names itself: root
    assert control_heads([a, mid, c], 0).tolist() == [3, 0, 2]  # a names the last word c
    assert control_heads([b, mid, b], 0).tolist() == [2, 0, 1]  # the last b names the first
    # punctuation: a leaf under an anchor, never the root, even when it would score highest
    punct = np.array([True, False, False, True])
    words = [first_[2], last_[2], root_[2], last_[3]]
    heads = control_heads(words, 0, punct)
    assert heads[0] == 2 and heads[3] == 3 and _is_tree(heads) and 0 in heads[1:3]
    heads = control_heads([mid, first_[2], last_[2]], 0, np.array([True, False, False]))
    assert heads[0] != 0 and heads[0] in (2, 3) and _is_tree(heads)  # mid: the top score
    # a sentence of punctuation only: every word is an anchor
    heads = control_heads(["!", "?", "."], 0, np.ones(3, bool))
    _check_control_tree(["!", "?", "."], np.ones(3, bool), heads, 0)
    assert control_heads(["solo"], 0).tolist() == [0]
    x_root = type_uniform(0, "x", "root") > type_uniform(0, "y", "root")
    assert control_heads(["x", "y"], 0).tolist() == ([0, 1] if x_root else [2, 0])
    assert control_heads(["a", "b", "c"], 3).tolist() == control_heads(["a", "b", "c"], 3).tolist()


def _oracle(targets: list[np.ndarray], ties: bool, seed: int = 0) -> list[np.ndarray]:
    """The control targets plus noise of 1e-6: independent per pair (symmetric), or one draw
    per distinct target value of the sentence (keeps the ties, so Spearman stays exact)."""
    rng = np.random.default_rng(seed)
    out = []
    for t in targets:
        t = np.asarray(t, dtype=np.float64)
        if ties:
            values, inverse = np.unique(t, return_inverse=True)
            out.append(t + 1e-6 * rng.uniform(0, 1, values.size)[inverse].reshape(t.shape))
        else:
            e = rng.uniform(-1e-6, 1e-6, t.shape)
            out.append(t + ((e + e.T) / 2 if t.ndim == 2 else e))
    return out


def _oracle_scores(gold, seed: int = 0) -> dict[str, float]:
    """The oracle's control metrics, through the control task's own evaluate. The UUAS and
    root accuracy come from the independent noise (ties broken at random); DSpr and NSpr
    from the tie-keeping noise (independent noise turns gold ties into ranks: the gold trees'
    own oracle then gets DSpr 0.966, NSpr 0.953 on EWT test)."""
    out = {}
    for task in (DistanceTask(), DepthTask()):
        ctrl = _fitted(task, gold, seed)
        targets = ctrl.targets(gold)
        out.update({f"{k}/iid": v for k, v in ctrl.evaluate(gold, _oracle(targets, False)).items()})
        out.update({f"{k}/ties": v for k, v in ctrl.evaluate(gold, _oracle(targets, True)).items()})
    return out


def _assert_oracle_perfect(m: dict[str, float]) -> None:
    for key in ("uuas/iid", "uuas_punct/iid", "root_acc/iid", "uuas/ties", "root_acc/ties"):
        assert m[key] == 1.0, key
    for key in ("dspr/ties", "nspr/ties"):
        assert m[key] == pytest.approx(1.0, abs=1e-12), key


@pytest.mark.slow
def test_an_oracle_scores_one_on_the_control_of_ewt_test(ewt_test):
    gold = load_gold(ewt_test)
    _assert_oracle_perfect(_oracle_scores(gold))
    for i, forms in enumerate(gold.forms):
        _check_control_tree(forms, gold.punct(i), control_heads(forms, 0, gold.punct(i)), 0)
    # EWT test has 2,077 sentences; 105 start with punctuation and 31 are all punctuation
    assert sum(bool(gold.punct(i)[0]) for i in range(len(gold))) == 105
    assert sum(bool(gold.punct(i).all()) for i in range(len(gold))) == 31


@pytest.mark.parametrize("treebank", ["tr_boun", "cs_pud"])
def test_an_oracle_scores_one_on_the_control_of_non_english_treebanks(treebank):
    path = Path(__file__).parents[1] / "data" / "ud" / treebank / f"{treebank}-ud-test.conllu"
    gold = load_gold(path)
    for seed in (0, 1):
        _assert_oracle_perfect(_oracle_scores(gold, seed))


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
