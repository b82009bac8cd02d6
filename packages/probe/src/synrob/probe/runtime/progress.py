"""Progress of the long API calls (``encode``, ``probe``, ``erase``, ``score_pairs``,
``run_experiment``): the callback types they take, and the bars they show by default.

Every ``progress=`` parameter takes ``True`` (the default: :func:`auto_progress`), ``False``
(nothing shown) or a :class:`Progress`: a function called with a loop's items, a description
and their number, returning the items to iterate over. ``tqdm.tqdm``, ``tqdm.auto.tqdm`` and
``rich.progress.track`` have that shape, so any of them can be passed as it is.

:func:`auto_progress` shows a ``tqdm`` widget in a Jupyter kernel that has ``ipywidgets``
(``pip install 'synrob-probe[notebook]'``), plain lines on stderr in a kernel without it (no
``IProgress not found`` warning), a transient ``tqdm`` bar on a terminal's stderr, and nothing
when stderr is not a terminal (a script piped to a file, a test run). It changes no global state.
"""

from __future__ import annotations

import importlib.util
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import IO, Any, Protocol, TypeAlias, TypeVar

from synrob.perturb.errors import ParameterError

__all__ = ["Counter", "Progress", "ProgressOption", "RunCallback", "RunCell", "StageCallback",
           "auto_progress", "display_kind", "plain_lines", "resolve_progress"]

T = TypeVar("T")

#: Seconds between two of :func:`plain_lines`' lines (the first and last are always written).
LINE_INTERVAL = 10.0


class Progress(Protocol):
    """Shows a loop's progress: ``progress(items, description, total)`` returns an iterable
    of the same items (``total`` their number, None when unknown). ``tqdm.tqdm``,
    ``tqdm.auto.tqdm`` and ``rich.progress.track`` are ``Progress`` functions."""

    def __call__(self, items: Iterable[T], description: str, /, total: int | None = None
                 ) -> Iterable[T]: ...


#: What the ``progress=`` parameters take: True (bars where someone watches), False, a function.
ProgressOption: TypeAlias = bool | Progress | None
#: ``on_stage(stage, seconds)``: an experiment finished a stage (``prepare: encoding``, ``runs``,
#: ``report``, ...) that took ``seconds``.
StageCallback: TypeAlias = Callable[[str, float], None]


class RunCell(Protocol):
    """An experiment's run as a callback sees it (:class:`synrob.probe.experiments.base.RunSpec`
    is one): ``key``, everything the run's result depends on, and a ``label``."""

    @property
    def key(self) -> Mapping[str, Any]: ...

    @property
    def label(self) -> str: ...


#: ``on_run(run_id, spec, seconds)``: an experiment's run (its grid cell ``spec``) finished and
#: was saved after ``seconds``.
RunCallback: TypeAlias = Callable[[str, RunCell, float], None]


def resolve_progress(option: ProgressOption) -> Progress | None:
    """The :class:`Progress` of a ``progress=`` argument: True is :func:`auto_progress`;
    False and None are none; a callable is itself."""
    if option is True:
        return auto_progress
    if option is False or option is None:
        return None
    if callable(option):
        return option
    raise ParameterError(f"progress must be True, False or a function (items, description, "
                         f"total) -> items, not {option!r}")


def display_kind() -> str:
    """Where :func:`auto_progress` shows bars now: ``widget`` (a Jupyter kernel with
    ipywidgets), ``lines`` (a kernel without), ``terminal`` (anything else: tqdm on stderr,
    shown only when stderr is a terminal)."""
    if not _in_kernel():
        return "terminal"
    if importlib.util.find_spec("ipywidgets") is None:
        return "lines"
    from tqdm import notebook  # imports ipywidgets; IProgress is None where that failed

    return "widget" if getattr(notebook, "IProgress", None) is not None else "lines"


def _in_kernel() -> bool:
    """Whether this process is a Jupyter kernel (IPython is imported and runs an IPKernelApp);
    never imports IPython."""
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None else None
    return shell is not None and "IPKernelApp" in getattr(shell, "config", {})


def auto_progress(items: Iterable[T], description: str, /, total: int | None = None
                  ) -> Iterable[T]:
    """The default :class:`Progress` (see the module docstring)."""
    kind = display_kind()
    if kind == "lines":
        return plain_lines(items, description, total)
    if kind == "widget":
        from tqdm.notebook import tqdm as notebook_tqdm

        return notebook_tqdm(items, desc=description, total=total)
    from tqdm.std import tqdm

    return tqdm(items, desc=description, total=total, file=sys.stderr, disable=None,
                leave=False, dynamic_ncols=True)


def plain_lines(items: Iterable[T], description: str, /, total: int | None = None, *,
                file: IO[str] | None = None, interval: float = LINE_INTERVAL) -> Iterator[T]:
    """A :class:`Progress` of plain lines on ``file`` (stderr): one as the loop starts, one at
    most every ``interval`` seconds, one with the time taken as it ends."""
    out = file if file is not None else sys.stderr
    of = f"/{total}" if total is not None else ""
    t0 = last = time.perf_counter()
    print(f"synrob: {description}: 0{of}", file=out, flush=True)
    done = 0
    for item in items:
        yield item
        done += 1
        now = time.perf_counter()
        if now - last >= interval:
            print(f"synrob: {description}: {done}{of} ({now - t0:.0f} s)", file=out, flush=True)
            last = now
    print(f"synrob: {description}: {done}{of} done in {time.perf_counter() - t0:.1f} s",
          file=out, flush=True)


class Counter:
    """A :class:`Progress` driven by counts, for loops that report how much they did
    (``counter.advance(n)``) instead of iterating: it iterates ``range(total)`` through the
    progress function as the counts come. ``close()`` ends the bar (all counted)."""

    def __init__(self, progress: Progress | None, description: str, total: int) -> None:
        self.total = total
        self.done = 0
        self._steps: Iterator[Any] | None = None
        if progress is not None:
            self._steps = iter(progress(range(total), description, total))
            next(self._steps, None)  # the bar starts at 0

    def advance(self, n: int = 1) -> None:
        """Count ``n`` more items done."""
        for _ in range(max(0, min(n, self.total - self.done))):
            self.done += 1
            if self._steps is not None:
                next(self._steps, None)

    def advance_to(self, done: int, total: int | None = None) -> None:
        """Count up to ``done`` items in all (a ``callback(done, total)``)."""
        self.advance(done - self.done)

    def close(self) -> None:
        """Count every item not yet counted (ends the bar)."""
        self.advance(self.total - self.done)
        if self._steps is not None:
            next(self._steps, None)  # the loop ends: the bar closes
