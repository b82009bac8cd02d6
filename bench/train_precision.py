"""Benchmark and check: probe training in bf16 (or TF32) against fp32 on the same representations.

For each (probe, task) of ``--checks`` (default: the structural distance probe, full rank,
the Hewitt & Manning regimen; the linear POS probe; the perceptron probe on parse trees),
trains on MiniLM layer ``--layer`` of EWT train (``--train-sentences``, 0 = all), with
EWT dev for early stopping, once with ``train_precision=float32`` and once with ``bfloat16``
(:mod:`synrob.probe.training.precision`: bf16 autocast steps, fp32 master weights), and scores EWT
test. The representations are computed once, in float32 (``-p precision=float32``), so only the
training differs. Prints ``name: value`` lines:

* ``native_bf16`` (what :func:`synrob.perturb.lm.dtype.native_bf16` says of this CPU) and
  ``cpu_model``;
* per check, the test metrics of both trainings, ``bf16_<metric>_delta`` (|bf16 - fp32|; the
  check passes when every one is within ``BF16_TOLERANCE`` = 0.005), the epochs each ran and
  ``bf16_train_speedup_<check>`` (fp32 training seconds / bf16 training seconds, one run);
* ``bf16_check_passed``: yes when every delta is within the tolerance.

``--precision tfloat32 --device cuda`` checks TF32 training on an NVIDIA GPU of compute
capability 8.0 or newer instead (the probes train and score there; the representations are
still computed on the CPU): the same lines with ``tf32`` for ``bf16``. TF32 has not been
checked yet, which is why ``auto`` never trains in it (:mod:`synrob.probe.training.precision`).

Usage: ``python bench/train_precision.py [--layer 3] [--train-sentences 0] [--threads 2]
[--checks distance,pos,parse] [--precision bfloat16|tfloat32] [--device cpu]``.
"""

from __future__ import annotations

import argparse
import os
import platform
import subprocess
import sys
import tempfile
import time
from itertools import islice
from pathlib import Path

EWT = Path(os.environ.get("SYNROB_EWT_DIR",
                          Path(__file__).resolve().parents[2] / "shared" / "data" / "ud" / "en_ewt"))
#: check -> (probe, task, probe parameters, metrics compared)
CHECKS = {
    "distance": ("structural", "distance", {}, ("uuas", "dspr")),
    "pos": ("linear", "pos", {}, ("acc",)),
    "parse": ("perceptron", "parse", {}, ("uuas",)),
}
ENCODER_PARAMS = {"precision": "float32"}


def _cpu_model() -> str:
    for line in Path("/proc/cpuinfo").read_text().splitlines() if Path("/proc/cpuinfo").exists() else []:
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor() or "unknown"


def prepare(paths: list[str], layer: int) -> None:
    """Fill the representation cache, every layer (shared with ``synrob run``'s encodings; a
    child process: the encoder's memory stays there)."""
    from synrob.probe.representations.encoding import encode_corpus

    for p in paths:
        encode_corpus("minilm", p, layers="all", device="cpu", params=ENCODER_PARAMS)


#: precision checked -> the short name its lines carry
SHORT = {"bfloat16": "bf16", "tfloat32": "tf32"}


def check(name: str, data: dict, seed: int, precision: str = "bfloat16", device: str = "cpu"
          ) -> tuple[list[tuple[str, object]], bool]:
    """Train ``name``'s probe in fp32 and in ``precision`` on ``device``; its lines and whether
    it passed."""
    from synrob.perturb.lm.dtype import BF16_TOLERANCE
    from synrob.perturb.plugins import get_registry
    from synrob.probe.training.probing import evaluate_probe, train_probe

    reg = get_registry()
    probe_name, task_name, params, metrics = CHECKS[name]
    out: list[tuple[str, object]] = []
    scores, seconds = {}, {}
    short = SHORT[precision]
    for prec in ("float32", precision):
        task = reg.get("task", task_name)()
        probe = reg.get("probe", probe_name)(**params, train_precision=prec)
        task.fit(data["train"][1])
        module, log = train_probe(task, probe, data["train"], data["dev"], seed=seed,
                                  device=device)
        scores[prec], _ = evaluate_probe(task, probe, module, *data["test"], device=device)
        seconds[prec] = log.seconds
        out.append((f"{name}_{prec}_epochs", len(log.dev_loss)))
        out.append((f"{name}_{prec}_train_seconds", log.seconds))
    ok = True
    for m in metrics:
        a, b = scores["float32"][m], scores[precision][m]
        out += [(f"{name}_fp32_test_{m}", a), (f"{name}_{short}_test_{m}", b),
                (f"{short}_{name}_{m}_delta", abs(a - b))]
        ok = ok and abs(a - b) <= BF16_TOLERANCE
    out.append((f"{short}_train_speedup_{name}", seconds["float32"] / seconds[precision]))
    return out, ok


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--layer", type=int, default=3)
    ap.add_argument("--train-sentences", type=int, default=0)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--checks", default="distance,pos,parse")
    ap.add_argument("--workdir", default=None)
    ap.add_argument("--precision", choices=sorted(SHORT), default="bfloat16")
    ap.add_argument("--device", default="cpu", help="where the probes train (cpu, cuda...)")
    ap.add_argument("--prepare", nargs="+", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.prepare:
        prepare(args.prepare, args.layer)
        return
    from synrob.perturb.corpus import read_conllu, write_conllu
    from synrob.perturb.errors import ParameterError
    from synrob.probe.training.precision import resolve_train_precision

    try:  # a precision this device lacks fails before the encoding
        resolve_train_precision(args.precision, args.device, "minilm", "structural")
    except ParameterError as err:
        sys.exit(str(err))

    train = EWT / "en_ewt-ud-train.conllu"
    if args.train_sentences:
        work = Path(args.workdir or tempfile.mkdtemp(prefix="synrob-bench-precision-"))
        work.mkdir(parents=True, exist_ok=True)
        train = work / f"en_ewt-train-first{args.train_sentences}.conllu"
        if not train.is_file():
            write_conllu(islice(read_conllu(EWT / "en_ewt-ud-train.conllu"),
                                args.train_sentences), train)
    paths = {"train": train, "dev": EWT / "en_ewt-ud-dev.conllu",
             "test": EWT / "en_ewt-ud-test.conllu"}
    subprocess.run([sys.executable, __file__, "--layer", str(args.layer), "--prepare",
                    *map(str, paths.values())], check=True)

    import torch

    torch.set_num_threads(args.threads)
    from synrob.perturb.lm.dtype import native_bf16
    from synrob.probe.tasks import load_gold
    from synrob.probe.training.probing import encoder_features

    print(f"cpu_model: {_cpu_model()}")
    print(f"native_bf16: {str(native_bf16('cpu')).lower()}")
    print(f"threads: {args.threads}")
    print(f"device: {args.device}")
    if args.device.startswith("cuda"):
        print(f"gpu: {torch.cuda.get_device_name(args.device)}")
    print(f"precision: {args.precision}")
    source = encoder_features("minilm", device="cpu", params=ENCODER_PARAMS)
    data = {k: (source(str(p), args.layer), load_gold(p)) for k, p in paths.items()}
    passed = True
    for name in args.checks.split(","):
        t0 = time.perf_counter()
        lines, ok = check(name.strip(), data, args.seed, args.precision, args.device)
        passed = passed and ok
        for key, value in lines:
            print(f"{key}: {value:.4f}" if isinstance(value, float) else f"{key}: {value}",
                  flush=True)
        print(f"{name}_check_seconds: {time.perf_counter() - t0:.1f}", flush=True)
    print(f"{SHORT[args.precision]}_check_passed: {'yes' if passed else 'no'}")


if __name__ == "__main__":
    main()
