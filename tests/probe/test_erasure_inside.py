"""An eraser inside a causal LM (:mod:`synrob.probe.causal.erasure.inside`) and the counterfactual
intervention on agreement pairs (:mod:`synrob.probe.causal.erasure.counterfactual`), on a tiny GPT-2
with a byte-level BPE tokenizer trained on EWT text and hand-written agreement pairs in the
agreement perturber's format (tests/data/agreement/)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from synrob.perturb.errors import ParameterError, SynrobError

torch = pytest.importorskip("torch")

LAYER = 1


#: Hand-written agreement pairs in the agreement perturber's format (``# synrob.agreement``
#: JSON, 1-based IDs): 4 sources, 5 pairs (one with the subject after the verb: "Where is the
#: dog ?"), and one unchanged sentence without a pair.
AGREEMENT = Path(__file__).resolve().parents[1] / "data" / "agreement"
N_PAIRS = 5


def make_eraser(spec: str, dim: int, *, layer: int = LAYER, identity: bool = False,
                rank: int = 2, seed: int = 0, kind: str = "leace") -> Any:
    """An eraser for the LM in ``spec`` with the metadata ``synrob erase`` records."""
    from synrob.probe.causal.erasure import Eraser
    from synrob.probe.encoders.resolve import resolve_encoder

    g = torch.Generator().manual_seed(seed)
    left = torch.randn(dim, rank, generator=g)
    right = torch.linalg.pinv(left)
    if identity:
        left, right = torch.zeros(dim, rank), torch.zeros(rank, dim)
    meta = {"encoder": spec, "encoder_identity": resolve_encoder(spec).identity(),
            "layer": layer, "task": "feats", "task_params": {"feature": "Number"}}
    return Eraser(kind, left, right, torch.randn(dim, generator=g),
                  3 * torch.randn(2, dim, generator=g), ["Plur", "Sing"], meta)


@pytest.fixture(scope="module")
def lm(tiny_ewt_lms: dict[str, str]) -> Any:
    from synrob.perturb.lm.loaded import load_lm

    return load_lm(tiny_ewt_lms["causal"], device="cpu", dtype="float32")


@pytest.fixture
def files() -> tuple[str, str]:
    return str(AGREEMENT / "original.conllu"), str(AGREEMENT / "pairs.conllu")


def _dim(lm: Any) -> int:
    return int(lm.model.config.hidden_size)


# ---------------------------------------------------------------------- erasure inside the LM
def test_identity_eraser_scores_are_clean_bit_for_bit(lm: Any, files: tuple[str, str]) -> None:
    from synrob.probe.causal.behaviour import pair_sentences, score_pairs, split_unchanged
    from synrob.probe.causal.erasure.inside import erasing, erasure_summary

    pairs, _ = split_unchanged(pair_sentences(*files)[0])
    clean = score_pairs(lm, pairs)
    with erasing(lm, make_eraser(lm.spec, _dim(lm), identity=True), LAYER):
        same = score_pairs(lm, pairs)
    with erasing(lm, make_eraser(lm.spec, _dim(lm)), LAYER):
        erased = score_pairs(lm, pairs)
    assert [(s.logprob_original, s.logprob_perturbed) for s in same] == \
        [(s.logprob_original, s.logprob_perturbed) for s in clean]
    assert all(a.logprob_original != b.logprob_original for a, b in zip(clean, erased, strict=True))
    summary = erasure_summary({"clean": clean, "erased": same}, n_boot=200, seed=1)
    for key in ("accuracy_change", "nll_increase"):
        assert summary["erased"][key]["value"] == 0.0
        assert summary["erased"][key]["ci95"] == [0.0, 0.0]


def _fake_scores(prefers: list[bool], lp: list[float], sources: list[str]) -> list[Any]:
    from synrob.probe.causal.behaviour import PairScore, SentencePair

    return [PairScore(SentencePair(src, None, f"o{src}", f"p{k}"), lo,
                      lo - 1.0 if pref else lo + 1.0, 4 + len(src), 5)
            for k, (pref, lo, src) in enumerate(zip(prefers, lp, sources, strict=True))]


def test_erasure_summary_is_a_paired_cluster_bootstrap() -> None:
    """Changes are differences on the same resamples of sources; the damage, the increase of
    the per-token negative log-likelihood (positive = worse, issue 43), counts each source's
    original once (a ratio of sums), whatever its number of pairs; every control present is
    compared with clean and with the eraser."""
    from synrob.probe.causal.erasure.inside import erasure_summary
    from synrob.probe.metrics.bootstrap import cluster_indices, percentile_interval, source_clusters

    rng = np.random.default_rng(3)
    sources = [f"s{k // 2}" for k in range(40)]  # two pairs per source
    base = rng.normal(-30, 5, 20).repeat(2)
    clean = _fake_scores(list(rng.random(40) < 0.9), list(base), sources)
    erased = _fake_scores(list(rng.random(40) < 0.6), list(base - rng.random(40).round(1)),
                          sources)
    rand = _fake_scores(list(rng.random(40) < 0.85), list(base - 0.1), sources)
    matched = _fake_scores(list(rng.random(40) < 0.8), list(base - 0.4), sources)
    s = erasure_summary({"clean": clean, "erased": erased, "random": rand,
                         "random_matched": matched}, n_boot=300, seed=7)
    acc = {k: np.array([x.prefers_original for x in v], float)
           for k, v in (("clean", clean), ("erased", erased), ("random", rand))}
    idx = cluster_indices(source_clusters(np.array(sources, dtype=object)), 300,
                          np.random.default_rng(7))
    diffs = acc["erased"][idx].mean(1) - acc["clean"][idx].mean(1)
    change = s["erased"]["accuracy_change"]
    assert change["value"] == pytest.approx(acc["erased"].mean() - acc["clean"].mean())
    assert change["ci95"] == pytest.approx(percentile_interval(diffs))
    assert change["p_value"] == pytest.approx((1 + np.sum(-diffs <= 0)) / 301)
    first = np.arange(0, 40, 2)  # one original per source
    tok = np.array([clean[i].tokens_original for i in first], float)
    nll = {k: -np.array([v[i].logprob_original for i in first]) for k, v in
           (("clean", clean), ("erased", erased), ("random_matched", matched))}
    assert s["clean"]["nll_per_token"] == pytest.approx(nll["clean"].sum() / tok.sum())
    assert s["clean"]["nll_per_token"] > 0
    increase = s["erased"]["nll_increase"]
    assert increase["value"] == pytest.approx((nll["erased"].sum() - nll["clean"].sum())
                                              / tok.sum())
    assert increase["value"] > 0  # harm is positive
    assert increase["ci95"][0] > 0 and increase["p_value"] < 0.05  # p of "above 0"
    assert 0 < s["erased_vs_random"]["nll_increase"]["p_value"] < 0.05
    assert s["random_matched"]["nll_increase"]["value"] == pytest.approx(0.4 * 20 / tok.sum())
    assert set(s["erased_vs_random_matched"]) == {"accuracy_change", "nll_increase"}
    assert s["erased_vs_random_matched"]["nll_increase"]["value"] == pytest.approx(
        (nll["erased"].sum() - nll["random_matched"].sum()) / tok.sum())
    assert not any("loglik" in k for part in s.values() if isinstance(part, dict)
                   for k in part)
    assert s["sources"] == 20 and s["erased"]["pairs"] == 40


def test_check_lm_eraser_mismatches_are_one_line(lm: Any, tiny_ewt_lms: dict[str, str],
                                                 tmp_path: Path) -> None:
    from synrob.perturb.lm.loaded import load_lm
    from synrob.probe.causal.erasure.inside import check_lm_eraser

    good = make_eraser(lm.spec, _dim(lm))
    assert check_lm_eraser(good, "E", lm_spec=lm.spec, lm=lm, layer=None) == LAYER
    assert check_lm_eraser(good, "E", lm_spec=lm.spec, lm=lm, layer=LAYER) == LAYER
    with pytest.raises(ParameterError, match="fitted on layer 1, not layer 2"):
        check_lm_eraser(good, "E", lm_spec=lm.spec, lm=lm, layer=2)
    with pytest.raises(ParameterError, match="out of range"):
        check_lm_eraser(make_eraser(lm.spec, _dim(lm), layer=7), "E", lm_spec=lm.spec, lm=lm,
                        layer=None)
    with pytest.raises(ParameterError, match="dimension 16, not the LM's dimension 32"):
        check_lm_eraser(make_eraser(lm.spec, 16), "E", lm_spec=lm.spec, lm=lm, layer=None)
    other = make_eraser(tiny_ewt_lms["masked"], _dim(lm))
    with pytest.raises(ParameterError, match="fitted on encoder '.*bert', not the LM"):
        check_lm_eraser(other, "E", lm_spec=lm.spec, lm=lm, layer=None)
    no_bos = make_eraser(lm.spec, _dim(lm))
    no_bos.meta["encoder_identity"]["options"]["bos"] = "no"
    with pytest.raises(ParameterError, match="bos=no"):
        check_lm_eraser(no_bos, "E", lm_spec=lm.spec, lm=lm, layer=None)
    with pytest.raises(ParameterError, match="is a leace eraser, not a random one"):
        check_lm_eraser(good, "E", lm_spec=lm.spec, lm=lm, layer=None, kind="random")
    masked = load_lm(tiny_ewt_lms["masked"], device="cpu", dtype="float32")
    with pytest.raises(ParameterError, match="needs a causal LM"):
        check_lm_eraser(good, "E", lm_spec=masked.spec, lm=masked, layer=None)


# ---------------------------------------------------------------------- counterfactual
def test_agreement_pairs_read_the_perturbers_comments(files: tuple[str, str], tmp_path: Path
                                                      ) -> None:
    from synrob.probe.causal.erasure.counterfactual import agreement_pairs, subject_first

    pairs, other = agreement_pairs(*files)
    assert other == 1 and len(pairs) == N_PAIRS
    p = pairs[0]
    assert (p.source, p.subject, p.target, p.to) == ("s1", 1, 2, "Plur")
    assert p.original[2] == "runs" and p.flipped[2] == "run"
    kept, after = subject_first(pairs)
    assert after == 1 and [k.source for k in kept] == ["s1", "s2", "s4", "s4"]
    bad = Path(files[1]).read_text().replace('"subject": 2', '"subject": "x"', 1)
    (tmp_path / "bad.conllu").write_text(bad)
    with pytest.raises(SynrobError, match="unreadable synrob.agreement"):
        agreement_pairs(files[0], tmp_path / "bad.conllu")
    wrong = Path(files[1]).read_text().replace('"target": 3', '"target": 4', 1)
    (tmp_path / "wrong.conllu").write_text(wrong)
    with pytest.raises(SynrobError, match="not the agreement twin"):
        agreement_pairs(files[0], tmp_path / "wrong.conllu")


def test_identity_counterfactual_changes_nothing(lm: Any, files: tuple[str, str]) -> None:
    from synrob.probe.causal.erasure.counterfactual import (
        agreement_pairs,
        counterfactual_scores,
        flip_summary,
        subject_first,
    )

    kept, _ = subject_first(agreement_pairs(*files)[0])
    scores = counterfactual_scores(lm, kept, make_eraser(lm.spec, _dim(lm), identity=True),
                                   LAYER, seed=0)
    for s in scores:
        assert s.logprob["counterfactual"] == s.logprob["clean"] == s.logprob["random"]
    summary = flip_summary(scores, n_boot=100, seed=0)
    assert summary["pairs"] == 4 and summary["sources"] == 3
    if summary["clean_prefers_original"]:
        assert summary["counterfactual"]["flip_rate"] == summary["random"]["flip_rate"] == 0.0
    assert summary["counterfactual"]["shift"] == 0.0


def test_counterfactual_moves_the_subject_only(lm: Any, files: tuple[str, str]) -> None:
    """The counterfactual replaces exactly the subject's token states by
    ``Eraser.counterfactual`` towards the twin's class; the random control moves the same
    tokens by the same distance; the scores do not depend on how the pairs are chunked."""
    from synrob.perturb.lm.scoring import _pad
    from synrob.probe.causal.erasure.counterfactual import (
        _around,
        _prepare,
        agreement_pairs,
        counterfactual_scores,
        subject_first,
    )
    from synrob.probe.causal.intervene import intervene

    kept, _ = subject_first(agreement_pairs(*files)[0])
    eraser = make_eraser(lm.spec, _dim(lm))
    prep = _prepare(lm, kept, eraser, 5, 0)
    rows = [0, 1, 6, 7]  # both sentences of pairs 0 and 3
    ids, mask = _pad([prep.seqs[i] for i in rows], 0, "cpu")

    def states(condition: str | None) -> Any:
        seen: list = []

        def record(x: Any) -> Any:
            seen.append(x.clone())
            return x

        around = _around(lm, eraser, LAYER, prep, condition) if condition else None
        with torch.inference_mode():
            if around is None:
                with intervene(lm.model, LAYER, record):
                    lm.model(input_ids=ids, attention_mask=mask)
            else:
                with around(rows, tuple(ids.shape)), intervene(lm.model, LAYER, record):
                    lm.model(input_ids=ids, attention_mask=mask)
        return seen[0].reshape(ids.shape[0], ids.shape[1], -1)

    clean, moved, rand = states(None), states("counterfactual"), states("random")
    chosen = torch.zeros(ids.shape, dtype=torch.bool)
    for r, i in enumerate(rows):
        chosen[r, torch.from_numpy(prep.subject[i // 2])] = True
    assert chosen.sum() > len(rows)  # a subject of several tokens
    assert torch.equal(moved[~chosen], clean[~chosen]) and torch.equal(rand[~chosen], clean[~chosen])
    to = torch.tensor([prep.target[i // 2] for r, i in enumerate(rows)
                       for _ in prep.subject[i // 2]])
    assert torch.equal(moved[chosen], eraser.counterfactual(clean[chosen], to))
    size = (moved[chosen] - clean[chosen]).norm(dim=-1)
    assert torch.allclose((rand[chosen] - clean[chosen]).norm(dim=-1), size, rtol=1e-5)
    assert not torch.allclose(rand[chosen], moved[chosen])
    whole = counterfactual_scores(lm, kept, eraser, LAYER, seed=5)
    parts = (counterfactual_scores(lm, kept[:2], eraser, LAYER, seed=5)
             + counterfactual_scores(lm, kept[2:], eraser, LAYER, seed=5, first=2))
    for a, b in zip(whole, parts, strict=True):
        for c in ("clean", "counterfactual", "random"):
            assert a.logprob[c] == pytest.approx(b.logprob[c], rel=1e-6)
    assert any(s.logprob["counterfactual"] != s.logprob["clean"] for s in whole)


def test_counterfactual_needs_the_pairs_value_among_the_labels(lm: Any, files: tuple[str, str]
                                                              ) -> None:
    from synrob.probe.causal.erasure.counterfactual import (
        agreement_pairs,
        counterfactual_scores,
        subject_first,
    )

    kept, _ = subject_first(agreement_pairs(*files)[0])
    eraser = make_eraser(lm.spec, _dim(lm))
    eraser.labels = ["NOUN", "VERB"]
    with pytest.raises(ParameterError, match="have no Plur, Sing"):
        counterfactual_scores(lm, kept, eraser, LAYER)
