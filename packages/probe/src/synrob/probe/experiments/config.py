"""Experiment configuration files (TOML).

::

    experiment = "jabberwocky"      # required: a registered experiment
    preset = "default"              # optional: one of the experiment's presets
    output = "results/jabberwocky"  # optional: the results directory
    seed = 0                        # optional
    device = "auto"                 # optional
    backend = "local"               # optional: local, ray or dask
    address = ""                    # optional: the cluster's address for ray/dask
    workers = 1                     # optional

    [params]                        # the experiment's parameters (lists allowed)
    encoders = ["minilm", "glove-6b-50d"]
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from synrob.perturb.errors import ParameterError

__all__ = ["ExperimentConfig", "load_config"]

_KEYS = {"experiment", "preset", "output", "seed", "device", "backend", "address", "workers",
         "params"}


@dataclass
class ExperimentConfig:
    """A parsed configuration file (``None`` where the file is silent)."""

    experiment: str
    params: dict[str, Any] = field(default_factory=dict)
    preset: str | None = None
    output: str | None = None
    seed: int | None = None
    device: str | None = None
    backend: str | None = None
    address: str | None = None
    workers: int | None = None


def load_config(path: str | Path) -> ExperimentConfig:
    """Read and check a TOML experiment file."""
    p = Path(path)
    try:
        data = tomllib.loads(p.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ParameterError(f"{p}: cannot read: {exc.strerror or exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ParameterError(f"{p}: not valid TOML: {exc}") from None
    unknown = sorted(set(data) - _KEYS)
    if unknown:
        raise ParameterError(f"{p}: unknown key {unknown[0]!r}; known: {', '.join(sorted(_KEYS))}")
    if not isinstance(data.get("experiment"), str):
        raise ParameterError(f"{p}: 'experiment' (the experiment's name) is required")
    params = data.get("params", {})
    if not isinstance(params, dict):
        raise ParameterError(f"{p}: [params] must be a table")
    for key, kind in (("seed", int), ("workers", int), ("preset", str), ("output", str),
                      ("device", str), ("backend", str), ("address", str)):
        if key in data and not isinstance(data[key], kind):
            raise ParameterError(f"{p}: {key!r} must be a {kind.__name__}")
    return ExperimentConfig(experiment=data["experiment"], params=dict(params),
                            **{k: data.get(k) for k in ("preset", "output", "seed", "device",
                                                        "backend", "address", "workers")})
