"""The representation cache under concurrency: two ``synrob encode`` processes on the same
corpus and encoder end with one valid entry; a writer that waited for the lock reuses the entry
instead of re-encoding and deleting it; removing a lock file never lets two lockers in; an
opened set survives ``synrob cache clear``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest
from synrob.probe.encoders.static import StaticEncoder
from synrob.probe.representations import cache as cache_mod
from synrob.probe.representations import encoding as reps

SYNROB = Path(sys.executable).parent / "synrob"


def _env(cache: Path) -> dict[str, str]:
    env = dict(os.environ)
    env.update(SYNROB_CACHE=str(cache), SYNROB_STRICT_PLUGINS="1")
    env.pop("SYNROB_DEBUG", None)
    return env


def _leftovers(root: Path) -> list[str]:
    """Temporaries, partial entries or entries being deleted anywhere under ``root``."""
    return sorted(str(p.relative_to(root)) for p in root.rglob("*")
                  if p.name.endswith((".partial", ".tmp", cache_mod.TRASH)))


def _arrays(entry: Path) -> dict[str, np.ndarray]:
    return {f.name: np.load(f, allow_pickle=False) for f in sorted(entry.glob("*.npy"))}


def test_two_encode_processes_at_once_end_with_one_entry(tmp_path):
    shared, single = tmp_path / "shared-cache", tmp_path / "single-cache"
    cmd = [str(SYNROB), "encode", "--encoder", "glove-6b-50d", "sample:en_ewt:dev"]
    procs = [subprocess.Popen(cmd, env=_env(shared), stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for _ in range(2)]
    outs = [p.communicate(timeout=600) for p in procs]
    for p, (_out, err) in zip(procs, outs, strict=True):
        assert p.returncode == 0, err
        assert "Traceback" not in err
    results = [json.loads(out) for out, _ in outs]
    assert results[0]["cache_path"] == results[1]["cache_path"]
    assert results[0]["words"] == results[1]["words"] == 5030

    listed = subprocess.run([str(SYNROB), "cache", "list", "--json"], env=_env(shared),
                            capture_output=True, text=True, timeout=300, check=True)
    entries = [json.loads(line) for line in listed.stdout.splitlines()]
    assert [e["state"] for e in entries] == ["complete"]
    assert entries[0]["path"] == results[0]["cache_path"]
    assert _leftovers(shared) == []

    # the same arrays as one process alone writes
    alone = subprocess.run(cmd, env=_env(single), capture_output=True, text=True, timeout=600)
    assert alone.returncode == 0, alone.stderr
    ref = _arrays(Path(json.loads(alone.stdout)["cache_path"]))
    got = _arrays(Path(results[0]["cache_path"]))
    assert sorted(got) == sorted(ref) == ["layer_0.npy", "offsets.npy"]
    for name in ref:
        np.testing.assert_array_equal(got[name], ref[name])


@pytest.fixture
def own_cache(tmp_path, monkeypatch) -> Path:
    """A cache of this test alone (these tests clear it and count its entries)."""
    monkeypatch.setenv("SYNROB_CACHE", str(tmp_path / "cache"))
    return cache_mod.cache_root()


def _small_corpus(ewt_dev: Path, tmp_path: Path, n: int = 40) -> Path:
    text = ewt_dev.read_text(encoding="utf-8").split("\n\n")[:n]
    p = tmp_path / "small.conllu"
    p.write_text("\n\n".join(text) + "\n\n", encoding="utf-8")
    return p


def test_writer_that_waited_for_the_lock_reuses_the_published_entry(ewt_dev, tmp_path,
                                                                     monkeypatch, own_cache):
    """The losing process looked the key up before the winner published, then waited for the
    lock: it must return the winner's entry, not encode again and delete it under readers."""
    corpus = _small_corpus(ewt_dev, tmp_path)
    first = reps.encode_corpus("glove-6b-50d", corpus)
    before = first.cache_path.stat().st_ino
    ref = np.array(first.layer_matrix(0)[0])
    monkeypatch.setattr(cache_mod, "lookup", lambda key, root=None: None)  # the stale look-up
    monkeypatch.setattr(StaticEncoder, "encode_flat",
                        lambda *a: pytest.fail("encoded again although the entry existed"))
    again = reps.encode_corpus("glove-6b-50d", corpus)
    assert again.cache_path == first.cache_path
    assert first.cache_path.stat().st_ino == before  # the same directory, never replaced
    np.testing.assert_array_equal(again.layer_matrix(0)[0], ref)
    assert _leftovers(own_cache) == []


def test_unlink_while_a_locker_waits_then_a_new_locker(tmp_path):
    """A holds the lock and unlinks the file; C locks the re-created path at once; B, which
    was waiting on the old file, must not get in until C leaves."""
    lock = tmp_path / "k.lock"
    events: list[str] = []
    b_in = threading.Event()

    def b() -> None:
        with cache_mod._locked(lock):
            events.append("b in")
            b_in.set()

    a = cache_mod._locked(lock)
    a.__enter__()
    t = threading.Thread(target=b)
    t.start()
    time.sleep(0.3)  # B waits in flock on the old file
    lock.unlink()
    c = cache_mod._locked(lock)
    c.__enter__()  # the new file: free at once
    events.append("c in")
    a.__exit__(None, None, None)
    assert not b_in.wait(0.5), "B got in while C held the lock"
    events.append("c out")
    c.__exit__(None, None, None)
    assert b_in.wait(5)
    t.join(5)
    assert events == ["c in", "c out", "b in"]


def test_opened_set_survives_cache_clear(ewt_dev, tmp_path, own_cache):
    corpus = _small_corpus(ewt_dev, tmp_path, 30)
    rs = reps.encode_corpus("glove-6b-50d", corpus)
    ref = np.load(rs.cache_path / "layer_0.npy", allow_pickle=False)  # not through rs
    assert cache_mod.clear() == 1
    assert not rs.cache_path.exists() and cache_mod.list_entries() == []
    np.testing.assert_array_equal(rs.layer_matrix(0)[0], ref)  # mapped on open: still readable
    assert rs.sentence_vectors(0, "mean").shape == (rs.n_sentences, 50)
    assert _leftovers(own_cache) == []


def test_entry_removed_between_lookup_and_open_is_encoded_again(ewt_dev, tmp_path, monkeypatch,
                                                                  own_cache):
    corpus = _small_corpus(ewt_dev, tmp_path, 30)
    ref = np.array(reps.encode_corpus("glove-6b-50d", corpus).layer_matrix(0)[0])
    real_lookup = cache_mod.lookup

    def lookup_then_cleared(key, root=None):
        hit = real_lookup(key, root)
        assert hit is not None and cache_mod.clear() == 1  # another process clears the cache
        return hit

    monkeypatch.setattr(cache_mod, "lookup", lookup_then_cleared)
    rs = reps.encode_corpus("glove-6b-50d", corpus)
    np.testing.assert_array_equal(rs.layer_matrix(0)[0], ref)
    assert [e["state"] for e in cache_mod.list_entries()] == ["complete"]
