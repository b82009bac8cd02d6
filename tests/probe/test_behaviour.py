"""Behavioural scores (synrob.probe.causal.behaviour): pairing, unchanged pairs, preference, bootstrap."""

from __future__ import annotations

import numpy as np
import pytest
from synrob.perturb.corpus import read_conllu
from synrob.perturb.errors import SynrobError
from synrob.perturb.lm.loaded import load_lm
from synrob.perturb.lm.scoring import sentence_logprobs
from synrob.probe.causal.behaviour import (
    PairScore,
    SentencePair,
    agreement_breakdown,
    attractor_bucket,
    distance_bucket,
    pair_sentences,
    preference_summary,
    score_pairs,
    split_unchanged,
)


@pytest.fixture
def files(cli, sample_slice, tmp_path):
    """12 sample sentences, their BShift version (with synrob.source), and the same BShift
    sentences without synrob.source comments (aligned by position only)."""
    orig = sample_slice("test", 12, tmp_path)
    res = cli(["perturb", "--kind", "bshift", "--seed", "1", orig])
    assert res.exit_code == 0, res.stderr
    pert = tmp_path / "bshift.conllu"
    pert.write_text(res.stdout, encoding="utf-8")
    bare = tmp_path / "bare.conllu"
    bare.write_text("".join(line for line in res.stdout.splitlines(keepends=True)
                            if not line.startswith("# synrob.source")), encoding="utf-8")
    return orig, pert, bare


def test_pairs_by_source(files):
    orig, pert, _ = files
    pairs, how = pair_sentences(orig, pert)
    texts = {s.sent_id: s.text for s in read_conllu(orig)}
    perturbed = list(read_conllu(pert))
    assert how == "source" and len(pairs) == len(perturbed) == 12
    for p, s in zip(pairs, perturbed, strict=True):
        assert p.source == s.metadata["synrob.source"] and p.sentence == s.sent_id
        assert p.original == texts[p.source] and p.perturbed == s.text


@pytest.mark.filterwarnings("ignore:.*duplicate sent_id")
def test_pairs_by_source_in_any_order_and_variants(files, tmp_path):
    orig, pert, _ = files
    blocks = [b for b in pert.read_text(encoding="utf-8").split("\n\n") if b.strip()]
    shuffled = tmp_path / "shuffled.conllu"
    shuffled.write_text("\n\n".join(blocks[::-1] + blocks[:2]) + "\n\n", encoding="utf-8")
    pairs, how = pair_sentences(orig, shuffled)
    texts = {s.sent_id: s.text for s in read_conllu(orig)}
    assert how == "source" and len(pairs) == 14
    assert all(p.original == texts[p.source] for p in pairs)


def test_pairs_by_position(files, sample_slice, tmp_path):
    orig, pert, bare = files
    pairs, how = pair_sentences(orig, bare)
    assert how == "position"
    assert [p.source for p in pairs] == [s.sent_id for s in read_conllu(orig)]
    assert [p.perturbed for p in pairs] == [s.text for s in read_conllu(pert)]
    short = sample_slice("test", 11, tmp_path)
    with pytest.raises(SynrobError, match=r"not aligned: .* has 11 sentences, .* has 12"):
        pair_sentences(short, bare)


def test_unknown_source_is_one_error(files, tmp_path):
    orig, pert, _ = files
    bad = tmp_path / "bad.conllu"
    text = pert.read_text(encoding="utf-8")
    first = next(line for line in text.splitlines() if line.startswith("# synrob.source"))
    bad.write_text(text.replace(first, "# synrob.source = nowhere", 1), encoding="utf-8")
    with pytest.raises(SynrobError, match="synrob.source 'nowhere', which is not a sent_id"):
        pair_sentences(orig, bad)


def test_unchanged_pairs_are_skipped():
    pairs = [SentencePair("a", None, "x y", "y x"), SentencePair("b", None, "x", "x"),
             SentencePair("c", None, "p q", "p q"), SentencePair("d", None, "", "")]
    kept, skipped = split_unchanged(pairs)
    assert [p.source for p in kept] == ["a"] and skipped == 3


def test_score_pairs_uses_sentence_logprobs(tiny_lms):
    lm = load_lm(str(tiny_lms["causal"]), device="cpu")
    pairs = [SentencePair("a", "a.v0", "the cat sat", "sat cat the"),
             SentencePair("b", "b.v0", "a dog ran on the mat", "a dog on ran the mat")]
    scores = score_pairs(lm, pairs, batch_size=1)
    direct, tokens = sentence_logprobs(lm, ["the cat sat", "sat cat the",
                                            "a dog ran on the mat", "a dog on ran the mat"])
    got = [v for s in scores for v in (s.logprob_original, s.logprob_perturbed)]
    assert got == pytest.approx(direct, abs=1e-4)
    assert [s.tokens_original for s in scores] == [3, 6] == tokens[::2]
    for s in scores:
        assert s.prefers_original == (s.logprob_original > s.logprob_perturbed)
        row = s.as_dict()
        assert row["logprob_per_token_original"] == pytest.approx(
            s.logprob_original / s.tokens_original)


def _score(lo: float, lp: float, source: str = "s") -> PairScore:
    return PairScore(SentencePair(source, None, "o", "p"), lo, lp, 2, 2)


def test_summary_accuracy_ties_and_seeded_interval():
    values = [(-1, -2)] * 6 + [(-3, -2)] * 3 + [(-2, -2)]  # one tie; ten source sentences
    scores = [_score(lo, lp, f"s{k}") for k, (lo, lp) in enumerate(values)]
    s = preference_summary(scores, n_boot=500, seed=3)
    assert s["pairs"] == 10 and s["preferred"] == 6 and s["ties"] == 1
    assert s["accuracy"] == pytest.approx(0.6)
    lo, hi = s["accuracy_ci95"]
    assert 0.0 <= lo < 0.6 < hi <= 1.0
    assert preference_summary(scores, n_boot=500, seed=3)["accuracy_ci95"] == [lo, hi]
    assert s["logprob_per_token_original"] == pytest.approx((6 * -1 + 3 * -3 - 2) / 20)


def test_summary_interval_covers_at_about_the_nominal_rate():
    rng = np.random.default_rng(0)
    covered = 0
    for k in range(200):
        prefs = rng.random(200) < 0.7
        scores = [_score(-1, -2, f"s{i}") if p else _score(-2, -1, f"s{i}")
                  for i, p in enumerate(prefs)]
        lo, hi = preference_summary(scores, n_boot=400, seed=k)["accuracy_ci95"]
        covered += lo <= 0.7 <= hi
    assert 0.88 <= covered / 200 <= 0.99


def test_summary_of_nothing_is_undefined():
    s = preference_summary([], n_boot=100)
    assert s["pairs"] == 0 and np.isnan(s["accuracy"]) and all(np.isnan(s["accuracy_ci95"]))
    assert all(np.isnan(preference_summary([_score(-1, -2)], n_boot=0)["accuracy_ci95"]))


# ------------------------------------------------------------------ agreement breakdowns
def _pair(source: str, sid: str | None, prefers: bool) -> PairScore:
    lo, lp = (-1.0, -2.0) if prefers else (-2.0, -1.0)
    return PairScore(SentencePair(source, sid, "o", "p"), lo, lp, 2, 2)


def test_breakdown_buckets_counts_and_missing_metadata():
    # (source, id, prefers, distance, attractors); None: no metadata
    specs = [("a", "a.0", True, 1, 0), ("a", "a.1", False, 2, 1), ("b", "b.0", True, 3, 0),
             ("c", "c.0", True, 4, 2), ("c", "c.1", True, 9, 0), ("d", "d.0", False, None, None),
             ("e", None, True, None, None)]
    scores = [_pair(src, sid, pref) for src, sid, pref, _, _ in specs]
    meta = {sid: {"distance": d, "attractors": a, "feature": "Number"}
            for _, sid, _, d, a in specs if d is not None}
    meta["d.0"] = {"feature": "Number"}  # an older pair: no distance, no attractors
    out = agreement_breakdown(scores, meta, n_boot=200, seed=1)
    assert list(out) == ["distance", "attractors", "pairs_without_metadata"]
    assert list(out["distance"]) == ["1", "2-3", "4+"] and list(out["attractors"]) == ["0", "1+"]
    assert out["pairs_without_metadata"] == 2
    d, a = out["distance"], out["attractors"]
    assert (d["1"]["n"], d["2-3"]["n"], d["4+"]["n"]) == (1, 2, 2)
    assert (d["1"]["accuracy"], d["2-3"]["accuracy"], d["4+"]["accuracy"]) == (1.0, 0.5, 1.0)
    assert (a["0"]["n"], a["0"]["accuracy"]) == (3, 1.0)
    assert (a["1+"]["n"], a["1+"]["accuracy"]) == (2, 0.5)
    assert d["4+"]["ci95"] == [1.0, 1.0]  # every resample of all-correct pairs is 1
    lo, hi = d["2-3"]["ci95"]
    assert 0.0 <= lo <= 0.5 <= hi <= 1.0


def test_breakdown_interval_is_the_summary_interval_of_the_bucket():
    rng = np.random.default_rng(4)
    scores, meta = [], {}
    for k in range(60):
        for v in range(int(rng.integers(1, 4))):  # 1-3 variants per source sentence
            sid = f"s{k}.{v}"
            scores.append(_pair(f"s{k}", sid, bool(rng.random() < 0.7)))
            meta[sid] = {"distance": int(rng.integers(1, 7)), "attractors": int(rng.integers(0, 3))}
    out = agreement_breakdown(scores, meta, n_boot=300, seed=7)
    for axis, bucket, pick in [("attractors", "0", lambda m: m["attractors"] == 0),
                               ("distance", "2-3", lambda m: 2 <= m["distance"] <= 3)]:
        members = [s for s in scores if pick(meta[s.pair.sentence])]
        ref = preference_summary(members, n_boot=300, seed=7)
        got = out[axis][bucket]
        assert got["n"] == ref["pairs"] and got["accuracy"] == ref["accuracy"]
        assert got["ci95"] == ref["accuracy_ci95"]  # the same clustered, seeded bootstrap
    assert agreement_breakdown(scores, meta, n_boot=300, seed=7) == out
    assert agreement_breakdown(scores, meta, n_boot=300, seed=8) != out


def test_breakdown_empty_buckets_and_no_metadata():
    out = agreement_breakdown([_pair("a", "a.0", True)], {}, n_boot=100)
    assert out["pairs_without_metadata"] == 1
    for axis in ("distance", "attractors"):
        for cell in out[axis].values():
            assert cell["n"] == 0 and np.isnan(cell["accuracy"])
            assert all(np.isnan(cell["ci95"]))
    one = agreement_breakdown([_pair("a", "a.0", True)],
                              {"a.0": {"distance": 1, "attractors": 0}}, n_boot=0)
    assert one["distance"]["1"]["n"] == 1 and all(np.isnan(one["distance"]["1"]["ci95"]))


@pytest.mark.parametrize("bad", [{"distance": 0, "attractors": 0},
                                 {"distance": 2, "attractors": -1},
                                 {"distance": "2", "attractors": 0},
                                 {"distance": True, "attractors": 0}])
def test_breakdown_bad_metadata_names_the_pair(bad):
    with pytest.raises(SynrobError, match=r"pair a\.0: synrob.agreement has distance"):
        agreement_breakdown([_pair("a", "a.0", True)], {"a.0": bad}, n_boot=10)


@pytest.mark.parametrize(("n", "bucket"), [(1, "1"), (2, "2-3"), (3, "2-3"), (4, "4+"),
                                           (40, "4+")])
def test_distance_buckets(n, bucket):
    assert distance_bucket(n) == bucket
    assert attractor_bucket(n - 1) == ("0" if n == 1 else "1+")
