"""Frozen vectors of a corpus from any encoder, and the cache that keeps them.

The names of the former module ``synrob.probe.representations`` are read from here too (lazily).
"""

from synrob.perturb.lazy import lazy_exports

_EXPORTS = {
    "encode_corpus": "encoding",
    "package_versions": "encoding",
    "RepresentationSet": "encoding",
    "read_words": "encoding",
    "SENTENCE_POOLINGS": "encoding",
    "LoadedEncoders": "encoding",
    "CHUNK_WORDS": "encoding",
    "KERNEL_CACHE_ENTRIES": "encoding",
    "bound_kernel_cache": "encoding",
}

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals(), version=False)
