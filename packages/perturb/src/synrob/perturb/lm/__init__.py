"""Language models and the torch they run on: loading, devices, dtypes, placement, sentence scores, subwords.

The names of the former module ``synrob.perturb.lm`` are read from here too (lazily).
"""

from synrob.perturb.lazy import lazy_exports

_EXPORTS = {
    "LoadedLM": "loaded",
    "LmKind": "loaded",
    "LOGITS_BUDGET": "loaded",
    "detect_kind": "loaded",
    "load_lm": "loaded",
    "lm_source": "loaded",
    "forward_throughput": "loaded",
    "start_token_id": "loaded",
    "head_factory": "loaded",
}

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals(), version=False)
