"""Quantization fidelity check: quantized vs fp32 probe and agreement scores on EWT (prints
``name: value`` lines; progress on stderr).

A quantized model's hidden states are not the model's own, so synrob runs a (model,
quantization) pair only when it passed this check (``QUANT_CHECKED`` in
``synrob.perturb.lm.placement``, docs/encoders.md "Quantized models") or when the user passes
``-p quantization_unchecked=true``. For ``--model`` (default ``smollm2``) at ``--layer``
(default 12), once in fp32 and once per quantization of ``--quantizations`` (default
``int8,nf4,torchao-int8``; torchao-int8 only where ``torchao`` is importable), with the same
seed and the same data, it runs what a user runs, the ``synrob`` CLI in a child process:

* ``synrob probe --task distance`` (UUAS and DSpr of the structural distance probe) and
  ``synrob probe --task pos`` (accuracy of the POS probe), the two probes of the bf16 check
  (``python bench/encode.py --bf16-check``), trained on the first ``--train-sentences`` (default
  3,000; 0: all 12,544) sentences of EWT train, early-stopped on the first ``--dev-sentences``
  (default 500; 0: all) of EWT dev, scored on all of EWT test; ``-p encoder.precision=float32``
  in every run, so that the quantization is the only difference;
* ``synrob perturb --kind agreement -p lexicon=<EWT train>`` on EWT test (once; the pairs do
  not depend on the model) and ``synrob score`` of those pairs with the fp32 LM and with each
  quantized LM (``--dtype float32``): the preference accuracy.

Lines: ``cpu_model``, ``native_bf16``, the data sizes, ``fp32_<metric>`` (uuas, dspr, pos,
agreement) with ``fp32_<step>_s`` (seconds of each child: ``distance``, ``pos``, ``score``), and
per quantization ``q``: ``quant_<q>_<metric>`` (its value), ``quant_<q>_<metric>_diff``
(quantized - fp32, signed), ``quant_<q>_<metric>_delta`` (the absolute difference),
``quant_<q>_<step>_s``, ``quant_<q>_recorded_probe`` and ``quant_<q>_recorded_score`` (1 when
the JSON of ``synrob probe`` (both tasks), resp. ``synrob score``'s summary, names the
quantization) and ``quant_<q>_passes`` (1 when every delta, to the 4 decimals printed, is at
most ``QUANT_TOLERANCE``, 0.01, else 0; a passing pair's ``QUANT_CHECKED`` value follows as
``quant_<q>_registry_entry``). A child that fails gives ``quant_<q>_error`` and
``quant_<q>_passes: 0``.

With ``--noise-seeds 1,2,3,4`` (default: none) it also trains both probes of every
configuration at those seeds (``synrob probe --seeds``, one child per task), so that the
deltas can be set beside the probes' own seed-to-seed spread: ``fp32_<m>_noise_seeds`` and
``quant_<q>_<m>_noise_seeds`` (the values per seed, m = uuas, dspr, pos),
``quant_<q>_<m>_diff_noise_seeds`` (quantized - fp32 at each of those seeds),
``fp32_<m>_seed_spread`` (max - min over ``--seed`` and the noise seeds) and
``<config>_noise_s``. They do not enter the pass rule, which is the bf16 check's: one seed.

Representations go to ``--cache`` (default: a fresh temporary directory, removed at the end), so
each encoding is timed cold; a kept ``--cache`` lets a re-run reuse them (the cache key holds the
quantization).

Usage: ``SYNROB_NATIVE_BF16=0 python bench/quant_fidelity.py [--model smollm2] [--layer 12]
[--quantizations int8,nf4,torchao-int8] [--train-sentences 3000] [--dev-sentences 500]
[--noise-seeds 1,2,3,4] [--device cpu] [--cache DIR]`` (torchao from a side directory:
``PYTHONPATH=DIR``).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
EWT = Path(os.environ.get("SYNROB_EWT_DIR", ROOT.parent / "shared" / "data" / "ud" / "en_ewt"))
#: The four scores compared, in the order printed.
METRICS = ("uuas", "dspr", "pos", "agreement")
#: The children timed per configuration (``<step>_s`` lines).
STEPS = ("distance", "pos", "score", "noise")
KNOWN_QUANTIZATIONS = ("int8", "nf4", "torchao-int8")

#: Runs a synrob command (its arguments after ``synrob``) with the cache in the environment and
#: returns its stdout; raises :class:`ChildError` when it fails.
Runner = Callable[[Sequence[str]], str]


class ChildError(RuntimeError):
    """A ``synrob`` child failed: the message is its last stderr line."""


def parse_quantizations(text: str, torchao: bool) -> tuple[list[str], list[str]]:
    """(quantizations to check, skipped ones) from a comma list: each must be one of
    :data:`KNOWN_QUANTIZATIONS` (ValueError otherwise), duplicates dropped, ``torchao-int8``
    skipped when ``torchao`` is not importable."""
    chosen: list[str] = []
    skipped: list[str] = []
    for item in (s.strip() for s in text.split(",")):
        if not item:
            continue
        if item not in KNOWN_QUANTIZATIONS:
            raise ValueError(f"unknown quantization {item!r}: use "
                             f"{', '.join(KNOWN_QUANTIZATIONS)}")
        if item in chosen or item in skipped:
            continue
        (skipped if item.startswith("torchao") and not torchao else chosen).append(item)
    return chosen, skipped


def split_sentences(text: str) -> list[str]:
    """The sentence blocks of a CoNLL-U text (comments and token lines, no blank line)."""
    return [b.strip("\n") for b in text.replace("\r\n", "\n").split("\n\n") if b.strip()]


def head_conllu(src: Path, n: int, out_dir: Path) -> tuple[Path, int, int]:
    """(file, sentences in it, sentences in ``src``): ``src`` itself when ``n`` is 0 or not
    smaller than its sentence count, else its first ``n`` sentences written to ``out_dir``."""
    blocks = split_sentences(src.read_text(encoding="utf-8"))
    if n <= 0 or n >= len(blocks):
        return src, len(blocks), len(blocks)
    out = out_dir / f"{src.stem}.first{n}.conllu"
    out.write_text("\n\n".join(blocks[:n]) + "\n\n", encoding="utf-8")
    return out, n, len(blocks)


def signed_diffs(fp32: dict[str, float], quant: dict[str, float]) -> dict[str, float]:
    """quantized - fp32 for every metric of :data:`METRICS` both have."""
    return {m: quant[m] - fp32[m] for m in METRICS if m in fp32 and m in quant}


def passes(diffs: dict[str, float], tolerance: float) -> bool:
    """The pass rule: all four metrics measured and each |quantized - fp32|, to the 4 decimals
    printed, at most ``tolerance``."""
    return all(m in diffs for m in METRICS) and all(round(abs(diffs[m]), 4) <= tolerance
                                                    for m in METRICS)


def registry_entry(diffs: dict[str, float]) -> dict[str, float]:
    """The value a passing pair gets in ``QUANT_CHECKED``: the absolute deltas, 4 decimals."""
    return {m: round(abs(diffs[m]), 4) for m in METRICS}


def result_lines(name: str, fp32: dict[str, float], quant: dict[str, float],
                 seconds: dict[str, float], tolerance: float,
                 recorded: dict[str, bool] | None = None, error: str = "") -> list[str]:
    """The ``quant_<name>_*`` lines of one quantization (see the module docstring)."""
    p = f"quant_{name}"
    lines = [f"{p}_{m}: {quant[m]:.4f}" for m in METRICS if m in quant]
    diffs = signed_diffs(fp32, quant)
    lines += [f"{p}_{m}_diff: {d:+.4f}" for m, d in diffs.items()]
    lines += [f"{p}_{m}_delta: {abs(d):.4f}" for m, d in diffs.items()]
    lines += [f"{p}_{s}_s: {seconds[s]:.1f}" for s in STEPS if s in seconds]
    lines += [f"{p}_recorded_{k}: {int(v)}" for k, v in (recorded or {}).items()]
    if error:
        lines.append(f"{p}_error: {error}")
    ok = not error and passes(diffs, tolerance)
    lines.append(f"{p}_passes: {int(ok)}")
    if ok:
        lines.append(f"{p}_registry_entry: {json.dumps(registry_entry(diffs))}")
    return lines


def fp32_lines(fp32: dict[str, float], seconds: dict[str, float]) -> list[str]:
    """The ``fp32_*`` lines: the reference values and the seconds of each child."""
    return ([f"fp32_{m}: {fp32[m]:.4f}" for m in METRICS if m in fp32]
            + [f"fp32_{s}_s: {seconds[s]:.1f}" for s in STEPS if s in seconds])


def probe_scores(stdout: str) -> dict[str, float]:
    """uuas/dspr (distance) or pos (the accuracy) of ``synrob probe --json``'s first test
    file."""
    res = next(iter(json.loads(stdout)["results"].values()))
    out = {k: float(res[k]) for k in ("uuas", "dspr") if k in res}
    if "acc" in res:
        out["pos"] = float(res["acc"])
    return out


def probe_seed_scores(stdout: str) -> dict[str, list[float]]:
    """Per-seed uuas/dspr or pos of ``synrob probe --seeds ... --json``'s first test file."""
    res = next(iter(json.loads(stdout)["results"].values()))
    names = {"uuas": "uuas", "dspr": "dspr", "acc": "pos"}
    return {names[k]: [float(v) for v in res[f"{k}_seeds"]] for k in names
            if f"{k}_seeds" in res}


def noise_lines(prefix: str, values: dict[str, list[float]],
                ref: dict[str, list[float]] | None = None,
                seed0: dict[str, float] | None = None) -> list[str]:
    """``<prefix>_<m>_noise_seeds`` (values per noise seed) and, against ``ref`` (fp32's),
    ``<prefix>_<m>_diff_noise_seeds``; without ``ref``, ``<prefix>_<m>_seed_spread``: max - min
    over those seeds and ``seed0``'s value."""
    lines = []
    for m, vals in values.items():
        lines.append(f"{prefix}_{m}_noise_seeds: {' '.join(f'{v:.4f}' for v in vals)}")
        if ref is not None and m in ref:
            diffs = (v - r for v, r in zip(vals, ref[m], strict=True))
            lines.append(f"{prefix}_{m}_diff_noise_seeds: {' '.join(f'{d:+.4f}' for d in diffs)}")
        elif ref is None:
            every = [*vals, *([seed0[m]] if seed0 and m in seed0 else [])]
            lines.append(f"{prefix}_{m}_seed_spread: {max(every) - min(every):.4f}")
    return lines


def score_summary(stdout: str) -> dict[str, Any]:
    """The summary object of ``synrob score --json`` (its last line)."""
    return json.loads(stdout.strip().splitlines()[-1])


def cpu_model() -> str:
    """The CPU's model name (``/proc/cpuinfo``; else what :mod:`platform` says)."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.lower().startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown"


def progress(msg: str, t0: float) -> None:
    print(f"[quant_fidelity {time.perf_counter() - t0:7.0f}s] {msg}", file=sys.stderr, flush=True)


def check(args: argparse.Namespace, quantizations: list[str], files: dict[str, Path],
          run: Runner, tolerance: float, out: Callable[[str], None] = print) -> dict[str, bool]:
    """fp32 then each quantization: both probes and the agreement score, lines printed as each
    configuration finishes; returns {quantization: passed}."""
    t0 = time.perf_counter()

    noise = [int(x) for x in getattr(args, "noise_seeds", "").split(",") if x.strip()]

    def config(quant: str) -> tuple[dict[str, float], dict[str, float], dict[str, bool],
                                    dict[str, list[float]]]:
        enc = ["-p", "encoder.precision=float32"]
        lm: list[str] = []
        if quant != "none":
            enc += ["-p", f"encoder.quantization={quant}",
                    "-p", "encoder.quantization_unchecked=true"]
            lm = ["-p", f"quantization={quant}", "-p", "quantization_unchecked=true"]
        scores: dict[str, float] = {}
        secs: dict[str, float] = {}
        recorded: dict[str, bool] = {}
        per_seed: dict[str, list[float]] = {}

        def probe(task: str, seeds: list[str]) -> str:
            return run(["probe", "--encoder", args.model, "--layer", str(args.layer), "--task",
                        task, "--train", str(files["train"]), "--dev", str(files["dev"]),
                        "--test", str(files["test"]), "--json", "--device", args.device,
                        *seeds, *enc])

        for task in ("distance", "pos"):
            progress(f"{quant}: synrob probe --task {task}", t0)
            t = time.perf_counter()
            stdout = probe(task, ["--seed", str(args.seed)])
            secs[task] = time.perf_counter() - t
            scores.update(probe_scores(stdout))
            if quant != "none":  # does the JSON say what was quantized?
                recorded["probe"] = recorded.get("probe", True) and quant in stdout
        if noise:
            progress(f"{quant}: synrob probe --seeds {','.join(map(str, noise))}", t0)
            t = time.perf_counter()
            for task in ("distance", "pos"):
                per_seed.update(probe_seed_scores(probe(task, ["--seeds",
                                                               ",".join(map(str, noise))])))
            secs["noise"] = time.perf_counter() - t
        progress(f"{quant}: synrob score", t0)
        t = time.perf_counter()
        stdout = run(["score", "--lm", args.model, "--json", "--device", args.device,
                      "--dtype", "float32", "--seed", str(args.seed), str(files["test"]),
                      str(files["pairs"]), *lm])
        secs["score"] = time.perf_counter() - t
        summary = score_summary(stdout)
        scores["agreement"] = float(summary["accuracy"])
        if quant != "none":
            recorded["score"] = quant in json.dumps(summary)
        progress(f"{quant}: done {scores}", t0)
        return scores, secs, recorded, per_seed

    fp32, secs, _, fp32_seeds = config("none")
    for line in [*fp32_lines(fp32, secs), *noise_lines("fp32", fp32_seeds, seed0=fp32)]:
        out(line)
    verdict: dict[str, bool] = {}
    for q in quantizations:
        try:
            scores, secs, recorded, q_seeds = config(q)
            lines = [*noise_lines(f"quant_{q}", q_seeds, fp32_seeds),
                     *result_lines(q, fp32, scores, secs, tolerance, recorded)]
        except ChildError as e:
            lines = result_lines(q, fp32, {}, {}, tolerance, error=str(e))
        for line in lines:
            out(line)
        verdict[q] = f"quant_{q}_passes: 1" in lines
    return verdict


def child_runner(cache: Path) -> Runner:
    """Runs ``python -m synrob.cli ARGS`` with ``SYNROB_CACHE=cache``; the child's stderr goes
    to ours only when it fails (its last line becomes the :class:`ChildError`)."""
    env = dict(os.environ, SYNROB_CACHE=str(cache))

    def run(argv: Sequence[str]) -> str:
        proc = subprocess.run([sys.executable, "-m", "synrob.cli", *argv], env=env,
                              capture_output=True, text=True)
        if proc.returncode != 0:
            sys.stderr.write(proc.stderr[-4000:])
            last = (proc.stderr.strip().splitlines() or [f"exit {proc.returncode}"])[-1]
            raise ChildError(f"synrob {argv[0]} exited {proc.returncode}: {last}")
        return proc.stdout

    return run


def main(argv: Sequence[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", default="smollm2", help="model as named to synrob (an alias, "
                    "a path or a hub name; a causal LM, for the agreement score)")
    ap.add_argument("--layer", type=int, default=12)
    ap.add_argument("--quantizations", default="int8,nf4,torchao-int8")
    ap.add_argument("--train-sentences", type=int, default=3000,
                    help="first N sentences of EWT train for the probes (0: all)")
    ap.add_argument("--dev-sentences", type=int, default=500,
                    help="first N sentences of EWT dev for early stopping (0: all)")
    ap.add_argument("--train", default=str(EWT / "en_ewt-ud-train.conllu"))
    ap.add_argument("--seed", type=int, default=0, help="the seed of the check")
    ap.add_argument("--noise-seeds", default="", help="comma list: also train the probes of "
                    "every configuration at these seeds (their spread; not in the pass rule)")
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--cache", default="", help="SYNROB_CACHE of the children (default: a "
                    "fresh temporary directory, removed at the end)")
    args = ap.parse_args(argv)

    from synrob.perturb.lm.dtype import native_bf16
    from synrob.perturb.lm.placement import QUANT_TOLERANCE

    torchao = importlib.util.find_spec("torchao") is not None
    quantizations, skipped = parse_quantizations(args.quantizations, torchao)
    print(f"cpu_model: {cpu_model()}")
    print(f"native_bf16: {str(native_bf16(args.device)).lower()}")
    print(f"cpus: {os.cpu_count()}")
    print(f"model: {args.model}")
    print(f"layer: {args.layer}")
    print(f"tolerance: {QUANT_TOLERANCE}")
    print(f"quantizations: {','.join(quantizations)}")
    for q in skipped:
        print(f"quant_{q}_skipped: {q.split('-')[0]} is not importable")

    train = Path(args.train)
    work = Path(tempfile.mkdtemp(prefix="synrob-quant-"))
    cache = Path(args.cache) if args.cache else work / "cache"
    try:
        files: dict[str, Path] = {"test": train.with_name("en_ewt-ud-test.conllu")}
        files["train"], n_train, of_train = head_conllu(train, args.train_sentences, work)
        files["dev"], n_dev, of_dev = head_conllu(train.with_name("en_ewt-ud-dev.conllu"),
                                                  args.dev_sentences, work)
        n_test = len(split_sentences(files["test"].read_text(encoding="utf-8")))
        print(f"train_sentences: {n_train} (first of {of_train})")
        print(f"dev_sentences: {n_dev} (first of {of_dev})")
        print(f"test_sentences: {n_test}")
        run = child_runner(cache)
        files["pairs"] = work / "agreement.conllu"
        t = time.perf_counter()
        files["pairs"].write_text(run(["perturb", "--kind", "agreement", "-p",
                                       f"lexicon={train}", str(files["test"])]),
                                  encoding="utf-8")
        pairs = split_sentences(files["pairs"].read_text(encoding="utf-8"))
        print(f"agreement_pairs: {len(pairs)}")
        print(f"perturb_s: {time.perf_counter() - t:.1f}")
        sys.stdout.flush()
        t = time.perf_counter()

        def out(line: str) -> None:
            print(line, flush=True)

        verdict = check(args, quantizations, files, run, QUANT_TOLERANCE, out)
        print(f"passed: {','.join(q for q, ok in verdict.items() if ok) or 'none'}")
        print(f"total_s: {time.perf_counter() - t:.1f}")
    finally:
        shutil.rmtree(work, ignore_errors=True)  # the cache too, unless --cache put it elsewhere


if __name__ == "__main__":
    main()
