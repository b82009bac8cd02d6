"""Terminal helpers for commands: progress bars and messages on stderr, data on stdout."""

from __future__ import annotations

import contextlib
import json
import math
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import IO, Any, TypeVar

T = TypeVar("T")


def info(message: str) -> None:
    """A human message on stderr (stdout stays machine-readable)."""
    print(message, file=sys.stderr)


@contextlib.contextmanager
def output_file(output: str | Path | None, inputs: Sequence[str | Path] = ()) -> Iterator[IO[str]]:
    """stdout (``output`` None or ``-``) or ``output`` written atomically: the file appears only
    when the block ends without an error, so a failed or killed run leaves the old file (or
    none). An ``output`` that is one of ``inputs`` is refused before anything is read."""
    from synrob.perturb.io.atomic import atomic_open, refuse_overwriting_inputs

    if output is None or str(output) == "-":
        yield sys.stdout
        sys.stdout.flush()
        return
    refuse_overwriting_inputs(output, inputs)
    with atomic_open(output, newline="\n") as fh:
        yield fh


def _finite(obj: Any) -> Any:
    """NaN and infinite floats as None (JSON has neither), recursively."""
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    if isinstance(obj, dict):
        return {k: _finite(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_finite(v) for v in obj]
    return obj


def emit_json(obj: Any) -> None:
    """One JSON object on one line of stdout (NaN, e.g. an undefined metric, as null)."""
    sys.stdout.write(json.dumps(_finite(obj), ensure_ascii=False, allow_nan=False) + "\n")


def progress(items: Iterable[T], description: str, total: int | None = None) -> Iterator[T]:
    """Iterate with a rich progress bar on stderr (hidden when stderr is not a terminal)."""
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        SpinnerColumn,
        TextColumn,
        TimeElapsedColumn,
    )

    console = Console(file=sys.stderr)
    columns = [SpinnerColumn(), TextColumn("{task.description}"), BarColumn(),
               MofNCompleteColumn(), TimeElapsedColumn()]
    with Progress(*columns, console=console, transient=True,
                  disable=not console.is_terminal) as bar:
        task = bar.add_task(description, total=total)
        for item in items:
            yield item
            bar.advance(task)


@contextlib.contextmanager
def progress_callback(description: str) -> Iterator[Callable[[int, int], None]]:
    """A rich progress bar on stderr driven by a ``callback(done, total)`` (what the Python
    API's ``progress=`` parameters call); hidden when stderr is not a terminal."""
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    console = Console(file=sys.stderr)
    columns = [TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
               TimeElapsedColumn()]
    with Progress(*columns, console=console, transient=True,
                  disable=not console.is_terminal) as bar:
        task = bar.add_task(description, total=None)

        def update(done: int, total: int) -> None:
            bar.update(task, completed=done, total=total)

        yield update
