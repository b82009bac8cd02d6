"""``python -m synrob.cli``: the command without a console script on the PATH (a
``pip install --target`` directory, as on the lent GPU machine)."""

from __future__ import annotations

import subprocess
import sys


def test_module_entry_runs_the_cli() -> None:
    out = subprocess.run([sys.executable, "-m", "synrob.cli", "--version"],
                         capture_output=True, text=True, check=False)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("synrob ") and "probe" in out.stdout


def test_module_entry_keeps_the_error_boundary() -> None:
    out = subprocess.run([sys.executable, "-m", "synrob.cli", "encode", "--encoder", "minilm",
                          "--device", "gpu", "sample:en_ewt:dev"],
                         capture_output=True, text=True, check=False)
    assert out.returncode == 1
    assert out.stderr.strip().splitlines() == [
        "synrob: error: invalid device 'gpu': use auto, cpu, cuda, cuda:N or mps"]
    assert "Traceback" not in out.stderr
