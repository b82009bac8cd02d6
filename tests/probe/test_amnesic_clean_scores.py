"""The amnesic experiment scores its pairs' clean conditions once per preset (issue 45): the
first layer run computes them and keeps them by content (synrob.probe.causal.score_cache), a second
layer's run reads them and runs no clean forward pass, with the rows a fresh computation gives;
the LM is loaded once per process."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from .tiny_llama import build_llama, ewt_texts


@pytest.fixture(scope="module")
def llama(tmp_path_factory: pytest.TempPathFactory, ewt_train: Path) -> Path:
    return build_llama(tmp_path_factory.mktemp("amnesic-clean") / "llama",
                       ewt_texts(ewt_train, 400), blocks=3, hidden=32, ffn=64)


class _Passes:
    """Forward passes of every LM scored through ``causal_sequence_logprobs``, split into clean
    ones (no hook on any of the model's modules: no erasure, no counterfactual) and the
    others."""

    def __init__(self) -> None:
        self.clean = 0
        self.hooked = 0
        self._seen: set[int] = set()

    def watch(self, model: Any) -> None:
        if id(model) in self._seen:
            return
        self._seen.add(id(model))

        def count(module: Any, args: Any) -> None:
            hooked = any(_synrob_hooks(m) for m in module.modules() if m is not module)
            if hooked:
                self.hooked += 1
            else:
                self.clean += 1

        model.register_forward_pre_hook(count)


def _synrob_hooks(module: Any) -> list[Any]:
    """The module's forward hooks but transformers' own output-capturing ones (installed at a
    model's first ``output_hidden_states`` pass, e.g. an encoder's sharing the LM's blocks)."""
    hooks = [*module._forward_pre_hooks.values(), *module._forward_hooks.values()]
    return [h for h in hooks if "output_capturing" not in getattr(h, "__qualname__", "")]


@pytest.fixture
def passes(monkeypatch: pytest.MonkeyPatch) -> _Passes:
    from synrob.perturb.lm import scoring

    seen = _Passes()
    score = scoring.causal_sequence_logprobs

    def spy(lm: Any, *args: Any, **kwargs: Any) -> Any:
        seen.watch(lm.model)
        return score(lm, *args, **kwargs)

    monkeypatch.setattr(scoring, "causal_sequence_logprobs", spy)
    return seen


def _experiment(llama: Path) -> Any:
    from synrob.probe.experiments.amnesic.experiment import AmnesicExperiment

    return AmnesicExperiment.from_preset("sample", model=str(llama), layers="1,2",
                                         train_sentences=150, dev_sentences=60,
                                         test_sentences=120, pair_limit=12, bootstrap=20)


def test_a_second_layer_run_reuses_the_clean_scores(llama: Path, passes: _Passes,
                                                    tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    from synrob.perturb.lm import loaded as lm_module
    from synrob.probe.causal.score_cache import scores_root
    from synrob.probe.experiments.amnesic import runs
    from synrob.probe.experiments.base import Context

    monkeypatch.setenv("SYNROB_CACHE", str(tmp_path / "cache"))
    exp = _experiment(llama)
    ctx = Context(tmp_path / "out", device="cpu", seed=0, lang="en")
    exp.prepare(ctx)
    first, second = exp.plan(ctx)
    loads: list[str] = []
    load = lm_module._load
    monkeypatch.setattr(lm_module, "_load", lambda spec, *a, **k: loads.append(spec) or
                        load(spec, *a, **k))
    rows = exp.execute(first, ctx)
    assert passes.clean > 0 and passes.hooked > 0  # the first run scores clean pairs
    assert len(list(scores_root().glob("*.json"))) == 2  # inside the model; counterfactual
    clean, hooked = passes.clean, passes.hooked
    reused = exp.execute(second, ctx)
    assert passes.clean == clean  # no clean forward pass in the second layer's run
    assert passes.hooked - hooked == hooked  # the same erased and counterfactual passes
    assert len(loads) <= 1  # the LM loads once per process (at most: a test may have before)
    assert {r["section"] for r in rows} == {r["section"] for r in reused} == {
        "probe", "behaviour", "damage", "counterfactual"}
    # the read scores are the computed ones: the second layer's rows from a fresh cache
    shutil.rmtree(scores_root())
    fresh = runs.layer_rows(dict(second.key), seed=0, device="cpu", lang="en")
    assert passes.clean > clean
    assert json.dumps(fresh) == json.dumps([{k: v for k, v in r.items() if k != "run_seconds"}
                                            for r in reused])


def test_scores_are_computed_once_per_content(llama: Path, tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    from synrob.perturb.lm.loaded import load_lm
    from synrob.probe.causal.score_cache import cached_scores, scores_root

    monkeypatch.setenv("SYNROB_CACHE", str(tmp_path / "cache"))
    lm = load_lm(str(llama), device="cpu", dtype="float32")
    calls: list[int] = []

    def compute(value: float) -> Any:
        return lambda: calls.append(1) or [[value, 2.0]]

    assert cached_scores("k", [[1, 2]], lm, {"b": 1}, compute(0.5)) == [[0.5, 2.0]]
    assert cached_scores("k", [[1, 2]], lm, {"b": 1}, compute(9.0)) == [[0.5, 2.0]]
    assert len(calls) == 1  # read, not computed
    assert cached_scores("k", [[1, 3]], lm, {"b": 1}, compute(1.5)) == [[1.5, 2.0]]
    assert cached_scores("k", [[1, 2]], lm, {"b": 2}, compute(2.5)) == [[2.5, 2.0]]
    assert len(calls) == 3  # other inputs, other parameters: computed
    for entry in scores_root().glob("*.json"):
        entry.write_text("{not json", encoding="utf-8")
    assert cached_scores("k", [[1, 2]], lm, {"b": 1}, compute(3.5)) == [[3.5, 2.0]]
    assert len(calls) == 4  # a damaged entry is computed again


def test_cache_clear_removes_the_kept_scores_all_or_one_models(
        llama: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cli: Any) -> None:
    from synrob.perturb.lm.loaded import load_lm
    from synrob.probe.causal.score_cache import cached_scores, clear_scores, scores_root

    monkeypatch.setenv("SYNROB_CACHE", str(tmp_path / "cache"))
    lm = load_lm(str(llama), device="cpu", dtype="float32")
    for n in range(3):
        cached_scores("k", [[n]], lm, {}, lambda: [[0.0]])
    assert len(list(scores_root().glob("*.json"))) == 3
    assert clear_scores("glove-6b-50d") == 0  # another model's: kept
    assert clear_scores("smolm2") == 0  # a misspelt model (no such model): kept, not all gone
    assert clear_scores("no-such-model") == 0  # a hub name of no entry: kept
    assert len(list(scores_root().glob("*.json"))) == 3
    assert clear_scores(str(llama)) == 1 + 1 + 1
    assert not list(scores_root().glob("*"))  # the entries and their lock files
    cached_scores("k", [[0]], lm, {}, lambda: [[0.0]])
    cleared = cli(["cache", "clear"])
    assert cleared.exit_code == 0 and "1 LM score file" in cleared.stderr
    assert not list(scores_root().glob("*.json"))
