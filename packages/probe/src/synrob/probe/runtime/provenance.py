"""What produced a number: the versions of Python and of the packages, and the UTC time.

Every output that records its provenance (``results.json``, a run's file, a cache entry's
index, a derived data file) takes these from here, so each layer stamps the same fields.
"""

from __future__ import annotations

import contextlib
import functools
import platform
import time
from collections.abc import Sequence
from importlib.metadata import PackageNotFoundError, version

__all__ = ["package_versions", "versions", "utc_now", "probe_version"]

#: The distributions whose versions can change a number of an experiment.
RESULT_PACKAGES = ("synrob-perturb", "synrob-probe", "torch", "transformers", "numpy", "scipy",
                   "gensim", "nltk", "conllu")


def package_versions(dists: Sequence[str]) -> dict[str, str]:
    """The Python version and the installed version of each distribution in ``dists``."""
    out = {"python": platform.python_version()}
    for dist in dists:
        with contextlib.suppress(PackageNotFoundError):
            out[dist] = version(dist)
    return out


def versions() -> dict[str, str]:
    """Versions of Python and of the packages that can change a number (in this process)."""
    return dict(_versions())


@functools.cache
def _versions() -> dict[str, str]:
    return package_versions(RESULT_PACKAGES)


def utc_now() -> str:
    """The current UTC time, ISO 8601 to the second."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def probe_version() -> str:
    """The installed version of synrob-probe (``synrob.probe.__version__``)."""
    try:
        return version("synrob-probe")
    except PackageNotFoundError:  # pragma: no cover - a bare source tree
        return "0.0.0"
