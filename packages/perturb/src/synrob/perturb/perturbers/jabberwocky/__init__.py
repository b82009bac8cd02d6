"""The Jabberwocky perturber: content words become pseudowords that keep UD morphology (English rules, or any language's own).

The names of the former module ``synrob.perturb.perturbers.jabberwocky`` are read from here too (lazily).
"""

from synrob.perturb.lazy import lazy_exports

_EXPORTS = {
    "Jabberwocky": "perturber",
    "PERTURBERS": "perturber",
    "form_class": "perturber",
}

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals(), version=False)
