"""Probing tasks: gold targets from CoNLL-U syntactic words, and the metrics that score them."""

from __future__ import annotations

from .base import KINDS, GoldCorpus, Task, load_gold
from .classification import CorpusTreeDepthTask, PosTask, RootTask
from .structural import DepthTask, DistanceTask, ParseTask

#: Built-in task classes, registered by :mod:`synrob.probe.builtins`.
TASKS: tuple[type[Task], ...] = (DistanceTask, ParseTask, DepthTask, PosTask, RootTask,
                                 CorpusTreeDepthTask)

__all__ = ["KINDS", "GoldCorpus", "Task", "load_gold", "TASKS", "DistanceTask", "ParseTask",
           "DepthTask", "PosTask", "RootTask", "CorpusTreeDepthTask"]
