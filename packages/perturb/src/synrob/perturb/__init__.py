"""synrob.perturb: controlled rewrites of UD treebank sentences and how much each one changed.

This package is the light base layer of synrob: it never imports torch at import time.
It also hosts what every layer shares: the CoNLL-U corpus model (:mod:`.corpus`; the FEATS
column in :mod:`.feats`), tree utilities (:mod:`.tree`), domain errors (:mod:`.errors`) and the
plugin system (:mod:`.hookspecs`, :mod:`.plugins`).
"""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("synrob-perturb")
except PackageNotFoundError:  # pragma: no cover - running from a source tree
    __version__ = "0.0.0"

__all__ = ["__version__"]
