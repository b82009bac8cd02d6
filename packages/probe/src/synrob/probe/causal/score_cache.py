"""LM scores of fixed inputs, computed once and kept on disk by their content.

Some scores do not depend on what a run varies: the clean log-probabilities of the ``amnesic``
experiment's agreement pairs are the same for every layer it erases. :func:`cached_scores`
computes such a score once and keeps it in ``<synrob cache>/scores/<kind>-<key>.json``, so the
other layer runs of a preset, a resumed run and runs in parallel processes read it instead of
running the LM again.

The key hashes everything the numbers depend on: the ``kind`` of score, the inputs themselves
(their canonical JSON: texts or token ids), the scoring parameters (batch rows and tokens: a
pass's shape can move the last bits), the LM's model files (the fingerprint the representation
cache keys a transformer by), its dtype, device type and placement, torch's and transformers'
versions and MKL's product mode (:func:`synrob.perturb.lm.blas.gemm_mode`). So a cached score is
the one a fresh computation would give here, bit for bit.

An entry is written atomically (:func:`synrob.perturb.io.atomic.write_text_atomic`) while
``<entry>.lock`` is held (``flock``), so two processes that miss together compute it once: the
second waits and reads the first one's entry. An unreadable entry, or one whose stored key
differs, is computed again.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from synrob.perturb.io.atomic import write_text_atomic
from synrob.perturb.io.data import cache_dir

from ..representations.cache import _locked, entry_key

__all__ = ["SCORES_FORMAT", "scores_root", "lm_key", "model_resource", "cached_scores",
           "clear_scores"]

SCORES_FORMAT = 1


def scores_root() -> Path:
    """``<synrob cache>/scores`` (``$SYNROB_CACHE`` overrides the cache root)."""
    return cache_dir() / "scores"


def lm_key(lm: Any) -> dict[str, Any]:
    """What a :class:`~synrob.perturb.lm.loaded.LoadedLM`'s scores depend on besides the inputs (no
    weights are read: the model files' fingerprint is the transformer encoder's)."""
    import torch
    import transformers
    from synrob.perturb.lm.blas import gemm_mode

    return {"resource": model_resource(lm.spec), "kind": lm.kind,
            "dtype": lm.dtype, "device": torch.device(lm.device).type,
            "placement": lm.placement.identity(), "torch": torch.__version__,
            "transformers": transformers.__version__, "gemm": gemm_mode()}


def model_resource(spec: str) -> Any:
    """The identity of the model files of ``spec`` (the representation cache's for the
    transformer of that name): what a kept score's LM is recognised by."""
    from ..encoders.resolve import resolve_encoder

    return resolve_encoder(spec).identity()["resource"]


def _digest(inputs: Any) -> str:
    blob = json.dumps(inputs, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


def _read(path: Path, key: Mapping[str, Any]) -> list[Any] | None:
    """The scores of the entry at ``path`` when it is readable and made for ``key``."""
    try:
        entry = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(entry, dict) or entry.get("key") != key:
        return None
    scores = entry.get("scores")
    return scores if isinstance(scores, list) else None


def cached_scores(kind: str, inputs: Any, lm: Any, params: Mapping[str, Any],
                  compute: Callable[[], list[Any]]) -> list[Any]:
    """``compute()`` (a JSON-able list: one item per input) for ``inputs`` scored by ``lm``
    with ``params``, from the cache when an earlier run computed it (see the module
    docstring)."""
    key = json.loads(json.dumps({"format": SCORES_FORMAT, "kind": kind, "lm": lm_key(lm),
                                 "params": dict(params), "inputs_sha256": _digest(inputs)}))
    path = scores_root() / f"{kind}-{entry_key(key)}.json"
    hit = _read(path, key)
    if hit is not None:
        return hit
    with _locked(path.with_name(f"{path.name}.lock")):
        hit = _read(path, key)  # another process may have written it while we waited
        if hit is not None:
            return hit
        scores = compute()
        write_text_atomic(path, json.dumps({"key": key, "scores": scores}))
    return scores


def clear_scores(model: str | None = None, root: Path | None = None) -> int:
    """Delete the kept scores (all, or those of the LM ``model``: a spec whose model files
    are the scoring LM's); returns how many. Each entry goes under its lock, so a process
    writing it finishes first."""
    root = root or scores_root()
    if not root.is_dir():
        return 0
    wanted = _resource(model) if model is not None else None
    n = 0
    for path in sorted(root.glob("*.json")):
        if model is not None and (wanted is None or _entry_resource(path) != wanted):
            continue
        lock = path.with_name(f"{path.name}.lock")
        with _locked(lock):
            path.unlink(missing_ok=True)
            lock.unlink(missing_ok=True)
        n += 1
    return n


def _resource(model: str) -> Any:
    """:func:`model_resource` as :func:`lm_key` stored it (JSON), or None when ``model`` is no
    model synrob can resolve: then it matches no entry."""
    from synrob.perturb.errors import SynrobError

    try:
        return json.loads(json.dumps(model_resource(model)))
    except (SynrobError, KeyError):
        return None


def _entry_resource(path: Path) -> Any:
    try:
        entry = json.loads(path.read_text(encoding="utf-8"))
        return entry["key"]["lm"]["resource"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
