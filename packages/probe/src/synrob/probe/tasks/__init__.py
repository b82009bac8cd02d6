"""Probing tasks: gold targets from CoNLL-U syntactic words, and the metrics that score them."""

from __future__ import annotations

from .base import EXCLUDED, KINDS, GoldCorpus, Task, load_gold
from .classification import (
    CorpusTreeDepthTask,
    DeprelTask,
    FeatsTask,
    PosTask,
    RootTask,
    WordLabelTask,
)
from .structural import DepthTask, DistanceTask, ParseTask

#: Built-in task classes, registered by :mod:`synrob.probe.builtins`.
TASKS: tuple[type[Task], ...] = (DistanceTask, ParseTask, DepthTask, PosTask, DeprelTask,
                                 FeatsTask, RootTask, CorpusTreeDepthTask)

__all__ = ["KINDS", "EXCLUDED", "GoldCorpus", "Task", "load_gold", "TASKS", "DistanceTask",
           "ParseTask", "DepthTask", "WordLabelTask", "PosTask", "DeprelTask", "FeatsTask",
           "RootTask", "CorpusTreeDepthTask"]
