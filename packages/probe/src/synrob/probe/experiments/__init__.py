"""Experiments: registered grids of probing runs with resumable results and reports.

:data:`EXPERIMENTS` lists the built-ins as ``(module, class)``; they are registered through the
``synrob_register_experiments`` hook by :mod:`synrob.probe.builtins`.
"""

from __future__ import annotations

EXPERIMENTS: tuple[tuple[str, str], ...] = (
    ("robustness", "RobustnessExperiment"),
    ("local_structure", "LocalStructure"),
    ("jabberwocky", "JabberwockyExperiment"),
    ("senteval", "SentEvalExperiment"),
)
