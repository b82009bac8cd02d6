"""The SentEval probing tasks (Conneau et al. 2018) built from a UD treebank, and their file
format. Light: no torch; the classifiers live in the probe layer, which this one never imports."""

from __future__ import annotations

from .build import (
    BuildConfig,
    SentEvalError,
    SuiteBuilder,
    SuiteResult,
    build_suite,
    pairs_file,
    read_pairs,
    read_suite,
    suite_stats,
    write_suite,
)
from .format import SPLITS, TASK_FILES, SentEvalExample, read_task_file, write_task_file

__all__ = [
    "SPLITS",
    "TASK_FILES",
    "SentEvalExample",
    "read_task_file",
    "write_task_file",
    "BuildConfig",
    "SentEvalError",
    "SuiteBuilder",
    "SuiteResult",
    "build_suite",
    "pairs_file",
    "read_pairs",
    "read_suite",
    "suite_stats",
    "write_suite",
]
