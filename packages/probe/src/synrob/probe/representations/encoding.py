"""Word-aligned per-layer representations of a corpus, through the cache.

:func:`encode_corpus` encodes every syntactic word of a CoNLL-U file (multiword-token ranges
and empty nodes excluded) and returns a :class:`RepresentationSet` backed by memory-mapped
arrays. A corpus already in the cache is served without loading the model.
"""

from __future__ import annotations

import html
import json
import os
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
from synrob.perturb.errors import LayerError, ParameterError, SynrobError

from ..encoders.base import Encoder, resolve_layers
from ..runtime.progress import Counter, Progress
from ..runtime.provenance import package_versions
from . import cache as _cache

__all__ = ["encode_corpus", "package_versions", "RepresentationSet", "read_words",
           "SENTENCE_POOLINGS", "LoadedEncoders"]

SENTENCE_POOLINGS = ("mean", "max", "first", "last")
#: Words per chunk: the unit of resumption and the span the encoder sorts by length.
CHUNK_WORDS = 16384
#: Entries kept by each of the two per-shape kernel caches of PyTorch's CPU bfloat16 matmuls
#: (the CPU default precision where bf16 is native), where the environment does not set them:
#: oneDNN's primitive cache (``ONEDNN_PRIMITIVE_CACHE_CAPACITY``) and ideep's LRU cache
#: (``LRU_CACHE_CAPACITY``), 1,024 entries each by default. Both key on the input shape, and
#: length-sorted batches under a token budget have a new (batch, width) shape almost every
#: batch, so with the defaults RSS grew with the number of distinct shapes a corpus produces:
#: MiniLM at layer 3 on EWT dev, 0.59 GB peak on 500 sentences (24 shapes) and 0.71 GB on 2,000
#: (54 shapes), about 1.6 MB per shape in ideep's cache and 2.3 MB in oneDNN's. 32 holds every
#: kernel of one forward pass (a few per shape, reused by every layer); across batches the
#: shapes rarely repeat. A cached kernel and a rebuilt one compute the same values.
KERNEL_CACHE_ENTRIES = 32


def _layers_text(layers: Sequence[int]) -> str:
    """``0-6`` for a run of layers, else ``1, 3, 6``."""
    if len(layers) > 2 and list(layers) == list(range(layers[0], layers[-1] + 1)):
        return f"{layers[0]}-{layers[-1]}"
    return ", ".join(map(str, layers))


class RepresentationSet:
    """A finished cache entry: per-layer word vectors of one corpus (what
    :func:`synrob.probe.encode` returns; a notebook shows its :meth:`summary`).

    ``layer_matrix(l)`` is ``((n_words, dim) memmap, (n_sentences + 1,) offsets)``; sentence
    ``i`` owns rows ``offsets[i]:offsets[i + 1]``, one per syntactic word in CoNLL-U order.

    Every array file of the entry is memory-mapped when the set is opened, so the arrays stay
    readable even if the entry is removed afterwards (``synrob cache clear`` in another
    process). Arrays are read with ``allow_pickle=False``: an entry whose files are not plain
    numeric ``.npy`` arrays (an object array, a pickle) is refused with a :class:`SynrobError`,
    never unpickled.
    """

    def __init__(self, path: str | Path) -> None:
        self.cache_path = Path(path)
        try:
            self.meta: dict[str, Any] = json.loads(
                (self.cache_path / "index.json").read_text(encoding="utf-8")
            )
            self.encoder: str = self.meta["encoder"]
            self.layers: list[int] = [int(x) for x in self.meta["layers"]]
            self.dim: int = int(self.meta["dim"])
            self.n_sentences: int = int(self.meta["n_sentences"])
            self.n_words: int = int(self.meta["n_words"])
            self.oov_rate: float = (self.meta["oov_words"] / self.n_words
                                    if self.n_words else 0.0)
        except (OSError, ValueError, TypeError, KeyError, AttributeError) as exc:
            raise SynrobError(f"{self.cache_path}: not a representation cache entry ({exc})"
                              ) from None
        self.offsets: np.ndarray = self._load("offsets.npy", None)
        if self.offsets.dtype.kind not in "iu" or self.offsets.shape != (self.n_sentences + 1,):
            raise SynrobError(f"{self.cache_path / 'offsets.npy'}: not the entry's word offsets "
                              f"({self.offsets.dtype}, shape {self.offsets.shape})")
        names = [f"layer_{layer}.npy" for layer in self.layers]
        if self.meta.get("sentence_states"):
            names += [f"{kind}_{layer}.npy" for kind in ("first", "last") for layer in self.layers]
        self._maps: dict[str, np.ndarray] = {name: self._load(name, "r") for name in names}

    def _load(self, name: str, mmap_mode: Any) -> np.ndarray:
        """One plain numeric array of the entry (never unpickled); else a SynrobError."""
        path = self.cache_path / name
        try:
            arr = np.load(path, mmap_mode=mmap_mode, allow_pickle=False)
        except (OSError, ValueError, EOFError) as exc:
            reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise SynrobError(f"{path}: unreadable representation cache file ({reason}); "
                              "clear it with `synrob cache clear`") from None
        if not isinstance(arr, np.ndarray) or arr.dtype.kind not in "iuf":
            if hasattr(arr, "close"):  # an .npz archive
                arr.close()
            raise SynrobError(f"{path}: not a numeric array; clear it with `synrob cache clear`")
        return arr

    def __repr__(self) -> str:
        return (f"RepresentationSet({self.encoder!r}, layers={self.layers}, dim={self.dim}, "
                f"sentences={self.n_sentences}, words={self.n_words})")

    def summary(self) -> dict[str, Any]:
        """What the set holds, one value each: encoder, corpus, layers, dim, sentences, words,
        OOV rate, stored dtype, pooling and the cache entry."""
        return {"encoder": self.encoder, "corpus": self.meta.get("corpus_name", ""),
                "layers": _layers_text(self.layers), "dim": self.dim,
                "sentences": self.n_sentences, "words": self.n_words,
                "oov_rate": round(self.oov_rate, 4), "dtype": self.meta.get("dtype", ""),
                "pooling": self.meta.get("pooling", ""), "cache": str(self.cache_path)}

    def _repr_html_(self) -> str:
        """A notebook's view: :meth:`summary` as a table, and how to read the vectors."""
        from synrob.perturb.io.table import html_table

        return (f"<p><b>RepresentationSet</b> of {html.escape(self.encoder)}</p>"
                + html_table([self.summary()])
                + "<p><code>.layer_matrix(layer)</code>: (words × dim, offsets); "
                "<code>.words(layer)</code>: one array per sentence; "
                "<code>.sentence_vectors(layer)</code>: one row per sentence</p>")

    def _map(self, name: str) -> np.ndarray:
        if name not in self._maps:  # not listed in index.json: mapped on first use
            self._maps[name] = self._load(name, "r")
        return self._maps[name]

    def _check(self, layer: int) -> None:
        if layer not in self.layers:
            raise LayerError(f"layer {layer} is not in this set (layers {self.layers})")

    def layer_matrix(self, layer: int) -> tuple[np.ndarray, np.ndarray]:
        """((n_words, dim) read-only memmap, (n_sentences + 1,) int64 offsets)."""
        self._check(layer)
        return self._map(f"layer_{layer}.npy"), self.offsets

    def words(self, layer: int) -> list[np.ndarray]:
        """Per sentence, a (n_words_i, dim) memmap view."""
        m, o = self.layer_matrix(layer)
        return [m[o[i] : o[i + 1]] for i in range(self.n_sentences)]

    def sentence_vectors(self, layer: int, pooling: str = "mean") -> np.ndarray:
        """(n_sentences, dim) float32 sentence vectors.

        ``mean``/``max`` pool the word vectors; ``first``/``last`` are the hidden states of the
        first/last *token* (e.g. [CLS] and [SEP] for BERT, the last subword for GPT-2) when the
        encoder has token states, else the first/last word's vector.
        """
        if pooling not in SENTENCE_POOLINGS:
            raise ParameterError(
                f"sentence pooling {pooling!r} is not one of {', '.join(SENTENCE_POOLINGS)}"
            )
        m, o = self.layer_matrix(layer)
        if pooling in ("first", "last"):
            if self.meta.get("sentence_states"):
                return np.asarray(self._map(f"{pooling}_{layer}.npy"), dtype=np.float32)
            rows = o[:-1] if pooling == "first" else o[1:] - 1
            return np.asarray(m[rows], dtype=np.float32)
        out = np.empty((self.n_sentences, self.dim), dtype=np.float32)
        step = 4096  # sentences per block: bounded float32 copies
        for a in range(0, self.n_sentences, step):
            b = min(a + step, self.n_sentences)
            block = np.asarray(m[o[a] : o[b]], dtype=np.float32)
            starts = o[a:b] - o[a]
            if pooling == "mean":
                out[a:b] = np.add.reduceat(block, starts, axis=0) / np.diff(o[a : b + 1])[:, None]
            else:
                out[a:b] = np.maximum.reduceat(block, starts, axis=0)
        return out


def read_words(path: str | Path) -> list[list[str]]:
    """The syntactic word forms of every sentence of a CoNLL-U file (= ``Sentence.forms``).

    Read and validated by the one CoNLL-U reader (:func:`synrob.perturb.corpus.read_forms`:
    the same checks and ``FILE:LINE`` errors as every other command), without building
    Sentence objects.
    """
    from synrob.perturb.corpus import read_forms

    return read_forms(path)


def _resolve_source(source: str | Path) -> Path:
    from synrob.perturb.io.data import resolve_input

    paths = resolve_input(str(source))
    if len(paths) != 1 or str(paths[0]) == "-":
        raise ParameterError(f"{source}: encode_corpus needs exactly one CoNLL-U file")
    return paths[0]


def _chunks(offsets: np.ndarray, chunk_words: int) -> list[int]:
    """Start sentence of each chunk (about ``chunk_words`` words each), plus the end."""
    starts = [0]
    n = len(offsets) - 1
    while starts[-1] < n:
        a = starts[-1]
        b = int(np.searchsorted(offsets, offsets[a] + chunk_words, side="right")) - 1
        starts.append(min(n, max(b, a + 1)))
    return starts


def encode_corpus(
    encoder: str | Encoder,
    source: str | Path,
    *,
    layers: Sequence[int] | str = "all",
    pooling: str = "mean",
    device: str = "auto",
    dtype: str = "float16",
    params: Mapping[str, Any] | None = None,
    progress: Progress | None = None,
    encoders: LoadedEncoders | None = None,
    any_superset: bool = False,
) -> RepresentationSet:
    """Encode every sentence of a CoNLL-U file (syntactic words) with the named encoder, through the cache.

    ``encoder`` is an encoder spec (alias, registered name, path or hub name; see
    :func:`synrob.probe.encoders.resolve.resolve_encoder`) or an encoder instance (its own
    options then apply; ``pooling``/``device``/``params`` are ignored); ``layers`` is ``"all"``, a comma
    list or ints (negative from the end); ``pooling`` (mean|first|last) pools subwords into
    words; ``dtype`` (float16|float32) is the storage type. ``progress`` (a
    :class:`~synrob.probe.runtime.progress.Progress`) shows the sentences encoded, chunk by chunk, when
    the entry is not cached (chunks found done when resuming count at once).
    ``encoders`` (a :class:`LoadedEncoders` held over a loop of files) makes the files of one
    loop share one encoder instance, so its weights load once; the entries are the same.
    ``any_superset``: when the entry of these layers is absent but an entry of more layers
    (same encoder, corpus, pooling, dtype) is cached, return that one (it holds the requested
    layers with the same values: layer-only loading is exact), so a probe of one layer reuses
    an earlier sweep's vectors; the set's ``layers`` are then that entry's.
    """
    if dtype not in _cache.STORAGE_DTYPES:
        raise ParameterError(f"dtype must be one of {', '.join(_cache.STORAGE_DTYPES)}")
    path = _resolve_source(source)
    enc, name = (encoders.get if encoders is not None else _encoder)(encoder, params, pooling,
                                                                     device)
    pooling = str(enc.options.get("pooling", pooling))
    layer_list = resolve_layers(layers, enc.num_layers)
    key_meta = {
        "format": _cache.CACHE_FORMAT,
        "identity": enc.identity(),
        "layers": layer_list,
        "pooling": pooling,
        "corpus_sha256": _cache.corpus_hash(path),
        "dtype": dtype,
    }
    key = _cache.entry_key(key_meta)
    hit = _cached(key)
    if hit is None and any_superset:
        hit = _cached_superset(key_meta)
    if hit is not None:
        return hit
    return _encode(enc, name, path, key, key_meta, progress)


def _cached_superset(key_meta: Mapping[str, Any]) -> RepresentationSet | None:
    """A cached entry with ``key_meta``'s other fields and more layers, if there is one."""
    for key in _cache.superset_keys(key_meta):
        hit = _cached(key)
        if hit is not None:
            return hit
    return None


def _encoder(encoder: str | Encoder, params: Mapping[str, Any] | None, pooling: str,
             device: str) -> tuple[Encoder, str]:
    """(encoder instance, its name for the entry's metadata) for a spec or an instance."""
    from ..encoders.resolve import resolve_encoder

    if isinstance(encoder, Encoder):  # a configured (possibly loaded) instance
        return encoder, encoder.name
    enc = resolve_encoder(encoder, {**dict(params or {}), "pooling": pooling, "device": device})
    return enc, encoder


class LoadedEncoders:
    """The encoder instances of one loop over files, by ``(spec, params, pooling, device)``.

    :func:`encode_corpus` resolves a spec into a new instance, which loads its weights (a
    model, 400,000 GloVe vectors) at its first cache miss. A loop that encodes many files
    with one encoder passes one ``LoadedEncoders`` to every call, so the weights load once;
    they are released with this object. An instance passed in is used as it is.
    """

    def __init__(self, *, lm: str | None = None) -> None:
        """``lm``: a causal LM this process loads anyway (an experiment's runs score with it);
        an encoder of the same model shares its weights (:meth:`Encoder.share_lm`)."""
        self._held: dict[str, tuple[Encoder, str]] = {}
        self._lm = lm

    def get(self, encoder: str | Encoder, params: Mapping[str, Any] | None, pooling: str,
            device: str) -> tuple[Encoder, str]:
        """(instance, name), as ``encode_corpus`` would resolve them, made once per key."""
        if isinstance(encoder, Encoder):
            return _encoder(encoder, params, pooling, device)
        key = json.dumps([encoder, sorted((params or {}).items()), pooling, device], default=str)
        if key not in self._held:
            self._held[key] = _encoder(encoder, params, pooling, device)
            if self._lm:
                self._held[key][0].share_lm(self._lm, device)
        return self._held[key]


def _cached(key: str) -> RepresentationSet | None:
    """The finished cache entry ``key``, or None when it has to be encoded (again)."""
    hit = _cache.lookup(key)
    if hit is None:
        return None
    try:
        return RepresentationSet(hit)
    except SynrobError:
        if hit.exists():  # a damaged entry: say so
            raise
        # removed between the look-up and the mapping (`synrob cache clear` in another
        # process): encode it again
        return None


def bound_kernel_cache() -> None:
    """Bound the kernel caches of PyTorch's CPU matmuls to :data:`KERNEL_CACHE_ENTRIES`
    (``ONEDNN_PRIMITIVE_CACHE_CAPACITY``, ``LRU_CACHE_CAPACITY``) where the environment does not
    set them. Each is read once, at the process's first such kernel, so this takes effect when
    it runs before any bfloat16 matmul (:func:`encode_corpus` calls it before the encoder
    loads); later it changes nothing."""
    for var in ("ONEDNN_PRIMITIVE_CACHE_CAPACITY", "LRU_CACHE_CAPACITY"):
        os.environ.setdefault(var, str(KERNEL_CACHE_ENTRIES))


def _encode(enc: Encoder, name: str, path: Path, key: str, key_meta: dict[str, Any],
            progress: Progress | None) -> RepresentationSet:
    """Encode the corpus at ``path`` into cache entry ``key`` (resuming its finished chunks)."""
    sents = read_words(path)
    if not sents:
        raise SynrobError(f"{path}: no sentences to encode")
    offsets = np.zeros(len(sents) + 1, dtype=np.int64)
    np.cumsum([len(s) for s in sents], out=offsets[1:])
    bounds = _chunks(offsets, CHUNK_WORDS)
    layer_list = key_meta["layers"]
    bound_kernel_cache()
    enc.for_layers(layer_list)
    enc.load()
    info = {"encoder": name, "layers": layer_list, "corpus_name": str(path)}
    t0 = time.perf_counter()
    with _cache.EntryWriter(key, key_meta, layers=layer_list, offsets=offsets, dim=enc.dim,
                            dtype=key_meta["dtype"], chunking=bounds,
                            sentence_states=hasattr(enc, "tokenizer"), info=info) as writer:
        if writer.published is not None:  # another process encoded it while we waited
            return RepresentationSet(writer.published)
        counter = Counter(progress, f"encoding {path.name} ({Path(name).name})", len(sents))
        _encode_chunks(enc, writer, sents, bounds, layer_list, counter.advance)
        counter.close()
        meta = {
            **key_meta,
            "encoder": name,
            "corpus_name": str(path),
            "n_sentences": len(sents),
            "n_words": int(offsets[-1]),
            "dim": enc.dim,
            "seconds": round(time.perf_counter() - t0, 3),
            "versions": package_versions(("synrob-probe", "torch", "transformers",
                                          "tokenizers", "gensim", "numpy")),
        }
        final = writer.finish(meta)
        rs = RepresentationSet(final)  # mapped under the lock: a concurrent clear cannot race
    if _cache.boot_id() is not None:  # sync to disk off the critical path (see cache.py)
        threading.Thread(target=_cache.make_durable, args=(final,), daemon=True,
                         name=f"synrob-sync-{final.name}").start()
    return rs


def _encode_chunks(enc: Encoder, writer: _cache.EntryWriter, sents: list[list[str]],
                   bounds: list[int], layers: list[int],
                   progress: Callable[[int], None] | None) -> None:
    """Encode every chunk not yet done into ``writer``'s arrays, recording progress.

    The encoder writes each chunk straight into float16 memmaps of the cache files (no float32
    corpus copy, no pwrite). The progress record of finished chunks (and, without a boot id,
    their fdatasync; see cache.py) runs on an io thread, overlapping the next forward passes;
    the main thread never waits on it. On any failure, what is finished is flushed for the
    next run to resume.
    """
    with ThreadPoolExecutor(2) as io_thread:
        flushing: Future[None] | None = None
        owed = False
        try:
            for c in range(len(bounds) - 1):
                a, b = bounds[c], bounds[c + 1]
                if c not in writer.done:
                    oov = _encode_chunk(enc, writer, io_thread, sents, a, b, layers)
                    owed = writer.mark_done(c, oov) or owed
                    if owed and (flushing is None or flushing.done()):
                        if flushing is not None:
                            flushing.result()
                        flushing = io_thread.submit(writer.flush, dict(writer.done))
                        owed = False
                if progress is not None:
                    progress(b - a)
        except BaseException:
            if flushing is not None:  # keep what is finished for the next run to resume
                flushing.result()
            if owed:
                writer.flush()
            raise
        if flushing is not None:
            flushing.result()


def _encode_chunk(enc: Encoder, writer: _cache.EntryWriter, io_thread: ThreadPoolExecutor,
                  sents: list[list[str]], a: int, b: int, layers: list[int]) -> int:
    """Encode sentences ``a:b`` into their views of the cache files; the number of OOV words.

    The chunk's pages are faulted in on an io thread while the encoder tokenizes and runs its
    first forward passes, so its writes do not page-fault one 4 KiB page at a time. Only this
    chunk's pages are mapped: the views are dropped on return.
    """
    words, first, last = writer.chunk_views(a, b)
    faulting = io_thread.submit(_cache.prefault, [*words, *(first or []), *(last or [])])
    try:
        return enc.encode_into(sents[a:b], layers, words, first, last)
    finally:
        faulting.result()  # before the views are unmapped
