"""One read of a checkpoint per process (issue 45): an encoder of the model a process scores
with uses the causal LM's blocks (synrob.perturb.lm.shared_models), with the vectors of its own
load; ``amnesic`` and ``jabberwocky`` with a behaviour LM read the weights once from a cold
cache; ``fast+pos`` with sinusoidal positions reads none."""

from __future__ import annotations

import gc
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from .tiny_llama import build_llama, ewt_texts


@pytest.fixture(scope="module")
def llama(tmp_path_factory: pytest.TempPathFactory, ewt_train: Path) -> Path:
    return build_llama(tmp_path_factory.mktemp("shared-models") / "llama",
                       ewt_texts(ewt_train, 400), blocks=3, hidden=32, ffn=64)


class _Model:
    """A stand-in model (weak references only)."""


def test_a_model_is_offered_by_key_with_its_blocks_and_by_weak_reference() -> None:
    from synrob.perturb.lm.shared_models import ModelKey, forget_models, offer_model, shared_model

    key = ModelKey("/m", "float32", "cpu", "default", False)
    short, full = _Model(), _Model()
    offer_model(key, short, 2)
    offer_model(key, full, 6)
    assert shared_model(key, 2) == (short, 2)  # the fewest blocks that are enough
    assert shared_model(key, 3) == (full, 6)
    assert shared_model(key, 7) is None
    for other in (ModelKey("/m", "bfloat16", "cpu", "default", False),
                  ModelKey("/m", "float32", "cpu", "eager", False),
                  ModelKey("/n", "float32", "cpu", "default", False)):
        assert shared_model(other, 1) is None
    del full
    gc.collect()
    assert shared_model(key, 3) is None  # released by its last user, not kept here
    forget_models()
    assert shared_model(key, 1) is None


def test_an_encoder_uses_the_lm_blocks_and_gets_the_vectors_of_its_own_load(
        llama: Path, model_reads: list[str], sample_slice: Any, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    from synrob.perturb.lm.shared_models import forget_models
    from synrob.probe.representations.encoding import LoadedEncoders, encode_corpus

    path = sample_slice("test", 40, tmp_path)
    own = encode_corpus(str(llama), path, layers=[1, 2], device="cpu", dtype="float32",
                        encoders=LoadedEncoders())
    assert model_reads == ["LlamaModel"]  # layer-only: the encoder's blocks
    forget_models()
    monkeypatch.setenv("SYNROB_CACHE", str(tmp_path / "cache-2"))  # encoded again
    shared = encode_corpus(str(llama), path, layers=[1, 2], device="cpu", dtype="float32",
                           encoders=LoadedEncoders(lm=str(llama)))
    assert model_reads == ["LlamaModel", "LlamaForCausalLM"]  # the LM, and nothing for the encoder
    for layer in (1, 2):
        a, b = own.layer_matrix(layer)[0], shared.layer_matrix(layer)[0]
        assert a.shape[0] > 100 and np.array_equal(a, b)


def test_an_lm_of_another_model_is_not_loaded_for_an_encoder(
        llama: Path, model_reads: list[str], sample_slice: Any, tmp_path: Path,
        ewt_train: Path) -> None:
    from synrob.probe.representations.encoding import LoadedEncoders, encode_corpus

    other = build_llama(tmp_path / "other", ewt_texts(ewt_train, 200), blocks=2, hidden=32,
                        ffn=64, seed=1)
    encode_corpus(str(llama), sample_slice("test", 10, tmp_path), layers=[1], device="cpu",
                  encoders=LoadedEncoders(lm=str(other)))
    assert model_reads == ["LlamaModel"]  # its own blocks only: the other LM stays unloaded


def test_fast_pos_with_sinusoidal_positions_reads_no_weights(
        llama: Path, model_reads: list[str], sample_slice: Any, tmp_path: Path) -> None:
    from synrob.probe.encoders.resolve import resolve_encoder

    enc = resolve_encoder("fast+pos", {"vectors": "glove-6b-50d", "model": str(llama)})
    assert enc.options["positions"] == "sinusoidal"  # rotary positions: none learned
    out = enc.encode_flat([["The", "cat", "sat", "."]], [0])
    assert out.words.shape == (1, 4, 50 + 32)
    assert model_reads == []


def _amnesic(llama: Path) -> Any:
    from synrob.probe.experiments.amnesic.experiment import AmnesicExperiment

    return AmnesicExperiment.from_preset("sample", model=str(llama), layers="1,2",
                                         train_sentences=150, dev_sentences=60,
                                         test_sentences=120, pair_limit=12, bootstrap=20)


@pytest.mark.slow
def test_amnesic_reads_the_checkpoint_once_per_process(llama: Path, model_reads: list[str],
                                                       tmp_path: Path) -> None:
    """A cold cache: the encoding uses the LM's blocks, every layer run the LM; the rows equal
    those of a process whose encoder read its own blocks (the vectors then came from there)."""
    from synrob.perturb.lm import loaded as lm
    from synrob.perturb.lm.shared_models import forget_models
    from synrob.probe.experiments.base import Context
    from synrob.probe.experiments.runner import run_experiment

    first = run_experiment(_amnesic(llama), tmp_path / "a", device="cpu")
    assert model_reads == ["LlamaForCausalLM"]
    lm._LOADED.clear()
    forget_models()
    model_reads.clear()
    (tmp_path / "cache").rename(tmp_path / "cache-a")  # cold again
    exp = _amnesic(llama)  # encoded by an encoder reading its own blocks, then run
    exp.prepare(Context(tmp_path / "b", device="cpu", seed=0, lang="en", runs_here=False))
    assert model_reads == ["LlamaModel"]
    second = run_experiment(exp, tmp_path / "b", device="cpu")
    assert model_reads == ["LlamaModel", "LlamaForCausalLM"]
    strip = ("run_seconds", "run_id")
    assert [{k: v for k, v in r.items() if k not in strip} for r in first.rows] == \
        [{k: v for k, v in r.items() if k not in strip} for r in second.rows]


@pytest.mark.slow
def test_jabberwocky_with_its_behaviour_lm_reads_the_checkpoint_once(
        llama: Path, model_reads: list[str], tmp_path: Path) -> None:
    from synrob.probe.experiments.jabberwocky.experiment import JabberwockyExperiment
    from synrob.probe.experiments.runner import run_experiment

    exp = JabberwockyExperiment.from_preset("sample", model=str(llama), layers="1",
                                            jabberwocky_layers="1", behaviour_lm=str(llama),
                                            train_sentences=80, draws=1, epochs=1)
    result = run_experiment(exp, tmp_path / "out", device="cpu")
    assert model_reads == ["LlamaForCausalLM"]  # model, fast+pos and behaviour LM: one read
    assert any(r.get("role") == "fast+pos" for r in result.rows)
    assert any(r.get("kind") == "behaviour" or r.get("section") == "behaviour"
               for r in result.rows)


@pytest.mark.slow
def test_a_synrob_run_amnesic_process_reads_the_checkpoint_once(llama: Path,
                                                                tmp_path: Path) -> None:
    """The issue's count, as bench/amnesic.py --count makes it: one ``synrob run amnesic``
    process from a cold cache (prepare encodes, two layer runs score) reads the weights once."""
    import os
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[2]
    params = {"model": str(llama), "layers": "1,2", "train_sentences": 150,
              "dev_sentences": 60, "test_sentences": 120, "pair_limit": 12, "bootstrap": 20}
    argv = [sys.executable, str(root / "bench" / "amnesic.py"), "--count", "run", "amnesic",
            "--preset", "sample", "--device", "cpu", "-o", str(tmp_path / "out"),
            *(x for k, v in params.items() for x in ("-p", f"{k}={v}"))]
    env = {**os.environ, "SYNROB_CACHE": str(tmp_path / "cache")}
    done = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=600,
                          check=False)
    lines = dict(line.split(": ", 1) for line in done.stdout.splitlines() if ": " in line)
    assert lines.get("exit_code") == "0", done.stderr[-2000:]
    assert lines["model_parses_per_process"] == "1"
    assert lines["weight_loads"] == "1" and lines["config_parses"] == "1"
    assert (tmp_path / "out" / "results.json").is_file()


def test_load_lm_keys_a_model_by_the_kind_it_is(llama: Path, model_reads: list[str]) -> None:
    """``kind="auto"`` (amnesic, jabberwocky) and ``kind="causal"`` (local_structure) find one
    loaded LM: an encoder's LM loaded first serves either study's runs."""
    from synrob.perturb.lm.loaded import load_lm

    auto = load_lm(str(llama), device="cpu")
    assert load_lm(str(llama), device="cpu", kind="causal") is auto
    assert auto.kind == "causal" and model_reads == ["LlamaForCausalLM"]
