"""Encoder specs -> encoder instances.

A spec (the value of ``--encoder``) is tried, in order, as:

1. an offline alias (``minilm``, ``smollm2``, ``glove-6b-50d``, ``word2vec-gnews-26k``);
2. a registered encoder name (``static``, ``transformer``, ``fast+pos``, ``random-init`` or a
   plugin's), configured by ``params``;
3. an existing path: a model directory (``config.json``) or ``.gguf`` file -> ``transformer``;
   anything else (vector file, kumo directory) -> ``static``;
4. otherwise a Hugging Face hub name -> ``transformer`` (loaded from the local HF cache, or
   downloaded when the hub is reachable); a bare name close to an alias or an encoder name
   (``minlm``) that the local cache does not hold is refused at once, with the close names
   (:func:`~synrob.perturb.lm.models.refuse_near_miss`).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from synrob.perturb.lm.models import is_model_path, refuse_near_miss
from synrob.perturb.plugins import get_registry

from .aliases import ALIASES, alias_params
from .base import Encoder

__all__ = ["resolve_encoder", "spec_target"]


def spec_target(spec: str, params: Mapping[str, Any] | None = None
                ) -> tuple[str, dict[str, Any]]:
    """(registered encoder name, full parameters) that ``spec`` stands for."""
    given = dict(params or {})
    if spec in ALIASES:
        name, base = alias_params(spec)
        return name, {**base, **given}
    registered = get_registry().names("encoder")
    if spec in registered:
        return spec, given
    p = Path(spec).expanduser()
    if p.exists():
        if is_model_path(p):
            return "transformer", {"model": spec, **given}
        return "static", {"path": spec, **given}
    refuse_near_miss(spec, [*ALIASES, *registered], "encoder")  # a typo: no hub attempt
    return "transformer", {"model": spec, **given}


def resolve_encoder(spec: str, params: Mapping[str, Any] | None = None) -> Encoder:
    """An encoder instance for ``spec`` (see module docstring); weights are not loaded yet.

    Parameters an encoder does not declare among ``pooling``/``device`` are dropped so callers
    can pass them uniformly; any other unknown parameter is a ParameterError.
    """
    name, full = spec_target(spec, params)
    cls = get_registry().get("encoder", name)
    declared = {p.name for p in getattr(cls, "params", ())}
    full = {k: v for k, v in full.items() if k in declared or k not in ("pooling", "device")}
    return cls(**full)
