"""One probe trained and scored on one layer, and around it: batches, the loop, its precision, optimiser, setup, MDL, controls.

The names of the former module ``synrob.probe.training`` are read from here too (lazily).
"""

from synrob.perturb.lazy import lazy_exports

_EXPORTS = {
    "Features": "batches",
    "Batch": "batches",
    "BatchSet": "batches",
    "LayerBatches": "batches",
    "make_batches": "batches",
    "make_layer_batches": "batches",
    "fit": "loop",
    "fit_layers": "loop",
    "predict": "loop",
    "TrainLog": "loop",
}

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals(), version=False)
