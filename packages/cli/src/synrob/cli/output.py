"""Terminal helpers for commands: progress bars and messages on stderr, data on stdout."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable, Iterator
from typing import Any, TypeVar

T = TypeVar("T")


def info(message: str) -> None:
    """A human message on stderr (stdout stays machine-readable)."""
    print(message, file=sys.stderr)


def emit_json(obj: Any) -> None:
    """One JSON object on one line of stdout."""
    sys.stdout.write(json.dumps(obj, ensure_ascii=False) + "\n")


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
