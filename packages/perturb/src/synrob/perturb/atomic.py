"""Atomic file writes: a reader sees the old file or the whole new one, never a partial one."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path
from typing import TextIO

__all__ = ["atomic_open", "write_text_atomic"]


@contextlib.contextmanager
def atomic_open(path: str | os.PathLike[str], *, newline: str | None = None) -> Iterator[TextIO]:
    """Write ``path`` (UTF-8 text) through a temporary file beside it, renamed on success.

    On an exception the temporary file is removed and ``path`` is left as it was.
    """
    dest = Path(path)
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = dest.with_name(f".{dest.name}.{os.getpid()}.tmp")
    try:
        with tmp.open("w", encoding="utf-8", newline=newline) as fh:
            yield fh
        os.replace(tmp, dest)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def write_text_atomic(path: str | os.PathLike[str], text: str) -> Path:
    """Replace ``path`` with ``text`` atomically; returns the path."""
    with atomic_open(path) as fh:
        fh.write(text)
    return Path(path)
