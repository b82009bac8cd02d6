"""What a probe reads: a corpus's word vectors (:class:`Features`) and one batch of them
(:class:`Batch`).

Representations travel as one float32 matrix ``(total_words, dim)`` plus sentence offsets
``(n_sentences + 1,)``; a batch holds only indices into a table made from it ``(b, max_len)``
(padding points to an extra zero row), so words are never copied per epoch
(:mod:`synrob.probe.training.batches` makes the tables and batches).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import torch

__all__ = ["Features", "Batch"]


@dataclass
class Features:
    """Word vectors of a corpus: ``matrix`` (total_words, dim) and ``offsets`` (n_sentences + 1,)."""

    matrix: np.ndarray
    offsets: np.ndarray

    @property
    def n_sentences(self) -> int:
        return int(self.offsets.size - 1)

    @property
    def dim(self) -> int:
        return int(self.matrix.shape[1])

    @property
    def lengths(self) -> np.ndarray:
        return np.diff(self.offsets)

    def head(self, n: int) -> Features:
        """The first ``n`` sentences (itself when it has no more): views, no copy."""
        if n >= self.n_sentences:
            return self
        return Features(self.matrix[: int(self.offsets[n])], self.offsets[: n + 1])

    def sentence(self, i: int) -> np.ndarray:
        """Word vectors of sentence ``i``. Shape: (n_i, dim)."""
        return self.matrix[self.offsets[i]:self.offsets[i + 1]]

    def pooled(self, how: str = "mean") -> np.ndarray:
        """One vector per sentence (mean or max over its words). Shape: (n_sentences, dim)."""
        starts = self.offsets[:-1]
        if how == "max":
            return np.maximum.reduceat(self.matrix, starts, axis=0).astype(np.float32)
        sums = np.add.reduceat(self.matrix.astype(np.float64), starts, axis=0)
        return (sums / self.lengths[:, None]).astype(np.float32)

    @classmethod
    def from_sentences(cls, sentences: Sequence[np.ndarray]) -> Features:
        """From one (n_i, dim) array per sentence."""
        offsets = np.zeros(len(sentences) + 1, dtype=np.int64)
        offsets[1:] = np.cumsum([len(s) for s in sentences])
        matrix = np.concatenate([np.asarray(s, dtype=np.float32) for s in sentences], axis=0)
        return cls(np.ascontiguousarray(matrix, dtype=np.float32), offsets)


@dataclass
class Batch:
    """Sentences ``ids`` (b,) of one length bucket.

    ``index`` (b, L) rows of the table (padding = the zero row), ``mask`` (b, L) bool,
    ``lengths`` (b,), ``y`` the padded targets: distance (b, L, L) float, depth (b, L) float,
    tag (b, L) long with -100 padding, select / sentence (b,) long. For sentence-level tasks
    ``index`` is (b,) rows of the pooled table and ``mask`` is None.
    """

    ids: np.ndarray
    index: torch.Tensor
    mask: torch.Tensor | None
    lengths: torch.Tensor
    y: torch.Tensor | None
    heads: list[np.ndarray] = field(default_factory=list)
