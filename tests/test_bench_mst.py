"""bench/mst.py: it prints its lines and the batched trees equal Kruskal's per sentence, on
both sides of MINIMAX_MAX_LEN."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_mst_bench_runs_and_agrees() -> None:
    out = subprocess.run([sys.executable, str(ROOT / "bench" / "mst.py"), "--widths", "12,47",
                          "--batch", "6", "--repeats", "2"],
                         check=True, capture_output=True, text=True).stdout
    lines = dict(line.split(": ", 1) for line in out.splitlines())
    assert lines["mst_identical"] == "yes"
    for width in (12, 47):
        assert float(lines[f"mst_batch_ms_L{width}"]) > 0
        assert float(lines[f"mst_speedup_L{width}"]) > 0
