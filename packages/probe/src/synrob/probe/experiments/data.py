"""Derived data files of experiments: perturbed versions of a treebank, built once.

Each file's name encodes source, perturber, parameters, seed and variants, so a finished file
is reused (an interrupted ``prepare`` resumes) and a changed parameter is a new file. Files are
written to ``NAME.tmp`` and renamed.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

from synrob.perturb.data import resolve_input
from synrob.perturb.errors import ResourceError

__all__ = ["resolve_one", "perturbed_file", "perturber_info"]


def resolve_one(spec: str | Path) -> Path:
    """One CoNLL-U path from a spec (``ud:en_ewt:test``, ``sample:en_ewt:dev``, a path)."""
    paths = resolve_input(str(spec))
    if len(paths) != 1 or str(paths[0]) == "-":
        raise ResourceError(f"{spec!r} must name one CoNLL-U file")
    return Path(paths[0])


def perturber_info(kind: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    """``{"perturber", "perturber_version", "params"}`` of a configured perturber (all params)."""
    from synrob.perturb.plugins import get_registry

    cls = get_registry().get("perturber", kind)
    perturber = cls(**dict(params or {}))
    return {"perturber": kind, "perturber_version": getattr(cls, "version", ""),
            "params": dict(getattr(perturber, "options", params or {}))}


def perturbed_file(source: str | Path, kind: str, params: dict[str, Any] | None, *, seed: int,
                   dest: Path, variants: int = 1, fmt: str = "conllu",
                   max_sentences: int | None = None) -> Path:
    """Perturb ``source`` with perturber ``kind`` into ``dest`` (``fmt``: conllu, jsonl, text).

    Returns the file's path; builds it only when absent. With ``variants`` > 1, the variants of
    each sentence follow each other (``synrob.variant`` comment / JSONL field). With
    ``max_sentences`` only the first N sentences of the source are perturbed.
    """
    from itertools import islice

    from synrob.perturb.pipeline import perturb_formatted, read_blocks
    from synrob.perturb.plugins import get_registry

    src = resolve_one(source)
    params = dict(params or {})
    tag = hashlib.sha256(json.dumps(
        [str(src.resolve()), kind, params, seed, variants, fmt, max_sentences],
        sort_keys=True, default=str).encode()).hexdigest()[:10]
    ext = {"conllu": "conllu", "jsonl": "jsonl", "text": "txt"}[fmt]
    out = dest / f"{src.stem}.{kind}.{tag}.{ext}"
    if out.exists():
        return out
    dest.mkdir(parents=True, exist_ok=True)
    cls = get_registry().get("perturber", kind)
    perturber = cls(**params)
    tmp = out.with_name(out.name + f".{os.getpid()}.tmp")
    with src.open(encoding="utf-8") as fh, tmp.open("w", encoding="utf-8") as w:
        blocks = read_blocks(fh, str(src))
        if max_sentences is not None:
            blocks = islice(blocks, max_sentences)
        for chunk in perturb_formatted(perturber, blocks, fmt, seed=seed, variants=variants):
            w.write(chunk)
    os.replace(tmp, out)
    return out
