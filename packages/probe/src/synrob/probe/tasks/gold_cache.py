"""Parsed gold treebanks kept on disk, so a file is parsed once, not in every process.

Reading a CoNLL-U file with its validation costs about 0.3 ms a sentence (EWT train: 3.3 s
on the 2-core development CPU); every ``synrob probe``, every experiment worker and every
bench paid it for each file it scored. :func:`load` returns the columns of
:class:`~synrob.probe.tasks.gold.GoldCorpus` from ``<synrob cache>/gold/<key>.json`` (EWT
train: 0.4 s), :func:`store` writes them atomically after a parse.

The key hashes the file's bytes, the sentence limit, :data:`GOLD_FORMAT` and the source code of
the modules that turn the file into columns (:data:`READER_MODULES`), so an edited file or
an edited reader is parsed again; an entry that cannot be read or does not hold what a
GoldCorpus needs is a miss (parsed again and rewritten), never an error. JSON only: nothing in
the cache is unpickled. ``synrob cache clear`` leaves it alone; delete ``<synrob cache>/gold``
to drop it. :func:`load_gold` reads a file through this cache and a per-process one.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from .gold import GoldCorpus, read_gold

__all__ = ["GOLD_FORMAT", "READER_MODULES", "gold_root", "gold_key", "load", "store",
           "load_gold"]

GOLD_FORMAT = 1
#: the modules whose code decides what a GoldCorpus holds: their source is part of the key
READER_MODULES = ("synrob.perturb.corpus", "synrob.perturb.io.validate",
                  "synrob.probe.tasks.gold")
_COLUMNS = ("sent_ids", "forms", "upos", "xpos", "deprel", "feats")


def gold_root() -> Path:
    """``<synrob cache>/gold`` (``$SYNROB_CACHE`` overrides the cache root)."""
    from synrob.perturb.io.data import cache_dir

    return cache_dir() / "gold"


@functools.cache
def _reader_fingerprint() -> str | None:
    """SHA-256 of the reader modules' source, or None where a module has no readable source
    file (a frozen or zipped install): then nothing is cached, as a stale entry could not be
    told from a good one."""
    import importlib

    h = hashlib.sha256()
    for name in READER_MODULES:
        source = importlib.import_module(name).__file__
        if not source:
            return None
        try:
            h.update(Path(source).read_bytes())
        except OSError:
            return None
    return h.hexdigest()


def gold_key(path: str | os.PathLike[str], limit: int | None) -> str | None:
    """The entry name of ``path``'s first ``limit`` sentences (all when None); None when the
    cache is off (no reader source to key it by)."""
    from ..representations.cache import corpus_hash

    reader = _reader_fingerprint()
    if reader is None:
        return None
    blob = json.dumps([GOLD_FORMAT, corpus_hash(path), limit, reader])
    return hashlib.sha256(blob.encode()).hexdigest()[:32]


def load(key: str, shown: str) -> GoldCorpus | None:
    """The GoldCorpus of entry ``key`` (its ``path`` set to ``shown``), or None on a miss."""
    try:
        data = json.loads((gold_root() / f"{key}.json").read_text(encoding="utf-8"))
        lengths = np.asarray(data["lengths"], dtype=np.int64)
        flat = np.asarray(data["heads"], dtype=np.int64)
        cols = {c: data[c] for c in _COLUMNS}
        n = lengths.size
        if flat.size != int(lengths.sum()) or any(len(cols[c]) != n for c in _COLUMNS):
            return None
        heads = np.split(flat, np.cumsum(lengths)[:-1]) if n else []
        return GoldCorpus(shown, heads=heads, **cols)
    except (OSError, ValueError, KeyError, TypeError):
        return None


def store(key: str, gold: GoldCorpus) -> None:
    """Write ``gold``'s columns as entry ``key`` (atomically; a failure to write is ignored:
    the cache only saves time)."""
    from synrob.perturb.io.atomic import write_text_atomic

    data: dict[str, Any] = {c: getattr(gold, c) for c in _COLUMNS}
    data["lengths"] = [int(h.size) for h in gold.heads]
    data["heads"] = np.concatenate(gold.heads).tolist() if gold.heads else []
    try:
        gold_root().mkdir(parents=True, exist_ok=True)
        write_text_atomic(gold_root() / f"{key}.json", json.dumps(data, ensure_ascii=False))
    except OSError:
        pass


def load_gold(path: str | os.PathLike[str], limit: int | None = None) -> GoldCorpus:
    """The gold syntax of a CoNLL-U file (at most ``limit`` sentences).

    Kept per process for the same file, size, modification time and ``limit`` (an experiment
    scores every test set in many runs; a rewritten file is read again), and parsed once per
    file content (the entries of this module). Treat it as read-only.
    """
    try:
        st = os.stat(path)
    except OSError:  # not a file (stdin, a missing path): read it, and let the reader say why
        return read_gold(str(path), limit)
    return _kept_gold(os.path.realpath(path), st.st_size, st.st_mtime_ns, st.st_ino, limit,
                      str(path))


@lru_cache(maxsize=16)
def _kept_gold(real: str, size: int, mtime_ns: int, inode: int, limit: int | None,
               shown: str) -> GoldCorpus:
    """:func:`~.gold.read_gold`, kept per file state (the arguments before ``shown`` are the key),
    and on disk across processes (:func:`load`, :func:`store`)."""
    key = gold_key(real, limit)
    gold = None if key is None else load(key, shown)
    if gold is None:
        gold = read_gold(shown, limit)
        if key is not None:
            store(key, gold)
    return gold
