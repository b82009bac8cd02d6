"""Word-vector normalisation fitted on a probe's training set (massive activations).

Causal LMs (SmolLM2, GPT-2, LLaMA-style models) carry *massive activations* (Sun et al. 2024,
"Massive Activations in Large Language Models"): a few words' hidden states, above all the
attention sink's, have norms hundreds of times the median, with single dimensions above 1,000.
A probe's loss is then dominated by those words: Hewitt & Manning's L1 distance loss and a
classifier's cross-entropy both scale with the vectors, so a structural probe on SmolLM2 scored a
random tree's UUAS and a POS probe stopped after one epoch (issue 27). Scaling every word vector
to one fixed norm removes the outliers' weight and keeps each vector's direction.

The ``normalize`` training parameter of every probe (so it is part of every run's key):

* ``auto`` (default): :func:`check_massive` on the training vectors of the layer: when some
  training words' norms exceed :data:`MASSIVE_RATIO` times the median and those words are a few,
  at most :data:`MASSIVE_SHARE` of the training words (massive activations are rare by nature:
  at most 0.7 % of EWT's training words in any SmolLM2 layer with its BOS, one word per
  sentence, about 6 %, when the first word is the sink), every word vector (train, dev and test
  alike) is scaled to the training median norm; otherwise the vectors are left as they are, bit
  for bit (MiniLM, GloVe and the baselines' vectors: their documented figures are unchanged).
  Many words over the line are no massive activation but two populations of norms, such as
  ``fast+pos`` on Turkish, where English GloVe knows few words and 28 % of the vectors are
  GloVe + position while the rest are the small position vectors alone: scaling them all to one
  norm would erase that difference, so ``auto`` leaves them;
* ``unit``: always scaled to the training median norm;
* ``standardize``: every dimension shifted and scaled by its training mean and standard
  deviation (a dimension constant in training is only shifted). Massive activations sit in a
  few dimensions, whose large training spread then scales them down for every word. Unlike
  ``unit`` it is one affine map for all words, so it keeps what an affine concept eraser
  guarantees (``synrob erase``: the training class means stay equal after any affine map;
  rescaling each vector by its own norm would let erased information back in);
* ``none``: never.

The fitted :class:`WordNorm` travels with the trained module (:func:`attach`, :func:`of`), is
saved in ``probe.json`` (``word_norm``) and applied again when the probe is loaded.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from .inputs import Features

__all__ = ["MASSIVE_RATIO", "MASSIVE_SHARE", "NORMALIZE", "AFFINE", "NORMALIZE_HELP", "WordNorm",
           "fit_norm", "check_massive", "attach", "of", "inputs_for"]

#: A word whose norm exceeds this multiple of the training median has a massive activation...
MASSIVE_RATIO = 10.0
#: ...when such words are at most this share of the training words.
MASSIVE_SHARE = 0.1
#: Values of the ``normalize`` probe parameter.
NORMALIZE = ("auto", "unit", "standardize", "none")
#: The values that are one affine map of every word vector (keep an affine eraser's guarantee).
AFFINE = ("standardize", "none")
NORMALIZE_HELP = (f"word vectors before the probe: auto (scaled to the training median norm "
                  f"when some training words, at most {MASSIVE_SHARE:.0%} of them, have norms "
                  f"over {MASSIVE_RATIO:g}x the median, i.e. massive activations; else "
                  f"unchanged), unit (always scaled), standardize (each dimension to training "
                  f"mean 0, sd 1: affine), none")
_ATTR = "synrob_word_norm"


@dataclass(frozen=True)
class WordNorm:
    """A fitted normalisation: ``method`` ``unit`` (each vector to norm ``scale``),
    ``standardize`` (``(x - mean) / std`` per dimension, both (dim,)) or ``none``, with the
    training statistics it was chosen on."""

    method: str
    scale: float
    median_norm: float
    max_norm: float
    massive_words: int
    n_words: int
    policy: str = "auto"
    mean: tuple[float, ...] = ()
    std: tuple[float, ...] = ()

    @property
    def ratio(self) -> float:
        """Largest training word norm over the median."""
        return self.max_norm / self.median_norm if self.median_norm > 0 else float("inf")

    @property
    def massive(self) -> bool:
        """Some, but at most :data:`MASSIVE_SHARE` of the training words are over the line."""
        return 0 < self.massive_words <= MASSIVE_SHARE * self.n_words

    def apply(self, feats: Features) -> Features:
        """``feats`` with every row scaled to norm :attr:`scale` (``unit``; a zero vector stays
        zero) or unchanged (``none``). Shapes as ``feats``: (total_words, dim)."""
        from .inputs import Features

        if self.method == "none":
            return feats
        if self.method == "standardize":
            mean = np.asarray(self.mean, dtype=np.float32)
            std = np.asarray(self.std, dtype=np.float32)
            out = (np.asarray(feats.matrix, dtype=np.float32) - mean) / std
            return Features(out.astype(np.float32, copy=False), feats.offsets)
        m = np.asarray(feats.matrix, dtype=np.float32)
        norms = row_norms(m)[:, None]
        scaled = m * (np.float32(self.scale) / np.where(norms > 0, norms, 1.0).astype(np.float32))
        return Features(scaled, feats.offsets)

    def as_dict(self) -> dict[str, Any]:
        d = asdict(self)
        if self.method != "standardize":  # probe.json as before for the other methods
            del d["mean"], d["std"]
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> WordNorm:
        kw = {k: d[k] for k in cls.__dataclass_fields__ if k in d}
        for k in ("mean", "std"):
            if k in kw:
                kw[k] = tuple(float(v) for v in kw[k])
        return cls(**kw)

    def describe(self) -> str:
        """One phrase for the warning line: what was found and what synrob did."""
        found = (f"{self.massive_words} of {self.n_words} training words have a norm over "
                 f"{MASSIVE_RATIO:g}x the median {self.median_norm:.4g} (largest "
                 f"{self.max_norm:.4g}, {self.ratio:.0f}x)")
        did = (f"every word vector scaled to norm {self.scale:.4g} (normalize={self.policy})"
               if self.method == "unit" else
               f"every dimension standardised on the training words (normalize={self.policy})"
               if self.method == "standardize" else
               f"vectors left as they are (normalize={self.policy}); probes may fail")
        return f"massive activations: {found}; {did}"


def check_massive(feats: Features) -> tuple[float, float, int]:
    """``(median norm, max norm, words over MASSIVE_RATIO x the median)`` of ``feats``' rows."""
    norms = row_norms(feats.matrix)
    if not norms.size:
        return 0.0, 0.0, 0
    median = float(np.median(norms))
    return median, float(norms.max()), int((norms > MASSIVE_RATIO * median).sum())


def row_norms(matrix: np.ndarray, chunk: int = 8192) -> np.ndarray:
    """``np.linalg.norm(matrix, axis=1)`` of the float32 rows, ``chunk`` rows at a time: the
    same values (each row's own sum), without a float32 square of the whole matrix (300 MB
    for MiniLM's EWT train layer). Shape: (n_rows,) float32."""
    out = np.empty(matrix.shape[0], dtype=np.float32)
    for a in range(0, matrix.shape[0], chunk):
        out[a:a + chunk] = np.linalg.norm(np.asarray(matrix[a:a + chunk], dtype=np.float32),
                                          axis=1)
    return out


def fit_norm(feats: Features, policy: str = "auto") -> WordNorm:
    """The normalisation ``policy`` (:data:`NORMALIZE`) chooses for training vectors ``feats``."""
    median, largest, n_over = check_massive(feats)
    n = int(feats.matrix.shape[0])
    if policy == "standardize":
        mean, std = _moments(feats)
        return WordNorm("standardize", 1.0, median, largest, n_over, n, policy,
                        tuple(mean.tolist()), tuple(std.tolist()))
    massive = 0 < n_over <= MASSIVE_SHARE * n
    unit = policy == "unit" or (policy == "auto" and massive)
    return WordNorm("unit" if unit and median > 0 else "none", median if unit else 1.0,
                    median, largest, n_over, n, policy)


def _moments(feats: Features, chunk: int = 65536) -> tuple[np.ndarray, np.ndarray]:
    """Per-dimension mean and standard deviation of ``feats``' rows, in float64 by chunks
    (dim,) each; a standard deviation of 0 (a constant dimension) becomes 1."""
    m = feats.matrix
    n, dim = int(m.shape[0]), int(m.shape[1])
    total = np.zeros(dim)
    for a in range(0, n, chunk):
        total += np.asarray(m[a:a + chunk], dtype=np.float64).sum(axis=0)
    mean = total / max(n, 1)
    sq = np.zeros(dim)
    for a in range(0, n, chunk):
        sq += np.square(np.asarray(m[a:a + chunk], dtype=np.float64) - mean).sum(axis=0)
    std = np.sqrt(sq / max(n, 1))
    return mean, np.where(std > 0, std, 1.0)


def attach(module: Any, norm: WordNorm) -> Any:
    """Record on a trained module the normalisation its inputs need; returns the module."""
    setattr(module, _ATTR, norm)
    return module


def of(module: Any) -> WordNorm | None:
    """The normalisation attached to ``module`` (None: its inputs are used as they are)."""
    return getattr(module, _ATTR, None)


def inputs_for(module: Any, feats: Features) -> Features:
    """``feats`` as ``module`` was trained to read them."""
    norm = of(module)
    return feats if norm is None else norm.apply(feats)
