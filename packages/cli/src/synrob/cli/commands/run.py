"""``synrob run``: run a registered experiment (filled by the experiments issue)."""

from __future__ import annotations

from typing import Annotated

import typer


def run_experiment(
    name: Annotated[str, typer.Argument(help="Experiment name or a TOML file.")],
) -> None:
    """Run an experiment by name or from a TOML file."""
    from synrob.perturb.errors import UnknownComponentError

    raise UnknownComponentError(f"unknown experiment {name!r}; available: (none yet)")


def register(app: typer.Typer) -> None:
    app.command("run")(run_experiment)
