"""Run an experiment into a results directory, resuming whatever was finished before.

Layout of ``OUTDIR``::

    experiment.json   name, version, parameters, seed of the last run
    runs/ID.json      one finished run: its key, content key, rows, seconds and provenance
    data/             derived data (perturbed treebanks, task files), built by ``prepare``
    results.json      every row with the experiment's parameters, seed, runs and versions, then
                      the experiment's derived rows (drops, leads: ``derived: true``); fields
                      whose name starts with ``_`` (resampled values) stay in ``runs/``
    results.csv       the rows as CSV
    report.md, *.png  written by the experiment's ``report``
    report.html       one self-contained page: report.md, the figures inlined, every row of
                      results.json and the provenance (:mod:`synrob.probe.render.html_report`)

A run's id hashes the experiment's name, version and seed with the run's *content key*
(:func:`.data.content_key`: files by the SHA-256 of their content, perturbers by name, version
and full options, encoders by identity), never with paths. A run whose file exists is not
executed again, so re-running a finished experiment only rebuilds the report, and killing one
midway loses at most the runs in flight. A run file keeps the provenance of the execution that
produced it (time, host, package and component versions); reusing it does not re-stamp it.
"""

from __future__ import annotations

import json
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from synrob.perturb.errors import ParameterError, arg
from synrob.perturb.io.atomic import write_text_atomic
from synrob.perturb.lm.blas import ReproducibilityWarning, default_mode_warning

from ..render.html_report import write_report_html
from ..runtime.progress import Counter, Progress
from ..runtime.provenance import utc_now, versions
from .backends import check_workers, execute_runs
from .base import Context, Experiment, Row, RunSpec, run_threads
from .data import content_keys, key_components
from .intervals import public
from .report import write_csv

__all__ = ["ExperimentResult", "run_experiment", "run_time", "versions"]


@dataclass
class ExperimentResult:
    """What :func:`run_experiment` did: rows, files, runs reused and executed. ``rows`` keep
    their private fields (``_boot``: resampled values); :meth:`as_json` drops them."""

    experiment: str
    version: str
    options: dict[str, Any]
    seed: int
    outdir: Path
    rows: list[Row]
    runs: list[dict[str, Any]]
    files: list[Path] = field(default_factory=list)
    executed: int = 0
    reused: int = 0
    seconds: float = 0.0
    #: Wall seconds per stage of this invocation: the experiment's own (``perturbation``,
    #: ``encoding``, ...), ``other preparation`` (the rest of prepare and plan), ``runs`` (the
    #: grid: probe training and scoring) and ``report``.
    stages: dict[str, float] = field(default_factory=dict)
    #: The treebanks' language: ``{"code": "tr", "source": "from the file name ..."}``.
    lang: dict[str, str] = field(default_factory=dict)
    #: Where the executed runs' time went (:func:`run_time`): probe training against the rest.
    run_time: dict[str, Any] = field(default_factory=dict)

    def as_json(self) -> dict[str, Any]:
        """The content of ``results.json``."""
        return {
            "experiment": self.experiment, "version": self.version, "options": self.options,
            "lang": self.lang, "seed": self.seed, "written": utc_now(), "versions": versions(), "runs": self.runs,
            "executed": self.executed, "reused": self.reused,
            "seconds": round(self.seconds, 3), "stages": self.stages, "run_time": self.run_time,
            "files": [str(p.relative_to(self.outdir)) for p in self.files],
            "rows": [public(r) for r in self.rows],
        }


def _write_json(path: Path, obj: Any) -> None:
    write_text_atomic(path, json.dumps(obj, indent=1, ensure_ascii=False, default=str) + "\n")


def _check_outdir(outdir: Path, experiment: Experiment) -> None:
    if outdir.exists() and not outdir.is_dir():  # e.g. -o onto an input file: left alone
        raise ParameterError(f"{outdir}: not a directory ({arg('out')} takes a directory)")
    meta = outdir / "experiment.json"
    if meta.exists():
        try:
            name = json.loads(meta.read_text(encoding="utf-8")).get("experiment")
        except (OSError, ValueError):
            name = None
        if name != experiment.name:
            raise ParameterError(f"{outdir} holds results of experiment {name!r}, not "
                                 f"{experiment.name!r}; choose another {arg('out')}")


def _check_unique(experiment: Experiment, ids: list[str], specs: list[RunSpec]) -> None:
    """Refuse a grid two of whose runs have one content key (so one run id)."""
    first: dict[str, RunSpec] = {}
    for i, spec in zip(ids, specs, strict=True):
        if i in first:
            raise ParameterError(
                f"experiment {experiment.name}: runs {first[i].label or first[i].key!r} and "
                f"{spec.label or spec.key!r} of the grid have one content key (the same "
                "inputs, by content, and the same settings)")
        first[i] = spec


def run_experiment(experiment: Experiment, outdir: str | Path, *, seed: int = 0,
                   device: str = "auto", backend: str = "local", workers: int = 1,
                   address: str | None = None, force: bool = False,
                   progress: Progress | None = None,
                   on_run: Callable[[str, RunSpec, float], None] | None = None,
                   lang: str | None = None,
                   on_stage: Callable[[str, float], None] | None = None) -> ExperimentResult:
    """Prepare, execute the unfinished runs of the grid on ``backend``, then report.

    ``lang`` (``--lang``) overrides the language read from the experiment's treebank
    (:meth:`Experiment.language`); it is recorded in ``results.json`` and handed to every
    perturber. ``force`` re-executes finished runs. ``on_run(run id, spec, seconds)`` is called in this
    process as each run is saved. ``progress`` shows the experiment's own loops (encoding,
    perturbing) and the runs executed.
    """
    t0 = time.perf_counter()
    check_workers(workers)
    out = Path(outdir)
    lang_info = _start(out, experiment, lang, seed)
    runs_dir = out / "runs"
    ctx = Context(out, device=device, seed=seed, progress=progress, lang=lang_info["code"],
                  on_stage=on_stage, workers=workers if backend == "local" else 1,
                  threads=run_threads(backend, workers),
                  runs_here=backend == "local" and workers == 1)
    t_prep = time.perf_counter()
    experiment.prepare(ctx)
    specs = list(experiment.plan(ctx))
    ckeys = content_keys([s.key for s in specs], ctx.data_dir)
    ids = [RunSpec(ck).run_id(experiment.name, experiment.version + f"/seed={seed}")
           for ck in ckeys]
    _check_unique(experiment, ids, specs)
    ckey_of = dict(zip(ids, ckeys, strict=True))
    todo = [(i, s) for i, s in zip(ids, specs, strict=True)
            if force or not (runs_dir / f"{i}.json").exists()]

    warned: list[bool] = []
    counter = Counter(progress if todo else None, f"{experiment.name}: runs", len(todo))

    def save(run_id: str, spec: RunSpec, rows: list[Row], seconds: float,
             where: dict[str, Any]) -> None:
        if where.get("gemm") == "default" and not warned:  # once per experiment
            warnings.warn(default_mode_warning(), ReproducibilityWarning, stacklevel=2)
            warned.append(True)
        provenance = {**where, **key_components(ckey_of[run_id]), "key": dict(spec.key)}
        _write_json(runs_dir / f"{run_id}.json", {
            "id": run_id, "key": dict(spec.key), "content_key": ckey_of[run_id],
            "label": spec.label, "seconds": round(seconds, 3), "provenance": provenance,
            "rows": rows})
        counter.advance()
        if on_run is not None:
            on_run(run_id, spec, seconds)

    _residual(ctx, "other preparation", time.perf_counter() - t_prep)
    with ctx.stage("runs"):
        execute_runs(experiment, todo, ctx, on_done=save, backend=backend, workers=workers,
                     address=address)
        counter.close()
    rows, runs = _saved_runs(experiment.name, seed, runs_dir, list(zip(ids, specs, strict=True)),
                             ckey_of, {i for i, _ in todo})
    with ctx.stage("report"):
        files = experiment.report(rows, ctx)
        derived = [{"experiment": experiment.name, "run": None, "seed": seed, "derived": True,
                    **r} for r in experiment.derived_rows(rows)]
    rows = [*rows, *derived]
    result = ExperimentResult(experiment.name, experiment.version, dict(experiment.options), seed,
                              out, rows, runs, executed=len(todo),
                              reused=len(specs) - len(todo), lang=lang_info)
    files = [write_csv(out / "results.csv", [public(r) for r in rows]), *files]
    result.files = [out / "results.json", *files, out / "report.html"]
    result.seconds = time.perf_counter() - t0
    result.stages, result.run_time = {k: round(v, 3) for k, v in ctx.stages.items()}, run_time(runs)
    content = result.as_json()  # one dict: report.html shows exactly what results.json holds
    write_report_html(out, content)
    _write_json(out / "results.json", content)  # last: a complete results.json means done
    return result


def _saved_runs(name: str, seed: int, runs_dir: Path, grid: list[tuple[str, RunSpec]],
                ckey_of: dict[str, Any], fresh: set[str]
                ) -> tuple[list[Row], list[dict[str, Any]]]:
    """The rows of every run of ``grid`` (run id, spec) as saved in ``runs_dir``, and each
    run's record for results.json (``fresh``: the ids executed by this invocation)."""
    rows: list[Row] = []
    runs: list[dict[str, Any]] = []
    for run_id, spec in grid:
        saved = json.loads((runs_dir / f"{run_id}.json").read_text(encoding="utf-8"))
        runs.append({"id": run_id, "label": spec.label, "key": dict(spec.key),
                     "content_key": ckey_of[run_id], "seconds": saved["seconds"],
                     "reused": run_id not in fresh, "provenance": saved.get("provenance", {})})
        rows.extend({"experiment": name, "run": run_id, "seed": seed, **r}
                    for r in saved["rows"])
    return rows, runs


def run_time(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """Of the runs executed by this invocation: their seconds summed (each measured inside its
    worker: loading representations, training, scoring, bootstrap), the part spent training
    probes (``provenance.train_seconds``, :mod:`..clock`), and its share. Process start and
    shipping, outside any run, are the ``runs`` stage's wall time minus the runs' (with one
    worker)."""
    fresh = [r for r in runs if not r["reused"]]
    total = sum(float(r["seconds"]) for r in fresh)
    train = sum(float(r["provenance"].get("train_seconds", 0.0)) for r in fresh)
    return {"runs": len(fresh), "seconds": round(total, 3), "training_seconds": round(train, 3),
            "training_share": round(train / total, 4) if total > 0 else None}


def _start(out: Path, experiment: Experiment, lang: str | None, seed: int) -> dict[str, str]:
    """Check ``out``, make it, write ``experiment.json`` and make ``runs/``; returns the
    language."""
    _check_outdir(out, experiment)
    out.mkdir(parents=True, exist_ok=True)
    language = experiment.language(lang)
    lang_info = {"code": language.code, "source": language.source}
    _write_json(out / "experiment.json", {
        "experiment": experiment.name, "version": experiment.version,
        "options": experiment.options, "lang": lang_info, "seed": seed})
    (out / "runs").mkdir(exist_ok=True)
    return lang_info


def _residual(ctx: Context, name: str, seconds: float) -> None:
    """Record as stage ``name`` what of ``seconds`` no stage recorded so far accounts for."""
    ctx.record_stage(name, max(seconds - sum(ctx.stages.values()), 0.0))
