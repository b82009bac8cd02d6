"""bench/train_precision.py: a precision the device lacks is refused in one line, before the
representations are computed."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_tfloat32_on_the_cpu_is_refused_before_any_work(tmp_path: Path) -> None:
    work = tmp_path / "work"
    res = subprocess.run([sys.executable, str(ROOT / "bench" / "train_precision.py"),
                          "--precision", "tfloat32", "--device", "cpu", "--train-sentences",
                          "10", "--workdir", str(work)], capture_output=True, text=True)
    assert res.returncode == 1
    assert res.stdout == ""
    assert res.stderr.strip().splitlines() == [
        "train_precision=tfloat32 needs an NVIDIA GPU of compute capability 8.0 or newer "
        "(Ampere and later), and the probe trains on cpu: use float32, bfloat16 or auto there"]
    assert not work.exists()
