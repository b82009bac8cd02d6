"""Benchmark: a rank-128 structural distance probe on cached MiniLM layer-3 representations.

The job timed (``probe_seconds``) goes from the representation cache of the first 4,000 EWT
train sentences (dev = EWT dev for early stopping) and the parsed gold treebanks
(:mod:`synrob.probe.tasks.gold_cache`) to dev and test UUAS / DSpr; it runs in this process after
both caches have been filled by a child process (``gold_parse_seconds``: what parsing the three
files there took, which a first run pays once); ``vectors_seconds``, ``gold_seconds``,
``setup_seconds`` (normalisation, batches, targets), ``train_seconds`` and ``scoring_seconds``
(dev and test) add up to it, so ``peak_rss_mb`` (this process's
maximum resident set) covers the job only, not the encoder. Anchor (john-hewitt/structural-probes,
same representations and rank, default regimen, 2 CPU cores): 145 s, 1.43 GB peak, dev UUAS 0.686
(no punctuation), DSpr 0.775.

    python bench/probe.py [--device cpu|cuda] [--train-sentences 4000] [--rank 128] [--layer 3]
                          [--threads 2] [--fused-probe structural|perceptron]
                          [--no-fused-layers]

Then (unless ``--no-fused-layers``) the same probe on all 7 MiniLM layers through
``run_probe``, once one layer after the other (``fuse=False``) and once all layers in one pass
(``fuse=True``, :func:`synrob.probe.training.loop.fit_layers`), each saved to a scratch directory:
``--fused-probe perceptron`` compares the perceptron probe (task ``parse``) instead of the
structural one; ``--threads 1`` measures what an experiment's run sees with ``--workers``
as many as the cores (with one worker a run has every core: the default ``--threads 2``).
``fused_layers_speedup`` is the one-by-one wall time over the fused one (training plus dev and
test scoring of every layer, the same work in both), ``fused_layers_train_speedup`` the same for
training alone, and ``fused_layers_identical`` says whether every layer's dev and test metrics,
training log (but its seconds) and saved weights (``probe.safetensors``, bytes) are equal.

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


def prepare(paths: list[str], layer: int | str) -> None:
    """Fill the representation and gold caches (in a child process: the encoder's memory stays
    there)."""
    from synrob.probe.representations.encoding import encode_corpus
    from synrob.probe.tasks import load_gold

    for p in paths:
        encode_corpus("minilm", p, layers=layer if layer == "all" else [int(layer)], device="cpu")
        load_gold(p)


def fused_layers(train: Path, dev: Path, test: Path, rank: int, seed: int, device: str,
                 work: Path, probe_name: str = "structural") -> list[tuple[str, object]]:
    """All MiniLM layers one by one, then in one pass: times and whether the results agree."""
    import json

    import torch
    from synrob.probe.probes import PerceptronProbe, StructuralProbe
    from synrob.probe.tasks import DistanceTask, ParseTask
    from synrob.probe.training.probing import encoder_features, run_probe

    probe_cls, task_cls = ((PerceptronProbe, ParseTask) if probe_name == "perceptron"
                           else (StructuralProbe, DistanceTask))

    source = encoder_features("minilm", device="cpu", layers="all")
    layers = source.layers(str(train))  # type: ignore[attr-defined]
    for p in (train, dev, test):  # load every layer once before timing
        for layer in layers:
            source(str(p), layer)
    out, runs = {}, {}
    for fuse in (False, True):
        save = work / f"layers-fuse-{fuse}"
        t0 = time.perf_counter()
        run = run_probe(encoder="minilm", task=task_cls(), probe=probe_cls(rank=rank),
                        layers=layers, tests=[str(dev), str(test)], features=source,
                        train=str(train), dev=str(dev), seed=seed, device=device, save=save,
                        baselines=False, fuse=fuse)
        out[fuse] = time.perf_counter() - t0
        logs = [r.log for r in run.layers]
        train_s = (max(g.seconds for g in logs) if fuse else sum(g.seconds for g in logs))
        weights = {p.parent.name: p.read_bytes() for p in save.glob("layer-*/probe.safetensors")}
        runs[fuse] = (train_s, [(r.layer, r.results, r.dev, {**r.log.as_dict(), "seconds": 0})
                                for r in run.layers], weights)
    same = runs[False][1:] == runs[True][1:]
    best = max(runs[True][1], key=lambda r: r[2]["uuas"])
    epochs = json.dumps([len(r[3]["dev_loss"]) for r in runs[True][1]])
    return [("fused_probe", probe_name), ("fused_threads", torch.get_num_threads()),
            ("fused_layers", len(layers)), ("separate_layers_seconds", out[False]),
            ("fused_layers_seconds", out[True]),
            ("fused_layers_speedup", out[False] / out[True]),
            ("separate_layers_train_seconds", runs[False][0]),
            ("fused_layers_train_seconds", runs[True][0]),
            ("fused_layers_train_speedup", runs[False][0] / runs[True][0]),
            ("fused_layers_identical", "yes" if same else "no"),
            ("fused_layers_best", f"layer {best[0]} dev uuas {best[2]['uuas']:.4f}"),
            ("fused_layers_epochs", epochs)]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--train-sentences", type=int, default=4000)
    ap.add_argument("--rank", type=int, default=128)
    ap.add_argument("--layer", type=int, default=3)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--workdir", default=None, help="where the train slice is written")
    ap.add_argument("--fused-probe", default="structural", choices=("structural", "perceptron"),
                    help="the probe of the all-layers comparison")
    ap.add_argument("--no-fused-layers", action="store_true",
                    help="skip the all-layers comparison (fused_layers_speedup)")
    ap.add_argument("--prepare", nargs="+", help=argparse.SUPPRESS)
    ap.add_argument("--prepare-layers", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.prepare:
        prepare(args.prepare, args.prepare_layers or args.layer)
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
    from synrob.probe.tasks import DistanceTask, load_gold
    from synrob.probe.training.probing import encoder_features, evaluate_probe, train_probe

    t0, c0 = time.perf_counter(), time.process_time()
    source = encoder_features("minilm", device="cpu", layers=[args.layer])
    task, probe = DistanceTask(), StructuralProbe(rank=args.rank)
    files = (("train", train), ("dev", dev), ("test", test))
    feats = {name: source(str(p), args.layer) for name, p in files}
    t1 = time.perf_counter()
    golds = {name: load_gold(p) for name, p in files}
    data = {name: (feats[name], golds[name]) for name, _ in files}
    t2 = time.perf_counter()
    module, log = train_probe(task, probe, data["train"], data["dev"], seed=args.seed,
                              device=args.device)
    t3 = time.perf_counter()
    dev_scores, _ = evaluate_probe(task, probe, module, *data["dev"], device=args.device)
    test_scores, _ = evaluate_probe(task, probe, module, *data["test"], device=args.device)
    seconds = time.perf_counter() - t0
    phases = [("vectors_seconds", t1 - t0), ("gold_seconds", t2 - t1),
              ("setup_seconds", t3 - t2 - log.seconds), ("scoring_seconds", t0 + seconds - t3)]
    cpu_seconds = time.process_time() - c0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    from synrob.probe.tasks.gold import read_gold

    g0 = time.perf_counter()  # what a first run, before the gold cache, parses on top
    for p in (train, dev, test):
        read_gold(str(p), None)
    gold_parse = time.perf_counter() - g0
    for name, value in [
        ("probe_seconds", seconds), ("probe_cpu_seconds", cpu_seconds),
        ("gold_parse_seconds", gold_parse), *phases,
        ("train_seconds", log.seconds),
        ("epochs", len(log.dev_loss)), ("best_epoch", log.best_epoch + 1),
        ("dev_uuas", dev_scores["uuas"]), ("dev_uuas_punct", dev_scores["uuas_punct"]),
        ("dev_dspr", dev_scores["dspr"]), ("test_uuas", test_scores["uuas"]),
        ("test_uuas_punct", test_scores["uuas_punct"]), ("test_dspr", test_scores["dspr"]),
        ("peak_rss_mb", peak), ("device", args.device), ("threads", args.threads),
    ]:
        print(f"{name}: {value:.4f}" if isinstance(value, float) else f"{name}: {value}")
    if args.no_fused_layers:
        return
    subprocess.run([sys.executable, __file__, "--prepare-layers", "all", "--prepare",
                    str(train), str(dev), str(test)], check=True)
    for name, value in fused_layers(train, dev, test, args.rank, args.seed, args.device, work,
                                    args.fused_probe):
        print(f"{name}: {value:.4f}" if isinstance(value, float) else f"{name}: {value}",
              flush=True)


if __name__ == "__main__":
    main()
