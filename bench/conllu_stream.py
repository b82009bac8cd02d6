"""Streaming claim of the corpus model: peak RSS does not grow with the file size.

Runs ``synrob conllu stats`` (read + validate + tree depth of every sentence) in a fresh process
on EWT train and on EWT train concatenated 10 times, and prints ``name: value`` lines:

    python bench/conllu_stream.py [--ewt ../shared/data/ud/en_ewt]
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def peak_rss_mb(cmd: list[str]) -> tuple[float, float]:
    """Run ``cmd`` in a child process; its peak RSS in MB and wall seconds."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"command failed: {' '.join(cmd)}")
    return usage.ru_maxrss / 1024, time.perf_counter() - start


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--ewt", type=Path, default=ROOT.parent / "shared" / "data" / "ud" / "en_ewt")
    args = ap.parse_args()
    train = args.ewt / "en_ewt-ud-train.conllu"
    synrob = [sys.executable, "-c", "from synrob.cli.app import main; main()"]
    with tempfile.TemporaryDirectory() as tmp:
        big = Path(tmp) / "train_x10.conllu"
        with open(big, "wb") as out:
            for _ in range(10):
                with open(train, "rb") as src:
                    shutil.copyfileobj(src, out)
        rss1, t1 = peak_rss_mb([*synrob, "conllu", "stats", "--json", str(train)])
        rss10, t10 = peak_rss_mb([*synrob, "conllu", "stats", "--json", str(big)])
        print(f"train_file_mb: {train.stat().st_size / 2**20:.1f}")
        print(f"train_x10_file_mb: {big.stat().st_size / 2**20:.1f}")
        print(f"peak_rss_train_mb: {rss1:.1f}")
        print(f"peak_rss_train_x10_mb: {rss10:.1f}")
        print(f"rss_ratio_x10_vs_x1: {rss10 / rss1:.3f}")
        print(f"sentences_per_s_train: {12544 / t1:.0f}")
        print(f"sentences_per_s_train_x10: {125440 / t10:.0f}")
    _ = resource  # documented: ru_maxrss is in KiB on Linux


if __name__ == "__main__":
    main()
