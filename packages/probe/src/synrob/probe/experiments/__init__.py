"""Experiments: registered grids of probing runs with resumable results and reports.

The shared framework is the flat modules here: :mod:`.base` (the protocol), :mod:`.runner`
(resumable execution), :mod:`.backends` (process pool, ray, dask), :mod:`.config` (config
files), :mod:`.data` (derived files and content addresses), :mod:`.stats` (means over results),
:mod:`.intervals` (bootstrap intervals shared by every run, paired drops and leads) and
:mod:`.report` (tables, CSV, plots). Each built-in study is a sub-package with the same
modules: ``experiment`` (the :class:`~.base.Experiment` class: parameters, presets, the grid and
its runs), ``stats`` (numbers computed from results), ``report`` (Markdown and plots) and, where
the study needs them, ``data`` (its derived data files) and ``lm`` (language-model scoring).

:data:`EXPERIMENTS` lists the built-ins as ``(module, class)``; they are registered through the
``synrob_register_experiments`` hook by :mod:`synrob.probe.builtins`.
"""

from __future__ import annotations

EXPERIMENTS: tuple[tuple[str, str], ...] = (
    ("robustness.experiment", "RobustnessExperiment"),
    ("local_structure.experiment", "LocalStructure"),
    ("jabberwocky.experiment", "JabberwockyExperiment"),
    ("senteval.experiment", "SentEvalExperiment"),
    ("amnesic.experiment", "AmnesicExperiment"),
)
