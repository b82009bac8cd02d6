"""The SentEval probing tasks built from the real EWT: the paper's controls, hand-checked labels,
the file format round trip and the ``synrob senteval`` commands."""

from __future__ import annotations

import json
import random
from collections import Counter, defaultdict
from pathlib import Path

import pytest
from synrob.perturb.perturbers.senteval import Somo, find_coordinate_clauses
from synrob.perturb.senteval import TASK_FILES, SentEvalExample, read_task_file
from synrob.perturb.senteval.build import (
    SentEvalError,
    SuiteBuilder,
    SuiteResult,
    build_suite,
    class_counts,
    read_suite,
    suite_stats,
    write_suite,
)
from synrob.perturb.senteval.labels import (
    length_bin,
    length_bins,
    object_number,
    subject_number,
    tense,
    top_constituents,
    tree_depth,
)
from synrob.perturb.senteval.source import SourceSentence, load_sources
from synrob.perturb.senteval.splits import balanced_split, grouped_split, split_sequence
from synrob.perturb.senteval.tasks import _original_vs_modified, pearson

# --------------------------------------------------------------------------- fixtures


@pytest.fixture(scope="module")
def ewt_files(ewt_train: Path, ewt_dev: Path, ewt_test: Path) -> list[Path]:
    return [ewt_train, ewt_dev, ewt_test]


@pytest.fixture(scope="module")
def builder(ewt_files: list[Path]) -> SuiteBuilder:
    """All ten tasks built from the whole of EWT (seed 0)."""
    b = SuiteBuilder(ewt_files, seed=0)
    for task in TASK_FILES:
        b.build(task)
    return b


@pytest.fixture(scope="module")
def suite(builder: SuiteBuilder) -> SuiteResult:
    return builder.result()


@pytest.fixture(scope="module")
def by_text(builder: SuiteBuilder) -> dict[str, SourceSentence]:
    return {s.text: s for s in builder.sources}


def _examples(suite: SuiteResult, task: str) -> list[SentEvalExample]:
    return suite.tasks[task].examples


# --------------------------------------------------------------------------- split helpers


def test_split_sequence_proportions() -> None:
    seq = split_sequence(1000)
    assert Counter(seq) == {"tr": 800, "va": 100, "te": 100}
    assert split_sequence(10) == ["tr", "tr", "tr", "va", "tr", "tr", "te", "tr", "tr", "tr"]
    assert Counter(split_sequence(12, (1, 1, 1))) == {"tr": 4, "va": 4, "te": 4}


def test_balanced_split_downsamples_to_the_smallest_class() -> None:
    out = balanced_split({"a": list(range(50)), "b": list(range(100, 130))}, random.Random(0))
    counts = Counter((s, c) for s, c, _ in out)
    assert counts == {("tr", "a"): 24, ("tr", "b"): 24, ("va", "a"): 3, ("va", "b"): 3,
                      ("te", "a"): 3, ("te", "b"): 3}
    assert len({x for _, _, x in out}) == 60


def test_grouped_split_keeps_each_group_in_one_split() -> None:
    rng = random.Random(1)
    items = [(rng.choice("XY"), f"w{rng.randrange(60)}", i) for i in range(2000)]
    out = grouped_split(items, random.Random(2))
    group = {i: g for _, g, i in items}
    splits_of: dict[str, set[str]] = defaultdict(set)
    for split, _, i in out:
        splits_of[group[i]].add(split)
    assert all(len(v) == 1 for v in splits_of.values())
    counts = Counter((s, c) for s, c, _ in out)
    for split in ("tr", "va", "te"):
        assert counts[(split, "X")] == counts[(split, "Y")] > 0
    assert counts[("tr", "X")] > 4 * counts[("te", "X")]


def test_length_bins_are_the_papers() -> None:
    assert length_bins(5, 28) == [(5, 8), (9, 12), (13, 16), (17, 20), (21, 24), (25, 28)]
    assert length_bin(8, length_bins(5, 28)) == 0 and length_bin(25, length_bins(5, 28)) == 5
    assert length_bin(29, length_bins(5, 28)) is None


# --------------------------------------------------------------------------- hand-checked labels

#: sent_id -> (Tense, SubjNum, ObjNum, TopConst, TreeDepth), checked by hand on the trees.
HAND_CHECKED = {
    # "About 1,200 Indian soldiers were killed during this phase of the conflict ."
    "weblog-blogspot.com_dakbangla_20041119231111_ENG_20041119_231111-0027":
        (("PAST", "killed"), ("NNS", "soldiers"), None, "NP_VP_.", 3),
    # "My wife know my harmless secret and supports me ."  (FEATS of "know": Tense=Pres)
    "newsgroup-groups.google.com_MeninLingerie_78adf09ead5e7e87_ENG_20041219_035800-0009":
        (("PRES", "know"), ("NN", "wife"), ("NN", "secret"), "NP_VP_.", 2),
    # "Did you survive the honeymoon ?"
    "email-enronsent28_03-0038":
        (("PAST", "survive"), None, ("NN", "honeymoon"), "VBD_NP_VP_.", 2),
    # "Do not use these guys ."  (imperative: no tense)
    "reviews-015573-0002":
        (None, None, ("NNS", "guys"), "VP_.", 2),
    # "Now Iran wants to turn the tables and is inviting cartoonists to do their best by
    #  depicting the Holocaust ."  (proper-noun subject: no SubjNum)
    "weblog-blogspot.com_aggressivevoicedaily_20060814163400_ENG_20060814_163400-0002":
        (("PRES", "wants"), None, None, "ADVP_NP_VP_.", 5),
    # "The smokehouse ca n't be beat anywhere ."  (modal: no tense)
    "reviews-009775-0002":
        (None, ("NN", "smokehouse"), None, "NP_VP_.", 2),
    # "The food 's okay , but the price is outrageous ."  (adjectival root: no Tense)
    "reviews-186135-0002":
        (None, ("NN", "food"), None, "S_,_CC_S_.", 3),
}


@pytest.fixture(scope="module")
def ewt_by_id(ewt_files: list[Path]) -> dict[str, SourceSentence]:
    sources, _ = load_sources(ewt_files, min_len=1, max_len=1000)
    return {s.sent_id: s for s in sources if s.sent_id in HAND_CHECKED}


@pytest.mark.parametrize("sent_id", sorted(HAND_CHECKED))
def test_labels_on_hand_checked_ewt_sentences(sent_id: str,
                                              ewt_by_id: dict[str, SourceSentence]) -> None:
    s = ewt_by_id[sent_id]
    expected = HAND_CHECKED[sent_id]
    got = (tense(s), subject_number(s), object_number(s), top_constituents(s), tree_depth(s))
    assert got == expected, s.text


# --------------------------------------------------------------------------- controls


@pytest.mark.slow
def test_all_ten_tasks_are_built_with_classes_balanced_in_every_split(suite: SuiteResult) -> None:
    assert list(suite.tasks) == list(TASK_FILES)
    expected_classes = {"SentLen": 6, "BShift": 2, "Tense": 2, "SubjNum": 2, "ObjNum": 2,
                        "SOMO": 2, "CoordInv": 2}
    for task, build in suite.tasks.items():
        counts = class_counts(build.examples)
        labels = set(counts["tr"])
        for split, c in counts.items():
            assert c, f"{task}: empty split {split}"
            assert set(c) == labels, f"{task}: classes differ between splits"
            assert len(set(c.values())) == 1, f"{task} {split}: unbalanced {c}"
        if task in expected_classes:
            assert len(labels) == expected_classes[task], task
        tr, va, te = (sum(counts[s].values()) for s in ("tr", "va", "te"))
        assert 6 * va <= tr and 6 * te <= tr and va > 0 and te > 0, task


@pytest.mark.slow
def test_no_sentence_in_two_splits(suite: SuiteResult) -> None:
    for task, build in suite.tasks.items():
        splits_of: dict[str, set[str]] = defaultdict(set)
        for ex in build.examples:
            splits_of[ex.sentence].add(ex.split)
        shared = [t for t, v in splits_of.items() if len(v) > 1]
        assert not shared, f"{task}: {shared[:3]}"


@pytest.mark.slow
@pytest.mark.parametrize("task,label_of", [("Tense", tense), ("SubjNum", subject_number),
                                            ("ObjNum", object_number)])
def test_no_target_word_in_two_splits(task, label_of, suite: SuiteResult,
                                      by_text: dict[str, SourceSentence]) -> None:
    targets: dict[str, set[str]] = defaultdict(set)
    for ex in _examples(suite, task):
        label, word = label_of(by_text[ex.sentence])
        assert label == ex.label, ex
        targets[ex.split].add(word)
    assert not targets["tr"] & targets["va"]
    assert not targets["tr"] & targets["te"]
    assert not targets["va"] & targets["te"]
    assert len(targets["te"]) > 20


def _one_word_edits(sources: list[SourceSentence]) -> dict[tuple, list[str]]:
    index: dict[tuple, list[str]] = {}
    for s in sources:
        toks = s.tokens
        for i in range(len(toks)):
            index.setdefault((len(toks), i, *toks[:i], *toks[i + 1:]), []).append(toks[i])
    return index


@pytest.mark.slow
def test_somo_replacements_never_repeat_across_splits(suite: SuiteResult,
                                                      builder: SuiteBuilder) -> None:
    index = _one_word_edits(builder.sources)
    sources = {s.text for s in builder.sources}
    used: dict[str, set[str]] = defaultdict(set)
    for ex in _examples(suite, "SOMO"):
        if ex.label == "O":
            assert ex.sentence in sources
            continue
        toks = ex.sentence.split(" ")
        hits = [(i, toks[i]) for i in range(len(toks))
                if (len(toks), i, *toks[:i], *toks[i + 1:]) in index]
        assert hits, f"not one word away from any source sentence: {ex.sentence}"
        i, new = hits[0]
        assert new not in index[(len(toks), i, *toks[:i], *toks[i + 1:])]
        used[ex.split].add(new.lower())
    assert used["tr"] and used["va"] and used["te"]
    assert not used["tr"] & used["va"]
    assert not used["tr"] & used["te"]
    assert not used["va"] & used["te"]


def test_originals_are_modifiable_sources(ewt_dev: Path) -> None:
    """The O/I builder: an O sentence is always one the generator could modify; sources it
    cannot modify (random here) are dropped from both classes; I and O never share a source."""
    sources, _ = load_sources([ewt_dev], min_len=5, max_len=28)
    for trial in range(5):
        fail = {s.index for s in random.Random(trial).sample(sources, k=len(sources) * trial // 6)}
        tried: list[int] = []
        reported: list[tuple[str, int]] = []

        def modify(split: str, s: SourceSentence, fail=fail, tried=tried) -> str | None:
            tried.append(s.index)
            return None if s.index in fail else s.text + " ~"

        build = _original_vs_modified(
            "X", sources, random.Random(7), modify, (0.8, 0.1, 0.1),
            lambda split, s, reported=reported: reported.append((split, s.index)))
        by_text = {s.text: s for s in sources}
        by_modified = {s.text + " ~": s for s in sources}
        originals = {by_text[ex.sentence].index for ex in build.examples if ex.label == "O"}
        modified = {(ex.split, by_modified[ex.sentence].index)
                    for ex in build.examples if ex.label == "I"}
        assert sorted(tried) == sorted(s.index for s in sources)  # every source is tried
        assert not originals & fail and not {i for _, i in modified} & fail
        assert not originals & {i for _, i in modified}
        assert sorted(reported) == sorted(modified)
        assert build.info["not_modifiable"] == len(fail)
        counts = class_counts(build.examples)
        assert all(c["O"] == c["I"] for c in counts.values())
        usable = len(sources) - len(fail)
        assert usable - 3 <= 2 * len(originals) <= usable  # at most one odd source per split


@pytest.mark.slow
def test_o_examples_of_the_o_i_tasks_are_modifiable(suite: SuiteResult, builder: SuiteBuilder,
                                                    by_text: dict[str, SourceSentence]) -> None:
    """Every O sentence of BShift, SOMO and CoordInv could have been modified itself."""
    for ex in _examples(suite, "BShift"):
        if ex.label == "O":
            w = by_text[ex.sentence].words
            assert any(a.upos != "PUNCT" and b.upos != "PUNCT" and a.form != b.form
                       for a, b in zip(w, w[1:], strict=False)), ex
    no_pair = sum(1 for s in builder.sources
                  if not any(a.upos != "PUNCT" and b.upos != "PUNCT"
                             for a, b in zip(s.words, s.words[1:], strict=False)))
    info = suite.tasks["BShift"].info
    assert info["no_word_pair"] == no_pair and 0 < no_pair <= info["not_modifiable"]
    assert info["identical_pair"] == info["not_modifiable"] - no_pair  # EWT: 1 ("very very")
    for ex in _examples(suite, "CoordInv"):
        if ex.label == "O":
            assert find_coordinate_clauses(by_text[ex.sentence].sentence()) is not None
    # SOMO: modifiable by the split's perturber, which excludes the earlier splits' replacements
    index = _one_word_edits(builder.sources)
    used: dict[str, set[str]] = defaultdict(set)
    for ex in _examples(suite, "SOMO"):
        if ex.label == "I":
            toks = ex.sentence.split(" ")
            (new,) = [toks[i] for i in range(len(toks))
                      if (len(toks), i, *toks[:i], *toks[i + 1:]) in index]
            used[ex.split].add(new.lower())
    earlier = {"tr": set(), "va": used["tr"], "te": used["tr"] | used["va"]}
    table = builder.bigram_table()
    checked = 0
    for ex in _examples(suite, "SOMO"):
        if ex.label == "O":
            somo = Somo.with_table(table, exclude=earlier[ex.split])
            # the outcome (I or O) does not depend on the generator: every target is tried
            assert somo.perturb(by_text[ex.sentence].sentence(), random.Random(0)).label == "I"
            checked += 1
    info = suite.tasks["SOMO"].info
    assert checked == len(_examples(suite, "SOMO")) // 2 and info["not_modifiable"] > 0


@pytest.mark.slow
def test_tree_depth_is_decorrelated_from_length(suite: SuiteResult,
                                                builder: SuiteBuilder) -> None:
    raw = pearson([tree_depth(s) for s in builder.sources], [len(s) for s in builder.sources])
    examples = _examples(suite, "TreeDepth")
    assert raw > 0.5
    for split in ("tr", "va", "te", None):
        part = [ex for ex in examples if split is None or ex.split == split]
        r = pearson([int(ex.label) for ex in part], [len(ex.sentence.split(" ")) for ex in part])
        assert abs(r) < 0.05, (split, r)
    info = suite.tasks["TreeDepth"].info
    assert len(info["classes"]) >= 4
    assert info["depth_length_r_treebank"] == pytest.approx(raw, abs=1e-4)


@pytest.mark.slow
def test_labels_of_the_built_files_match_the_trees(suite: SuiteResult,
                                                   by_text: dict[str, SourceSentence]) -> None:
    bins = length_bins(5, 28)
    for ex in _examples(suite, "SentLen"):
        assert ex.label == str(length_bin(len(ex.sentence.split(" ")), bins))
    for ex in _examples(suite, "TreeDepth"):
        assert ex.label == str(tree_depth(by_text[ex.sentence]))
    top_classes = set(suite.tasks["TopConst"].info["classes"])
    for ex in _examples(suite, "TopConst"):
        seq = top_constituents(by_text[ex.sentence])
        assert ex.label == (seq if seq in top_classes else "OTHER")
    for task in ("BShift", "CoordInv"):
        for ex in _examples(suite, task):
            assert (ex.sentence in by_text) == (ex.label == "O"), (task, ex)


@pytest.mark.slow
def test_word_content_sentences_hold_exactly_one_of_the_n_words(suite: SuiteResult) -> None:
    info = suite.tasks["WC"].info
    words = set(info["words"])
    assert len(words) == info["n_words"] >= 100
    examples = _examples(suite, "WC")
    assert {ex.label for ex in examples} == words
    for ex in examples:
        hits = {t.lower() for t in ex.sentence.split(" ")} & words
        assert hits == {ex.label}, ex
    lo, hi = info["zipf_band"]
    assert lo <= info["zipf_range"][0] <= info["zipf_range"][1] <= hi


# --------------------------------------------------------------------------- file format


@pytest.mark.slow
def test_write_then_read_round_trip(suite: SuiteResult, tmp_path: Path) -> None:
    paths = write_suite(suite, tmp_path)
    pairs = ["bigram_shift.pairs.jsonl", "odd_man_out.pairs.jsonl",
             "coordination_inversion.pairs.jsonl"]
    assert sorted(p.name for p in paths) == sorted([*TASK_FILES.values(), *pairs, "stats.json"])
    back = read_suite(tmp_path)
    assert {t: b.examples for t, b in suite.tasks.items()} == back
    stats = json.loads((tmp_path / "stats.json").read_text(encoding="utf-8"))
    checked = suite_stats(back)
    for task in TASK_FILES:
        assert stats["tasks"][task]["counts"] == checked[task]["counts"]
        assert checked[task]["balanced"] and checked[task]["sentences_in_two_splits"] == 0
    assert stats["tasks"]["WC"]["n_words"] == suite.tasks["WC"].info["n_words"]
    line = (tmp_path / TASK_FILES["Tense"]).read_text(encoding="utf-8").splitlines()[0]
    split, label, sentence = line.split("\t")
    assert split == "tr" and label in ("PAST", "PRES") and "  " not in sentence


def test_official_files_are_read(tmp_path: Path, cli) -> None:
    # the layout of the official SentEval probing data: same names, SPLIT\tLABEL\tSENTENCE
    (tmp_path / "past_present.txt").write_text(
        "tr\tPRES\tshe walks home .\ntr\tPAST\the walked home .\n"
        "va\tPAST\tthey left .\nte\tPRES\twe stay .\n", encoding="utf-8")
    (tmp_path / "bigram_shift.txt").write_text("tr\tI\thome walks she .\n", encoding="utf-8")
    res = cli(["senteval", "stats", tmp_path])
    assert res.exit_code == 0, res.stderr
    stats = json.loads(res.stdout)
    assert set(stats) == {"Tense", "BShift"}
    assert stats["Tense"]["counts"] == {"tr": {"PAST": 1, "PRES": 1}, "va": {"PAST": 1},
                                        "te": {"PRES": 1}}
    assert stats["Tense"]["sizes"] == {"tr": 2, "va": 1, "te": 1}
    assert stats["BShift"]["balanced"] is True


def test_stats_errors(tmp_path: Path, cli) -> None:
    res = cli(["senteval", "stats", tmp_path])
    assert res.exit_code == 1 and "none of the SentEval task files" in res.stderr
    (tmp_path / "odd_man_out.txt").write_text("xx\tO\tbad split .\n", encoding="utf-8")
    res = cli(["senteval", "stats", tmp_path])
    assert res.exit_code == 1 and "odd_man_out.txt:1:" in res.stderr
    with pytest.raises(SentEvalError):
        read_suite(tmp_path / "missing")


# --------------------------------------------------------------------------- CLI and seeds


def test_cli_build_writes_the_ten_files(tmp_path: Path, ewt_dev: Path, ewt_test: Path,
                                        cli) -> None:
    out = tmp_path / "se"
    res = cli(["senteval", "build", "--treebank", ewt_dev, "--treebank", ewt_test,
               "--seed", "3", "-o", out])
    assert res.exit_code == 0, res.stderr
    pairs = ["bigram_shift.pairs.jsonl", "odd_man_out.pairs.jsonl",
             "coordination_inversion.pairs.jsonl"]
    assert sorted(p.name for p in out.iterdir()) == sorted([*TASK_FILES.values(), *pairs,
                                                            "stats.json"])
    stats = json.loads((out / "stats.json").read_text(encoding="utf-8"))
    assert stats["seed"] == 3 and stats["treebanks"] == [str(ewt_dev), str(ewt_test)]
    for task, fname in TASK_FILES.items():
        examples = read_task_file(out / fname)
        assert examples, task
        assert stats["tasks"][task]["counts"] == class_counts(examples)
    res = cli(["senteval", "build", "--treebank", ewt_dev, "--task", "Nope", "-o", out])
    assert res.exit_code == 1 and "unknown task Nope" in res.stderr


def test_builds_are_seeded(ewt_dev: Path) -> None:
    a = build_suite([ewt_dev], seed=5, tasks=["Tense", "BShift"])
    b = build_suite([ewt_dev], seed=5, tasks=["Tense", "BShift"])
    c = build_suite([ewt_dev], seed=6, tasks=["Tense", "BShift"])
    assert list(a.tasks) == ["BShift", "Tense"]
    for task in ("Tense", "BShift"):
        assert a.tasks[task].examples == b.tasks[task].examples
        assert a.tasks[task].examples != c.tasks[task].examples


def test_pairs_keep_the_original_of_every_modified_example(suite: SuiteResult,
                                                           tmp_path: Path) -> None:
    """O/I tasks record each I example's original text; write_suite writes them beside the task
    file and read_pairs reads them back; other tasks have none."""
    from synrob.perturb.senteval import pairs_file, read_pairs

    write_suite(suite, tmp_path)
    for task in ("BShift", "SOMO", "CoordInv"):
        build = suite.tasks[task]
        modified = Counter((ex.split, ex.sentence) for ex in build.examples if ex.label == "I")
        assert Counter((p["split"], p["modified"]) for p in build.pairs) == modified
        assert all(p["original"] != p["modified"] for p in build.pairs)
        if task == "BShift":  # the same words, two of them swapped
            assert all(sorted(p["original"].split()) == sorted(p["modified"].split())
                       for p in build.pairs)
        assert pairs_file(tmp_path, task).is_file()
        assert read_pairs(tmp_path, task) == build.pairs
    assert not suite.tasks["Tense"].pairs and read_pairs(tmp_path, "Tense") is None
