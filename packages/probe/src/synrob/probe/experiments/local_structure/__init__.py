"""``local-structure``: local (chrF-2) vs global (Levenshtein) order (Clouatre et al. 2022,
"Local Structure Matters Most: Perturbation Study in NLU", Figures 4-5, Appendix A).

* :mod:`.experiment` - :class:`LocalStructure`: parameters, presets, the grid and its runs
  (probes, structure metrics, LM log-likelihood);
* :mod:`.data` - the perturbed test sets and their carrier CoNLL-U files;
* :mod:`.lm` - per-token log-likelihood of texts under a causal LM;
* :mod:`.stats` - structure metrics and performances per set, Spearman's rho between them;
* :mod:`.report` - ``report.md`` tables and the scatter plots.
"""

from .experiment import LocalStructure

__all__ = ["LocalStructure"]
