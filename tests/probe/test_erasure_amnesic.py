"""Amnesic probing end to end on real EWT slices (:mod:`synrob.probe.erasure.amnesic`): LEACE
fitted on MiniLM layer 3 (and SmolLM2, slow) leaves a linear probe the majority rate of the
erased property on the test slice, while the random erasure of the same rank leaves it close to
where it was; the guarantee-breaking preprocessings and other task kinds are refused."""

from __future__ import annotations

import pytest
from synrob.perturb.errors import ParameterError, SynrobError

pytest.importorskip("concept_erasure")

from synrob.probe.erasure.amnesic import run_amnesic  # noqa: E402
from synrob.probe.probes import LinearProbe  # noqa: E402
from synrob.probe.probing import encoder_features  # noqa: E402
from synrob.probe.tasks import DistanceTask, FeatsTask, PosTask, load_gold  # noqa: E402


@pytest.fixture(scope="module")
def slices(tmp_path_factory, sample_slice) -> dict[str, str]:
    """400 training, 100 dev and 150 test sentences of the bundled EWT sample."""
    d = tmp_path_factory.mktemp("erase-slices")
    return {s: sample_slice(s, n, d) for s, n in (("train", 400), ("dev", 100), ("test", 150))}


def _run(task, slices, encoder="minilm", layer=3, **kw):
    features = encoder_features(encoder, device="cpu", layers=[layer])
    return run_amnesic(task=task, probe=LinearProbe(normalize="standardize"), features=features,
                       layer=layer, device="cpu", **slices, **kw)


def _check_guarantee(result, before_at_least: float) -> None:
    c = result.conditions
    assert c["before"].accuracy >= before_at_least
    assert c["leace"].accuracy <= result.majority + 0.01
    assert abs(c["random"].accuracy - c["before"].accuracy) <= 0.03


def test_pos_erased_on_minilm(slices):
    run = _run(PosTask(), slices, also={"feats": FeatsTask()})
    _check_guarantee(run.erased, 0.85)
    assert run.eraser.meta["rank"] == len(run.eraser.labels) - 1 == run.control.rank
    assert run.gaps["leace"] < 1e-5 < 0.1 < run.gaps["before"]
    assert run.gaps["random"] > 0.1
    out = run.erased.summary(200, seed=0)
    assert out["majority_label"] == "NOUN" and out["test_words"] > 2000
    lo, hi = out["drop_leace"]["ci95"]
    assert lo <= out["drop_leace"]["value"] <= hi and lo > 0.5
    assert out["accuracy_after"] == run.erased.conditions["leace"].accuracy
    feats = run.also["feats"].summary()
    assert set(feats) >= {"majority", "accuracy_before", "accuracy_after", "accuracy_random"}
    assert feats["accuracy_before"] > feats["majority"]


def test_number_erased_on_minilm(slices):
    run = _run(FeatsTask(feature="Number"), slices)
    _check_guarantee(run.erased, 0.85)
    assert run.erased.majority_label == "Sing"
    words = sum(int(n) for n in load_gold(slices["train"]).lengths)
    assert run.eraser.meta["train_words"] < 0.6 * words  # only the words with Number


def test_guarantee_breaking_preprocessing_and_other_kinds_are_refused(slices):
    features = encoder_features("minilm", device="cpu", layers=[3])
    for norm in ("auto", "unit"):
        with pytest.raises(ParameterError, match="use standardize or none"):
            run_amnesic(task=PosTask(), probe=LinearProbe(normalize=norm), features=features,
                        layer=3, **slices)
    with pytest.raises(SynrobError, match="word classification tasks"):
        run_amnesic(task=DistanceTask(), probe=LinearProbe(normalize="none"),
                    features=features, layer=3, **slices)
    with pytest.raises(ParameterError, match="fit must be one of"):
        run_amnesic(task=PosTask(), probe=LinearProbe(normalize="none"), features=features,
                    layer=3, fit="sgd", **slices)


@pytest.mark.slow
def test_pos_erased_on_smollm2(slices):
    """A causal LM with massive activations: standardize keeps the guarantee."""
    run = _run(PosTask(), slices, encoder="smollm2", layer=12)
    _check_guarantee(run.erased, 0.8)
    assert run.gaps["leace"] < 1e-4
