"""``synrob plugins``: list registered components; ``synrob plugins new``: scaffold a plugin."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

plugins_app = typer.Typer(help="List plugins and their components, or scaffold a new plugin.")


@plugins_app.callback(invoke_without_command=True)
def list_plugins(
    ctx: typer.Context,
    as_json: Annotated[bool, typer.Option("--json", help="Print a JSON list.")] = False,
    kind: Annotated[str | None, typer.Option(help="Only this kind (perturber, encoder, ...).")] = None,
) -> None:
    """List every registered component: kind, name, version, distribution."""
    if ctx.invoked_subcommand is not None:
        return
    from synrob.perturb.plugins import get_registry

    from ..output import emit_json

    comps = get_registry().components(kind)
    rows = [
        {"kind": c.kind, "name": c.name, "version": c.version, "distribution": c.distribution,
         "plugin": c.plugin}
        for c in comps
    ]
    if as_json:
        emit_json(rows)
        return
    widths = [max([len(k)] + [len(str(r[k])) for r in rows]) for k in ("kind", "name", "version")]
    typer.echo(f"{'KIND':<{widths[0]}}  {'NAME':<{widths[1]}}  {'VERSION':<{widths[2]}}  DISTRIBUTION")
    for r in rows:
        typer.echo(
            f"{r['kind']:<{widths[0]}}  {r['name']:<{widths[1]}}  {r['version']:<{widths[2]}}  "
            f"{r['distribution']}"
        )


@plugins_app.command("new")
def new_plugin(
    name: Annotated[str, typer.Argument(help="Perturber name, e.g. 'leet' (kind name).")],
    directory: Annotated[
        Path | None,
        typer.Option("--dir", help="Directory to create, absent or empty (default: ./synrob-NAME)."),
    ] = None,
) -> None:
    """Write a ready-to-install plugin package with one perturber and a golden-case test."""
    from ..output import info
    from ..scaffold import write_plugin

    path = write_plugin(name, directory)
    typer.echo(str(path))
    info(f"synrob: wrote plugin synrob-{name}; next: pip install -e {path} && pytest {path}")


def register(app: typer.Typer) -> None:
    app.add_typer(plugins_app, name="plugins")
