"""Concept erasure: affine erasers fitted on a probing task's labels (LEACE and its random
control), applied to cached representations or inside a model's forward pass."""

from .eraser import Eraser

__all__ = ["Eraser"]
