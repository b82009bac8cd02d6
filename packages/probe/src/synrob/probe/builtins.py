"""The default plugin of synrob-probe: built-in encoders (and, later, tasks and probes).

Registered through the same hooks a third-party plugin uses. Module imports stay light: the
encoder modules import numpy only; torch, transformers and gensim load inside their methods.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence

from synrob.perturb.hookspecs import hookimpl

from .encoders import ENCODERS
from .encoders.base import Encoder


@hookimpl
def synrob_register_encoders() -> Sequence[type[Encoder]]:
    """Return the built-in encoder classes."""
    return [
        getattr(importlib.import_module(f"{__package__}.encoders.{mod}"), cls)
        for mod, cls in ENCODERS
    ]


# --------------------------------------------------------------------------- tasks and probes
# synrob_register_tasks / synrob_register_probes (issue 5) go below this line.


@hookimpl
def synrob_register_tasks() -> Sequence[type]:
    """Return the built-in probing tasks (distance, parse, depth, pos, root, tree-depth)."""
    from .tasks import TASKS

    return list(TASKS)


@hookimpl
def synrob_register_probes() -> Sequence[type]:
    """Return the built-in probes (structural, perceptron, linear, mlp, fc3)."""
    from .probes import PROBES

    return list(PROBES)


@hookimpl
def synrob_register_experiments() -> Sequence[type]:
    """Return the built-in experiments (robustness, jabberwocky, local-structure, senteval)."""
    from .experiments import EXPERIMENTS

    return [getattr(importlib.import_module(f"{__package__}.experiments.{mod}"), cls)
            for mod, cls in EXPERIMENTS]
