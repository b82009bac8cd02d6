"""bench/bf16_backward.py: it prints its lines, and the reproducibility rule's two ways (the
whole backward pass on one thread, the products' nodes on one thread) train the same bits."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_bf16_backward_bench_runs_and_the_ways_agree(ewt_dir: Path) -> None:
    out = subprocess.run([sys.executable, str(ROOT / "bench" / "bf16_backward.py"),
                          "--sentences", "80", "--epochs", "2", "--repeats", "1"],
                         check=True, capture_output=True, text=True,
                         env={**os.environ, "SYNROB_EWT_DIR": str(ewt_dir)}).stdout
    lines = dict(line.split(": ", 1) for line in out.splitlines())
    assert lines["threads"] == "2"
    for probe in ("structural", "perceptron"):
        assert lines[f"{probe}_nodes_equal_whole"] == "yes"
        for way in ("free", "whole", "nodes"):
            assert float(lines[f"{probe}_{way}_epoch_s"]) > 0
