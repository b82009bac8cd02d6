"""synrob.probe: frozen representations from any encoder, probes trained on them, metrics.

Depends on :mod:`synrob.perturb` (corpus model, plugin system). Heavy libraries (torch,
transformers, gensim) are imported by the modules that need them, not here.
"""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("synrob-probe")
except PackageNotFoundError:  # pragma: no cover
    __version__ = "0.0.0"
