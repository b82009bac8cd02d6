"""The FLOP floor of an experiment's probe training on this machine (prints ``name: value`` lines).

Reads a finished experiment directory (``synrob run ... -o DIR``: the ``runs/*.json`` that its
``results.json`` lists) and counts,
for every structural or perceptron probe run, the floating-point work its training could not
skip, from the epochs it really ran (``epochs_run``) and the treebanks it read:

* per epoch, the projection ``t = h B`` of every training word forward and its gradient for
  ``B`` backward (2 x 2 x words x dim x rank FLOPs), the same projection of every dev word for
  the dev loss (2 x words x dim x rank), and the Gram products of the pairwise distances
  (2 x n^2 x rank per sentence forward, twice that backward; 2 x n^2 x rank for dev);
* the MSTs, spanning trees, optimiser steps, test scoring and everything else count 0.

``flop_floor_s`` is that work at this machine's fp32 matrix-product rate
(``matmul_gflops_fp32``: the best of ``--repeats`` measurements of bench/encode.py's
(2048 x 1024) x (1024 x 1024) ``torch.nn.functional.linear``, on ``--threads`` threads; their
median is printed as ``matmul_gflops_fp32_median``), so it is a lower bound of the runs' wall
time on the whole machine (all ``--threads`` cores): no implementation of the same runs can be
faster here. The best, not the median: on a shared machine the rate measured after the runs
fell to 101 GFLOP/s in one measurement and was 171 in the one before (2026-11-27), and a
median taken in a busy minute would lower the bar. ``runs_seconds_sum`` adds the runs' own
``seconds`` (with ``--workers N`` they overlapped, so it is not the wall time).
``runs_over_floor`` is ``runs_seconds_sum`` over ``flop_floor_s``: with ``--workers N`` each
run has 1/N of the cores (``synrob.probe.experiments.base.run_threads``), its products go at
about 1/N of the N-thread rate, so this ratio cannot go below about N even for runs that do
nothing but the counted products; with one worker (the default) the runs do not overlap, have
every core, and the ratio is ``runs_wall_over_floor``. ``runs_wall_over_floor``
is the ``runs`` stage's wall time (``results.json``, printed as ``runs_wall_s``) over the floor:
the whole machine's time against the whole machine's floor. A run that trained on the
first ``train_sentences`` sentences (its key) is counted on those only.
``--target-s`` prints it beside the floor (``floor_over_target``). Runs of other probes are
counted in ``runs_not_counted`` and left out (the floor stays a lower bound).

Usage: ``python bench/experiment_floor.py DIR [--threads 2] [--repeats 10] [--target-s 322.5]``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path
from typing import Any

_PROBES = ("structural", "perceptron")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("run_dir", type=Path)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--repeats", type=int, default=10)
    ap.add_argument("--target-s", type=float, default=0.0)
    args = ap.parse_args()
    runs = [json.loads(p.read_text()) for p in _run_files(args.run_dir)]
    if not runs:
        sys.exit(f"{args.run_dir}: no runs/*.json")
    counted, flop, epochs, seconds = 0, 0.0, 0, 0.0
    for run in runs:
        seconds += float(run.get("seconds", 0.0))
        key = run["key"]
        if key.get("kind") != "probe" or key.get("probe") not in _PROBES:
            continue
        # one run may train several layers together (its rows carry each layer's epochs)
        e = sum({r.get("layer"): int(r["epochs_run"]) for r in run["rows"]
                 if r.get("epochs_run") is not None}.values())
        dim = _dim(key["encoder"], key.get("encoder_params", {}))
        rank = int(key.get("probe_params", {}).get("rank", 0)) or dim
        limit = int(key.get("train_sentences") or 0) or None
        flop += e * (_epoch_flop(_corpus(key["train"], limit), dim, rank, train=True)
                     + _epoch_flop(_corpus(key["dev"]), dim, rank, train=False))
        counted, epochs = counted + 1, epochs + e
    rates = _gflops(args.threads, args.repeats)
    gflops = max(rates)
    floor = flop / (gflops * 1e9)
    print(f"runs: {len(runs)}")
    print(f"runs_counted: {counted}")
    print(f"runs_not_counted: {len(runs) - counted}")
    print(f"epochs_counted: {epochs}")
    print(f"probe_tflop: {flop / 1e12:.3f}")
    print(f"matmul_gflops_fp32: {gflops:.1f}")
    print(f"matmul_gflops_fp32_median: {statistics.median(rates):.1f}")
    print(f"flop_floor_s: {floor:.1f}")
    print(f"runs_seconds_sum: {seconds:.0f}")  # summed over workers: not the wall time
    print(f"runs_over_floor: {seconds / floor:.2f}" if floor else "runs_over_floor: nan")
    wall = _runs_wall(args.run_dir)
    if wall is not None:  # the runs stage's wall time: workers overlap in it
        print(f"runs_wall_s: {wall:.1f}")
        print(f"runs_wall_over_floor: {wall / floor:.2f}" if floor
              else "runs_wall_over_floor: nan")
    if args.target_s:
        print(f"target_s: {args.target_s:.1f}")
        print(f"floor_over_target: {floor / args.target_s:.2f}")


def _run_files(run_dir: Path) -> list[Path]:
    """The ``runs/ID.json`` of the runs ``results.json`` lists (a directory re-run with another
    plan, e.g. other ``fuse_layers``, keeps the other plan's run files); all of ``runs/``
    without it."""
    try:
        listed = json.loads((run_dir / "results.json").read_text()).get("runs")
    except (OSError, ValueError):
        listed = None
    if isinstance(listed, list) and listed:
        return [run_dir / "runs" / f"{r['id']}.json" for r in listed]
    return sorted((run_dir / "runs").glob("*.json"))


def _runs_wall(run_dir: Path) -> float | None:
    """The wall seconds of the ``runs`` stage (``results.json``), or None without it."""
    try:
        stages = json.loads((run_dir / "results.json").read_text()).get("stages", {})
    except (OSError, ValueError):
        return None
    wall = stages.get("runs") if isinstance(stages, dict) else None
    return float(wall) if isinstance(wall, (int, float)) else None


_STATS: dict[tuple[str, int | None], tuple[int, int]] = {}


def _corpus(path: str, limit: int | None = None) -> tuple[int, int]:
    """(words, sum of squared sentence lengths) of the first ``limit`` sentences (all when
    None) of a CoNLL-U file (syntactic words): the run's ``train_sentences`` are what it
    trained on."""
    if (path, limit) not in _STATS:
        from synrob.perturb.corpus import read_conllu

        lens = [len(s.forms) for s in read_conllu(path)][:limit]
        _STATS[(path, limit)] = (sum(lens), sum(n * n for n in lens))
    return _STATS[(path, limit)]


def _epoch_flop(corpus: tuple[int, int], dim: int, rank: int, *, train: bool) -> float:
    """FLOPs of one epoch over ``corpus`` (words, sum n^2): projection forward (and its
    gradient for B when ``train``) plus the Gram products (3x with their backward)."""
    words, sq = corpus
    passes = 2 if train else 1
    return passes * 2 * words * dim * rank + (3 if train else 1) * 2 * sq * rank


_DIMS: dict[str, int] = {}


def _dim(encoder: str, params: dict[str, Any]) -> int:
    """The encoder's vector size (no weights loaded where the config says it)."""
    spec = json.dumps([encoder, params], sort_keys=True)
    if spec not in _DIMS:
        from synrob.probe.encoders.resolve import resolve_encoder

        _DIMS[spec] = int(resolve_encoder(encoder, dict(params)).dim)
    return _DIMS[spec]


def _gflops(threads: int, repeats: int) -> list[float]:
    """``repeats`` measurements of bench/encode.py's fp32 GFLOP/s of the bound's linear layer,
    on ``threads`` CPU threads."""
    import torch
    from encode import _linear_gflops  # bench/ is this script's directory, first on sys.path

    torch.set_num_threads(threads)
    return [_linear_gflops(torch, "float32", "cpu") for _ in range(max(repeats, 1))]


if __name__ == "__main__":
    main()
