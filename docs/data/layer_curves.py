"""The layer-curve table and figure of docs/encoders.md from saved ``synrob probe --json`` runs.

Usage: ``python docs/data/layer_curves.py docs/data/smollm2-ewt-layers.json
docs/data/minilm-ewt-layers.json --plot docs/img/smollm2-minilm-layers.png``

Each JSON file maps a curve name (``"smollm2 distance normalize=auto"``) to a ``synrob probe
--json`` object restricted to what a curve needs: ``task``, ``layers`` (``{"L": {"results":
{test: metrics}, "dev": metrics}}``, the ``layers`` object of ``--layer all``) and
``baselines``. Prints one Markdown table per task (test score [95 % interval] and dev score per
layer and curve, the baselines, the best-dev layer of each curve) and draws the curves with
their intervals and the path / majority baselines' bands.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

METRIC = {"distance": "uuas", "pos": "acc"}
BASELINE = {"distance": "path", "pos": "majority"}


def load(paths: list[str]) -> dict[str, dict[str, Any]]:
    curves: dict[str, dict[str, Any]] = {}
    for p in paths:
        curves.update(json.loads(Path(p).read_text(encoding="utf-8")))
    return curves


def points(curve: dict[str, Any]) -> list[tuple[int, float, list[float], float]]:
    """``(layer, test value, test interval, dev value)`` per layer, sorted by layer."""
    metric = METRIC[curve["task"]]
    out = []
    for key in sorted(curve["layers"], key=int):
        layer = curve["layers"][key]
        test = next(iter(layer["results"].values()))
        out.append((int(key), test[metric], test[f"{metric}_ci95"], layer["dev"][metric]))
    return out


def table(task: str, curves: dict[str, dict[str, Any]]) -> str:
    names = [n for n, c in curves.items() if c["task"] == task]
    rows = {n: {p[0]: p for p in points(curves[n])} for n in names}
    layers = sorted({layer for r in rows.values() for layer in r})
    lines = ["| layer | " + " | ".join(f"{n}: test [95 %] / dev" for n in names) + " |",
             "|---" * (len(names) + 1) + "|"]
    for layer in layers:
        cells = []
        for n in names:
            p = rows[n].get(layer)
            cells.append("" if p is None else
                         f"{p[1]:.3f} [{p[2][0]:.3f}, {p[2][1]:.3f}] / {p[3]:.3f}")
        lines.append(f"| {layer} | " + " | ".join(cells) + " |")
    metric, base = METRIC[task], BASELINE[task]
    for n in names:
        best = max(points(curves[n]), key=lambda p: (p[3], -p[0]))
        b = next(iter(curves[n]["baselines"][base].values()))
        lines.append(f"\n{n}: best dev layer {best[0]}, test {metric} {best[1]:.4f} "
                     f"[{best[2][0]:.4f}, {best[2][1]:.4f}]; {base} baseline {b[metric]:.4f} "
                     f"[{b[f'{metric}_ci95'][0]:.4f}, {b[f'{metric}_ci95'][1]:.4f}]")
    return "\n".join(lines)


def plot(curves: dict[str, dict[str, Any]], path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    tasks = [t for t in METRIC if any(c["task"] == t for c in curves.values())]
    fig, axes = plt.subplots(1, len(tasks), figsize=(6 * len(tasks), 4), squeeze=False)
    for ax, task in zip(axes[0], tasks, strict=True):
        metric, base = METRIC[task], BASELINE[task]
        for name, curve in curves.items():
            if curve["task"] != task:
                continue
            pts = points(curve)
            xs = [p[0] for p in pts]
            ax.errorbar(xs, [p[1] for p in pts], yerr=[[p[1] - p[2][0] for p in pts],
                        [p[2][1] - p[1] for p in pts]], marker="o", ms=3, capsize=2,
                        label=name)
            b = next(iter(curve["baselines"][base].values()))
            lo, hi = b[f"{metric}_ci95"]
            ax.axhspan(lo, hi, alpha=0.12, color="grey")
        ax.set_title(f"{task}: test {metric} (EWT), 95 % intervals; grey: {base} baseline")
        ax.set_xlabel("layer")
        ax.set_ylabel(metric)
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("files", nargs="+")
    ap.add_argument("--plot")
    args = ap.parse_args()
    curves = load(args.files)
    for task in METRIC:
        if any(c["task"] == task for c in curves.values()):
            print(f"### {task}\n\n{table(task, curves)}\n")
    if args.plot:
        plot(curves, args.plot)


if __name__ == "__main__":
    main()
