"""``synrob plugins``: list registered components; ``synrob plugins new``: scaffold a plugin."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

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

    registry = get_registry()
    rows = [
        {"kind": c.kind, "name": c.name, "version": c.version, "distribution": c.distribution,
         "plugin": c.plugin, "languages": _languages(registry, c.kind, c.name)}
        for c in registry.components(kind)
    ]
    if as_json:
        emit_json(rows)
        return
    keys = ("kind", "name", "version", "distribution")
    widths = [max([len(k)] + [len(str(r[k])) for r in rows]) for k in keys]
    typer.echo("  ".join(f"{k.upper():<{w}}" for k, w in zip(keys, widths, strict=True))
               + "  LANGUAGES")
    for r in rows:
        langs = ",".join(r["languages"]) if r["languages"] is not None else "-"
        typer.echo("  ".join(f"{r[k]!s:<{w}}" for k, w in zip(keys, widths, strict=True))
                   + f"  {langs}")


def _languages(registry: Any, kind: str, name: str) -> list[str] | None:
    """The languages a perturber supports (``["*"]`` for any); None for other components."""
    if kind != "perturber":
        return None
    return list(getattr(registry.get(kind, name), "languages", ("*",)))


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
