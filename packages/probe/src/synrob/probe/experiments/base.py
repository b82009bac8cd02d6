"""The experiment component: a grid of independent runs, then a report.

An experiment is a registered component (hook ``synrob_register_experiments``) with the same
class attributes as every other component (``name``, ``version``, ``summary``, ``paper``,
``params``) plus ``presets``. The runner (:mod:`.runner`) calls, in order:

1. :meth:`Experiment.prepare` once, in the driver process: build the derived data files
   (perturbed test sets, ...) and fill the representation cache, so runs only read;
2. :meth:`Experiment.plan`: the grid, a list of :class:`RunSpec` whose ``key`` holds every
   value the run depends on (its id is a hash of experiment, version and key, so a finished run
   is reused and a changed parameter is a new run);
3. :meth:`Experiment.execute` for each run not finished yet, anywhere (a process pool, ray or
   dask worker): returns result rows (flat JSON-able dicts, one number each under ``value``);
4. :meth:`Experiment.report` with every row: writes ``report.md`` and PNG plots;
5. :meth:`Experiment.derived_rows`: the numbers computed across runs (drops and leads with their
   intervals, :mod:`.intervals`), added to ``results.json``.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from synrob.perturb.io.language import Language
from synrob.perturb.params import Param, parse_params

if TYPE_CHECKING:
    from ..render.figures import Figure

__all__ = ["Context", "Experiment", "RunSpec", "Row", "TREEBANK_SPLITS", "split_list",
           "layer_runs", "FUSE_LAYERS"]

#: One result: flat, JSON-able; ``metric`` and ``value`` plus the run's coordinates.
Row = dict[str, Any]


#: an experiment's ``fuse_layers`` parameter
FUSE_LAYERS = Param("fuse_layers", str, "auto",
                    "train the layers of a probe that can in one run (the same weights as one "
                    "run per layer): true, false, or auto: where that is faster for a run of "
                    "one thread, i.e. on a GPU (so the runs do not depend on --workers)",
                    ("auto", "true", "false"))


def layer_runs(layers: list[int], task: str, probe: str | None, fuse: str,
               device: str) -> list[list[int]]:
    """The layers of one encoder as an experiment's runs: all in one run when ``probe`` (the
    task's default probe when None) trains the layers of ``task`` together
    (:func:`synrob.probe.training.probing.train_layers`: the same weights) and ``fuse`` (a
    :data:`FUSE_LAYERS` value) says so - ``auto``: where it is faster on ``device`` for a run
    with one thread (:func:`synrob.probe.training.probing.fusion_pays`) - else one run per layer."""
    from synrob.perturb.plugins import get_registry
    from synrob.probe.training.probing import fusing

    reg = get_registry()
    task_cls = reg.get("task", task)
    probe_obj = reg.get("probe", probe or task_cls.default_probe)()
    wanted = {"true": True, "false": False}.get(fuse)  # auto: None
    if fusing(wanted, probe_obj, task_cls.kind, device, len(layers), threads=1):
        return [list(layers)]
    return [[layer] for layer in layers]


def split_list(value: Any, cast: Callable[[str], Any] = str) -> list[Any]:
    """``"a, b"`` or ``["a", "b"]`` -> ``["a", "b"]`` (each item passed through ``cast``)."""
    if value is None:
        return []
    items = value if isinstance(value, (list, tuple)) else str(value).split(",")
    return [cast(str(v).strip()) for v in items if str(v).strip()]


@dataclass(frozen=True)
class RunSpec:
    """One independent run of the grid: ``key`` is everything the run's result depends on."""

    key: Mapping[str, Any]
    label: str = ""

    def run_id(self, experiment: str, version: str) -> str:
        """Stable 16-hex id of (experiment, version, key)."""
        blob = json.dumps([experiment, version, self.key], sort_keys=True, default=str)
        return hashlib.sha256(blob.encode()).hexdigest()[:16]


@dataclass
class Context:
    """Where an experiment works: output directory, device, seed, progress (driver only)."""

    outdir: Path
    device: str = "auto"
    seed: int = 0
    progress: Callable[..., Any] | None = field(default=None, compare=False, repr=False)
    #: Wall seconds per named stage of this invocation (driver only; :meth:`stage`).
    stages: dict[str, float] = field(default_factory=dict, compare=False, repr=False)
    #: The language of the experiment's treebanks (:meth:`Experiment.language`).
    lang: str = "en"
    #: Called with ``(stage, seconds)`` as each stage ends (driver only): a run stopped
    #: before its report still shows where its time went.
    on_stage: Callable[[str, float], None] | None = field(default=None, compare=False,
                                                           repr=False)
    #: Processes the driver may use to prepare (``--workers``; e.g. to build perturbed files).
    workers: int = 1
    #: torch intra-op threads of each run (0: the process's own; :func:`run_threads`).
    threads: int = 0
    #: Whether the runs execute in this process, after :meth:`Experiment.prepare` (the local
    #: backend with one worker): a model loaded to prepare can then serve them too.
    runs_here: bool = True

    def lm_for_encoders(self, lm: str) -> str | None:
        """``lm`` (a causal LM the runs score with, ``""``: none) when the runs execute in this
        process, for :class:`~synrob.probe.representations.encoding.LoadedEncoders` and
        :meth:`Encoder.share_lm`: an encoder of its model then uses its blocks; else None."""
        lm = lm.strip()
        return lm if lm and self.runs_here else None

    @contextlib.contextmanager
    def stage(self, name: str) -> Iterator[None]:
        """Add the wall time of the ``with`` block to ``stages[name]`` (e.g. ``perturbation``,
        ``encoding`` in :meth:`Experiment.prepare`); the runner adds ``runs`` and ``report``."""
        t0 = time.perf_counter()
        try:
            yield
        finally:
            self.record_stage(name, time.perf_counter() - t0)

    def record_stage(self, name: str, seconds: float) -> None:
        """Add ``seconds`` to ``stages[name]`` and tell :attr:`on_stage`."""
        self.stages[name] = self.stages.get(name, 0.0) + seconds
        if self.on_stage is not None:
            self.on_stage(name, seconds)

    @property
    def data_dir(self) -> Path:
        """``OUTDIR/data``: derived data files (perturbed treebanks, task files)."""
        path = self.outdir / "data"
        path.mkdir(parents=True, exist_ok=True)
        return path

    def for_worker(self) -> Context:
        """A picklable copy for a worker process (no progress callback)."""
        return Context(self.outdir, self.device, self.seed, None, lang=self.lang,
                       threads=self.threads)


def run_threads(backend: str, workers: int) -> int:
    """The torch threads each run gets (:attr:`Context.threads`), its share of the cores:
    all of the driver's with one local worker (0: the process's own; also when a local grid
    has a single run to execute), ``cpu_count // workers`` in a local pool of ``workers``
    processes, and 1 on dask and ray, whose workers run a task per CPU
    (``threads_per_worker=1``, ``num_cpus=1``). A run's results do not depend on it:
    the probes' training gives the same bits on 1 and 2 threads (tests/probe/test_threads.py)."""
    if backend != "local":
        return 1
    return 0 if workers <= 1 else max(1, (os.cpu_count() or 1) // workers)


#: The ``treebank`` parameter of the built-in studies: ``ud:NAME`` or a directory of
#: ``NAME-ud-{train,dev,test}.conllu`` files sets ``train``, ``dev`` and ``test`` at once.
TREEBANK_SPLITS = Param("treebank", str, "", "shortcut for train, dev and test: ud:NAME (e.g. "
                        "ud:tr_boun) or a directory of NAME-ud-{train,dev,test}.conllu files; "
                        "any UD language")


class Experiment:
    """Base class of experiments (see the module docstring for the protocol)."""

    name: ClassVar[str] = ""
    version: ClassVar[str] = "0.1.0"
    summary: ClassVar[str] = ""
    paper: ClassVar[str] = ""
    params: ClassVar[tuple[Param, ...]] = ()
    #: Named parameter sets; ``default`` is the parameters' own defaults.
    presets: ClassVar[dict[str, dict[str, Any]]] = {}
    #: The parameter naming the treebank(s) whose language is the experiment's.
    language_param: ClassVar[str] = "test"

    def __init__(self, **options: Any) -> None:
        given = {k: (",".join(map(str, v)) if isinstance(v, (list, tuple)) else v)
                 for k, v in options.items()}
        self.options: dict[str, Any] = parse_params(self.params, given, f"experiment {self.name}")
        if self._has_split_shortcut() and self.options.get("treebank"):
            self._set_splits(given)
        if int(self.options.get("bootstrap", 0)) < 0:
            from synrob.perturb.errors import ParameterError

            raise ParameterError(f"experiment {self.name}: bootstrap must be 0 (no intervals) or "
                                 f"more, not {self.options['bootstrap']}")

    @classmethod
    def _has_split_shortcut(cls) -> bool:
        """Whether the experiment declares :data:`TREEBANK_SPLITS` (its own ``treebank``
        parameter, if any, keeps its own meaning)."""
        return TREEBANK_SPLITS in cls.params

    def _set_splits(self, given: Mapping[str, Any]) -> None:
        """``treebank`` (``ud:NAME`` or a directory) sets ``train``, ``dev`` and ``test``."""
        from synrob.perturb.errors import ParameterError
        from synrob.perturb.io.data import split_specs

        both = [s for s in ("train", "dev", "test") if s in given]
        if both:
            raise ParameterError(f"experiment {self.name}: give 'treebank' or "
                                 f"{'/'.join(both)}, not both")
        self.options.update(split_specs(str(self.options["treebank"])))

    @classmethod
    def from_preset(cls, preset: str = "default", **overrides: Any) -> Experiment:
        """An instance with the preset's parameters, then ``overrides``."""
        from synrob.perturb.errors import ParameterError

        if preset != "default" and preset not in cls.presets:
            known = ", ".join(["default", *cls.presets])
            raise ParameterError(f"experiment {cls.name}: unknown preset {preset!r}; known: {known}")
        chosen = dict(cls.presets.get(preset, {}))
        if cls._has_split_shortcut() and overrides.get("treebank"):
            # the given treebank replaces the preset's splits
            chosen = {k: v for k, v in chosen.items() if k not in ("train", "dev", "test")}
        return cls(**{**chosen, **overrides})

    def language(self, given: str | None = None) -> Language:
        """The experiment's language: ``given`` (``--lang``), else that of the first file of
        :attr:`language_param` (a UD file name or ``# synrob.lang``), else English."""
        from synrob.perturb.io.language import language_of_spec

        spec = str(self.options.get(self.language_param) or "").split(",")[0].strip()
        return language_of_spec(spec, given)

    # -------------------------------------------------------------- the protocol
    def prepare(self, ctx: Context) -> None:
        """Build derived data and warm caches (driver process, before any run)."""

    def plan(self, ctx: Context) -> Sequence[RunSpec]:
        """The grid of independent runs."""
        raise NotImplementedError

    def execute(self, spec: RunSpec, ctx: Context) -> list[Row]:
        """Run one cell of the grid; return its rows."""
        raise NotImplementedError

    def report(self, rows: list[Row], ctx: Context) -> list[Path]:
        """Write ``report.md`` and plots into ``ctx.outdir``; return the files written."""
        from .report import write_markdown

        return [write_markdown(ctx.outdir / "report.md", f"# {self.name}", [])]

    def derived_rows(self, rows: list[Row]) -> list[Row]:
        """Numbers computed across runs (drops, leads) with their intervals and p-values, as
        rows for ``results.json`` (the runner adds ``derived: true``); none by default."""
        return []

    def figure(self, rows: list[Row]) -> Figure | None:
        """The report's main figure drawn from ``rows`` (the runs' rows as ``results.json``
        holds them, derived rows left out): what ``ExperimentResults.plot()`` returns, a
        :class:`synrob.probe.render.figures.Figure`; None when the experiment draws none."""
        return None

    # -------------------------------------------------------------- helpers
    def list(self, name: str, cast: Callable[[str], Any] = str) -> list[Any]:
        """A comma-separated parameter as a list."""
        return split_list(self.options[name], cast)
