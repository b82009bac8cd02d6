"""encode_corpus bounds the per-shape kernel caches of PyTorch's CPU matmuls (issue 44 §4,
``rss_growth_4x_corpus``): with oneDNN's and ideep's defaults (1,024 entries each) RSS grew with
the number of distinct batch shapes a corpus produces."""

from __future__ import annotations

import os

from synrob.probe.encoders.static import StaticEncoder
from synrob.probe.representations import encoding as reps

_VARS = ("ONEDNN_PRIMITIVE_CACHE_CAPACITY", "LRU_CACHE_CAPACITY")


def test_bound_kernel_cache_sets_both_unless_the_environment_does(monkeypatch):
    monkeypatch.delenv(_VARS[0], raising=False)
    monkeypatch.setenv(_VARS[1], "7")
    reps.bound_kernel_cache()
    assert os.environ[_VARS[0]] == str(reps.KERNEL_CACHE_ENTRIES)
    assert os.environ[_VARS[1]] == "7"  # the user's setting is kept


def test_encode_bounds_the_caches_before_the_encoder_loads(ewt_dev, tmp_path, monkeypatch):
    for var in _VARS:
        monkeypatch.delenv(var, raising=False)
    seen = {}
    real_load = StaticEncoder._load

    def load(self):
        seen.update({var: os.environ.get(var) for var in _VARS})
        return real_load(self)

    monkeypatch.setattr(StaticEncoder, "_load", load)
    corpus = tmp_path / "c.conllu"
    corpus.write_text("\n\n".join(ewt_dev.read_text(encoding="utf-8").split("\n\n")[:3]) + "\n\n",
                      encoding="utf-8")
    reps.encode_corpus("glove-6b-50d", corpus)
    assert seen == {var: str(reps.KERNEL_CACHE_ENTRIES) for var in _VARS}
