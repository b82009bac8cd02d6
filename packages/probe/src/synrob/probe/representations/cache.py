"""The representation cache: encoder outputs written once, memory-mapped on reuse.

Layout under ``<synrob cache>/representations/``::

    <key>/index.json        meta (encoder identity, layers, pooling, corpus hash, dtype, ...)
    <key>/offsets.npy       (n_sentences + 1,) int64 word offsets
    <key>/layer_<L>.npy     (n_words, dim) float16|float32, one per layer
    <key>/first_<L>.npy     (n_sentences, dim) first-token state per sentence (transformers)
    <key>/last_<L>.npy      (n_sentences, dim) last-token state per sentence (transformers)
    <key>.partial/          an entry being written (+ progress.json): resumed by the next run
    <key>.lock              held while writing

The key hashes the encoder identity, layer set, pooling, storage dtype and the SHA-256 of the
corpus file. An entry becomes visible only by the atomic rename
(``synrob.perturb.io.atomic.publish``) of the finished ``.partial`` directory, so a reader never
sees a half-written entry. The encoder writes each chunk straight into memory maps of the
chunk's rows of preallocated ``.npy`` files (page cache, not process memory; only one chunk mapped at a time); a chunk is recorded in ``progress.json`` once
written, so an interrupted run resumes after the last recorded chunk.

Durability without waiting for the disk: written pages live in the kernel's page cache, so they
survive the writing process being killed; only an operating-system crash can lose them. So
``progress.json`` and ``index.json`` record the kernel's boot id, and a partial entry or a
published entry from another boot is trusted only if it was synced to disk: after publishing,
:func:`make_durable` (on a background thread) ``fdatasync``s the files and drops a ``synced``
marker. A partial entry from another boot is started over; a published one from another boot
without the marker is discarded and encoded again. Where no boot id is available (not Linux)
every chunk is ``fdatasync``ed before it is recorded, as before.

Concurrency: every writer of a key holds ``<key>.lock`` (``flock``) from before it looks at the
``.partial`` directory until it has published. A process that waited for the lock while another
one encoded the same key finds the entry published when it gets the lock and returns it
without writing anything (:attr:`EntryWriter.published`), so two ``synrob encode`` runs of the
same corpus and encoder end with one entry. A published entry is never deleted in place:
removal (``synrob cache clear``, an unsynced entry of another boot) first renames it to a
``.<key>.<pid>.<random>.trash`` directory, so a reader sees the whole entry or none, and a
:class:`~synrob.probe.representations.encoding.RepresentationSet` maps every file of its entry when it
is opened, so its arrays stay readable after the entry is removed. Lock files may be removed
(``synrob cache clear``): a locker checks that the file it locked is still the one at the path.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import fcntl
import functools
import hashlib
import json
import mmap
import os
import shutil
import sys
import time
import uuid
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import numpy as np
from synrob.perturb.errors import SynrobError
from synrob.perturb.io.atomic import publish, write_text_atomic
from synrob.perturb.io.data import cache_dir

__all__ = [
    "CACHE_FORMAT",
    "make_durable",
    "prefault",
    "cache_root",
    "corpus_hash",
    "entry_key",
    "lookup",
    "EntryWriter",
    "list_entries",
    "clear",
]

CACHE_FORMAT = 1
STORAGE_DTYPES = ("float16", "float32")


def cache_root() -> Path:
    """``<synrob cache>/representations`` (``$SYNROB_CACHE`` overrides the cache root)."""
    return cache_dir() / "representations"


def corpus_hash(path: str | os.PathLike[str]) -> str:
    """SHA-256 of the corpus file's bytes."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        while chunk := fh.read(1 << 22):
            h.update(chunk)
    return h.hexdigest()


def entry_key(key_meta: Mapping[str, Any]) -> str:
    """Directory name of an entry: hash of its canonical JSON key."""
    blob = json.dumps(key_meta, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(blob.encode()).hexdigest()[:24]


def superset_keys(key_meta: Mapping[str, Any], root: Path | None = None) -> list[str]:
    """Keys of the finished entries whose key equals ``key_meta`` but for ``layers``, which
    include every layer of ``key_meta["layers"]``: fewest layers first."""
    root = root or cache_root()
    want = set(key_meta["layers"])
    rest = _canonical({k: v for k, v in key_meta.items() if k != "layers"})
    found = []
    for index_path in root.glob("*/index.json") if root.is_dir() else ():
        if index_path.parent.name.startswith(".") or index_path.parent.name.endswith(".partial"):
            continue
        index = _read_json(index_path) or {}
        layers = index.get("layers")
        if not isinstance(layers, list) or not want <= set(layers) or any(
                k not in index for k in key_meta):
            continue
        if _canonical({k: index[k] for k in key_meta if k != "layers"}) == rest:
            found.append((len(layers), index_path.parent.name))
    return [key for _, key in sorted(found)]


def _canonical(obj: Any) -> str:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"))


def _read_json(path: Path) -> dict[str, Any] | None:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def _write_json(path: Path, obj: Any) -> None:
    write_text_atomic(path, json.dumps(obj, indent=1, sort_keys=True))


@functools.cache
def boot_id() -> str | None:
    """This boot's id (Linux ``/proc/sys/kernel/random/boot_id``), or None elsewhere."""
    try:
        return Path("/proc/sys/kernel/random/boot_id").read_text().strip() or None
    except OSError:
        return None


SYNCED = "synced"  # marker file: every file of the entry is on disk
TRASH = ".trash"  # suffix of an entry being deleted (renamed aside first; see _remove)


def _trusted(d: Path, index: Mapping[str, Any]) -> bool:
    """Written in this boot (page cache is authoritative) or synced to disk before."""
    written_in = index.get("boot_id")
    return written_in is None or written_in == boot_id() or (d / SYNCED).is_file()


def lookup(key: str, root: Path | None = None) -> Path | None:
    """The finished entry directory of ``key``, or None.

    An entry published in another boot that was never synced to disk (the machine went down
    before :func:`make_durable` finished) may hold lost pages: it is removed and None returned.
    """
    root = root or cache_root()
    d = root / key
    index = _read_json(d / "index.json")
    if index is None:
        return None
    if not _trusted(d, index):
        with _locked(root / f"{key}.lock"):
            # another process may have encoded the key again meanwhile: look once more
            index = _read_json(d / "index.json")
            if index is not None and _trusted(d, index):
                return d
            _remove(d)
        return None
    return d


def _remove(d: Path) -> None:
    """Delete an entry directory without a reader ever seeing part of it: rename it aside
    (one atomic step), then delete the renamed copy. Callers hold the entry's lock."""
    if not d.exists():
        return
    trash = d.with_name(f".{d.name}.{os.getpid()}.{uuid.uuid4().hex[:8]}{TRASH}")
    try:
        publish(d, trash)
    except FileNotFoundError:
        return
    shutil.rmtree(trash, ignore_errors=True)


def make_durable(entry: Path) -> None:
    """``fdatasync`` every file of a published entry, then write its ``synced`` marker.

    Meant for a background thread: an entry removed meanwhile (``synrob cache clear``) is no
    error, and a process that exits first only leaves the marker unwritten.
    """
    with contextlib.suppress(OSError):
        _sync_entry(entry)


def _sync_path(path: Path, sync: Any = os.fdatasync) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        sync(fd)
    finally:
        os.close(fd)


def _sync_entry(entry: Path) -> None:
    for f in sorted(entry.iterdir()):
        if f.is_file() and f.name != SYNCED:
            _sync_path(f)
    (entry / SYNCED).write_text(time.strftime("%Y-%m-%dT%H:%M:%S") + "\n", encoding="utf-8")
    _sync_path(entry, os.fsync)  # the directory: the marker's entry


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    """Hold an exclusive ``flock`` on ``path`` (created empty if missing).

    The lock file is never written, only locked; :func:`clear` unlinks it. A process that
    opened the old file before the unlink and locks it afterwards would hold a lock nobody
    else sees, so after locking it checks that ``path`` still names the file it locked, and
    starts over otherwise.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    while True:
        fh = open(path, "a")  # noqa: SIM115 - closed below; "a": never truncates
        try:
            fcntl.flock(fh, fcntl.LOCK_EX)
            mine = os.fstat(fh.fileno())
            try:
                now = os.stat(path)
            except FileNotFoundError:
                now = None
        except BaseException:
            fh.close()
            raise
        if now is not None and (now.st_dev, now.st_ino) == (mine.st_dev, mine.st_ino):
            break
        fh.close()  # unlinked (and maybe re-created) while we waited: lock the new one
    try:
        yield
    finally:
        fcntl.flock(fh, fcntl.LOCK_UN)
        fh.close()


def _create_npy(path: Path, shape: tuple[int, ...], dtype: str) -> None:
    """A preallocated (sparse) ``.npy`` file of ``shape``."""
    arr = np.lib.format.open_memmap(path, mode="w+", dtype=np.dtype(dtype), shape=shape)
    del arr


def _data_offset(path: Path) -> int:
    arr = np.load(path, mmap_mode="r", allow_pickle=False)
    try:
        return int(arr.offset)
    finally:
        del arr


_MADV_POPULATE_WRITE = 23  # Linux >= 5.14


@functools.cache
def _libc() -> Any:
    if not sys.platform.startswith("linux"):
        return None
    try:
        return ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
    except OSError:  # pragma: no cover - no libc to call
        return None


def prefault(arrays: list[np.ndarray]) -> None:
    """Fault in the pages of writable memmaps before they are written (Linux only).

    One ``madvise(MADV_POPULATE_WRITE)`` per array allocates and maps every page in the kernel,
    instead of one page fault per 4 KiB page during the encoder's writes; run on a helper
    thread (ctypes releases the GIL) it overlaps tokenization and the first forward passes.
    Contents are untouched; on other systems or older kernels it does nothing.
    """
    libc = _libc()
    if libc is None:
        return
    page = mmap.PAGESIZE
    for a in arrays:
        if a.nbytes == 0:
            continue
        addr = a.ctypes.data
        start = addr - addr % page
        if libc.madvise(ctypes.c_void_p(start), ctypes.c_size_t(addr + a.nbytes - start),
                        _MADV_POPULATE_WRITE) != 0:
            return  # EINVAL before Linux 5.14: the writes fault the pages in as usual


class EntryWriter:
    """Writes one cache entry chunk by chunk; resumable; published atomically.

    Use as a context manager: ``with EntryWriter(...) as w:``, then per chunk
    :meth:`chunk_views` (encode into them), :meth:`mark_done` (and :meth:`flush` when due),
    and finally :meth:`finish`.
    ``key_meta`` must equal the one the key was made from; a ``.partial`` directory left by
    an interrupted run with the same key meta and chunking is resumed.

    The key's lock is held from ``__enter__`` to ``__exit__``. When another process published
    the entry while this one waited for the lock, :attr:`published` is its directory on
    entering: nothing is written, and the caller uses that entry instead.
    """

    FLUSH_EVERY = 1  # chunks between progress records (on a background thread)

    def __init__(self, key: str, key_meta: Mapping[str, Any], *, layers: list[int],
                 offsets: np.ndarray, dim: int, dtype: str, chunking: list[int],
                 sentence_states: bool, info: Mapping[str, Any] | None = None,
                 root: Path | None = None) -> None:
        if dtype not in STORAGE_DTYPES:
            raise SynrobError(f"cache dtype must be one of {', '.join(STORAGE_DTYPES)}")
        self.root = root or cache_root()
        self.key = key
        self.final = self.root / key
        self.partial = self.root / f"{key}.partial"
        self.layers = layers
        self.offsets = offsets
        self.dim = dim
        self.dtype = np.dtype(dtype)
        # a partial entry of another boot may have lost pages: its progress does not match
        self.progress_meta = {"key": dict(key_meta), "chunking": chunking, "dim": dim,
                              "sentence_states": sentence_states, "boot_id": boot_id()}
        self.sync_chunks = boot_id() is None  # no boot id: make each chunk durable
        self.sentence_states = sentence_states
        self.info = dict(info or {})
        self.done: dict[int, int] = {}  # chunk -> oov count
        self._pending = 0
        self._fds: dict[str, tuple[int, int]] = {}
        self._lock: contextlib.AbstractContextManager[None] | None = None
        #: the finished entry, when another process published it before we got the lock
        self.published: Path | None = None

    # ------------------------------------------------------------------ lifecycle
    def __enter__(self) -> EntryWriter:
        self._lock = _locked(self.root / f"{self.key}.lock")
        self._lock.__enter__()
        try:
            index = _read_json(self.final / "index.json")
            if index is not None and _trusted(self.final, index):
                self.published = self.final  # encoded by another process while we waited
                return self
            _remove(self.final)  # unsynced from another boot, or not an entry at all
            self._start()
        except BaseException:
            self._lock.__exit__(None, None, None)
            raise
        return self

    def _start(self) -> None:
        prog = _read_json(self.partial / "progress.json")
        if prog is not None and prog.get("meta") == json.loads(json.dumps(self.progress_meta)):
            self.done = {int(k): int(v) for k, v in prog["done"].items()}
        else:
            shutil.rmtree(self.partial, ignore_errors=True)
            self.partial.mkdir(parents=True)
            self._allocate()
            self._record()
        self._open()

    def __exit__(self, *exc: object) -> None:
        try:
            self._close()
        finally:
            assert self._lock is not None
            self._lock.__exit__(None, None, None)

    def _files(self) -> dict[str, tuple[int, ...]]:
        n_words, n_sent = int(self.offsets[-1]), len(self.offsets) - 1
        out: dict[str, tuple[int, ...]] = {}
        for layer in self.layers:
            out[f"layer_{layer}.npy"] = (n_words, self.dim)
            if self.sentence_states:
                out[f"first_{layer}.npy"] = (n_sent, self.dim)
                out[f"last_{layer}.npy"] = (n_sent, self.dim)
        return out

    def _allocate(self) -> None:
        np.save(self.partial / "offsets.npy", self.offsets.astype(np.int64))
        for name, shape in self._files().items():
            _create_npy(self.partial / name, shape, self.dtype.str)

    def _open(self) -> None:
        for name in self._files():
            path = self.partial / name
            self._fds[name] = (os.open(path, os.O_WRONLY), _data_offset(path))

    def _close(self) -> None:
        for fd, _ in self._fds.values():
            os.close(fd)
        self._fds.clear()

    def _record(self, done: Mapping[int, int] | None = None) -> None:
        done = self.done if done is None else done
        _write_json(self.partial / "progress.json",
                    {"meta": self.progress_meta, "info": self.info,
                     "done": {str(k): v for k, v in done.items()}})

    def flush(self, done: Mapping[int, int] | None = None) -> None:
        """Make written chunks durable and record them (or the snapshot ``done``) as done.

        Safe to run on a background thread while the next chunk is written, given a snapshot
        of :attr:`done` taken after the recorded chunks were written. The files are
        ``fdatasync``ed only without a boot id (see the module docstring).
        """
        if self.sync_chunks:
            for fd, _ in self._fds.values():
                os.fdatasync(fd)
        self._record(done)

    # ------------------------------------------------------------------ writing
    def chunk_views(self, sent_start: int, sent_end: int
                    ) -> tuple[list[np.ndarray], list[np.ndarray] | None, list[np.ndarray] | None]:
        """Writable memmaps of the rows of sentences ``[sent_start, sent_end)``, per layer.

        ``(words, first, last)``: ``words[li]`` is (n_chunk_words, dim) in the storage dtype,
        ``first``/``last`` (n_chunk_sentences, dim) or None without sentence states. Encoders
        write into them directly (page cache, no process copy); drop the views, then call
        :meth:`mark_done`. Only the chunk's pages are mapped, so RSS stays one chunk.
        """
        r0, r1 = int(self.offsets[sent_start]), int(self.offsets[sent_end])

        def view(name: str, a: int, b: int) -> np.ndarray:
            _, base = self._fds[name]
            return np.memmap(self.partial / name, dtype=self.dtype, mode="r+",
                             offset=base + a * self.dim * self.dtype.itemsize,
                             shape=(b - a, self.dim))

        words = [view(f"layer_{layer}.npy", r0, r1) for layer in self.layers]
        if not self.sentence_states:
            return words, None, None
        first = [view(f"first_{layer}.npy", sent_start, sent_end) for layer in self.layers]
        last = [view(f"last_{layer}.npy", sent_start, sent_end) for layer in self.layers]
        return words, first, last

    def mark_done(self, chunk: int, oov: int) -> bool:
        """Count ``chunk`` as written (not yet durable); True when a :meth:`flush` is due."""
        self.done[chunk] = int(oov)
        self._pending += 1
        if self._pending >= self.FLUSH_EVERY:
            self._pending = 0
            return True
        return False

    def finish(self, meta: Mapping[str, Any]) -> Path:
        """Publish the entry with ``meta`` as its index; returns the entry directory."""
        self.flush()
        self._close()
        index = dict(meta)
        index["oov_words"] = int(sum(self.done.values()))
        index["created"] = time.strftime("%Y-%m-%dT%H:%M:%S")
        index["files"] = sorted(self._files())
        index["sentence_states"] = self.sentence_states
        index["boot_id"] = boot_id()
        _write_json(self.partial / "index.json", index)
        (self.partial / "progress.json").unlink(missing_ok=True)
        # Every writer holds the lock and __enter__ found no entry, so there is none to replace;
        # a directory in the way anyway (made without the lock) is renamed aside, never deleted
        # in place under a reader.
        _remove(self.final)
        publish(self.partial, self.final)
        return self.final


def _entry_size(d: Path) -> int | None:
    """Total size of the files of ``d``; None when it vanished meanwhile (published, removed)."""
    try:
        return sum(f.stat().st_size for f in d.iterdir() if f.is_file())
    except FileNotFoundError:
        return None


def list_entries(root: Path | None = None) -> list[dict[str, Any]]:
    """Every finished and partial entry: key, encoder, layers, sentences, words, size, state."""
    root = root or cache_root()
    if not root.is_dir():
        return []
    out = []
    for d in sorted(root.iterdir()):
        if not d.is_dir():
            continue
        if d.name.startswith("."):  # an entry being deleted (see _remove)
            continue
        if d.name.endswith(".partial"):
            prog = _read_json(d / "progress.json") or {}
            info = prog.get("info", {})
            size = _entry_size(d)
            if size is not None:
                out.append({"key": d.name[: -len(".partial")], "state": "partial",
                            "encoder": info.get("encoder"), "layers": info.get("layers"),
                            "corpus": info.get("corpus_name"), "bytes": size, "path": str(d)})
            continue
        index = _read_json(d / "index.json")
        size = _entry_size(d)
        if index is None or size is None:
            continue
        out.append({"key": d.name, "state": "complete", "encoder": index.get("encoder"),
                    "layers": index.get("layers"), "corpus": index.get("corpus_name"),
                    "sentences": index.get("n_sentences"), "words": index.get("n_words"),
                    "dtype": index.get("dtype"), "bytes": size, "path": str(d)})
    return out


def _matches(entry: Mapping[str, Any], encoder: str, root: Path) -> bool:
    if entry.get("encoder") == encoder:
        return True
    d = Path(entry["path"])
    meta = _read_json(d / "index.json") or (_read_json(d / "progress.json") or {}).get("meta", {})
    ident = (meta.get("identity") or meta.get("key", {}).get("identity") or {})
    model = ident.get("options", {}).get("model") or ident.get("options", {}).get("path")
    return encoder in (ident.get("encoder"), model)


def clear(encoder: str | None = None, root: Path | None = None) -> int:
    """Delete entries (all, or those of ``encoder``: spec, encoder name or model); returns count."""
    root = root or cache_root()
    n = 0
    for entry in list_entries(root):
        if encoder is None or _matches(entry, encoder, root):
            # waits for a writer of this key to finish; the entry is renamed aside before it
            # is deleted, so a reader that opened it keeps its arrays (see _remove)
            lock = root / f"{entry['key']}.lock"
            with _locked(lock):
                _remove(Path(entry["path"]))
                lock.unlink(missing_ok=True)  # lockers re-check the path (see _locked)
            n += 1
    if root.is_dir():  # left by a clear that was killed between the rename and the delete
        for d in root.glob(f".*{TRASH}"):
            shutil.rmtree(d, ignore_errors=True)
    return n
