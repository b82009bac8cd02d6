"""Probing tasks: gold targets from real EWT sentences, and perfect predictions score perfectly."""

from __future__ import annotations

import numpy as np
import pytest
from synrob.perturb.corpus import read_conllu
from synrob.perturb.errors import ParameterError
from synrob.probe.tasks import (
    CorpusTreeDepthTask,
    DepthTask,
    DistanceTask,
    ParseTask,
    PosTask,
    RootTask,
    load_gold,
)


@pytest.fixture(scope="module")
def dev(ewt_dev):
    return load_gold(ewt_dev, limit=120)


def test_gold_corpus_matches_the_sentences(ewt_dev, dev):
    sents = [s for _, s in zip(range(120), read_conllu(ewt_dev), strict=False)]
    assert len(dev) == 120
    for i, s in enumerate(sents):
        assert dev.sent_ids[i] == s.sent_id
        assert dev.heads[i].tolist() == s.heads
        assert dev.distances(i).tolist() == s.distances()
        assert dev.depths(i).tolist() == s.depths()
        assert dev.root(i) == s.root()
        assert dev.max_depth(i) == s.max_depth()
    # EWT has multiword tokens: gold uses syntactic words only
    assert any(s.ranges() for s in sents)
    assert dev.lengths.tolist() == [len(s) for s in sents]


def test_gold_is_read_once_per_file_state_and_again_when_the_file_changes(ewt_dev, tmp_path):
    import os
    import shutil

    path = tmp_path / "gold.conllu"
    shutil.copyfile(ewt_dev, path)
    first = load_gold(path, limit=5)
    assert load_gold(path, limit=5) is first  # same file state: the kept corpus
    assert load_gold(path, limit=6) is not first and len(load_gold(path, limit=6)) == 6
    # rewrite the file (fewer sentences, later mtime): read again, never the stale corpus
    blocks = path.read_text(encoding="utf-8").split("\n\n")
    path.write_text("\n\n".join(blocks[1:4]) + "\n\n", encoding="utf-8")
    st = os.stat(path)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))
    again = load_gold(path, limit=5)
    assert again is not first and len(again) == 3
    assert again.sent_ids[0] == first.sent_ids[1]


def test_a_missing_gold_file_is_the_readers_one_line_error(tmp_path):
    from synrob.perturb.errors import ConlluError

    with pytest.raises(ConlluError, match="no such file"):
        load_gold(tmp_path / "missing.conllu")


def test_gold_distances_are_kept_and_read_only(dev):
    d = dev.distances(3)
    assert dev.distances(3) is d
    with pytest.raises(ValueError):
        d[0, 0] = 5.0


def test_structural_targets_and_perfect_scores(dev):
    dist = DistanceTask()
    targets = dist.targets(dev)
    assert all(t.shape == (n, n) and np.allclose(t, t.T) for t, n in zip(targets, dev.lengths, strict=True))
    scores = dist.evaluate(dev, targets)
    assert scores["uuas"] == scores["uuas_punct"] == 1.0
    assert scores["dspr"] == pytest.approx(1.0) and scores["sdr"] == 1.0
    assert ParseTask().evaluate(dev, targets)["uuas"] == 1.0
    depth = DepthTask()
    d = depth.targets(dev)
    assert [int(np.argmin(x)) for x in d] == [dev.root(i) for i in range(len(dev))]
    s = depth.evaluate(dev, d)
    assert s["root_acc"] == 1.0 and s["nspr"] == pytest.approx(1.0)
    rec = dist.record(targets[0])
    assert np.array(rec["pred_distances"]).shape == targets[0].shape
    assert len(depth.record(d[0])["pred_depths"]) == dev.lengths[0]


def test_pos_task_upos_and_xpos(ewt_train, dev):
    train = load_gold(ewt_train, limit=300)
    up, xp = PosTask(), PosTask(tagset="xpos")
    up.fit(train)
    xp.fit(train)
    assert "NOUN" in up.labels and "NN" in xp.labels and "NOUN" not in xp.labels
    assert len(up.labels) <= 17 < len(xp.labels)
    t = up.targets(dev)
    assert [up.labels[k] for k in t[0]] == dev.upos[0]
    assert up.evaluate(dev, t)["acc"] == 1.0
    assert up.evaluate(dev, t)["words_right"] == pytest.approx(float(dev.lengths.mean()))
    assert up.record(t[0])["pred_labels"] == dev.upos[0]
    with pytest.raises(ParameterError):
        PosTask(tagset="feats")


def test_root_and_tree_depth_tasks(ewt_train, dev):
    train = load_gold(ewt_train, limit=300)
    root = RootTask()
    assert root.n_classes == 1
    t = root.targets(dev)
    assert [int(x) for x in t] == [dev.root(i) for i in range(len(dev))]
    assert root.evaluate(dev, t)["root_acc"] == 1.0
    td = CorpusTreeDepthTask()
    td.fit(train)
    assert td.labels == sorted(td.labels, key=int)
    tt = td.targets(dev)
    known = [i for i, x in enumerate(tt) if int(x) >= 0]
    assert len(known) >= 115
    s = td.evaluate(dev.subset(len(dev)), [np.array(max(int(x), 0)) for x in tt])
    assert s["acc"] >= len(known) / len(dev) - 1e-9
    # a constant prediction: accuracy = share of that depth, Spearman undefined
    const = td.evaluate(dev, [np.array(0)] * len(dev))
    depth0 = int(td.labels[0])
    assert const["acc"] == pytest.approx(np.mean([dev.max_depth(i) == depth0 for i in range(len(dev))]))
    assert np.isnan(const["spearman"])


def test_punctuation_is_upos_punct_or_a_ptb_punctuation_xpos():
    from synrob.probe.tasks.base import PTB_PUNCT_XPOS, is_punct, punct_mask

    # Hewitt & Manning's list (structural-probes reporter.py), exactly
    assert set(PTB_PUNCT_XPOS) == {"''", ",", ".", ":", "``", "-LRB-", "-RRB-"}
    assert is_punct("PUNCT", "HYPH") and is_punct("PUNCT", "Z:-------------")
    assert is_punct("SYM", ",") and is_punct("X", "-LRB-") and is_punct("X", "-RRB-")
    assert not is_punct("SYM", "$") and not is_punct("SYM", "NFP") and not is_punct("X", "_")
    mask = punct_mask(["NOUN", "SYM", "PUNCT", "X"], ["NN", ",", "HYPH", "ADD"])
    assert mask.dtype == bool and mask.tolist() == [False, True, True, False]


@pytest.mark.slow
@pytest.mark.parametrize("split,upos_punct,ptb_only", [
    ("train", 23596, {("SYM", ","): 94}),
    ("dev", 3075, {("SYM", ","): 8}),
    ("test", 3096, {("SYM", ","): 10, ("X", "-LRB-"): 1, ("X", "-RRB-"): 1}),
])
def test_punctuation_counts_on_ewt(ewt_dir, split, upos_punct, ptb_only):
    """The counts docs/metrics.md gives: UPOS PUNCT words, and the words only their PTB XPOS
    makes punctuation (UPOS, XPOS) -> count; GoldCorpus.punct drops both."""
    gold = load_gold(ewt_dir / f"en_ewt-ud-{split}.conllu")
    masks = [gold.punct(i) for i in range(len(gold))]
    upos = [np.array([u == "PUNCT" for u in sent]) for sent in gold.upos]
    assert sum(int(u.sum()) for u in upos) == upos_punct
    extra: dict[tuple[str, str], int] = {}
    for i, (m, u) in enumerate(zip(masks, upos, strict=True)):
        assert not np.any(u & ~m)  # every UPOS PUNCT word is dropped
        for k in np.flatnonzero(m & ~u):
            key = (gold.upos[i][k], gold.xpos[i][k])
            extra[key] = extra.get(key, 0) + 1
    assert extra == ptb_only
    assert sum(int(m.sum()) for m in masks) == upos_punct + sum(ptb_only.values())


@pytest.mark.parametrize("treebank", ["tr_boun", "cs_pud"])
def test_punctuation_without_ptb_xpos_is_upos_punct(treebank):
    """Treebanks with their own XPOS never use the PTB punctuation tags: UPOS alone decides."""
    from pathlib import Path

    path = Path(__file__).parents[1] / "data" / "ud" / treebank / f"{treebank}-ud-test.conllu"
    gold = load_gold(path)
    for i, sent in enumerate(gold.upos):
        assert gold.punct(i).tolist() == [u == "PUNCT" for u in sent]
    assert sum(int(gold.punct(i).sum()) for i in range(len(gold))) == {"tr_boun": 638,
                                                                        "cs_pud": 881}[treebank]
