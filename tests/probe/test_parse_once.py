"""Parse once (issue 45): a model's config is parsed once per process whoever asks for it, and
``synrob probe`` reads the encoder's weights once for its train, dev and test files."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from .tiny_llama import build_llama, ewt_texts


@pytest.fixture(scope="module")
def llama(tmp_path_factory: pytest.TempPathFactory, ewt_train: Path) -> Path:
    return build_llama(tmp_path_factory.mktemp("parse-once") / "llama",
                       ewt_texts(ewt_train, 400), blocks=3, hidden=32, ffn=64)


def test_config_is_parsed_once_per_process(llama: Path, monkeypatch: pytest.MonkeyPatch
                                           ) -> None:
    """The LM loader and every transformer encoder of the same files share one config parse
    (each gets its own copy); a model saved again in the same place is read again."""
    import transformers
    from synrob.perturb.lm.models import ModelSource, load_config
    from synrob.probe.encoders.resolve import resolve_encoder

    parses: list[str] = []
    real = transformers.AutoConfig.from_pretrained

    def counted(*args: Any, **kwargs: Any) -> Any:
        parses.append(str(args[0]))
        return real(*args, **kwargs)

    def saved_again() -> None:  # a new version of the file (by its modification time)
        mtime = stamp.stat().st_mtime_ns + 10**9
        os.utime(stamp, ns=(mtime, mtime))

    monkeypatch.setattr(transformers.AutoConfig, "from_pretrained", counted)
    source, stamp = ModelSource(str(llama), str(llama)), llama / "config.json"
    saved_again()  # not parsed by an earlier test
    a = load_config(source, trust_remote_code=False)
    encoders = [resolve_encoder(str(llama)) for _ in range(3)]
    assert [e.num_layers for e in encoders] == [4, 4, 4]
    assert [e.dim for e in encoders] == [32, 32, 32]
    assert len(parses) == 1
    a.hidden_size = 7  # a copy: the next caller's config is not changed
    assert load_config(source, trust_remote_code=False).hidden_size == 32
    saved_again()
    load_config(source, trust_remote_code=False)
    assert len(parses) == 2


def test_probe_reads_the_weights_once_for_every_file(llama: Path, tmp_path: Path,
                                                     model_reads: list[str],
                                                     sample_slice: Any) -> None:
    from synrob.probe.api import probe

    loads = model_reads  # an empty cache: every file is encoded here
    train, dev = sample_slice("train", 150, tmp_path), sample_slice("dev", 60, tmp_path)
    tests = [sample_slice("test", 60, tmp_path), sample_slice("test", 30, tmp_path)]
    result = probe(tests, encoder=str(llama), layer=1, task="pos", train=train, dev=dev,
                   device="cpu", progress=False)
    assert len(loads) == 1  # four files (train, dev and two tests), one read of the weights
    assert result.rows
