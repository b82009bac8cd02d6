"""``senteval``: the ten SentEval probing tasks (Conneau et al. 2018, "What you can cram into a
single $&!#* vector", Table 2).

* :mod:`.experiment` - :class:`SentEvalExperiment`: parameters, presets, the grid and its runs;
* :mod:`.stats` - accuracies per (row, task), row order and task sizes from the results;
* :mod:`.report` - the Table-2-shaped ``report.md`` and the accuracy-per-layer plot.

Task construction and the classifiers are in :mod:`synrob.probe.senteval`.
"""

from .experiment import SentEvalExperiment

__all__ = ["SentEvalExperiment"]
