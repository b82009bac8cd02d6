"""The "why the preprocessing must be affine" table of docs/erasure.md.

Usage: ``python docs/data/erasure_preprocessing.py [--train 400 --dev 100 --test 150]
[--encoders smollm2:12,minilm:3]``

Writes the first N sentences of ``sample:en_ewt:train|dev|test`` into a temporary directory,
fits LEACE on each task's labelled training words at each encoder's layer (UPOS, and Number
among the words that have it), erases train, dev and test, and fits the converged linear probe
of ``synrob erase`` (``synrob.probe.causal.erasure.softmax``) after each ``normalize`` choice fitted on
the erased training vectors: ``standardize`` and ``none`` are affine and keep the erased
training class means equal, ``unit`` (what ``auto`` does on a layer with massive activations)
rescales every vector to one norm and does not. Prints one Markdown row per encoder and task:
the majority rate (the training majority label's test accuracy, as ``synrob erase`` reports
it), the test accuracy under each choice, and the training class-mean gap
(:func:`synrob.probe.causal.erasure.fit.class_mean_gap`) under ``unit``.
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

import numpy as np
from synrob.perturb.io.data import resolve_input
from synrob.probe.causal.erasure.fit import apply_rows, class_mean_gap, fit_leace, labelled_rows
from synrob.probe.causal.erasure.softmax import fit_softmax
from synrob.probe.probes.inputs import Features
from synrob.probe.probes.normalize import fit_norm
from synrob.probe.tasks import FeatsTask, PosTask, load_gold
from synrob.probe.training.probing import encoder_features

POLICIES = ("standardize", "none", "unit")


def slices(sizes: dict[str, int], dest: Path) -> dict[str, str]:
    """The first ``sizes[split]`` sentences of the bundled sample's splits, as files."""
    out = {}
    for split, n in sizes.items():
        text = Path(resolve_input(f"sample:en_ewt:{split}")[0]).read_text(encoding="utf-8")
        blocks = [b for b in text.split("\n\n") if b.strip()][:n]
        out[split] = str(dest / f"{split}-{n}.conllu")
        Path(out[split]).write_text("\n\n".join(blocks) + "\n\n", encoding="utf-8")
    return out


def row(name: str, task, feats: dict[str, Features], golds) -> str:
    task.fit(golds["train"])
    x, y = labelled_rows(feats["train"].matrix, task.targets(golds["train"]))
    eraser = fit_leace(x, y, task.labels)
    erased = {s: Features(apply_rows(eraser, f.matrix), f.offsets) for s, f in feats.items()}
    yt = labelled_rows(feats["test"].matrix, task.targets(golds["test"]))[1]
    majority = int(np.bincount(y, minlength=len(task.labels)).argmax())  # the training majority
    cells = [f"{np.mean(yt == majority):.4f}"]
    gap = 0.0
    for policy in POLICIES:
        norm = fit_norm(erased["train"], policy)
        d = {s: labelled_rows(norm.apply(f).matrix, task.targets(golds[s]))
             for s, f in erased.items()}
        model = fit_softmax(*d["train"], len(task.labels), d["dev"])
        cells.append(f"{(model.predict(d['test'][0]) == d['test'][1]).mean():.4f}")
        gap = class_mean_gap(*d["train"], len(task.labels))
    return f"| {name} | " + " | ".join(cells) + f" | {gap:.3g} |"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--train", type=int, default=400)
    ap.add_argument("--dev", type=int, default=100)
    ap.add_argument("--test", type=int, default=150)
    ap.add_argument("--encoders", default="smollm2:12,minilm:3")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        paths = slices({"train": args.train, "dev": args.dev, "test": args.test}, Path(tmp))
        golds = {s: load_gold(p) for s, p in paths.items()}
        for spec in args.encoders.split(","):
            encoder, layer = spec.split(":")
            source = encoder_features(encoder, device="cpu", layers=[int(layer)])
            feats = {s: source(p, int(layer)) for s, p in paths.items()}
            for label, task in (("UPOS", PosTask()), ("Number", FeatsTask())):
                print(row(f"{encoder} L{layer}, {label}", task, feats, golds), flush=True)


if __name__ == "__main__":
    main()
