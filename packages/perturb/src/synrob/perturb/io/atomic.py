"""Atomic file writes: a reader sees the old file or the whole new one, never a partial one.

Every file synrob writes (``-o`` outputs, saved probes, caches, experiment files, downloads)
goes through this module; no other module calls ``os.replace``. A writer gets a temporary file
*beside* the destination (same directory, so the final rename is atomic on POSIX), named
``.NAME.PID.RANDOM.tmp`` so that concurrent writers — processes or threads — never share one.
On success the temporary file is renamed onto the destination; on any exception, including
``KeyboardInterrupt``, it is removed and the destination is left as it was. A process killed by
``SIGKILL`` can leave a ``.*.tmp`` file behind, never a truncated destination.

A published file has the mode of any file the process creates (``0644`` under the usual umask
``022``), also when its writer made it private: ``safetensors.save_file`` writes through its own
``mkstemp``-style temporary file, which is ``0600``.
"""

from __future__ import annotations

import contextlib
import functools
import os
import stat
import uuid
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import IO, Any

from ..errors import ParameterError

__all__ = ["atomic_path", "atomic_open", "write_text_atomic", "write_bytes_atomic",
           "publish", "refuse_overwriting_inputs"]


def _tmp_beside(dest: Path) -> Path:
    return dest.with_name(f".{dest.name}.{os.getpid()}.{uuid.uuid4().hex[:8]}.tmp")


def publish(tmp: str | os.PathLike[str], dest: str | os.PathLike[str]) -> Path:
    """Rename a finished ``tmp`` (file or directory) onto ``dest`` in one atomic step."""
    os.replace(tmp, dest)
    return Path(dest)


@functools.cache
def _umask() -> int:
    """The process's umask, read without changing it where the system says it (Linux)."""
    with contextlib.suppress(OSError, ValueError):
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    mask = os.umask(0o022)  # elsewhere: set and restore at once
    os.umask(mask)
    return mask


def _usual_mode(tmp: Path) -> None:
    """Give the file ``tmp`` the mode a newly created file gets (``0666`` less the umask)."""
    mode = 0o666 & ~_umask()
    st = tmp.stat()
    if stat.S_ISREG(st.st_mode) and stat.S_IMODE(st.st_mode) != mode:
        tmp.chmod(mode)


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike[str]) -> Iterator[Path]:
    """A fresh temporary path beside ``path`` for writers that take a file name (a tokenizer's
    ``save``, ``safetensors.save_file``, ``np.save``); published onto ``path``, with the usual
    mode of a new file, when the block ends without an exception, removed otherwise."""
    dest = Path(path)
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = _tmp_beside(dest)
    try:
        yield tmp
        _usual_mode(tmp)
        publish(tmp, dest)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


@contextlib.contextmanager
def atomic_open(path: str | os.PathLike[str], mode: str = "w", *,
                newline: str | None = None) -> Iterator[IO[Any]]:
    """Open a temporary file beside ``path`` for writing (``mode`` ``"w"``: UTF-8 text, ``"wb"``:
    bytes); it replaces ``path`` when the block ends without an exception."""
    if mode not in ("w", "wb"):
        raise ValueError(f"atomic_open writes whole files: mode 'w' or 'wb', not {mode!r}")
    with atomic_path(path) as tmp:
        if mode == "wb":
            with tmp.open("xb") as fh:
                yield fh
        else:
            with tmp.open("x", encoding="utf-8", newline=newline) as fh:
                yield fh


def write_text_atomic(path: str | os.PathLike[str], text: str) -> Path:
    """Replace ``path`` with ``text`` (UTF-8) atomically; returns the path."""
    with atomic_open(path) as fh:
        fh.write(text)
    return Path(path)


def write_bytes_atomic(path: str | os.PathLike[str], data: bytes) -> Path:
    """Replace ``path`` with ``data`` atomically; returns the path."""
    with atomic_open(path, "wb") as fh:
        fh.write(data)
    return Path(path)


def refuse_overwriting_inputs(output: str | os.PathLike[str] | None,
                              inputs: Sequence[str | os.PathLike[str]]) -> None:
    """Raise :class:`ParameterError` when ``output`` is one of ``inputs`` (same file after
    resolving symlinks and ``..``, or the same inode), before anything is read or written.

    ``-`` (stdin) and non-file inputs such as ``ud:en_ewt:dev`` are ignored.
    """
    if output is None or str(output) == "-":
        return
    out = Path(output)
    out_real = out.resolve()
    for item in inputs:
        if str(item) == "-" or ":" in str(item) and not Path(item).exists():
            continue
        src = Path(item)
        same = src.resolve() == out_real
        if not same and src.exists() and out.exists():
            with contextlib.suppress(OSError):
                same = os.path.samefile(src, out)
        if same:
            raise ParameterError(
                f"output {str(output)!r} is the input file {str(item)!r}: refusing to overwrite "
                "an input; write to another path"
            )
