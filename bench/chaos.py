"""Kill tests: SIGKILL ``synrob perturb``, ``synrob encode`` and ``synrob run`` at random moments.

For each command an uninterrupted reference run is timed first. Then, ``--kills`` times, the
same command is started in its own process group (``start_new_session``) in a fresh temporary
directory and the whole group is killed with ``SIGKILL`` at a moment drawn uniformly (seeded)
within the reference run's duration. What the kill left is checked, then the command is run
again to completion and compared with the reference:

* ``perturb`` (``synrob perturb --kind shuffle ud:en_ewt:dev -o OUT``): after the kill ``OUT``
  is absent or byte-identical to the reference output or to the file it replaced (every other
  trial starts with an old file at ``OUT``); after the re-run it is byte-identical to the
  reference.
* ``encode`` (``synrob encode --encoder glove-6b-50d ud:en_ewt:train``, a fresh
  ``SYNROB_CACHE`` per trial): after the kill every published cache entry loads through
  :class:`synrob.probe.representations.encoding.RepresentationSet` and equals the reference entry
  (offsets, every layer, sentence states); after the re-run (which resumes the ``.partial``
  entry) the representations equal the reference's.
* ``run`` (``synrob run jabberwocky --preset sample -o DIR --workers 2``; the representation
  cache is shared and warmed by the reference run): after the kill ``results.json``,
  ``experiment.json`` and every ``runs/*.json`` are absent or valid JSON (run files and
  ``results.json`` with the reference's rows), derived data files, ``results.csv`` and
  ``report.md`` absent or byte-identical to the reference's, PNG plots and ``report.html``
  (which shows the run's times in its provenance) absent or complete;
  after the re-run the rows of ``results.json`` equal the reference's (times, durations and
  provenance ignored) with the same run ids.

Prints ``name: value`` lines: ``kills`` (SIGKILLs delivered to a live process group; a trial
whose command finished before its moment is counted in ``finished_before_kill``, checked all
the same, and followed by another trial, up to ``2 * --kills`` trials per command), ``partial_outputs`` (target 0), ``results_differ`` (target 0),
``stale_temporaries`` (``.*.tmp`` files left by killed writers: allowed, counted), per command
``kills_<cmd>``, ``partial_outputs_<cmd>``, ``results_differ_<cmd>``,
``stale_temporaries_<cmd>``, ``reference_s_<cmd>``, ``resumable_encode`` / ``resumable_run``
(kills that left finished work to resume: recorded chunks of a ``.partial`` cache entry,
finished ``runs/*.json``), and ``wall_s``. Every failed check is
printed on stderr.

Run: ``.venv/bin/python bench/chaos.py [--kills N] [--seed S] [--only perturb,encode,run]``
(``SYNROB_DATA`` must point at a directory holding ``ud/en_ewt``).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
COMMANDS = ("perturb", "encode", "run")
PNG_END = b"IEND\xaeB`\x82"


def emit(name: str, value: float | int | str) -> None:
    if isinstance(value, float):
        value = f"{value:.4g}" if abs(value) < 100 else f"{value:.0f}"
    print(f"{name}: {value}", flush=True)


def synrob_argv() -> list[str]:
    """The real ``synrob`` console script of this interpreter's environment."""
    script = Path(sys.executable).with_name("synrob")
    if script.is_file():
        return [str(script)]
    return [sys.executable, "-c", "import sys; from synrob.cli.app import main; sys.exit(main())"]


@dataclass
class Tally:
    """What the trials of one command found."""

    command: str
    trials: int = 0
    kills: int = 0
    finished_before_kill: int = 0
    partial_outputs: int = 0
    results_differ: int = 0
    stale_temporaries: int = 0
    resumable: int = 0  # kills that left finished work for the re-run to resume
    reference_s: float = 0.0
    problems: list[str] = field(default_factory=list)

    def kill(self, args: Sequence[str], env: dict[str, str], cwd: Path, delay: float) -> bool:
        """One trial's kill (see :func:`kill_at`), counted; True when it hit a live command."""
        if kill_at(args, env, cwd, delay):
            self.kills += 1
            return True
        self.finished_before_kill += 1
        return False

    def partial(self, trial: int, what: str) -> None:
        self.partial_outputs += 1
        self.problems.append(f"{self.command} trial {trial}: partial output: {what}")

    def differ(self, trial: int, what: str) -> None:
        self.results_differ += 1
        self.problems.append(f"{self.command} trial {trial}: result differs: {what}")


# ---------------------------------------------------------------------- processes
def run_to_end(args: Sequence[str], env: dict[str, str], cwd: Path,
               timeout: float = 3600) -> tuple[float, str]:
    """Run ``synrob ARGS`` to completion; (seconds, stdout). A failure raises with stderr."""
    t0 = time.perf_counter()
    res = subprocess.run([*synrob_argv(), *args], env=env, cwd=cwd, capture_output=True,
                         text=True, timeout=timeout, check=False)
    seconds = time.perf_counter() - t0
    if res.returncode != 0:
        raise RuntimeError(f"synrob {' '.join(args)} exited with {res.returncode}:\n"
                           f"{res.stderr[-3000:]}")
    return seconds, res.stdout


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def kill_at(args: Sequence[str], env: dict[str, str], cwd: Path, delay: float) -> bool:
    """Start ``synrob ARGS`` in a new process group and SIGKILL the whole group after ``delay``
    seconds. True when the kill hit a live command; False when it had finished already (a
    non-zero exit then raises)."""
    log = cwd / "killed-stderr.txt"
    with log.open("wb") as err:
        proc = subprocess.Popen([*synrob_argv(), *args], env=env, cwd=cwd,
                                start_new_session=True, stdin=subprocess.DEVNULL,
                                stdout=subprocess.DEVNULL, stderr=err)
    pgid = proc.pid  # start_new_session: the leader's pid is the group id
    try:
        proc.wait(timeout=delay)
    except subprocess.TimeoutExpired:
        os.killpg(pgid, signal.SIGKILL)
        proc.wait()
        _wait_group(pgid)
        return True
    if proc.returncode != 0:
        raise RuntimeError(f"synrob {' '.join(args)} exited with {proc.returncode}:\n"
                           f"{log.read_text(errors='replace')[-3000:]}")
    _wait_group(pgid)
    return False


def _wait_group(pgid: int) -> None:
    """Wait until no process of group ``pgid`` is left (workers reparented to init die too)."""
    deadline = time.monotonic() + 30
    while _group_alive(pgid):
        if time.monotonic() > deadline:
            raise RuntimeError(f"process group {pgid} still alive 30 s after its leader ended")
        time.sleep(0.05)


def temporaries(root: Path) -> list[Path]:
    """Leftover temporaries of killed atomic writers (``.NAME.PID.RAND.tmp``) under ``root``."""
    return [p for p in root.rglob("*.tmp") if p.name.startswith(".")] if root.exists() else []


def _chaos(tally: Tally, kills: int, rng: random.Random, workdir: Path,
           trial: Callable[[int, Path, float], None]) -> Tally:
    """Trials until ``kills`` SIGKILLs hit a live command (at most ``2 * kills`` trials: a
    command that finishes before its moment is checked all the same, then a new moment is
    drawn)."""
    while tally.kills < kills and tally.trials < 2 * kills:
        i = tally.trials
        tdir = Path(tempfile.mkdtemp(prefix=f"{tally.command}-{i}-", dir=workdir))
        delay = rng.uniform(0, tally.reference_s)
        tally.trials += 1
        trial(i, tdir, delay)
        shutil.rmtree(tdir, ignore_errors=True)
    return tally


def _env(cache: Path | None = None) -> dict[str, str]:
    env = dict(os.environ)
    if cache is not None:
        env["SYNROB_CACHE"] = str(cache)
    return env


# ---------------------------------------------------------------------- perturb
def chaos_perturb(kills: int, workdir: Path, rng: random.Random, *,
                  source: str = "ud:en_ewt:dev", kind: str = "shuffle",
                  extra: Sequence[str] = ("--seed", "1")) -> Tally:
    """Kill ``synrob perturb --kind KIND SOURCE -o OUT`` ``kills`` times; see the module doc."""
    tally = Tally("perturb")
    ref_dir = Path(tempfile.mkdtemp(prefix="perturb-ref-", dir=workdir))
    ref_out = ref_dir / "out.conllu"

    def args(out: Path) -> list[str]:
        return ["perturb", "--kind", kind, *extra, source, "-o", str(out)]

    tally.reference_s, _ = run_to_end(args(ref_out), _env(), ref_dir)
    reference = ref_out.read_bytes()
    old = b"# an older output of another run\n"

    def trial(i: int, tdir: Path, delay: float) -> None:
        out = tdir / "out.conllu"
        if i % 2:
            out.write_bytes(old)
        tally.kill(args(out), _env(), tdir, delay)
        if out.exists() and out.read_bytes() not in (reference, old):
            tally.partial(i, f"{out} ({out.stat().st_size} bytes) is neither the old file "
                             "nor the whole output")
        stale = temporaries(tdir)
        tally.stale_temporaries += len(stale)
        run_to_end(args(out), _env(), tdir)
        if out.read_bytes() != reference:
            tally.differ(i, f"{out} differs from the uninterrupted output")
        if set(temporaries(tdir)) - set(stale):
            tally.differ(i, "the re-run left a temporary file")

    return _chaos(tally, kills, rng, workdir, trial)


# ---------------------------------------------------------------------- encode
def _load(entry: Path):  # noqa: ANN202 - RepresentationSet, imported lazily
    from synrob.probe.representations.encoding import RepresentationSet

    return RepresentationSet(entry)


def representations_differ(a, b) -> str | None:  # noqa: ANN001
    """Why two RepresentationSets differ (None when equal): shape, offsets, every array."""
    import numpy as np

    for attr in ("layers", "dim", "n_sentences", "n_words", "oov_rate"):
        if getattr(a, attr) != getattr(b, attr):
            return f"{attr}: {getattr(a, attr)} != {getattr(b, attr)}"
    for field_ in ("identity", "corpus_sha256", "pooling", "dtype", "sentence_states", "files"):
        if a.meta.get(field_) != b.meta.get(field_):
            return f"index field {field_} differs"
    if not np.array_equal(a.offsets, b.offsets):
        return "offsets differ"
    for layer in a.layers:
        if not np.array_equal(a.layer_matrix(layer)[0], b.layer_matrix(layer)[0]):
            return f"layer {layer} differs"
        if a.meta.get("sentence_states"):
            for pooling in ("first", "last"):
                if not np.array_equal(a.sentence_vectors(layer, pooling),
                                      b.sentence_vectors(layer, pooling)):
                    return f"{pooling}-token states of layer {layer} differ"
    return None


def chaos_encode(kills: int, workdir: Path, rng: random.Random, *,
                 source: str = "ud:en_ewt:train", encoder: str = "glove-6b-50d",
                 extra: Sequence[str] = ()) -> Tally:
    """Kill ``synrob encode --encoder ENCODER SOURCE`` (fresh cache per trial) ``kills`` times."""
    from synrob.perturb.errors import SynrobError
    from synrob.probe.representations.cache import list_entries, lookup

    tally = Tally("encode")
    ref_dir = Path(tempfile.mkdtemp(prefix="encode-ref-", dir=workdir))
    args = ["encode", "--encoder", encoder, *extra, source]
    tally.reference_s, stdout = run_to_end(args, _env(ref_dir / "cache"), ref_dir)
    reference = _load(Path(json.loads(stdout.splitlines()[-1])["cache_path"]))

    def trial(i: int, tdir: Path, delay: float) -> None:
        cache = tdir / "cache"
        root = cache / "representations"
        killed = tally.kill(args, _env(cache), tdir, delay)
        if root.is_dir():
            for d in root.iterdir():
                if not d.is_dir() or d.name.endswith(".partial"):
                    continue
                entry = lookup(d.name, root)
                if entry is None:
                    tally.partial(i, f"{d} is a published entry that does not load")
                    continue
                try:
                    why = representations_differ(_load(entry), reference)
                except (SynrobError, OSError, ValueError) as exc:
                    why = f"fails to load: {exc}"
                if why is not None:
                    tally.partial(i, f"{d}: {why}")
        for d in root.glob("*.partial"):
            progress = _json_or_none(d / "progress.json") or {}
            tally.resumable += killed and bool(progress.get("done"))
        states = [e["state"] for e in list_entries(root)] if root.is_dir() else []
        if any(s not in ("partial", "complete") for s in states):
            tally.partial(i, f"unexpected cache entry states {states}")
        stale = temporaries(cache)
        tally.stale_temporaries += len(stale)
        _, out = run_to_end(args, _env(cache), tdir)
        try:
            why = representations_differ(
                _load(Path(json.loads(out.splitlines()[-1])["cache_path"])), reference)
        except (SynrobError, OSError, ValueError, KeyError, IndexError) as exc:
            why = f"the re-run's entry does not load: {exc}"
        if why is not None:
            tally.differ(i, why)
        if [e for e in list_entries(root) if e["state"] != "complete"]:
            tally.differ(i, "the re-run left a partial entry")

    return _chaos(tally, kills, rng, workdir, trial)


# ---------------------------------------------------------------------- run
_RUN_IGNORED = ("written", "seconds", "stages", "run_time", "executed", "reused", "versions")


def comparable_results(results: dict) -> dict:
    """``results.json`` without times, durations, reuse counts and provenance; run keys are
    reduced to id, label and content key (the key itself names the results directory)."""
    out = {k: v for k, v in results.items() if k not in _RUN_IGNORED and k != "runs"}
    out["runs"] = [{k: r.get(k) for k in ("id", "label", "content_key")}
                   for r in results.get("runs", [])]
    return out


def same_json(a: object, b: object) -> bool:
    """Equal as JSON (so a NaN equals a NaN: an undefined interval is the same result)."""
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


def _json_or_none(path: Path) -> dict | None:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def check_run_dir(out: Path, ref: Path) -> list[str]:
    """What in results directory ``out`` (left by a killed run) is partial or wrong."""
    bad: list[str] = []
    if not out.exists():
        return bad
    for path in sorted(out.rglob("*")):
        if not path.is_file() or path.name.endswith(".tmp"):
            continue
        rel = path.relative_to(out)
        twin = ref / rel
        if path.suffix == ".json":
            obj = _json_or_none(path)
            if obj is None:
                bad.append(f"{rel}: not valid JSON")
            elif rel.parts[0] == "runs" or rel.name == "results.json":
                ref_obj = _json_or_none(twin)
                if ref_obj is None:
                    bad.append(f"{rel}: not in the reference run")
                elif not same_json(obj.get("rows"), ref_obj.get("rows")):
                    bad.append(f"{rel}: rows differ from the reference")
        elif path.suffix == ".png":
            if not path.read_bytes().endswith(PNG_END):
                bad.append(f"{rel}: truncated PNG")
        elif path.suffix == ".html":  # holds the run's times (provenance): whole, not identical
            if not path.read_bytes().rstrip().endswith(b"</html>"):
                bad.append(f"{rel}: truncated HTML")
        elif not twin.is_file() or path.read_bytes() != twin.read_bytes():
            bad.append(f"{rel}: not byte-identical to the reference's")
    return bad


def chaos_run(kills: int, workdir: Path, rng: random.Random, *, experiment: str = "jabberwocky",
              preset: str = "sample", params: Sequence[str] = (), workers: int = 2,
              cache: Path | None = None) -> Tally:
    """Kill ``synrob run EXPERIMENT --preset PRESET -o DIR`` ``kills`` times; the cache
    (``cache``, default the environment's) is shared and warmed by the reference run."""
    tally = Tally("run")
    ref = Path(tempfile.mkdtemp(prefix="run-ref-", dir=workdir))

    def args(out: Path, n_workers: int = workers) -> list[str]:
        return ["run", experiment, "--preset", preset,
                *(a for p in params for a in ("-p", p)), "--workers", str(n_workers),
                "-o", str(out)]

    env = _env(cache)
    # fill the shared cache first (not timed; one worker: no pool start-up), so that the
    # reference and every trial find it warm
    run_to_end(args(ref / "warm", 1), env, ref)
    tally.reference_s, _ = run_to_end(args(ref / "out"), env, ref)
    reference = json.loads((ref / "out" / "results.json").read_text(encoding="utf-8"))
    ref_rows = comparable_results(reference)
    warm = json.loads((ref / "warm" / "results.json").read_text(encoding="utf-8"))
    if not same_json(comparable_results(warm), ref_rows):  # cold cache, one worker: the same results
        tally.differ(-1, "the warm-up run (cold cache, 1 worker) differs from the reference")

    def trial(i: int, tdir: Path, delay: float) -> None:
        out = tdir / "out"
        killed = tally.kill(args(out), env, tdir, delay)
        for what in check_run_dir(out, ref / "out"):
            tally.partial(i, what)
        tally.resumable += killed and any(_json_or_none(f) for f in (out / "runs").glob("*.json"))
        stale = temporaries(out)
        tally.stale_temporaries += len(stale)
        run_to_end(args(out), env, tdir)
        got = _json_or_none(out / "results.json")
        if got is None:
            tally.differ(i, "no valid results.json after the re-run")
        elif not same_json(comparable_results(got), ref_rows):
            tally.differ(i, "results.json differs from the uninterrupted run")
        for what in check_run_dir(out, ref / "out"):
            tally.differ(i, f"after the re-run: {what}")

    return _chaos(tally, kills, rng, workdir, trial)


# ---------------------------------------------------------------------- main
def report(tallies: Sequence[Tally], wall: float) -> None:
    for t in tallies:
        for problem in t.problems:
            print(f"chaos: {problem}", file=sys.stderr, flush=True)
    total = {k: sum(getattr(t, k) for t in tallies)
             for k in ("trials", "kills", "finished_before_kill", "partial_outputs",
                       "results_differ", "stale_temporaries")}
    for key in ("kills", "partial_outputs", "results_differ", "stale_temporaries", "trials"):
        emit(key, total[key])
    emit("finished_before_kill", total["finished_before_kill"])
    for t in tallies:
        emit(f"kills_{t.command}", t.kills)
        emit(f"partial_outputs_{t.command}", t.partial_outputs)
        emit(f"results_differ_{t.command}", t.results_differ)
        emit(f"stale_temporaries_{t.command}", t.stale_temporaries)
        if t.command != "perturb":  # an -o file is written whole or not at all
            emit(f"resumable_{t.command}", t.resumable)
        emit(f"reference_s_{t.command}", t.reference_s)
    emit("wall_s", wall)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kills", type=int, default=20, help="kills per command")
    parser.add_argument("--seed", type=int, default=0, help="seed of the kill moments")
    parser.add_argument("--only", default=",".join(COMMANDS),
                        help="comma list of commands to kill: perturb, encode, run")
    parser.add_argument("--perturb-kind", default="shuffle")
    parser.add_argument("--encoder", default="glove-6b-50d")
    parser.add_argument("--encode-source", default="ud:en_ewt:train",
                        help="corpus of the encode trials (e.g. ud:en_ewt:dev with minilm)")
    parser.add_argument("--run-workers", type=int, default=2)
    parser.add_argument("--run-cache", type=Path, default=None,
                        help="representation cache of the run trials (default: $SYNROB_CACHE)")
    parser.add_argument("--workdir", type=Path, default=None,
                        help="where trial directories go (default: a temporary directory)")
    args = parser.parse_args()
    only = [c.strip() for c in args.only.split(",") if c.strip()]
    unknown = set(only) - set(COMMANDS)
    if unknown:
        parser.error(f"unknown command(s) {', '.join(sorted(unknown))}")
    rng = random.Random(args.seed)
    t0 = time.perf_counter()
    tallies: list[Tally] = []
    with tempfile.TemporaryDirectory(prefix="synrob-chaos-", dir=args.workdir) as work:
        workdir = Path(work)
        for command in only:
            if command == "perturb":
                tally = chaos_perturb(args.kills, workdir, rng, kind=args.perturb_kind)
            elif command == "encode":
                tally = chaos_encode(args.kills, workdir, rng, encoder=args.encoder,
                                     source=args.encode_source)
            else:
                tally = chaos_run(args.kills, workdir, rng, workers=args.run_workers,
                                  cache=args.run_cache)
            tallies.append(tally)
            emit(f"done_{command}_s", time.perf_counter() - t0)
    report(tallies, time.perf_counter() - t0)


if __name__ == "__main__":
    main()
