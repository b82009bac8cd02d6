"""The encoder interface: words in, per-layer word vectors out.

An encoder maps a batch of sentences (lists of syntactic words) to one array per sentence of
shape ``(n_layers, n_words, dim)``: every word gets exactly one vector per requested layer.
Encoders are registered components (kind ``"encoder"``); heavy resources (model weights,
vector files) load lazily in :meth:`Encoder.load`, and :meth:`Encoder.identity` never loads
them, so a cached corpus is served without touching the model.
"""

from __future__ import annotations

import hashlib
import os
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
from synrob.perturb.errors import LayerError
from synrob.perturb.params import Param, describe_component, parse_params

__all__ = [
    "Encoder",
    "EncodedBatch",
    "resolve_layers",
    "file_fingerprint",
]


@dataclass
class EncodedBatch:
    """Encoder output for a batch of sentences, flattened over words.

    ``words``: (n_layers, total_words, dim) float32, sentence ``i`` at rows
    ``offsets[i]:offsets[i + 1]``; ``offsets``: (n_sentences + 1,) int64; ``first``/``last``:
    (n_layers, n_sentences, dim) hidden states of each sentence's first/last *token* (e.g. [CLS],
    </s>) when the encoder has token-level states, else None; ``oov``: number of words that got
    no vector (zero vector written).
    """

    words: np.ndarray
    offsets: np.ndarray
    first: np.ndarray | None = None
    last: np.ndarray | None = None
    oov: int = 0

    def split(self) -> list[np.ndarray]:
        """Per-sentence views, each (n_layers, n_words_i, dim)."""
        o = self.offsets
        return [self.words[:, o[i] : o[i + 1]] for i in range(len(o) - 1)]


def word_offsets(batch: Sequence[Sequence[str]]) -> np.ndarray:
    """(n_sentences + 1,) int64 cumulative word counts."""
    out = np.zeros(len(batch) + 1, dtype=np.int64)
    np.cumsum([len(s) for s in batch], out=out[1:])
    return out


class Encoder(ABC):
    """Base class of every encoder.

    Subclasses set ``name``, ``params`` and implement :attr:`num_layers`, :attr:`dim`,
    :meth:`identity`, :meth:`load` and :meth:`encode_flat` (or :meth:`encode`). Options that do
    not change the vectors (device, batch size) are listed in ``runtime_params`` and left out of
    the identity, so they do not split the cache.
    """

    name: ClassVar[str]
    version: ClassVar[str] = "1.0"
    summary: ClassVar[str] = ""
    paper: ClassVar[str] = ""
    params: ClassVar[tuple[Param, ...]] = ()
    runtime_params: ClassVar[frozenset[str]] = frozenset()
    #: True when word vectors only see the left context (decoder-only models).
    causal: bool = False

    def __init__(self, **params: Any) -> None:
        self.options: dict[str, Any] = parse_params(self.params, params, f"encoder {self.name!r}")
        self._loaded = False

    # ------------------------------------------------------------------ identity
    @property
    @abstractmethod
    def num_layers(self) -> int:
        """How many layers can be asked for (transformers: hidden states incl. embeddings)."""

    @property
    @abstractmethod
    def dim(self) -> int:
        """Size of one word vector."""

    def resource_identity(self) -> dict[str, Any]:
        """What identifies the underlying resource (file fingerprint, model revision)."""
        return {}

    def identity(self) -> dict[str, Any]:
        """JSON-able identity of this encoder's output (no weights are loaded)."""
        opts = {k: v for k, v in self.options.items() if k not in self.runtime_params}
        return {
            "encoder": self.name,
            "version": self.version,
            "options": opts,
            "resource": self.resource_identity(),
        }

    # ------------------------------------------------------------------ work
    def load(self) -> None:
        """Load weights/vectors once. Idempotent."""
        if not self._loaded:
            self._load()
            self._loaded = True

    def _load(self) -> None:  # noqa: B027 - optional hook
        """Subclass hook for :meth:`load`."""

    def for_layers(self, layers: Sequence[int]) -> None:  # noqa: B027 - optional hook
        """Say which layers the next encodings ask for, before :meth:`load` (a transformer
        then loads only the blocks they need); encoders with nothing to save ignore it."""

    def share_lm(self, spec: str, device: str) -> None:  # noqa: B027 - optional hook
        """Say, before :meth:`load`, that this process loads the causal LM ``spec`` on
        ``device`` anyway: a transformer encoder of the same model then uses the LM's blocks
        instead of reading its own; other encoders ignore it."""

    def encode(self, batch: Sequence[Sequence[str]], layers: Sequence[int]) -> list[np.ndarray]:
        """One (n_layers, n_words_i, dim) float32 array per sentence of ``batch``."""
        return self.encode_flat(batch, layers).split()

    @abstractmethod
    def encode_flat(self, batch: Sequence[Sequence[str]], layers: Sequence[int]) -> EncodedBatch:
        """Encode ``batch`` (lists of words); rows of ``words`` follow the sentence order."""

    def encode_into(
        self,
        batch: Sequence[Sequence[str]],
        layers: Sequence[int],
        words: Sequence[np.ndarray],
        first: Sequence[np.ndarray] | None = None,
        last: Sequence[np.ndarray] | None = None,
    ) -> int:
        """Encode ``batch`` straight into caller-owned arrays; returns the OOV word count.

        ``words[li]``: (total_words, dim) array of layer ``layers[li]`` (any float dtype, e.g. a
        float16 memmap of a cache file), filled row by row in sentence order; ``first[li]`` /
        ``last[li]``: (n_sentences, dim) arrays for the first/last token states, filled when
        the encoder has them. Values are cast to the arrays' dtype. The default goes through
        :meth:`encode_flat`; encoders override it to skip the float32 intermediate.
        """
        out = self.encode_flat(batch, layers)
        for li in range(len(words)):
            words[li][...] = out.words[li]
            if first is not None and out.first is not None:
                first[li][...] = out.first[li]
            if last is not None and out.last is not None:
                last[li][...] = out.last[li]
        return int(out.oov)

    @classmethod
    def describe(cls) -> dict[str, Any]:
        return describe_component(cls)


def resolve_layers(spec: Sequence[int] | str | int, num_layers: int) -> list[int]:
    """Sorted unique non-negative layer indices.

    ``spec`` is ``"all"``, an int, a comma list such as ``"0,3,-1"`` or a sequence of ints;
    negative indices count from the end (``-1`` is the last layer of ``num_layers``).
    """
    if isinstance(spec, str):
        text = spec.strip().lower()
        if text == "all":
            return list(range(num_layers))
        try:
            items = [int(x) for x in text.split(",") if x.strip()]
        except ValueError:
            raise LayerError(
                f"layers must be 'all' or comma-separated integers, got {spec!r}"
            ) from None
    elif isinstance(spec, int):
        items = [spec]
    else:
        items = [int(x) for x in spec]
    if not items:
        raise LayerError("no layer requested")
    out = set()
    for i in items:
        j = i + num_layers if i < 0 else i
        if not 0 <= j < num_layers:
            raise LayerError(
                f"layer {i} out of range: this encoder has layers 0..{num_layers - 1}"
            )
        out.add(j)
    return sorted(out)


_CHUNK = 1 << 20


def file_fingerprint(path: str | os.PathLike[str]) -> str:
    """Cheap content fingerprint: size plus SHA-256 of the first and last MiB.

    Used to key vector files and model weights (several GB) without reading them whole.
    """
    p = Path(path)
    size = p.stat().st_size
    h = hashlib.sha256(str(size).encode())
    with open(p, "rb") as fh:
        h.update(fh.read(_CHUNK))
        if size > 2 * _CHUNK:
            fh.seek(size - _CHUNK)
            h.update(fh.read(_CHUNK))
        else:
            h.update(fh.read())
    return h.hexdigest()[:32]


def tree_fingerprint(root: Path, patterns: Sequence[str]) -> dict[str, str]:
    """Fingerprints of the files of ``root`` matching ``patterns`` (sorted by name)."""
    out: dict[str, str] = {}
    for pat in patterns:
        for f in sorted(root.glob(pat)):
            if f.is_file():
                out[f.name] = file_fingerprint(f)
    return out
