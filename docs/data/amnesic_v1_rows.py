"""Redraw an ``amnesic`` 1.0.0 result in the conventions of 2.0.0 (issue 43), without re-running it.

Experiment 1.0.0 reported the damage as ``loglik_per_token`` (the mean per-token log-likelihood;
a harmful erasure gave a negative change). 2.0.0 reports ``nll_per_token``, the negative
log-likelihood, whose change is the NLL increase (positive = worse). The conversion is exact:
every damage value is negated, its interval's ends are negated and swapped, and a contrast's
one-sided p-value keeps its number (1.0.0's p of "below 0" is 2.0.0's p of "above 0"). Nothing
else changes; a 1.0.0 run has no displacement-matched control, so the figure has none.

    python docs/data/amnesic_v1_rows.py docs/data/amnesic-tr-boun-demo.json \\
        docs/img/amnesic-tr-boun-demo.png "smollm2 on UD Turkish BOUN (1.0.0 rows, 2.0.0 sign)"

rewrites the JSON's damage rows in place (it records ``converted_from`` = ``1.0.0``) and draws
the figure with the experiment's own ``plot_layers``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any


def convert(row: dict[str, Any]) -> dict[str, Any]:
    """One row in 2.0.0's conventions (only damage rows change)."""
    if row.get("section") != "damage" or row.get("metric") != "loglik_per_token":
        return row
    out = {**row, "metric": "nll_per_token", "value": -row["value"]}
    low, high = row.get("ci_low"), row.get("ci_high")
    out["ci_low"] = None if high is None else -high
    out["ci_high"] = None if low is None else -low
    return out


def main(src: str, figure: str, title: str) -> None:
    from synrob.probe.experiments.amnesic.report import plot_layers

    path = Path(src)
    data = json.loads(path.read_text(encoding="utf-8"))
    if data.get("converted_from") != "1.0.0":
        data["rows"] = [convert(r) for r in data["rows"]]
        data["converted_from"] = "1.0.0"
        path.write_text(json.dumps(data) + "\n", encoding="utf-8")
    plot_layers(data["rows"], Path(figure), title)


if __name__ == "__main__":
    main(*sys.argv[1:4])
