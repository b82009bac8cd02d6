"""Benchmark: the built-in experiments' presets run cold, each with its stages (prints
``name: value`` lines and writes a markdown table).

Each entry of ``--experiments`` (``NAME`` for the default preset, ``NAME:PRESET`` for another)
runs as ``synrob run NAME --preset PRESET -o OUT/NAME-PRESET --force --device D --workers W``
in a child process. Cold: every child gets its own empty ``SYNROB_CACHE`` (no cached
representations, gold trees or perturbations; models are read from where they are installed),
removed after it unless ``--keep-caches``; ``--warm`` shares this shell's cache instead;
``--seed-cache DIR`` copies DIR into each cold cache first (a pseudoword lexicon built
elsewhere, for a machine that lacks WordNet, wordfreq and spaCy), and the table says so. A
lexicon's file name holds a fingerprint of the resources that built it: put it in
``DIR/pseudowords/`` under the name that
``python -c "from synrob.perturb.lexicon.pseudowords import lexicon_path; print(lexicon_path(0, 8000).name)"``
prints on the machine that runs the presets, or it is not found there. Each child's stderr is
written to ``OUT/K.stderr`` line by line as it comes (a bench killed from outside keeps it),
and its ``synrob:`` lines (each stage and each run as it ends) are echoed to this process's
stderr. From each ``results.json`` it prints, with ``K`` = ``NAME-PRESET``:

* ``K_seconds``: the child's wall time (process start to exit);
* ``K_stage_S_seconds`` for each stage ``S`` the runner recorded (``perturbation``,
  ``encoding``, ``other_preparation``, ``runs``, ``report``);
* ``K_runs``, ``K_runs_seconds_sum`` (the runs' own seconds, summed over workers) and
  ``K_training_share`` (the part of the runs spent training probes);
* ``K_status``: ``ok``, ``timeout`` (past ``--timeout-s``) or ``failed (exit N)``, with the
  child's last stderr line;
* for a preset that did not finish, the stages that ended (``K_stage_S_seconds``, from the
  child's ``synrob: stage S done in T s`` lines), ``K_runs_done`` and
  ``K_runs_done_seconds_sum`` (its ``synrob: run ID done in T s`` lines).

``device`` is the GPU's name (``torch.cuda.get_device_name``) when ``--device`` resolves to
CUDA, else the CPU's model; ``OUT/presets.md`` holds the same numbers as one table with the
device, the date and the synrob commit, ready for docs/experiments.md (rewritten after each
preset).

    python bench/presets.py [--experiments jabberwocky,robustness,senteval,local-structure,jabberwocky:demo]
                            [--device auto] [--workers 1] [--out DIR] [--timeout-s 3600] [--warm]
                            [--keep-caches] [--seed-cache DIR] [--commit SHA]
                            [-p NAME.key=value ...]

``-p NAME.key=value`` passes ``-p key=value`` to that experiment only (e.g. a smaller slice).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

DEFAULT = "jabberwocky,robustness,senteval,local-structure,jabberwocky:demo"
STAGES = ("perturbation", "encoding", "other preparation", "runs", "report")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--experiments", default=DEFAULT)
    ap.add_argument("--device", default="auto")
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--timeout-s", type=float, default=3600.0)
    ap.add_argument("--warm", action="store_true", help="share this shell's synrob cache")
    ap.add_argument("--keep-caches", action="store_true",
                    help="keep each cold run's cache (removed after it by default)")
    ap.add_argument("-p", "--param", action="append", default=[],
                    help="NAME.key=value: a parameter of one experiment")
    ap.add_argument("--seed-cache", type=Path, default=None,
                    help="copy this directory's contents into every cold cache first (e.g. a "
                         "built pseudoword lexicon, `pseudowords/`, where the machine lacks "
                         "what builds it); the table says so")
    ap.add_argument("--commit", default=None,
                    help="the synrob commit for the table (default: git rev-parse HEAD)")
    args = ap.parse_args()
    out = args.out or Path(tempfile.mkdtemp(prefix="synrob-presets-"))
    if out.exists() and not out.is_dir():
        sys.exit(f"{out}: not a directory (--out takes a directory)")
    if args.seed_cache is not None and not args.seed_cache.is_dir():
        sys.exit(f"{args.seed_cache}: not a directory (--seed-cache takes a directory)")
    out.mkdir(parents=True, exist_ok=True)
    device = _device_name(args.device)
    print(f"device: {device}")
    print(f"workers: {args.workers}")
    print(f"cold: {'no' if args.warm else 'yes'}")
    rows = []
    for entry in (e.strip() for e in args.experiments.split(",") if e.strip()):
        name, _, preset = entry.partition(":")
        rows.append(_run_one(name, preset or "default", args, out))
        # after each preset: a bench stopped from outside keeps the rows of those that ended
        (out / "presets.md").write_text(_table(rows, device, args), encoding="utf-8")
    print(f"table: {out / 'presets.md'}")


def _run_one(name: str, preset: str, args: argparse.Namespace, out: Path) -> dict[str, Any]:
    """Run one preset in a child process; print and return its lines."""
    key = f"{name}-{preset}"
    res_dir = out / key
    cmd = [sys.executable, "-m", "synrob.cli", "run", name, "--preset", preset, "-o",
           str(res_dir), "--force", "--device", args.device, "--workers", str(args.workers)]
    for p in args.param:
        target, _, kv = p.partition(".")
        if target == name and kv:
            cmd += ["-p", kv]
    env, cache = dict(os.environ), None
    if not args.warm:
        cache = tempfile.mkdtemp(prefix=f"synrob-cache-{key}-", dir=out)
        env["SYNROB_CACHE"] = cache
        if args.seed_cache is not None:
            shutil.copytree(args.seed_cache, cache, dirs_exist_ok=True)
    t0 = time.perf_counter()
    try:
        code, lines = _child(cmd, env, args.timeout_s, out / f"{key}.stderr", key)
    finally:
        if cache is not None and not args.keep_caches:  # a default preset's is gigabytes
            shutil.rmtree(cache, ignore_errors=True)
    status = ("timeout" if code is None else "ok" if code == 0 else f"failed (exit {code})")
    err = [ln for ln in lines if ln.strip()][-1:] if code else []
    row: dict[str, Any] = {"key": key, "seconds": time.perf_counter() - t0, "status": status,
                           "command": " ".join(["synrob", *cmd[3:]])}
    row.update(_results(res_dir / "results.json") if status == "ok" else _progress(lines))
    _print(row, err)
    return row


def _child(cmd: list[str], env: dict[str, str], timeout_s: float, log: Path, key: str
           ) -> tuple[int | None, list[str]]:
    """Run ``cmd``; copy its stderr into ``log`` line by line as it comes (so a bench killed
    from outside keeps what the child printed) and echo its ``synrob:`` lines to this
    process's stderr. Returns (exit code, or None when killed past ``timeout_s``; the stderr
    lines, each the text after its last carriage return: progress bars redraw with ``\r``)."""
    lines: list[str] = []
    with open(log, "w", encoding="utf-8") as fh, subprocess.Popen(
            cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True) as proc:
        killed = threading.Event()
        timer = threading.Timer(timeout_s, lambda: (killed.set(), proc.kill()))
        timer.start()
        try:
            assert proc.stderr is not None
            for raw in proc.stderr:
                fh.write(raw)
                fh.flush()
                line = raw.rstrip("\n").split("\r")[-1]
                lines.append(line)
                if line.startswith("synrob:"):
                    print(f"[{key}] {line}", file=sys.stderr, flush=True)
            code = proc.wait()
        finally:
            timer.cancel()
    return (None if killed.is_set() else code), lines


_STAGE = re.compile(r"synrob: stage (.+) done in ([0-9.]+) s$")
_RUN = re.compile(r"synrob: run (\S+) done in ([0-9.]+) s$")


def _progress(lines: list[str]) -> dict[str, Any]:
    """What a preset that did not finish printed: the stages that ended (``synrob: stage S
    done in T s``) and the runs that finished (``synrob: run ID done in T s``)."""
    stages = {m[1]: float(m[2]) for m in map(_STAGE.match, lines) if m}
    runs = [float(m[2]) for m in map(_RUN.match, lines) if m]
    return {"stages": stages, "runs_done": len(runs), "runs_done_seconds_sum": round(sum(runs), 1)}


def _results(path: Path) -> dict[str, Any]:
    """Stages, runs and training share from a finished ``results.json``."""
    data = json.loads(path.read_text(encoding="utf-8"))
    run_time = data.get("run_time") or {}
    return {"stages": data.get("stages") or {}, "runs": run_time.get("runs"),
            "runs_seconds_sum": run_time.get("seconds"),
            "training_share": run_time.get("training_share")}


def _print(row: dict[str, Any], err: list[str]) -> None:
    key = row["key"]
    print(f"{key}_status: {row['status']}" + (f" ({err[0]})" if err else ""))
    print(f"{key}_seconds: {row['seconds']:.1f}")
    for stage, secs in row.get("stages", {}).items():
        print(f"{key}_stage_{stage.replace(' ', '_')}_seconds: {float(secs):.1f}")
    for field in ("runs", "runs_seconds_sum", "training_share", "runs_done",
                  "runs_done_seconds_sum"):
        if row.get(field) is not None:
            print(f"{key}_{field}: {row[field]}")


def _table(rows: list[dict[str, Any]], device: str, args: argparse.Namespace) -> str:
    """The markdown table of ``rows`` with the device, date, commit and settings."""
    head = ["preset", "status", "wall", *(f"{s} stage" if s == "runs" else s for s in STAGES),
            "runs (count)", "training share"]
    lines = [f"Device: {device}; {args.workers} worker(s); "
             f"{_caches(args)}; {dt.date.today().isoformat()}; "
             f"synrob {args.commit or _commit()}; `python bench/presets.py --experiments "
             f"{args.experiments} --device {args.device} --workers {args.workers}`", "",
             "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        st = r.get("stages", {})
        share = r.get("training_share")
        cells = [r["key"], r["status"], _secs(r["seconds"]),
                 *(_secs(st[s]) if s in st else "-" for s in STAGES),
                 _count(r), "-" if share is None else f"{100 * share:.0f} %"]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def _count(row: dict[str, Any]) -> str:
    """The runs column: the count of a finished preset, or how many runs of an unfinished one
    had finished, with their seconds summed."""
    if row.get("runs") is not None:
        return str(row["runs"])
    if row.get("runs_done"):
        return f"{row['runs_done']} finished ({row['runs_done_seconds_sum']:.0f} s summed)"
    return "-"


def _caches(args: argparse.Namespace) -> str:
    if args.warm:
        return "warm caches"
    if args.seed_cache is None:
        return "cold caches"
    seeded = ", ".join(sorted(p.name for p in args.seed_cache.iterdir()))
    return f"cold caches seeded with {seeded}"


def _secs(s: float) -> str:
    s = float(s)
    return f"{s:.1f} s" if s < 60 else f"{int(s // 60)} min {s % 60:.0f} s"


def _device_name(device: str) -> str:
    """The CUDA device's name where ``device`` resolves to CUDA, else the CPU's model."""
    if device != "cpu":
        try:
            import torch

            cuda = device in ("auto", "cuda") or device.startswith("cuda:")
            if cuda and torch.cuda.is_available():
                return str(torch.cuda.get_device_name(torch.device(
                    "cuda" if device == "auto" else device)))
        except Exception:  # noqa: BLE001 - no torch or no driver: the CPU below
            pass
    from mst import cpu_model  # bench/ is this script's directory, first on sys.path

    return f"CPU {cpu_model()} ({os.cpu_count()} cores)"


def _commit() -> str:
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                              text=True, cwd=Path(__file__).resolve().parent,
                              check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


if __name__ == "__main__":
    main()
