"""Models loaded in this process, shared by every user of the same weights.

A process that scores pairs with a causal LM and encodes text with the same model (the
``amnesic`` experiment, ``jabberwocky`` with its behaviour LM) would otherwise read the
checkpoint twice: once for the LM with its head, once for the encoder's blocks. The LM loader
(:func:`synrob.perturb.lm.loaded.load_lm`) offers its base model here (the embeddings and every
block: what ``AutoModel`` loads, inside the head model), and so does every transformer encoder
for the blocks it loaded; an encoder about to load weights first asks for a model already
loaded from the same files, in the same dtype, on the same device, with the same attention
kernel, holding at least the blocks it needs. Sharing changes no number: the modules and
their weights are the ones a separate load would make.

Only plainly placed models are shared (no device map, offload or quantization), and only by
weak reference: a model is released when its last user lets it go, as without sharing.
"""

from __future__ import annotations

import threading
import weakref
from dataclasses import dataclass
from typing import Any

__all__ = ["ModelKey", "offer_model", "shared_model", "forget_models"]


@dataclass(frozen=True)
class ModelKey:
    """What two loads must agree on to give the same modules: the directory the weights are
    read from (a GGUF model's dequantised copy), the dtype and device (resolved), the attention
    kernel asked of transformers (``default``: the model's), and ``trust_remote_code``."""

    location: str
    dtype: str
    device: str
    attention: str
    trust_remote_code: bool


_MODELS: dict[ModelKey, list[tuple[weakref.ref[Any], int]]] = {}
_LOCK = threading.Lock()


def offer_model(key: ModelKey, model: Any, blocks: int) -> None:
    """Offer ``model`` (a base model: embeddings and its first ``blocks`` blocks) to later
    loads of ``key``."""
    with _LOCK:
        live = [(ref, n) for ref, n in _MODELS.get(key, []) if ref() is not None]
        _MODELS[key] = [*live, (weakref.ref(model), blocks)]


def shared_model(key: ModelKey, blocks: int) -> tuple[Any, int] | None:
    """``(model, its blocks)``: a loaded model of ``key`` with at least ``blocks`` blocks (the
    one with fewest), or None when this process has none."""
    with _LOCK:
        found = [(m, n) for ref, n in _MODELS.get(key, []) if (m := ref()) is not None
                 and n >= blocks]
    return min(found, key=lambda pair: pair[1]) if found else None


def forget_models() -> None:
    """Offer nothing any more (tests: a load that must read its weights)."""
    with _LOCK:
        _MODELS.clear()
