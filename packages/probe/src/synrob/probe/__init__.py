"""synrob.probe: frozen representations from any encoder, probes trained on them, metrics.

Depends on :mod:`synrob.perturb` (corpus model, plugin system). Heavy libraries (torch,
transformers, gensim) are imported by the modules that need them, not here.
"""

from importlib.metadata import PackageNotFoundError, version

from synrob.perturb.lazy import lazy_exports

try:
    __version__ = version("synrob-probe")
except PackageNotFoundError:  # pragma: no cover
    __version__ = "0.0.0"

#: The public Python API (docs/python.md): name -> module, imported on first access (PEP 562),
#: so ``import synrob.probe`` imports no torch. Every other module path is private.
_EXPORTS = {
    "encode": "api", "probe": "api", "erase": "api", "EraseResult": "api",
    "score_pairs": "api", "run_experiment": "api", "RepresentationSet": "representations.encoding",
    "list_experiments": "api", "make_experiment": "api", "ProbeResult": "api", "ScoreResult": "api",
    "load_results": "reporting.results", "ExperimentResults": "reporting.results",
    "compare": "reporting.comparison", "Comparison": "reporting.comparison",
    "write_comparison": "reporting.comparison",
    "Progress": "runtime.progress", "ProgressOption": "runtime.progress",
    "StageCallback": "runtime.progress", "RunCallback": "runtime.progress", "Figure": "render.figures",
    "card": "cards.make", "Card": "cards.result", "load_card": "cards.make",
    "board": "cards.board", "Board": "cards.board",
}

__all__ = ["__version__", *_EXPORTS]


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
