"""synrob.probe: frozen representations from any encoder, probes trained on them, metrics.

Depends on :mod:`synrob.perturb` (corpus model, plugin system). Heavy libraries (torch,
transformers, gensim) are imported by the modules that need them, not here.
"""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("synrob-probe")
except PackageNotFoundError:  # pragma: no cover
    __version__ = "0.0.0"

#: The public Python API (docs/python.md): name -> module, imported on first access (PEP 562),
#: so ``import synrob.probe`` imports no torch. Every other module path is private.
_EXPORTS = {
    "encode": "api", "probe": "api", "erase": "api", "EraseResult": "api",
    "score_pairs": "api", "run_experiment": "api",
    "list_experiments": "api", "make_experiment": "api", "ProbeResult": "api", "ScoreResult": "api",
    "load_results": "results", "ExperimentResults": "results",
    "compare": "comparison", "Comparison": "comparison", "write_comparison": "comparison",
}

__all__ = ["__version__", *_EXPORTS]


def __getattr__(name: str) -> object:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'synrob.probe' has no attribute {name!r}")
    from importlib import import_module

    value = getattr(import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
