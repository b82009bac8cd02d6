"""The ``synrob`` application and its single error boundary.

Commands live in :mod:`synrob.cli.commands` (one module per command group, each exposing
``register(app)``). Nothing heavy (torch, transformers, spaCy) is imported at module level, so
``synrob --help`` is instant. :func:`run` is the boundary; every exception ends there as one
line on stderr and an exit code (never a traceback unless ``SYNROB_DEBUG=1``):

====  =====================================================================================
0     success
1     a user error: ``synrob: error: <message>`` (any :class:`SynrobError`)
2     a usage error (unknown option, missing argument): ``synrob: error: <message> (see ...)``
70    an internal error, i.e. a bug: ``synrob: internal error: <Type>: <message> (a bug: ...)``
130   interrupted (Ctrl-C): ``synrob: interrupted``
141   stdout was closed early (``synrob perturb ... | head -1``): nothing is printed
====  =====================================================================================
"""

from __future__ import annotations

import errno
import importlib
import os
import sys
import traceback
import warnings
from collections.abc import Sequence
from typing import Annotated

import typer

try:  # typer >= 0.26 vendors click; older releases use the click distribution
    from typer._click import exceptions as _cx
except ImportError:  # pragma: no cover
    from click import exceptions as _cx

from . import __version__

_NO_ARGS = getattr(_cx, "NoArgsIsHelpError", ())  # click >= 8.2: a group called without args

COMMAND_MODULES = (
    "conllu",
    "plugins",
    "perturb",
    "parse",
    "metrics",
    "score",
    "encode",
    "probe",
    "erase",
    "run",
    "compare",
    "card",
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


EXIT_OK = 0
EXIT_ERROR = 1
EXIT_USAGE = 2
EXIT_INTERNAL = 70  # EX_SOFTWARE (sysexits.h)
EXIT_INTERRUPTED = 130  # 128 + SIGINT
EXIT_BROKEN_PIPE = 141  # 128 + SIGPIPE, what a shell reports for a writer killed by SIGPIPE

BUG_HINT = "a bug: please report it with SYNROB_DEBUG=1 output"


def debug_enabled() -> bool:
    """Whether ``SYNROB_DEBUG`` asks for tracebacks (``1``, ``true``, ``yes`` or ``on``)."""
    return os.environ.get("SYNROB_DEBUG", "").strip().lower() in {"1", "true", "yes", "on"}


def _one_line(text: str) -> str:
    """The first non-blank line of ``text`` (the rest is in the SYNROB_DEBUG traceback)."""
    return next((line.strip() for line in text.splitlines() if line.strip()), "")


def _is_broken_pipe(exc: BaseException) -> bool:
    return isinstance(exc, BrokenPipeError) or (
        isinstance(exc, OSError) and exc.errno == errno.EPIPE
    )


def _detach_stdout() -> None:
    """After a broken pipe, point stdout's descriptor at /dev/null so that the interpreter's
    final flush of what is still buffered does not fail again ("Exception ignored ...")."""
    try:
        fd = sys.stdout.fileno()
    except (AttributeError, OSError, ValueError):  # not a real file (e.g. captured in tests)
        return
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, fd)
    finally:
        os.close(devnull)


def _usage_message(exc: _cx.UsageError) -> str:
    message = " ".join(exc.format_message().split())
    if exc.ctx is not None:
        message += f" (see '{exc.ctx.command_path} --help')"
    return message


def _error(line: str) -> None:
    print(f"synrob: {line}", file=sys.stderr)


def run(argv: Sequence[str] | None = None) -> int:
    """Run the CLI with ``argv``; return the exit code (the one error boundary).

    Exit codes: 0 success, 1 user error (:class:`SynrobError`), 2 usage error, 70 internal
    error (any other exception: a bug), 130 interrupted, 141 stdout closed early. Each failure
    is one line on stderr (none for a closed stdout); ``SYNROB_DEBUG=1`` adds the traceback of
    user and internal errors before that line.
    """
    from synrob.perturb.errors import SynrobError

    warnings.showwarning = _show_warning
    command = typer.main.get_command(app)
    args = list(sys.argv[1:] if argv is None else argv)
    try:
        # make_context + invoke rather than command.main: main turns Ctrl-C into a bare exit
        # code and a closed stdout into sys.exit(1), so the boundary could not report them
        with command.make_context("synrob", args) as ctx:
            result = command.invoke(ctx)
        sys.stdout.flush()  # a closed pipe shows here, inside the boundary, not at exit
        return result if isinstance(result, int) else EXIT_OK
    except typer.Exit as exc:
        return exc.exit_code
    except typer.Abort:
        _error("aborted")
        return EXIT_INTERRUPTED
    except _NO_ARGS as exc:  # `synrob` or `synrob cache` alone: the help text
        exc.show()
        return exc.exit_code
    except _cx.UsageError as exc:  # bad option, missing argument, bad value
        _error(f"error: {_usage_message(exc)}")
        return exc.exit_code
    except _cx.ClickException as exc:  # click's own user errors (e.g. an unreadable file)
        _error(f"error: {_one_line(exc.format_message())}")
        return exc.exit_code
    except SynrobError as exc:
        if debug_enabled():
            traceback.print_exc(file=sys.stderr)
        _error(f"error: {exc.render(cli=True)}")  # the caller's arguments as flags
        return EXIT_ERROR
    except KeyboardInterrupt:
        _error("interrupted")
        return EXIT_INTERRUPTED
    except Exception as exc:  # noqa: BLE001 - the boundary: anything else is a bug
        if _is_broken_pipe(exc):  # the reader went away (| head): stop quietly
            _detach_stdout()
            return EXIT_BROKEN_PIPE
        if debug_enabled():
            traceback.print_exc(file=sys.stderr)
        message = _one_line(str(exc))
        what = f"{type(exc).__name__}: {message}" if message else type(exc).__name__
        _error(f"internal error: {what} ({BUG_HINT})")
        return EXIT_INTERNAL
    finally:
        warnings.showwarning = _default_showwarning


def main() -> None:
    """Console-script entry point."""
    sys.exit(run())
