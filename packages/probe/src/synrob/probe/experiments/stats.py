"""Numbers over an experiment's results shared by the studies: the mean of the defined values."""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

import numpy as np

__all__ = ["finite_mean"]


def finite_mean(values: np.ndarray | Iterable[float | None]) -> float:
    """The mean of the finite values (None, NaN and ±inf left out); NaN when there is none.

    A NumPy array (any shape) is averaged by NumPy (pairwise summation, as ``ndarray.mean``);
    any other iterable of numbers is summed left to right in Python, then divided by the count.
    Both ways are kept so that every study's numbers stay the ones it has always reported.
    """
    if isinstance(values, np.ndarray):
        finite = np.asarray(values, float)[np.isfinite(values)]
        return float(finite.mean()) if finite.size else float("nan")
    vals: list[Any] = [v for v in values if v is not None and math.isfinite(v)]
    return sum(vals) / len(vals) if vals else math.nan
