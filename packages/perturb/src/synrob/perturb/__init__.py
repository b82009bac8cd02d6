"""synrob.perturb: controlled rewrites of UD treebank sentences and how much each one changed.

This package is the light base layer of synrob: it never imports torch at import time.
It also hosts what every layer shares: the CoNLL-U corpus model (:mod:`.corpus`; the FEATS
column in :mod:`.feats`), tree utilities (:mod:`.tree`), domain errors (:mod:`.errors`) and the
plugin system (:mod:`.hookspecs`, :mod:`.plugins`).

The public Python API (docs/python.md) is the names in ``__all__``, imported lazily on first use
so that ``import synrob.perturb`` stays light; every other module path is private and may change.
"""

from importlib.metadata import PackageNotFoundError, version

from .lazy import lazy_exports
from .lm.blas import request_strict_gemm

# before torch's first product: fp32 products give the same bits on any number of threads
request_strict_gemm()

try:
    __version__ = version("synrob-perturb")
except PackageNotFoundError:  # pragma: no cover - running from a source tree
    __version__ = "0.0.0"

#: name -> module that defines it (imported on first access, PEP 562)
_EXPORTS = {
    "read_conllu": "api", "write_conllu": "api", "list_perturbers": "api",
    "make_perturber": "api", "perturb": "api", "PerturbResult": "api",
    "Sentence": "corpus", "Perturber": "base", "PerturbRecord": "pipeline",
    "chrf2": "metrics", "levenshtein": "metrics", "compression_rates": "metrics",
    "SynrobError": "errors", "ResultTable": "io.table",
}

__all__ = ["__version__", *_EXPORTS]


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
