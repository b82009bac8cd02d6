"""A probing run's numbers as flat rows: one per (layer or baseline, file, role, metric).

The rows of :class:`synrob.probe.api.ProbeResult` and of the card's probing runs: ``role`` is
``model``, ``control``, ``selectivity``, ``lead`` (over the baseline named in ``baseline``),
``mdl``, ``drop`` (clean minus perturbed) or a baseline's name (``path``, ``majority``), with
``value`` and, where computed, ``ci_low``/``ci_high`` and ``p_value``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .probing import ProbeRun

__all__ = ["metric_rows", "probe_rows"]


def metric_rows(m: Mapping[str, Any], base: dict[str, Any]) -> list[dict[str, Any]]:
    """Flat rows of one metrics dict (``M``, ``M_ci95``, ``M_p_value``, nested roles)."""
    rows: list[dict[str, Any]] = []
    for k, v in m.items():
        if k.endswith(("_ci95", "_p_value")) or k == "p_value":
            continue
        if isinstance(v, Mapping):
            if k == "lead":
                for name, mm in v.items():
                    rows += metric_rows(mm, {**base, "role": "lead", "baseline": name})
            else:
                rows += metric_rows(v, {**base, "role": k})
        elif isinstance(v, (int, float)) and not isinstance(v, bool):
            row = {**base, "metric": k, "value": float(v)}
            ci = m.get(f"{k}_ci95")
            if isinstance(ci, (list, tuple)) and len(ci) == 2:
                row["ci_low"], row["ci_high"] = float(ci[0]), float(ci[1])
            if m.get(f"{k}_p_value") is not None:
                row["p_value"] = float(m[f"{k}_p_value"])
            rows.append(row)
    return rows


def probe_rows(run: ProbeRun, lang: str, specs: Mapping[str, str] | None = None
               ) -> list[dict[str, Any]]:
    """Every number of ``run`` as flat rows (see the module docstring); ``specs`` maps a test
    file read to the spec given for it."""
    common = {"task": run.task.name, "probe": run.probe.name, "seed": run.seed, "lang": lang}

    def test(path: str) -> dict[str, Any]:
        return {"test": (specs or {}).get(path, path), "test_path": path, "split": "test"}

    rows: list[dict[str, Any]] = []
    for res in run.layers:
        base = {"encoder": run.encoder, "layer": res.layer, **common}
        rows += metric_rows(res.dev, {**base, "test": None, "split": "dev", "role": "model"})
        for t, m in res.results.items():
            rows += metric_rows(m, {**base, **test(t), "role": "model"})
        for t, d in res.extras.get("deltas", {}).items():
            meta = {"reference": test(d["reference"])["test"], "pairs": d.get("pairs")}
            rows += metric_rows({k: v for k, v in d.items() if k not in ("pairs", "sources")},
                                 {**base, **test(t), "role": "drop", **meta})
    for name, per_file in run.baselines.items():  # a baseline's role is its name
        for t, m in per_file.items():
            rows += metric_rows(m, {"encoder": name, "layer": None, **common, **test(t),
                                     "role": name})
    return rows
