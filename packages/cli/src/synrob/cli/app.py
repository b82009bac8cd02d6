"""The ``synrob`` application and its single error boundary.

Commands live in :mod:`synrob.cli.commands` (one module per command group, each exposing
``register(app)``). Nothing heavy (torch, transformers, spaCy) is imported at module level, so
``synrob --help`` is instant. :func:`run` is the boundary: a :class:`SynrobError` becomes one line
on stderr and exit code 1; usage errors exit 2; no traceback for either.
"""

from __future__ import annotations

import importlib
import sys
import warnings
from collections.abc import Sequence
from typing import Annotated

import typer

try:  # typer >= 0.26 vendors click; older releases use the click distribution
    from typer._click import exceptions as _cx
except ImportError:  # pragma: no cover
    from click import exceptions as _cx

from . import __version__

COMMAND_MODULES = (
    "conllu",
    "plugins",
    "perturb",
    "parse",
    "metrics",
    "encode",
    "probe",
    "run",
    "demo",
    "senteval",
)

app = typer.Typer(
    name="synrob",
    help="Perturb treebank sentences and probe frozen encoders for syntax.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
    rich_markup_mode=None,
)


def _version(value: bool) -> None:
    if value:
        from synrob.perturb import __version__ as perturb_version

        try:
            from importlib.metadata import version

            probe_version = version("synrob-probe")
        except Exception:  # pragma: no cover - probe not installed
            probe_version = "not installed"
        typer.echo(f"synrob {__version__} (perturb {perturb_version}, probe {probe_version})")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool,
        typer.Option("--version", callback=_version, is_eager=True, help="Show the version and exit."),
    ] = False,
) -> None:
    """Perturb treebank sentences and probe frozen encoders for syntax."""


for _name in COMMAND_MODULES:
    importlib.import_module(f"{__package__}.commands.{_name}").register(app)


def _show_warning(message, category, filename, lineno, file=None, line=None) -> None:  # noqa: ANN001
    from synrob.perturb.errors import SynrobWarning

    if issubclass(category, SynrobWarning):
        print(f"synrob: warning: {message}", file=sys.stderr)
    else:
        _default_showwarning(message, category, filename, lineno, file, line)


_default_showwarning = warnings.showwarning


def run(argv: Sequence[str] | None = None) -> int:
    """Run the CLI with ``argv``; return the exit code (the one error boundary)."""
    from synrob.perturb.errors import SynrobError

    warnings.showwarning = _show_warning
    command = typer.main.get_command(app)
    try:
        result = command.main(
            args=list(sys.argv[1:] if argv is None else argv),
            prog_name="synrob",
            standalone_mode=False,
        )
        return result if isinstance(result, int) else 0
    except typer.Exit as exc:
        return exc.exit_code
    except typer.Abort:
        print("synrob: aborted", file=sys.stderr)
        return 130
    except _cx.ClickException as exc:  # usage errors: bad option, missing argument
        exc.show()
        return exc.exit_code
    except SynrobError as exc:
        print(f"synrob: error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("synrob: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 141
    finally:
        warnings.showwarning = _default_showwarning


def main() -> None:
    """Console-script entry point."""
    sys.exit(run())
