"""Encoders: static vectors, Hugging Face transformers and control baselines.

Import the concrete classes from their modules (:mod:`.static`, :mod:`.transformer`,
:mod:`.control_encoders`); this package only re-exports the light interface.
"""

from __future__ import annotations

from .base import EncodedBatch, Encoder, resolve_layers

__all__ = ["Encoder", "EncodedBatch", "resolve_layers", "ENCODERS"]

#: Built-in encoder classes as (module, class name); loaded by synrob.probe.builtins.
ENCODERS: tuple[tuple[str, str], ...] = (
    ("static", "StaticEncoder"),
    ("transformer", "TransformerEncoder"),
    ("control_encoders", "FastPosEncoder"),
    ("control_encoders", "RandomInitEncoder"),
)
