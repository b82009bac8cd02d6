"""Erasers on disk: one safetensors file per eraser, its provenance in the header.

The file holds four float32 tensors, ``proj_left`` (d, k), ``proj_right`` (k, d), ``bias`` (d,)
and ``class_means`` (C, d), and the safetensors metadata (string -> string):

============  ==========================================================================
``format``    ``synrob-eraser/1``
``kind``      ``leace``, ``random`` or ``random_matched`` (:data:`~.eraser.KINDS`)
``labels``    JSON list of the C class names (the rows of ``class_means``)
``meta``      JSON object: encoder (spec, parameters, identity), layer, dim, task and its
              parameters, ``control`` (the task's control labels were erased), rank, seed,
              the training file and its SHA-256 (``train_sha256``), training words, the
              synrob version, ...
============  ==========================================================================

Files are written atomically (:mod:`synrob.perturb.io.atomic`); a save/load round trip is bit
exact. :func:`check_eraser` refuses an eraser made for another encoder, layer, dimension or
task, one :class:`ParameterError` line naming both values, as ``synrob probe --load`` does.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from synrob.perturb.errors import MissingFileError, ParameterError, ResourceError
from synrob.perturb.io.atomic import atomic_path

from .eraser import KINDS, Eraser

__all__ = ["FORMAT", "save_eraser", "load_eraser", "check_eraser"]

FORMAT = "synrob-eraser/1"
_TENSORS = ("proj_left", "proj_right", "bias", "class_means")


def save_eraser(path: str | Path, eraser: Eraser) -> Path:
    """Write ``eraser`` to ``path`` (safetensors, atomically); returns the path."""
    from safetensors.torch import save_file

    tensors = {k: getattr(eraser, k).detach().to("cpu").float().contiguous().clone()
               for k in _TENSORS}  # clone: a rank-1 right projection may view the left one
    header = {"format": FORMAT, "kind": eraser.kind, "labels": json.dumps(eraser.labels),
              "meta": json.dumps(eraser.meta, sort_keys=True, default=str)}
    with atomic_path(path) as tmp:
        save_file(tensors, str(tmp), metadata=header)
    return Path(path)


def load_eraser(path: str | Path) -> Eraser:
    """The eraser saved in ``path`` by :func:`save_eraser`; a :class:`ResourceError` for a file
    that is missing, not safetensors, or not a synrob eraser."""
    from safetensors import SafetensorError, safe_open

    p = Path(path)
    if not p.is_file():
        raise MissingFileError(f"{p}: no such eraser file")
    try:
        with safe_open(str(p), framework="pt") as fh:
            header = fh.metadata() or {}
            tensors = {k: fh.get_tensor(k) for k in fh.keys()}  # noqa: SIM118 - not a dict
    except (SafetensorError, OSError, ValueError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ResourceError(f"{p}: not a safetensors file ({first})") from None
    if header.get("format") != FORMAT or any(k not in tensors for k in _TENSORS):
        raise ResourceError(f"{p}: not a synrob eraser (format {header.get('format')!r}, "
                            f"tensors {sorted(tensors)})")
    try:
        labels = [str(x) for x in json.loads(header["labels"])]
        meta = json.loads(header.get("meta", "{}"))
    except (KeyError, ValueError, TypeError) as exc:
        raise ResourceError(f"{p}: unreadable eraser header ({exc})") from None
    eraser = Eraser(header.get("kind", ""), *(tensors[k] for k in _TENSORS), labels, meta)
    _check_shapes(p, eraser)
    return eraser


def _check_shapes(p: Path, e: Eraser) -> None:
    d, k = (tuple(e.proj_left.shape) + (None, None))[:2]
    ok = (e.proj_left.ndim == 2 and tuple(e.proj_right.shape) == (k, d)
          and tuple(e.bias.shape) == (d,) and tuple(e.class_means.shape) == (len(e.labels), d)
          and e.kind in KINDS)
    if not ok:
        raise ResourceError(
            f"{p}: inconsistent eraser (kind {e.kind!r}, proj_left {tuple(e.proj_left.shape)}, "
            f"proj_right {tuple(e.proj_right.shape)}, bias {tuple(e.bias.shape)}, class_means "
            f"{tuple(e.class_means.shape)}, {len(e.labels)} labels)")


def check_eraser(eraser: Eraser, where: str | Path, *, encoder: str,
                 identity: dict[str, Any] | None, layer: int, dim: int | None, task: str,
                 task_params: dict[str, Any], control: bool) -> None:
    """Raise :class:`ParameterError` unless ``eraser`` was fitted for this setup: the encoder
    (its identity when both are known, else its name), the layer, the vectors' dimension, the
    task, its parameters and whether its control labels were erased (``dim`` None: not checked
    here). Each message names both values: ``eraser in FILE was fitted on layer 3, not layer
    4``."""
    meta = eraser.meta

    def fail(saved: str, given: str) -> None:
        raise ParameterError(f"eraser in {where} was fitted on {saved}, not {given}")

    saved_id = meta.get("encoder_identity")
    if saved_id is not None and identity is not None:
        from ...training.probing import first_difference

        diff = first_difference(saved_id, json.loads(json.dumps(identity, default=str)))
        if diff is not None:
            path, a, b = diff
            if meta.get("encoder") != encoder or path[0] == "encoder":
                fail(f"encoder {meta.get('encoder')!r}", f"encoder {encoder!r}")
            name = ".".join(path[1:]) if path[0] == "options" else ".".join(path)
            fail(f"encoder {meta.get('encoder')!r} with {name}={a!r}", f"{name}={b!r}")
    elif meta.get("encoder") != encoder:
        fail(f"encoder {meta.get('encoder')!r}", f"encoder {encoder!r}")
    if int(meta.get("layer", layer)) != layer:
        fail(f"layer {meta.get('layer')}", f"layer {layer}")
    if dim is not None and eraser.dim != dim:
        fail(f"vectors of dimension {eraser.dim}", f"dimension {dim}")
    if meta.get("task") != task:
        fail(f"task {meta.get('task')!r}", f"task {task!r}")
    saved_params = meta.get("task_params", {})
    for k, v in task_params.items():
        if saved_params.get(k) != v:
            fail(f"task parameter {k}={saved_params.get(k)!r}", f"{k}={v!r}")
    if bool(meta.get("control", False)) != control:
        fail("the task's control labels" if meta.get("control") else "the task's labels",
             "its control labels" if control else "its own labels")
