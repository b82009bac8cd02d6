"""Benchmark: a rank-128 structural distance probe on cached MiniLM layer-3 representations.

The job timed (``probe_seconds``) goes from the representation cache of the first 4,000 EWT
train sentences (dev = EWT dev for early stopping) to dev and test UUAS / DSpr; it runs in this
process after the cache has been filled by a child process, so ``peak_rss_mb`` (this process's
maximum resident set) covers the job only, not the encoder. Anchor (john-hewitt/structural-probes,
same representations and rank, default regimen, 2 CPU cores): 145 s, 1.43 GB peak, dev UUAS 0.686
(no punctuation), DSpr 0.775.

    python bench/probe.py [--device cpu|cuda] [--train-sentences 4000] [--rank 128] [--layer 3]

Prints ``name: value`` lines.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from itertools import islice
from pathlib import Path

EWT = Path(os.environ.get("SYNROB_EWT_DIR",
                          Path(__file__).resolve().parents[2] / "shared" / "data" / "ud" / "en_ewt"))


def prepare(paths: list[str], layer: int) -> None:
    """Fill the representation cache (run in a child process: the encoder's memory stays there)."""
    from synrob.probe.representations import encode_corpus

    for p in paths:
        encode_corpus("minilm", p, layers=[layer], device="cpu")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--train-sentences", type=int, default=4000)
    ap.add_argument("--rank", type=int, default=128)
    ap.add_argument("--layer", type=int, default=3)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--workdir", default=None, help="where the train slice is written")
    ap.add_argument("--prepare", nargs="+", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.prepare:
        prepare(args.prepare, args.layer)
        return

    from synrob.perturb.corpus import read_conllu, write_conllu

    work = Path(args.workdir or tempfile.mkdtemp(prefix="synrob-bench-probe-"))
    work.mkdir(parents=True, exist_ok=True)
    train = work / f"en_ewt-train-first{args.train_sentences}.conllu"
    if not train.is_file():
        write_conllu(islice(read_conllu(EWT / "en_ewt-ud-train.conllu"), args.train_sentences), train)
    dev, test = EWT / "en_ewt-ud-dev.conllu", EWT / "en_ewt-ud-test.conllu"
    subprocess.run([sys.executable, __file__, "--layer", str(args.layer), "--prepare",
                    str(train), str(dev), str(test)], check=True)

    import torch

    torch.set_num_threads(args.threads)
    from synrob.probe.probes import StructuralProbe
    from synrob.probe.probing import encoder_features, evaluate_probe, train_probe
    from synrob.probe.tasks import DistanceTask, load_gold

    t0, c0 = time.perf_counter(), time.process_time()
    source = encoder_features("minilm", device="cpu", layers=[args.layer])
    task, probe = DistanceTask(), StructuralProbe(rank=args.rank)
    data = {name: (source(str(p), args.layer), load_gold(p))
            for name, p in (("train", train), ("dev", dev), ("test", test))}
    module, log = train_probe(task, probe, data["train"], data["dev"], seed=args.seed,
                              device=args.device)
    dev_scores, _ = evaluate_probe(task, probe, module, *data["dev"], device=args.device)
    test_scores, _ = evaluate_probe(task, probe, module, *data["test"], device=args.device)
    seconds = time.perf_counter() - t0
    cpu_seconds = time.process_time() - c0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    for name, value in [
        ("probe_seconds", seconds), ("probe_cpu_seconds", cpu_seconds),
        ("train_seconds", log.seconds),
        ("epochs", len(log.dev_loss)), ("best_epoch", log.best_epoch + 1),
        ("dev_uuas", dev_scores["uuas"]), ("dev_uuas_punct", dev_scores["uuas_punct"]),
        ("dev_dspr", dev_scores["dspr"]), ("test_uuas", test_scores["uuas"]),
        ("test_uuas_punct", test_scores["uuas_punct"]), ("test_dspr", test_scores["dspr"]),
        ("peak_rss_mb", peak), ("device", args.device), ("threads", args.threads),
    ]:
        print(f"{name}: {value:.4f}" if isinstance(value, float) else f"{name}: {value}")


if __name__ == "__main__":
    main()
