"""Benchmark: ``synrob card`` on SmolLM2 with the ``sample`` preset (prints ``name: value``
lines; no timed tests).

Every card runs in this process, as ``synrob card`` runs with one local worker, instrumented:

* ``card_sample_cold_s``: SmolLM2-135M, English, ``--preset sample``, from an empty
  ``SYNROB_CACHE`` (the GGUF dequantised, every representation, LM score and probe made);
* ``forward_and_training_share``: the share of the cold card spent in model forward passes
  (every top-level call of a transformers model: the encoders' and the LM's scoring) and probe
  training (the probes' training loop, :data:`synrob.probe.runtime.clock.TRAINING`, and the
  amnesic study's softmax fits); ``forward_s`` and ``training_s`` apart, the rest
  ``overhead_s``;
* ``card_sample_warm_s``: the same command again (every run reused);
* ``added_language_s``: the card made again with ``--languages en,cs`` (Czech PUD's 300
  sentences of tests/data/ud, split 80/10/10); ``fresh_language_s``: a card of cs alone in a
  new directory and a new cache that holds only the dequantised model, for comparison;
  ``added_language_runs`` (runs executed: cs's only) and ``fresh_language_runs``;
* ``model_parses_per_process`` and its parts (bench/amnesic.py's counts) of the cold card;
* the machine: ``cpu_model``, ``date``, ``threads``, ``loadavg_start``, ``loadavg_end``
  (a shared machine's other work shows there).

``--dask`` adds ``dask_card_equal``: the cold card's English made again from an empty card
directory on a local dask cluster of 2 workers (the caches kept), 1 when every number equals
the local card's.

    python bench/card.py [--preset sample] [--out DIR] [--dask]
"""

from __future__ import annotations

import argparse
import datetime
import functools
import os
import shutil
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
CS = ROOT / "tests" / "data" / "ud" / "cs_pud" / "cs_pud-ud-test.conllu"


def emit(name: str, value: Any) -> None:
    print(f"{name}: {f'{value:.3f}' if isinstance(value, float) else value}", flush=True)


class Clocks:
    """Seconds in model forward passes and in probe training, each counted once."""

    def __init__(self) -> None:
        self.forward = 0.0
        self.fits = 0.0
        self._depth = threading.local()

    def forward_call(self, call: Any) -> Any:
        clocks = self

        @functools.wraps(call)
        def timed(module: Any, *args: Any, **kwargs: Any) -> Any:
            depth = getattr(clocks._depth, "n", 0)
            clocks._depth.n = depth + 1
            t0 = time.perf_counter()
            try:
                return call(module, *args, **kwargs)
            finally:
                clocks._depth.n = depth
                if depth == 0:
                    clocks.forward += time.perf_counter() - t0

        return timed

    def fit_call(self, fit: Any) -> Any:
        @functools.wraps(fit)
        def timed(*args: Any, **kwargs: Any) -> Any:
            t0 = time.perf_counter()
            try:
                return fit(*args, **kwargs)
            finally:
                self.fits += time.perf_counter() - t0

        return timed


def instrument(clocks: Clocks) -> None:
    """Time every top-level transformers forward and every softmax probe fit."""
    import torch
    import transformers
    from synrob.probe.causal.erasure import amnesic, softmax

    transformers.PreTrainedModel.__call__ = clocks.forward_call(torch.nn.Module.__call__)
    amnesic.fit_softmax = clocks.fit_call(softmax.fit_softmax)


def _card(args: list[str]) -> tuple[float, str]:
    """``synrob ARGS`` in this process: seconds, and its stderr's summary line."""
    import io
    from contextlib import redirect_stderr, redirect_stdout

    from synrob.cli.app import run

    err = io.StringIO()
    t0 = time.perf_counter()
    with redirect_stdout(io.StringIO()), redirect_stderr(err):
        code = run(args)
    seconds = time.perf_counter() - t0
    if code != 0:
        raise SystemExit(f"synrob {' '.join(args)} failed ({code}): {err.getvalue()[-2000:]}")
    summary = next((ln for ln in err.getvalue().splitlines() if "runs executed" in ln), "")
    return seconds, summary


def _executed(summary: str) -> int:
    """The runs executed, from ``synrob: card MODEL: N runs executed, ...``."""
    import re

    return int(re.search(r"(\d+) runs executed", summary).group(1))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--preset", default="sample")
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--dask", action="store_true")
    opts = ap.parse_args()
    out = opts.out or Path(tempfile.mkdtemp(prefix="synrob-bench-card-"))
    out.mkdir(parents=True, exist_ok=True)
    os.environ["SYNROB_CACHE"] = str(out / "cache")
    shutil.rmtree(out / "cache", ignore_errors=True)

    sys.path.insert(0, str(Path(__file__).parent))
    import torch
    from amnesic import Counts, Phases, emit_counts
    from amnesic import instrument as count_reads
    from mst import cpu_model

    emit("cpu_model", cpu_model())
    emit("date", datetime.date.today().isoformat())
    emit("threads", torch.get_num_threads())
    emit("preset", opts.preset)
    emit("loadavg_start", f"{os.getloadavg()[0]:.2f}")
    counts, clocks = Counts(), Clocks()
    count_reads(Phases(), counts)
    instrument(clocks)
    _cold(opts, out, clocks, counts, emit_counts)
    _languages(opts, out)
    if opts.dask:
        _dask(opts, out)
    emit("loadavg_end", f"{os.getloadavg()[0]:.2f}")


def _cold(opts: Any, out: Path, clocks: Clocks, counts: Any, emit_counts: Any) -> None:
    from synrob.probe.runtime.clock import TRAINING

    card = ["card", "smollm2", "--preset", opts.preset, "-o", str(out / "smollm2")]
    trained = TRAINING.seconds
    cold, summary = _card(card)
    training = TRAINING.seconds - trained + clocks.fits
    emit("card_sample_cold_s", cold)
    emit("cold_runs", _executed(summary))
    emit("forward_s", clocks.forward)
    emit("training_s", training)
    emit("overhead_s", cold - clocks.forward - training)
    emit("forward_and_training_share", (clocks.forward + training) / cold)
    emit_counts(counts)
    warm, summary = _card(card)
    emit("card_sample_warm_s", warm)
    emit("warm_runs", _executed(summary))


def _languages(opts: Any, out: Path) -> None:
    """Czech added to the English card, and a fresh card of Czech alone."""
    both = ["card", "smollm2", "--preset", opts.preset, "--languages", "en,cs",
            "--treebank", f"cs={CS}", "-o", str(out / "smollm2")]
    added, summary = _card(both)
    emit("added_language_s", added)
    emit("added_language_runs", _executed(summary))
    fresh_cache = out / "cache-cs"
    shutil.rmtree(fresh_cache, ignore_errors=True)
    shutil.copytree(out / "cache" / "models", fresh_cache / "models")  # the model, not its work
    os.environ["SYNROB_CACHE"] = str(fresh_cache)
    alone = ["card", "smollm2", "--preset", opts.preset, "--languages", "cs",
             "--treebank", f"cs={CS}", "-o", str(out / "smollm2-cs")]
    fresh, summary = _card(alone)
    emit("fresh_language_s", fresh)
    emit("fresh_language_runs", _executed(summary))
    os.environ["SYNROB_CACHE"] = str(out / "cache")


def _dask(opts: Any, out: Path) -> None:
    import json

    dest = out / "smollm2-dask"
    shutil.rmtree(dest, ignore_errors=True)
    _card(["card", "smollm2", "--preset", opts.preset, "--backend", "dask", "--workers", "2",
           "-o", str(dest)])
    local = json.loads((out / "smollm2" / "card.json").read_text(encoding="utf-8"))
    other = json.loads((dest / "card.json").read_text(encoding="utf-8"))
    same = (local["languages"]["en"]["sections"] == other["languages"]["en"]["sections"])
    emit("dask_card_equal", int(same))


if __name__ == "__main__":
    main()
