"""``jabberwocky``: Jabberwocky probing (Hall Maudslay & Cotterell 2021, "Do Syntactic Probes
Probe Syntax?", Figure 3): syntactic probes on clean vs pseudoword test sentences.

* :mod:`.experiment` - :class:`JabberwockyExperiment`: parameters, presets, the grid and its runs;
* :mod:`.stats` - the numbers of the report (best layers, clean vs Jabberwocky, lead lost);
* :mod:`.report` - ``report.md`` tables and the grouped-bar plot.
"""

from .experiment import JabberwockyExperiment

__all__ = ["JabberwockyExperiment"]
