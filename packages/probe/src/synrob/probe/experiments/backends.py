"""Where the runs of a grid execute: in this process, a local process pool, ray, or dask.

Every backend calls the same :func:`execute_run` on an experiment instance shipped by value
(cloudpickle bytes, so experiments defined in ``__main__``, notebooks or tests work on every
engine), so results are identical whichever runs them; only the driver writes run files (see
:mod:`.runner`).
"""

from __future__ import annotations

import dataclasses
import os
import time
from collections.abc import Callable, Sequence
from typing import Any

from synrob.perturb.errors import ParameterError, ResourceError, arg

from ..runtime.threads import torch_threads
from .base import Context, Experiment, Row, RunSpec, run_threads

__all__ = ["BACKENDS", "check_workers", "execute_run", "execute_runs"]

BACKENDS = ("local", "ray", "dask")

#: ``(run id, spec, rows, seconds, where)`` called in the driver as each run finishes.
OnDone = Callable[[str, RunSpec, list[Row], float, dict[str, Any]], None]


def execute_run(experiment: Experiment, spec: RunSpec, ctx: Context
                ) -> tuple[list[Row], float, dict[str, Any]]:
    """Execute one run (in any process); return its rows, the seconds it took and where and
    when it ran: ``{"finished": UTC time, "host", "versions", "train_seconds", "threads",
    "gemm"}`` measured in that process (``train_seconds``: the part spent training probes,
    :mod:`..clock`; ``threads``: torch's threads in the run; ``gemm``: MKL's reproducibility
    mode, :func:`synrob.perturb.lm.blas.gemm_mode`)."""
    import platform

    import torch
    from synrob.perturb.lm.blas import gemm_mode

    from ..runtime.clock import TRAINING
    from ..runtime.provenance import utc_now, versions

    t0, trained = time.perf_counter(), TRAINING.seconds
    with torch_threads(ctx.threads):  # the run's share of the cores (base.run_threads)
        threads = torch.get_num_threads()
        rows = experiment.execute(spec, ctx)
    seconds = time.perf_counter() - t0
    return rows, seconds, {"finished": utc_now(), "host": platform.node(), "versions": versions(),
                           "train_seconds": round(TRAINING.seconds - trained, 3),
                           "threads": threads, "gemm": gemm_mode()}


def _execute_pickled(payload: bytes) -> tuple[list[Row], float, dict[str, Any]]:
    """:func:`execute_run` on a cloudpickled ``(experiment, spec, ctx)`` (any worker)."""
    import cloudpickle

    return execute_run(*cloudpickle.loads(payload))


def _shipped(experiment: Experiment, todo: Sequence[tuple[str, RunSpec]], ctx: Context
             ) -> list[tuple[str, RunSpec, bytes]]:
    """``(run id, spec, payload)`` per run, the payload for :func:`_execute_pickled`.

    cloudpickle ships the experiment by value: the process pool, dask (which pickles by
    reference when it can) and ray (which vendors its own cloudpickle) would otherwise need
    to import its class, which fails for experiments defined in ``__main__`` or tests.
    """
    import cloudpickle

    wctx = ctx.for_worker()
    return [(run_id, spec, cloudpickle.dumps((experiment, spec, wctx))) for run_id, spec in todo]


def _init_worker(threads: int) -> None:
    os.environ.setdefault("OMP_NUM_THREADS", str(threads))
    try:
        import torch

        torch.set_num_threads(threads)
    except ImportError:  # pragma: no cover - torch is a dependency of synrob-probe
        pass


def execute_runs(experiment: Experiment, todo: Sequence[tuple[str, RunSpec]], ctx: Context, *,
                 on_done: OnDone, backend: str = "local", workers: int = 1,
                 address: str | None = None) -> None:
    """Execute every ``(run id, spec)`` on ``backend``; ``on_done`` receives each result."""
    if backend not in BACKENDS:
        raise ParameterError(f"unknown backend {backend!r}; known: {', '.join(BACKENDS)}")
    check_workers(workers)
    if not todo:
        return
    if backend == "local":
        _local(experiment, todo, ctx, on_done, workers)
    elif backend == "dask":
        _dask(experiment, todo, ctx, on_done, workers, address)
    else:
        _ray(experiment, todo, ctx, on_done, workers, address)


def check_workers(workers: int) -> None:
    """Refuse fewer than one worker (before any work: the runner checks it first)."""
    if workers < 1:
        raise ParameterError(f"{arg('workers')} must be at least 1, got {workers}")


def _local(experiment: Experiment, todo: Sequence[tuple[str, RunSpec]], ctx: Context,
           on_done: OnDone, workers: int) -> None:
    if workers == 1 or len(todo) == 1:  # one run at a time here: one worker's share
        here = dataclasses.replace(ctx, threads=run_threads("local", 1))
        for run_id, spec in todo:
            on_done(run_id, spec, *execute_run(experiment, spec, here))
        return
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor, as_completed

    threads = run_threads("local", workers)
    with ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("spawn"),
                             initializer=_init_worker, initargs=(threads,)) as pool:
        futures = {pool.submit(_execute_pickled, payload): (run_id, spec)
                   for run_id, spec, payload in _shipped(experiment, todo, ctx)}
        for fut in as_completed(futures):
            run_id, spec = futures[fut]
            on_done(run_id, spec, *fut.result())


def _dask(experiment: Experiment, todo: Sequence[tuple[str, RunSpec]], ctx: Context,
          on_done: OnDone, workers: int, address: str | None) -> None:
    try:
        from distributed import Client, LocalCluster, as_completed
    except ImportError:
        raise ResourceError("backend 'dask' needs dask.distributed: "
                            "pip install 'synrob-probe[dask]'") from None
    cluster: Any = None
    if address:
        client = Client(address)
    else:  # the engine's local mode: a cluster of worker processes on this machine
        cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                               dashboard_address=None)
        client = Client(cluster)
    try:
        futures = {}
        for run_id, spec, payload in _shipped(experiment, todo, ctx):
            fut = client.submit(_execute_pickled, payload, pure=False,
                                key=f"synrob-{experiment.name}-{run_id}")
            futures[fut] = (run_id, spec)
        for fut in as_completed(list(futures)):
            run_id, spec = futures[fut]
            on_done(run_id, spec, *fut.result())
    finally:
        client.close()
        if cluster is not None:
            cluster.close()


def _ray(experiment: Experiment, todo: Sequence[tuple[str, RunSpec]], ctx: Context,
         on_done: OnDone, workers: int, address: str | None) -> None:
    try:
        import ray
    except ImportError:
        raise ResourceError("backend 'ray' needs ray: pip install 'synrob-probe[ray]'") from None
    started = False
    if not ray.is_initialized():
        if address:
            ray.init(address=address, log_to_driver=False)
        else:  # the engine's local mode: a one-machine cluster started for this grid
            ray.init(num_cpus=workers, include_dashboard=False, log_to_driver=False)
        started = True
    try:
        remote = ray.remote(num_cpus=1)(_execute_pickled)
        pending = {remote.remote(payload): (run_id, spec)
                   for run_id, spec, payload in _shipped(experiment, todo, ctx)}
        while pending:
            done, _ = ray.wait(list(pending), num_returns=1)
            for ref in done:
                run_id, spec = pending.pop(ref)
                on_done(run_id, spec, *ray.get(ref))
    finally:
        if started:
            ray.shutdown()
