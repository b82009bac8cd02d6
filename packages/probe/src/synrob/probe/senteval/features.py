"""Sentence vectors of SentEval sentences for any encoder and layer, through the representation
cache.

A task file's sentences (space-tokenised) become a minimal CoNLL-U file, one word per token, the
first word the root and every other word attached to its predecessor (a valid tree; only the
forms matter to encoders). Its name is the hash of its content, so the same sentences share one
file and one cache entry (the cache keys on the file's content). :func:`sentence_vectors` then
pools the cached word vectors of one layer.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from synrob.perturb.errors import LayerError, ParameterError
from synrob.perturb.io.atomic import write_text_atomic

from ..runtime.carrier import carrier_blocks

__all__ = ["task_corpus", "conllu_text", "encoder_layers", "encode_task", "sentence_vectors",
           "parse_layer_spec"]


def conllu_text(sentences: Sequence[str]) -> str:
    """Minimal CoNLL-U for space-tokenised sentences (chain trees, ``_`` elsewhere): the carrier
    CoNLL-U of :mod:`synrob.probe.runtime.carrier`, sentence ids 1, 2, ... An empty sentence is a
    ParameterError."""
    return "".join(carrier_blocks(_numbered_words(sentences), tree="chain", upos="_"))


def _numbered_words(sentences: Sequence[str]) -> Iterator[tuple[int, list[str]]]:
    for i, s in enumerate(sentences, 1):
        words = s.split()
        if not words:
            raise ParameterError(f"sentence {i} is empty")
        yield i, words


def task_corpus(sentences: Sequence[str], dest: str | os.PathLike[str]) -> Path:
    """Write (once) the CoNLL-U of ``sentences`` under ``dest``; its name is the content hash."""
    text = conllu_text(sentences)
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]
    d = Path(dest)
    path = d / f"senteval-{digest}.conllu"
    if path.exists():
        return path
    return write_text_atomic(path, text)


def parse_layer_spec(spec: str | Sequence[Any], encoders: Sequence[str],
                     num_layers: dict[str, int]) -> dict[str, list[int]]:
    """Layers per encoder from a comma list.

    Items before any ``ENC:`` prefix apply to every encoder not named by a prefix (layers an
    encoder lacks are skipped for it; negative numbers count from its end); ``ENC:N`` starts the
    list of encoder ``ENC``, continued by the bare numbers after it up to the next prefix. ``all``
    is every layer. So ``0,2,4,6`` gives MiniLM layers 0, 2, 4, 6 and GloVe layer 0, and
    ``minilm:1,3,glove-6b-50d:0`` names each encoder's layers. An encoder left with no layer, or
    a named layer out of range, is a ParameterError.
    """
    items = spec if isinstance(spec, (list, tuple)) else str(spec).split(",")
    general: list[str] = []
    named: dict[str, list[str]] = {}
    current: list[str] = general
    for raw in (str(i).strip() for i in items):
        if not raw:
            continue
        enc, sep, rest = raw.rpartition(":")
        if sep:
            if enc not in encoders:
                raise ParameterError(f"layers: {enc!r} is not one of the encoders "
                                     f"({', '.join(encoders)})")
            current = named.setdefault(enc, [])
            raw = rest.strip()
        current.append(raw)
    out: dict[str, list[int]] = {}
    for enc in encoders:
        n = num_layers[enc]
        strict = enc in named
        chosen: list[int] = []
        for item in named.get(enc, general):
            if item == "all":
                cand = list(range(n))
            else:
                try:
                    k = int(item)
                except ValueError:
                    raise LayerError(f"layers: {item!r} is not a layer number or 'all'"
                                         ) from None
                j = k + n if k < 0 else k
                if not 0 <= j < n:
                    if strict:
                        raise ParameterError(f"layers: {enc} has layers 0..{n - 1}, not {k}")
                    continue
                cand = [j]
            chosen.extend(c for c in cand if c not in chosen)
        if not chosen:
            raise ParameterError(f"layers: no layer left for {enc} (it has layers 0..{n - 1})")
        out[enc] = sorted(chosen)
    return out


def encoder_layers(encoder: str) -> int:
    """How many layers ``encoder`` offers (no weights loaded)."""
    from ..encoders.resolve import resolve_encoder

    return resolve_encoder(encoder, {}).num_layers


def encode_task(encoder: Any, corpus: str | os.PathLike[str], layers: Sequence[int], *,
                device: str = "auto", progress: Any = None) -> Any:
    """The cached :class:`~synrob.probe.representations.encoding.RepresentationSet` of a task corpus
    (encoded now when absent; ``layers`` must be the same list every time to hit the cache).
    ``encoder`` is a spec or an :class:`~synrob.probe.encoders.base.Encoder` instance (reuse one
    instance over many corpora so its weights load once)."""
    from ..representations.encoding import encode_corpus

    return encode_corpus(encoder, corpus, layers=list(layers), device=device, progress=progress)


def sentence_vectors(encoder: str, corpus: str | os.PathLike[str], layers: Sequence[int],
                     layer: int, pooling: str = "mean", device: str = "auto") -> np.ndarray:
    """(n_sentences, dim) float32 pooled vectors of ``layer`` (through the cache)."""
    reps = encode_task(encoder, corpus, layers, device=device)
    return reps.sentence_vectors(layer, pooling=pooling)
