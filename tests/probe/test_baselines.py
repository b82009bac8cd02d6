"""Baselines: the path tree and per-length majority trees, on hand-made and real EWT data."""

from __future__ import annotations

import numpy as np
import pytest
from synrob.probe.tasks import DepthTask, DistanceTask, PosTask, RootTask, load_gold
from synrob.probe.tasks.base import GoldCorpus
from synrob.probe.tasks.baselines import (
    MajorityTrees,
    baseline_predictions,
    path_tree,
    tree_distances,
)


def _gold(heads: list[list[int]]) -> GoldCorpus:
    g = GoldCorpus("<memory>")
    for k, h in enumerate(heads):
        g.sent_ids.append(str(k))
        g.forms.append([f"w{i}" for i in range(len(h))])
        g.upos.append(["X"] * len(h))
        g.xpos.append(["X"] * len(h))
        g.heads.append(np.array(h))
    return g


def test_path_tree_and_its_distances():
    assert path_tree(4) == {(0, 1), (1, 2), (2, 3)}
    assert tree_distances(4, path_tree(4)).tolist() == [[abs(i - j) for j in range(4)] for i in range(4)]
    assert tree_distances(1, set()).shape == (1, 1)


def test_majority_tree_is_the_maximum_spanning_tree_of_edge_counts():
    train = _gold([[2, 0, 2], [2, 0, 2], [0, 1, 1], [3, 3, 0, 3]])
    m = MajorityTrees().fit(train)
    assert m.tree(3) == {(0, 1), (1, 2)}  # counts: (0,1)=3, (1,2)=2, (0,2)=1
    assert m.tree(4) == {(0, 2), (1, 2), (2, 3)}
    assert m.tree(7) == path_tree(7)  # length never seen
    assert m.root_position(3) == 1
    long = MajorityTrees(max_length=3).fit(train)
    assert long.tree(4) == path_tree(4)  # beyond max_length


@pytest.fixture(scope="module")
def ewt(ewt_train, ewt_dev):
    return load_gold(ewt_train, limit=2000), load_gold(ewt_dev, limit=300)


def test_path_baseline_uuas_with_punct_is_the_share_of_adjacent_gold_edges(ewt):
    train, dev = ewt
    task = DistanceTask()
    scores = task.evaluate(dev, baseline_predictions("path", task, train, dev))
    adjacent = total = 0
    for h in dev.heads:
        for i, head in enumerate(h.tolist()):
            if head:
                total += 1
                adjacent += abs(head - 1 - i) == 1
    assert scores["uuas_punct"] == pytest.approx(adjacent / total)
    assert 0.3 < scores["uuas"] < 0.6 and 0.4 < scores["dspr"] < 0.8


def test_majority_baseline_on_ewt_and_other_tasks(ewt):
    train, dev = ewt
    task = DistanceTask()
    maj = task.evaluate(dev, baseline_predictions("majority", task, train, dev))
    assert 0.3 < maj["uuas"] < 0.7
    depth = DepthTask()
    d = depth.evaluate(dev, baseline_predictions("majority", depth, train, dev))
    assert 0.0 < d["root_acc"] < 1.0
    pos = PosTask()
    pos.fit(train)
    assert baseline_predictions("path", pos, train, dev) is None
    acc = pos.evaluate(dev, baseline_predictions("majority", pos, train, dev))["acc"]
    assert 0.75 < acc < 0.95  # the per-form majority tag
    root = RootTask()
    r = root.evaluate(dev, baseline_predictions("majority", root, train, dev))["root_acc"]
    assert 0.05 < r < 0.6
