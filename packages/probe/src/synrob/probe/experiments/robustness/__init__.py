"""``robustness``: worst-case fragility of probed syntax (La Malfa, Wicker & Kwiatkowska 2022,
"Emergent Linguistic Structures in Neural Networks are Fragile", Table 1, Algorithms 1 and 2).

* :mod:`.experiment` - :class:`RobustnessExperiment`: parameters, presets, the grid and its runs;
* :mod:`.stats` - per-sentence probe metrics, probe losses and worst-case aggregation;
* :mod:`.report` - the Table-1-shaped ``report.md`` and the drop-against-tau plot.
"""

from .experiment import RobustnessExperiment

__all__ = ["RobustnessExperiment"]
