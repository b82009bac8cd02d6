"""The streaming perturbation engine: order, determinism, comments, workers, invalid input."""

from __future__ import annotations

import itertools
import json
import random

import pytest
from synrob.perturb.base import Perturbation, Perturber
from synrob.perturb.corpus import Sentence, read_conllu, sentences_from_string
from synrob.perturb.errors import ConlluError, ParameterError
from synrob.perturb.metrics import chrf2, levenshtein
from synrob.perturb.params import Param
from synrob.perturb.perturbers.order import BShift
from synrob.perturb.pipeline import (
    PipelineStats,
    RawBlock,
    perturb_formatted,
    perturb_records,
    read_blocks,
)


class UpperNouns(Perturber):
    """Upper-cases every NOUN (a substitution that keeps the tree); budget caps how many."""

    name = "upper-nouns"
    params = (Param("budget", int, 0, "at most this many nouns (0: all)"),)

    def perturb(self, sentence: Sentence, rng: random.Random) -> Perturbation:
        ids = [w.id for w in sentence.words() if w.upos == "NOUN"]
        if self.options["budget"]:
            ids = sorted(rng.sample(ids, min(len(ids), self.options["budget"])))
        if not ids:
            return Perturbation(sentence, sentence.text, (), note="no noun")
        forms = {w.id: w.form for w in sentence.words()}
        new = sentence.replace_words({i: {"form": forms[i].upper()} for i in ids})
        return Perturbation(new, new.text, tuple(ids))


class CharReverse(Perturber):
    """Reverses the characters of the text: a text-only output."""

    name = "char-reverse"

    @property
    def writes_conllu(self) -> bool:
        return False

    def perturb(self, sentence: Sentence, rng: random.Random) -> Perturbation:
        return Perturbation(None, sentence.text[::-1], tuple(w.id for w in sentence.words()))


@pytest.fixture(scope="module")
def dev_sentences(ewt_dev) -> list[Sentence]:
    return list(itertools.islice(read_conllu(ewt_dev), 300))


def _shiftable(s: Sentence) -> bool:
    """Whether bshift (default: no pair holding punctuation) can swap two words of ``s``."""
    w = s.words()
    return any(a.upos != "PUNCT" and b.upos != "PUNCT" for a, b in zip(w, w[1:], strict=False))


def test_records_in_input_order_with_comments(dev_sentences) -> None:
    stats = PipelineStats()
    recs = list(perturb_records(BShift(), dev_sentences, seed=5, variants=2, stats=stats))
    assert len(recs) == 2 * len(dev_sentences)
    assert stats.records == len(recs) and stats.sentences == len(dev_sentences)
    assert [(r.index, r.variant) for r in recs] == [
        (i, v) for i in range(len(dev_sentences)) for v in range(2)
    ]
    assert len({r.sent_id for r in recs}) == len(recs)
    for rec in recs:
        orig = dev_sentences[rec.index]
        assert rec.source == orig.sent_id
        assert rec.sent_id == f"{orig.sent_id}.synrob-bshift-v{rec.variant}"
        meta = rec.sentence.metadata
        assert meta["sent_id"] == rec.sent_id
        assert meta["synrob.source"] == orig.sent_id
        assert meta["synrob.kind"] == "bshift"
        assert json.loads(meta["synrob.params"]) == {"punct": False}
        assert meta["synrob.seed"] == "5"
        assert meta["synrob.variant"] == str(rec.variant)
        assert rec.original == orig.text and rec.perturbed == rec.sentence.text
        assert rec.chrf2 == pytest.approx(chrf2(orig.text, rec.perturbed))
        assert rec.lev == pytest.approx(levenshtein(orig.text, rec.perturbed))
        if _shiftable(orig):
            i, j = rec.changed
            assert j == i + 1
            assert meta["synrob.changed"] == f"{i},{j}"
            assert rec.sentence.forms[i - 1] == orig.forms[j - 1]
            assert rec.label == "I"
        else:
            assert rec.changed == () and meta["synrob.changed"] == "" and rec.label == "O"
        # the input sentence is left untouched
        assert orig.metadata["sent_id"] == rec.source
    # the variants of one sentence differ somewhere (independent generators)
    assert any(a.changed != b.changed for a, b in zip(recs[::2], recs[1::2], strict=True))


def test_same_output_for_any_batch_size_and_seed_sensitivity(dev_sentences) -> None:
    def run(batch_size: int, seed: int = 1) -> str:
        return "".join(perturb_formatted(BShift(), dev_sentences, "conllu", seed=seed,
                                         batch_size=batch_size))

    base = run(64)
    assert run(1) == base
    assert run(7) == base
    assert run(64, seed=2) != base


def test_workers_give_byte_identical_output(ewt_dev) -> None:
    blocks = list(itertools.islice(read_blocks(ewt_dev), 400))
    single = "".join(perturb_formatted(BShift(), blocks, "jsonl", seed=3, variants=2))
    stats = PipelineStats()
    multi = "".join(perturb_formatted(BShift(), blocks, "jsonl", seed=3, variants=2, workers=2,
                                      batch_size=16, stats=stats))
    assert multi == single
    assert stats.records == 800


def test_conllu_output_round_trips_and_marks_empty_change(dev_sentences) -> None:
    text = "".join(perturb_formatted(UpperNouns(), dev_sentences, "conllu", seed=0))
    back = sentences_from_string(text)
    assert len(back) == len(dev_sentences)
    for orig, new in zip(dev_sentences, back, strict=True):
        assert new.heads == orig.heads
        assert [w.upos for w in new.words()] == [w.upos for w in orig.words()]
        changed = {w.id for w in orig.words() if w.upos == "NOUN"}
        for w_old, w_new in zip(orig.words(), new.words(), strict=True):
            assert w_new.form == (w_old.form.upper() if w_old.id in changed else w_old.form)
    assert "# synrob.changed =\n" in text  # sentences without a noun: empty, still present


def test_params_json_sorted_and_stats(dev_sentences) -> None:
    stats = PipelineStats()
    recs = list(perturb_records(UpperNouns(budget=1), dev_sentences, seed=0, stats=stats))
    assert recs[0].sentence.metadata["synrob.params"] == '{"budget": 1}'
    no_noun = sum(1 for s in dev_sentences if not any(w.upos == "NOUN" for w in s.words()))
    assert no_noun > 0
    assert stats.unchanged_records == stats.unchanged_sentences == no_noun
    assert stats.notes == {"no noun": no_noun}
    assert all(len(r.changed) <= 1 for r in recs)
    assert stats.summary() == (
        f"perturbed {len(dev_sentences) - no_noun}/{len(dev_sentences)} sentences "
        f"({no_noun} unchanged)"
    )


def test_text_only_perturber(dev_sentences) -> None:
    with pytest.raises(ParameterError, match="text only"):
        next(perturb_formatted(CharReverse(), dev_sentences, "conllu"))
    lines = list(perturb_formatted(CharReverse(), dev_sentences[:5], "text"))
    assert lines == [s.text[::-1] + "\n" for s in dev_sentences[:5]]
    rec = json.loads(next(perturb_formatted(CharReverse(), dev_sentences, "jsonl")))
    assert set(rec) >= {"sent_id", "source", "kind", "params", "seed", "variant", "changed",
                        "chrf2", "lev", "original", "perturbed"}
    assert "label" not in rec


_BAD = """# sent_id = bad
1\tHi\thi\tINTJ\tUH\t_\t2\troot\t_\t_

"""


def test_invalid_blocks_raise_or_are_skipped(ewt_dev, tmp_path) -> None:
    good = list(itertools.islice(read_blocks(ewt_dev), 3))
    path = tmp_path / "bad.conllu"
    path.write_text(_BAD, encoding="utf-8")
    bad = next(read_blocks(path))
    assert isinstance(bad, RawBlock)
    items = [good[0], bad, good[1], good[2]]
    with pytest.raises(ConlluError, match="bad.conllu:2"):
        list(perturb_formatted(BShift(), items, "text"))
    seen: list[ConlluError] = []
    stats = PipelineStats()
    for workers in (1, 2):
        out = list(perturb_records(BShift(), items, seed=1, skip_invalid=True,
                                   on_invalid=seen.append, stats=stats, workers=workers))
        # the invalid block keeps its place in the stream: index (and rng) of later ones unchanged
        assert [r.index for r in out] == [0, 2, 3]
    assert len(seen) == 2 and stats.invalid == 2


def test_argument_checks(dev_sentences) -> None:
    with pytest.raises(ParameterError, match="variants"):
        next(perturb_formatted(BShift(), dev_sentences, "text", variants=0))
    with pytest.raises(ParameterError, match="format"):
        next(perturb_formatted(BShift(), dev_sentences, "xml"))


@pytest.mark.slow
def test_full_ewt_dev_with_variants(ewt_dev) -> None:
    stats = PipelineStats()
    out = "".join(perturb_formatted(BShift(), read_blocks(ewt_dev), "conllu", variants=2,
                                    stats=stats))
    assert stats.sentences == 2001 and stats.records == 4002
    # sentences without two adjacent non-punctuation words cannot be shifted; every other one is
    singles = sum(1 for s in read_conllu(ewt_dev) if not _shiftable(s))
    assert stats.unchanged_sentences == singles
    assert out.count("# synrob.source = ") == 4002
    assert len(sentences_from_string(out)) == 4002
