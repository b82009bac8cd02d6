"""Seconds this process spent training probes, so a run can say how much of it was training.

:func:`synrob.probe.training.loop.fit`, :func:`~synrob.probe.training.loop.fit_layers` and the SentEval
classifiers' grid (:func:`synrob.probe.senteval.classifiers.fit_select`) add their wall time to
:data:`TRAINING`; the experiment backends read it before and after each run and record
the difference as the run's ``train_seconds`` (docs/experiments.md: where a run's time goes).
No heavy imports here: the driver reads it without torch.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["TRAINING", "Clock", "timed"]


class Clock:
    """A running total of seconds (per process)."""

    def __init__(self) -> None:
        self.seconds = 0.0

    def add(self, seconds: float) -> None:
        self.seconds += seconds


#: Seconds spent in probe training (``fit``, ``fit_layers``, ``fit_select``) in this process.
TRAINING = Clock()


@contextmanager
def timed(clock: Clock) -> Iterator[None]:
    """Add the wall time of the ``with`` block to ``clock``."""
    t0 = time.perf_counter()
    try:
        yield
    finally:
        clock.add(time.perf_counter() - t0)
