"""Numbers from predictions: tree metrics (UUAS, DSpr), La Malfa's variants, MSTs on an accelerator, the bootstrap, layer curves.

The names of the former module ``synrob.probe.metrics`` are read from here too (lazily).
"""

from synrob.perturb.lazy import lazy_exports

_EXPORTS = {
    "Edge": "trees",
    "mst_edges": "trees",
    "mst_pairs": "trees",
    "MINIMAX_MAX_LEN": "trees",
    "mst_pairs_batch": "trees",
    "gold_edges": "trees",
    "uuas": "trees",
    "DistanceScores": "trees",
    "distance_scores": "trees",
    "rank_rows": "trees",
    "row_spearman": "trees",
    "spearman": "trees",
    "dspr": "trees",
    "nspr": "trees",
    "root_accuracy_from_depths": "trees",
    "sdr": "trees",
    "accuracy": "trees",
    "words_right_per_sentence": "trees",
}

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals(), version=False)
