"""synrob.probe.tasks.gold_cache: a parsed treebank is kept on disk, keyed by content and reader."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from synrob.probe.tasks import gold_cache
from synrob.probe.tasks.base import load_gold
from synrob.probe.tasks.gold import read_gold


@pytest.fixture
def fresh(monkeypatch, tmp_path):
    """An empty cache, and no per-process copy of earlier loads."""
    monkeypatch.setenv("SYNROB_CACHE", str(tmp_path / "cache"))
    gold_cache._kept_gold.cache_clear()
    yield tmp_path
    gold_cache._kept_gold.cache_clear()


def _same(a, b) -> None:
    for col in ("sent_ids", "forms", "upos", "xpos", "deprel", "feats"):
        assert getattr(a, col) == getattr(b, col), col
    assert len(a.heads) == len(b.heads)
    assert all(x.dtype == y.dtype and np.array_equal(x, y) for x, y in zip(a.heads, b.heads,
                                                                             strict=True))


@pytest.mark.parametrize("limit", [None, 25])
def test_a_cached_gold_equals_the_parse(fresh, ewt_dev, limit):
    src = fresh / "dev.conllu"
    shutil.copy(ewt_dev, src)
    first = load_gold(src, limit)  # parsed, then stored
    entries = list(gold_cache.gold_root().glob("*.json"))
    assert len(entries) == 1
    gold_cache._kept_gold.cache_clear()
    again = load_gold(src, limit)  # from the cache
    assert again is not first and again.path == str(src)
    _same(again, read_gold(str(ewt_dev), limit))
    assert len(again) == (25 if limit else len(first))


def test_an_edited_file_is_parsed_again(fresh, ewt_dev):
    src = fresh / "dev.conllu"
    shutil.copy(ewt_dev, src)
    load_gold(src)
    text = src.read_text(encoding="utf-8")
    src.write_text(text.split("\n\n", 1)[1], encoding="utf-8")  # the first sentence out
    gold_cache._kept_gold.cache_clear()
    assert len(load_gold(src)) == len(read_gold(str(ewt_dev), None)) - 1
    assert len(list(gold_cache.gold_root().glob("*.json"))) == 2


def test_the_readers_code_is_part_of_the_key(fresh, ewt_dev, monkeypatch):
    key = gold_cache.gold_key(ewt_dev, None)
    monkeypatch.setattr(gold_cache, "_reader_fingerprint", lambda: "another reader")
    assert gold_cache.gold_key(ewt_dev, None) != key
    assert gold_cache.gold_key(ewt_dev, 10) != gold_cache.gold_key(ewt_dev, None)


@pytest.mark.parametrize("damage", ["truncate", "lengths", "garbage"])
def test_a_damaged_entry_is_a_miss_and_is_rewritten(fresh, ewt_dev, damage):
    src = fresh / "dev.conllu"
    shutil.copy(ewt_dev, src)
    load_gold(src, 30)
    (entry,) = gold_cache.gold_root().glob("*.json")
    if damage == "truncate":
        entry.write_text(entry.read_text(encoding="utf-8")[:100], encoding="utf-8")
    elif damage == "lengths":
        data = json.loads(entry.read_text(encoding="utf-8"))
        data["lengths"][0] += 1
        entry.write_text(json.dumps(data), encoding="utf-8")
    else:
        entry.write_bytes(b"\x80\x81 not json")
    assert gold_cache.load(entry.stem, "x") is None
    gold_cache._kept_gold.cache_clear()
    _same(load_gold(src, 30), read_gold(str(ewt_dev), 30))
    assert gold_cache.load(entry.stem, "x") is not None  # rewritten by the parse


def test_an_unwritable_cache_only_costs_time(fresh, ewt_dev, monkeypatch):
    monkeypatch.setattr(gold_cache, "gold_root", lambda: Path("/proc/no-such-dir/gold"))
    _same(load_gold(ewt_dev, 20), read_gold(str(ewt_dev), 20))


def test_without_the_readers_source_nothing_is_cached(fresh, ewt_dev, monkeypatch):
    """A frozen install (no module file to hash): parse every time rather than risk a stale
    entry."""
    monkeypatch.setattr(gold_cache, "_reader_fingerprint", lambda: None)
    assert gold_cache.gold_key(ewt_dev, None) is None
    _same(load_gold(ewt_dev, 15), read_gold(str(ewt_dev), 15))
    assert not gold_cache.gold_root().exists() or not list(gold_cache.gold_root().glob("*.json"))
