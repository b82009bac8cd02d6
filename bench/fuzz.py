"""Property-based fuzzing of the CLI with corrupted real EWT sentences (hypothesis).

Files are built from real UD English EWT dev sentences, some intact and some corrupted (a
column dropped or added, a bad ID, a multiword range or an empty node out of place, a HEAD
cycle, several or no roots, a garbage HEAD/FEATS/MISC/DEPS, a truncated or very long line, a
comment inside a sentence, a BOM or a byte that is not UTF-8 inside, rows swapped, duplicated
or deleted), then damaged as a whole (CRLF or CR line ends, a UTF-8 BOM, random bytes before or
after, truncation at a random byte) or replaced by an empty file, whitespace, random bytes or
random text. Each file goes through the real CLI in-process (:func:`synrob.cli.app.run`, the
one error boundary):

* ``synrob conllu validate`` and ``synrob conllu stats --skip-invalid --json``;
* ``synrob perturb --kind K --skip-invalid`` for every registered perturber that
  runs offline quickly (shuffle and flip with each unit: word, subword, char; bshift, somo,
  coordinv, jabberwocky, copos, typo). ``coco`` is excluded: it runs a language model (SmolLM2)
  on every sentence, about 3 minutes for 3 sentences on the shared 2-core CPU, so a few hundred
  fuzz examples would take hours; its input handling is the same pipeline as every other kind.
  Kinds that keep the tree write CoNLL-U, which must itself be valid; text-only units write JSON
  lines. The same bytes are also given as a ``.txt`` text input (``synrob perturb --kind
  shuffle``, one sentence per line parsed with spaCy);
* ``synrob metrics FILE FILE --json`` as ``.conllu``, and as ``.txt`` and without a suffix,
  where metrics sniffs the format (text unless the first line is a comment or has 10 columns);
  those two are checked for the exit-code boundary only;
* ``synrob encode --encoder glove-6b-50d`` (a static encoder);
* ``synrob probe --load SAVED --test FILE`` with a distance probe trained once on a small clean
  EWT slice (glove-6b-50d, layer 0) and saved with ``--save``.

The expected outcome is computed independently of the command: the file's bytes are split into
blocks as CoNLL-U defines them (lines end with LF, CRLF or CR; a blank or whitespace-only line
ends a sentence; a BOM at the very start is dropped) and each block is checked on its own by the
library validator (:func:`synrob.perturb.io.validate.validate_block`); every sentence that was put
in intact and not touched by a whole-file corruption must be among the valid ones.

Properties checked on every command:

* never a traceback and never exit 70: the exit code is 0 or 1, and exit 1 comes with exactly
  one ``synrob: error:`` line on stderr (``conllu validate`` prints one ``FILE:LINE: problem``
  line per invalid sentence instead) — failures counted in ``tracebacks``;
* with ``--skip-invalid`` every valid sentence comes out, in order, with its sent_id and text,
  and the reported number of skipped sentences is exact — failures counted in
  ``sentences_lost``;
* commands without ``--skip-invalid`` (metrics, encode, probe) succeed exactly when every
  sentence is valid, and otherwise name the first invalid sentence's ``FILE:LINE``; validate
  reports exactly the invalid sentences — failures counted in ``wrong_results``.

Prints ``name: value`` lines: ``fuzz_examples`` (examples run, one CLI call each), ``tracebacks``
(must be 0), ``sentences_lost`` (must be 0), ``wrong_results`` (must be 0), the examples per
target (``examples_<target>``), and ``wall_s``. The first failures are printed as
``failure: ...`` lines. ``tests/test_fuzz.py`` runs the same properties with a CI budget.

Run: ``SYNROB_DATA=../shared/data .venv/bin/python bench/fuzz.py [--examples 20000] [--seed 0]
[--only validate,encode,...]``
"""

from __future__ import annotations

import argparse
import io
import json
import os
import re
import sys
import tempfile
import time
import zlib
from collections.abc import Callable
from contextlib import redirect_stderr, redirect_stdout
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import seed as hseed
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_EWT = Path(os.environ.get("SYNROB_EWT_DIR", ROOT.parent / "shared" / "data" / "ud" / "en_ewt"))

# --------------------------------------------------------------------------- the CLI, in-process


@dataclass
class CliResult:
    exit_code: int
    stdout: str
    stderr: str


def run_cli(args: list[str]) -> CliResult:
    """``synrob ARGS`` in this process, through the real error boundary."""
    from synrob.cli.app import run

    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = run([str(a) for a in args])
    return CliResult(code, out.getvalue(), err.getvalue())


# --------------------------------------------------------------------------- the sentence pool

POOL_SIZE = 240


@cache
def pool(ewt_dir: str = str(DEFAULT_EWT)) -> tuple[tuple[str, ...], ...]:
    """Real EWT dev sentences as tuples of lines: every one with an empty node or a
    multiword range among the first 1000, then plain ones, ``POOL_SIZE`` in all."""
    text = (Path(ewt_dir) / "en_ewt-ud-dev.conllu").read_text(encoding="utf-8")
    blocks = [tuple(b.split("\n")) for b in text.split("\n\n") if b.strip()]
    special = [b for b in blocks[:1000]
               if any(re.match(r"\d+[.-]\d+\t", line) for line in b)]
    plain = [b for b in blocks if b not in special]
    chosen = special[: POOL_SIZE // 2]
    return tuple(chosen + plain[: POOL_SIZE - len(chosen)])


# --------------------------------------------------------------------------- corruptions

# field text: anything but line breaks (a line break would change where sentences end, which
# the whole-file corruptions do on purpose)
_FIELD_TEXT = st.text(
    st.characters(exclude_characters="\n\r", exclude_categories=("Cs",)), min_size=0, max_size=12
)
_STRUCT_TEXT = st.text(st.sampled_from("0123456789|=:_-.,abcXYZ \t\u00a0\u2028\x85\x0b\u0663"),
                       max_size=12)
_BAD_IDS = ["0", "-1", "01", "1.0", "0-1", "2-1", "1-1", "3-", "-", ".", "1.5.2", "x", "1 ",
            "\u0663", "\u00b2", "1e3", "+1", "99", "99-100", "1.1", "0.1", "2.1", "1-99",
            "10000000000000000000000"]
_BAD_HEADS = ["_", "-1", "+1", "007", "00", "1.1", "x", "", "99", "\u0663", "\u00b2",
              "10000000000000000000000", "-0", " 1"]


def _rows(lines: list[str]) -> list[int]:
    return [i for i, line in enumerate(lines) if not line.startswith("#")]


def _word_rows(lines: list[str]) -> list[int]:
    return [i for i, line in enumerate(lines) if line.split("\t", 1)[0].isdigit()]


def _set_col(lines: list[str], i: int, col: int, value: str) -> None:
    cols = lines[i].split("\t")
    if col < len(cols):
        cols[col] = value
        lines[i] = "\t".join(cols)


@st.composite
def corrupt_block(draw, lines: tuple[str, ...]) -> tuple[str, ...]:
    """One corruption of a sentence's lines (the result may still be valid)."""
    out = list(lines)
    rows = _rows(out) or [len(out) - 1]
    words = _word_rows(out) or rows
    row = draw(st.sampled_from(rows))
    op = draw(st.sampled_from(CORRUPTIONS))
    if op == "drop_column":
        cols = out[row].split("\t")
        del cols[draw(st.integers(0, len(cols) - 1))]
        out[row] = "\t".join(cols)
    elif op == "add_column":
        cols = out[row].split("\t")
        cols.insert(draw(st.integers(0, len(cols))), draw(_FIELD_TEXT))
        out[row] = "\t".join(cols)
    elif op == "bad_id":
        _set_col(out, row, 0, draw(st.sampled_from(_BAD_IDS) | _STRUCT_TEXT))
    elif op == "range_out_of_place":
        a = draw(st.integers(0, len(words) + 2))
        b = draw(st.integers(0, len(words) + 2))
        hd = draw(st.sampled_from(["_", "1", "0"]))
        out.insert(draw(st.integers(0, len(out))), f"{a}-{b}\tcan't\t_\t_\t_\t_\t{hd}\t_\t_\t_")
    elif op == "empty_node_out_of_place":
        n = draw(st.integers(0, len(words) + 1))
        k = draw(st.integers(0, 3))
        deps = draw(st.sampled_from(["_", f"{max(n, 1)}:conj", "0:root", "1.1:dep", "2:x|1:y"]))
        hd = draw(st.sampled_from(["_", "1"]))
        out.insert(draw(st.integers(0, len(out))),
                   f"{n}.{k}\tgone\tgo\tVERB\t_\t_\t{hd}\t_\t{deps}\t_")
    elif op == "cycle":
        if len(words) >= 2:
            i, j = draw(st.lists(st.sampled_from(words), min_size=2, max_size=2, unique=True))
            _set_col(out, i, 6, out[j].split("\t")[0])
            _set_col(out, j, 6, out[i].split("\t")[0])
    elif op == "self_loop":
        _set_col(out, row, 6, out[row].split("\t")[0])
    elif op == "several_roots":
        for i in draw(st.lists(st.sampled_from(words), min_size=1, max_size=3, unique=True)):
            _set_col(out, i, 6, "0")
    elif op == "no_root":
        for i in words:
            if out[i].split("\t")[6:7] == ["0"]:
                _set_col(out, i, 6, str(draw(st.integers(1, len(words) + 1))))
    elif op == "bad_head":
        _set_col(out, row, 6, draw(st.sampled_from(_BAD_HEADS) | _STRUCT_TEXT))
    elif op == "bad_feats_misc_deps":
        _set_col(out, row, draw(st.sampled_from([5, 8, 9])), draw(_STRUCT_TEXT | _FIELD_TEXT))
    elif op == "random_field":
        _set_col(out, row, draw(st.integers(0, 9)), draw(_FIELD_TEXT))
    elif op == "truncate_line":
        out[row] = out[row][: draw(st.integers(0, max(len(out[row]) - 1, 0)))]
    elif op == "long_line":
        size = draw(st.sampled_from([5_000, 70_000]))
        what = draw(st.sampled_from(["form", "comment", "junk"]))
        if what == "form":  # a valid, very long word
            _set_col(out, draw(st.sampled_from(words)), 1, "x" * size)
        elif what == "comment":
            out.insert(0, "# note = " + "y" * size)
        else:
            out.insert(draw(st.integers(0, len(out))), "z" * size)
    elif op == "comment_inside":
        out.insert(draw(st.integers(0, len(out))), "# " + draw(_FIELD_TEXT))
    elif op == "bom_inside":
        i = draw(st.integers(0, len(out) - 1))
        out[i] = "\ufeff" + out[i]
    elif op == "not_utf8":  # raw bytes, written with surrogateescape
        i = draw(st.integers(0, len(out) - 1))
        pos = draw(st.integers(0, len(out[i])))
        bad = "".join(chr(0xDC00 + b) for b in draw(st.lists(st.integers(0x80, 0xFF),
                                                              min_size=1, max_size=3)))
        out[i] = out[i][:pos] + bad + out[i][pos:]
    elif op == "swap_rows":
        i, j = draw(st.sampled_from(rows)), draw(st.sampled_from(rows))
        out[i], out[j] = out[j], out[i]
    elif op == "duplicate_row":
        out.insert(row, out[row])
    elif op == "delete_row":
        del out[row]
    elif op == "spaces_for_tabs":
        out[row] = out[row].replace("\t", draw(st.sampled_from([" ", "  ", "\u00a0"])))
    elif op == "blank_like_line":  # whitespace only: ends the sentence there
        out.insert(draw(st.integers(1, len(out))), draw(st.sampled_from([" ", "\t", "\x0c",
                                                                          "\u00a0", "\x85"])))
    elif op == "only_comments":
        out = [line for line in out if line.startswith("#")] or ["# nothing"]
    else:  # pragma: no cover
        raise AssertionError(op)
    return tuple(out)


CORRUPTIONS = (
    "drop_column", "add_column", "bad_id", "range_out_of_place", "empty_node_out_of_place",
    "cycle", "self_loop", "several_roots", "no_root", "bad_head", "bad_feats_misc_deps",
    "random_field", "truncate_line", "long_line", "comment_inside", "bom_inside", "not_utf8",
    "swap_rows", "duplicate_row", "delete_row", "spaces_for_tabs", "blank_like_line",
    "only_comments",
)


@dataclass
class FuzzFile:
    """A fuzzed file: its bytes and which pieces went in intact and stayed intact."""

    data: bytes
    intact: list[tuple[str, ...]]  # the lines of real sentences that must come out
    how: str  # a short description (shown with a failure)


def _enc(text: str) -> bytes:
    return text.encode("utf-8", "surrogateescape")


@st.composite
def fuzz_files(draw) -> FuzzFile:
    """A file of real EWT sentences, some corrupted, then maybe damaged as a whole."""
    kind = draw(st.sampled_from(["sentences"] * 8 + ["empty", "blank", "bytes", "text"]))
    if kind == "empty":
        return FuzzFile(b"", [], "empty file")
    if kind == "blank":
        ws = draw(st.text(st.sampled_from(" \t\n\r\x0c\u00a0\ufeff"), max_size=20))
        return FuzzFile(_enc(ws), [], f"whitespace {ws!r}")
    if kind == "bytes":
        data = draw(st.binary(max_size=600))
        return FuzzFile(data, [], "random bytes")
    if kind == "text":
        text = draw(st.text(st.sampled_from("0123456789\t\n_#-.=|: abc\r\u00e9"), max_size=400))
        return FuzzFile(_enc(text), [], "random text")

    sentences = pool()
    picks = draw(st.lists(st.integers(0, len(sentences) - 1), min_size=1, max_size=6,
                          unique=True))
    pieces: list[tuple[tuple[str, ...], bool, str]] = []
    for i in picks:
        lines = sentences[i]
        ops = draw(st.integers(0, 2))
        for _ in range(ops):
            lines = draw(corrupt_block(lines))
        pieces.append((lines, ops == 0, f"#{i}x{ops}"))
    sep = draw(st.sampled_from(["\n\n", "\n\n", "\n\n\n", "\n \n", "\n\t\n"]))
    tail = draw(st.sampled_from(["\n\n", "\n\n", "\n", ""]))
    eol = draw(st.sampled_from(["\n", "\n", "\r\n", "\r"]))
    bom = draw(st.booleans())
    before = draw(st.sampled_from([b""] * 6) | st.binary(min_size=1, max_size=40))
    after = draw(st.sampled_from([b""] * 4) | st.binary(min_size=1, max_size=200))
    # segments: (bytes, piece index or None); line ends replaced per segment
    segments: list[tuple[bytes, int | None]] = []
    for n, (lines, _, _) in enumerate(pieces):
        if n:
            segments.append((_enc(sep), None))
        segments.append((_enc("\n".join(lines)), n))
    segments.append((_enc(tail), None))
    data = b"\xef\xbb\xbf" if bom else b""
    data += before
    ends: dict[int, int] = {}
    for chunk, n in segments:
        data += chunk.replace(b"\n", eol.encode())
        if n is not None:
            ends[n] = len(data)
    data += after
    cut = draw(st.sampled_from([None] * 3) | st.integers(0, len(data)))
    damaged = set()
    if before:
        damaged.add(0)
    if after and tail != "\n\n":
        damaged.add(len(pieces) - 1)
    if cut is not None:
        data = data[:cut]
        damaged |= {n for n, end in ends.items() if end > cut}
    intact = [lines for n, (lines, ok, _) in enumerate(pieces) if ok and n not in damaged]
    how = (f"pieces {' '.join(p[2] for p in pieces)}, sep {sep!r}, tail {tail!r}, eol {eol!r}, "
           f"bom {bom}, before {before!r}, after {len(after)} bytes, cut {cut}")
    return FuzzFile(data, intact, how)


# --------------------------------------------------------------------------- expectations


@dataclass
class Block:
    lines: list[tuple[int, str]]
    error: object | None  # the ConlluError of an invalid block
    source: str  # what synrob perturb writes as synrob.source
    text: str | None  # the sentence's text (valid blocks)


@dataclass
class Expected:
    blocks: list[Block]
    valid: list[Block]
    invalid: list[Block]
    intact_ids: list[tuple[str, str]]  # (sent_id, text) of the intact real sentences


def _meta(lines, key: str) -> str | None:
    for line in lines:
        k, sep, v = line[1:].partition("=")
        if line.startswith("#") and sep and k.strip() == key:
            return v.strip()
    return None


def expect(data: bytes, path: str, intact: list[tuple[str, ...]]) -> Expected:
    """Blocks of ``data`` as CoNLL-U defines them, each validated on its own."""
    from synrob.perturb.corpus import parse_sentence
    from synrob.perturb.errors import ConlluError

    text = data.decode("utf-8", "surrogateescape")
    if text.startswith("\ufeff"):
        text = text[1:]
    raw_blocks: list[list[tuple[int, str]]] = []
    current: list[tuple[int, str]] = []
    for lineno, raw in enumerate(re.split(r"\r\n|\r|\n", text), start=1):
        line = raw.strip()
        if line:
            current.append((lineno, line))
        elif current:
            raw_blocks.append(current)
            current = []
    if current:
        raw_blocks.append(current)
    blocks = []
    for index, lines in enumerate(raw_blocks):
        try:
            sentence = parse_sentence(lines, path)
        except ConlluError as err:
            sid = _meta([line for _, line in lines], "sent_id")
            blocks.append(Block(lines, err, sid or f"s{index + 1}", None))
        else:
            blocks.append(Block(lines, None, sentence.sent_id or f"s{index + 1}", sentence.text))
    ids = [(_meta(p, "sent_id"), _meta(p, "text")) for p in intact]
    return Expected(blocks, [b for b in blocks if b.error is None],
                    [b for b in blocks if b.error is not None], ids)


# --------------------------------------------------------------------------- checks

TRACEBACK, LOST, WRONG = "tracebacks", "sentences_lost", "wrong_results"


@dataclass
class Tally:
    examples: int = 0
    counts: dict[str, int] = field(default_factory=lambda: {TRACEBACK: 0, LOST: 0, WRONG: 0})
    per_target: dict[str, int] = field(default_factory=dict)
    failures: list[str] = field(default_factory=list)

    def add(self, kind: str, target: str, message: str, how: str) -> None:
        self.counts[kind] += 1
        if len(self.failures) < 20:
            self.failures.append(f"{kind} [{target}] {message} | file: {how}")


def _stderr_lines(r: CliResult) -> list[str]:
    """stderr's lines as printed (split on newlines only: a stray control character inside a
    message is not a line end here)."""
    text = r.stderr[:-1] if r.stderr.endswith("\n") else r.stderr
    return text.split("\n") if text else []


def check_boundary(r: CliResult, one_error_line: bool = True) -> list[str]:
    """Problems with how a command ended: anything but exit 0 or 1 with at most one error."""
    problems = []
    if "Traceback" in r.stderr or r.exit_code == 70 or "internal error" in r.stderr:
        problems.append(f"exit {r.exit_code}: {r.stderr.strip()[-400:]}")
    elif r.exit_code not in (0, 1):
        problems.append(f"exit {r.exit_code} (expected 0 or 1): {r.stderr.strip()[-300:]}")
    elif one_error_line:
        errors = [line for line in _stderr_lines(r) if line.startswith("synrob: error:")]
        if r.exit_code == 1 and (len(errors) != 1 or _stderr_lines(r)[-1] != errors[0]):
            problems.append(f"exit 1 without exactly one final 'synrob: error:' line: "
                            f"{r.stderr[-300:]!r}")
        if r.exit_code == 0 and errors:
            problems.append(f"exit 0 with an error line: {errors[0]!r}")
    return problems


def _first_error(exp: Expected) -> str:
    return f"synrob: error: {exp.invalid[0].error}"


def check_intact(exp: Expected) -> list[str]:
    """Every real sentence put in intact must be a valid block (the validator is not over
    strict on real EWT)."""
    valid = {(_meta([line for _, line in b.lines], "sent_id"), b.text) for b in exp.valid}
    return [f"intact EWT sentence {sid} judged invalid" for sid, text in exp.intact_ids
            if (sid, text) not in valid]


Target = Callable[[Path, Expected], list[tuple[str, str]]]


def target_validate(path: Path, exp: Expected) -> list[tuple[str, str]]:
    r = run_cli(["conllu", "validate", path])
    out = [(TRACEBACK, p) for p in check_boundary(r, one_error_line=False)]
    if out:
        return out
    lines = [line for line in _stderr_lines(r) if not line.startswith("synrob: warning:")]
    want = [str(b.error) for b in exp.invalid]
    if r.exit_code != (1 if want else 0):
        out.append((WRONG, f"validate exit {r.exit_code} with {len(want)} invalid sentences"))
    if lines != want:
        out.append((WRONG, f"validate reported {lines[:3]!r}..., expected {want[:3]!r}..."))
    return out


def target_stats(path: Path, exp: Expected) -> list[tuple[str, str]]:
    r = run_cli(["conllu", "stats", "--json", "--skip-invalid", path])
    out = [(TRACEBACK, p) for p in check_boundary(r)]
    if out:
        return out
    if r.exit_code != 0:
        return [(LOST, f"stats --skip-invalid exit {r.exit_code}: {r.stderr[-300:]!r}")]
    row = json.loads(r.stdout)
    if row["sentences"] != len(exp.valid) or row["skipped"] != len(exp.invalid):
        out.append((LOST, f"stats: {row['sentences']} sentences / {row['skipped']} skipped, "
                          f"expected {len(exp.valid)} / {len(exp.invalid)}"))
    skipped = [line for line in _stderr_lines(r)
               if line.startswith("synrob: skipped invalid sentence:")]
    if len(skipped) != len(exp.invalid):
        out.append((LOST, f"stats: {len(skipped)} skip lines for {len(exp.invalid)} invalid"))
    return out


#: ``synrob perturb`` configurations fuzzed: every registered kind but coco (see above).
PERTURB_CONFIGS: dict[str, list[str]] = {
    "shuffle-word": ["--kind", "shuffle", "-p", "unit=word"],
    "shuffle-word-phrase": ["--kind", "shuffle", "-p", "unit=word", "-p", "mode=phrase"],
    "shuffle-subword": ["--kind", "shuffle", "-p", "unit=subword"],
    "shuffle-char": ["--kind", "shuffle", "-p", "unit=char"],
    "flip-word": ["--kind", "flip", "-p", "unit=word"],
    "flip-subword": ["--kind", "flip", "-p", "unit=subword"],
    "flip-char": ["--kind", "flip", "-p", "unit=char"],
    "bshift": ["--kind", "bshift"],
    "somo": ["--kind", "somo"],
    "coordinv": ["--kind", "coordinv"],
    "jabberwocky": ["--kind", "jabberwocky"],
    "copos": ["--kind", "copos"],
    "typo": ["--kind", "typo"],
    "agreement": ["--kind", "agreement"],
}

#: configurations whose perturber writes one output per pair found, none without one: their
#: outputs' sources are the valid sentences' in order, each any number of times
SEVERAL = {"agreement"}


#: configurations that write text only (no tree): fuzzed with --format jsonl
TEXT_ONLY = {"shuffle-subword", "shuffle-char", "flip-subword", "flip-char"}


def _in_order(got: list, want: list) -> list:
    """``want`` when ``got`` lists only its items, in its order, each any number of times
    (none included); else ``got`` itself (the comparison then fails)."""
    k = 0
    for item in got:
        while k < len(want) and want[k] != item:
            k += 1
        if k == len(want):
            return got
    return want


def target_perturb(config: str) -> Target:
    """Tree-keeping kinds write CoNLL-U, which must itself be valid (every block) and hold
    one sentence per valid input sentence, in order (``# synrob.source``); text-only ones
    write JSON lines, checked for ``source`` and ``original`` text."""
    fmt = "jsonl" if config in TEXT_ONLY else "conllu"

    def check(path: Path, exp: Expected) -> list[tuple[str, str]]:
        r = run_cli(["perturb", *PERTURB_CONFIGS[config], "--format", fmt, "--skip-invalid",
                     "--seed", "1", path])
        out = [(TRACEBACK, p) for p in check_boundary(r)]
        if out:
            return out
        if r.exit_code != 0:
            return [(LOST, f"perturb --skip-invalid exit {r.exit_code}: {r.stderr[-300:]!r}")]
        if fmt == "jsonl":
            records = [json.loads(line) for line in r.stdout.splitlines()]
            got = [(rec["source"], rec["original"]) for rec in records]
            want = [(b.source, b.text) for b in exp.valid]
        else:
            written = expect(_enc(r.stdout), "<output>", [])
            out += [(WRONG, f"perturb wrote invalid CoNLL-U: {b.error}") for b in written.invalid]
            got = [_meta([line for _, line in b.lines], "synrob.source") for b in written.blocks]
            want = [b.source for b in exp.valid]
        if config in SEVERAL:
            got = _in_order(got, want)
        if got != want:
            missing = [w for w in want if w not in got]
            out.append((LOST, f"perturb output {len(got)} sentences, expected {len(want)}; "
                              f"missing {missing[:2]!r}; got {got[:2]!r}"))
        lines = _stderr_lines(r)
        skipped = [line for line in lines if line.startswith("synrob: skipped invalid")]
        n = len(exp.invalid)
        summary = [line for line in lines if line.startswith("perturbed ")]
        said = re.search(r"skipped (\d+) invalid", summary[-1]) if summary else None
        read = re.search(r"perturbed \d+/(\d+) sentences", summary[-1]) if summary else None
        if config in SEVERAL and (read is None or int(read[1]) != len(exp.valid)):
            out.append((LOST, f"perturb: summary {summary!r}, expected "
                              f"{len(exp.valid)} sentences read"))
        if len(skipped) != n or (int(said[1]) if said else 0) != n or not summary:
            out.append((LOST, f"perturb: {len(skipped)} skip lines, summary {summary!r}, "
                              f"expected {n} skipped"))
        return out

    return check


def target_perturb_text(path: Path, exp: Expected) -> list[tuple[str, str]]:
    """``synrob perturb`` on the same bytes as a ``.txt`` file: one sentence per non-blank
    line (parsed with spaCy), or one error naming the first line that is not UTF-8."""
    target = path.with_name("t.txt")
    data = path.read_bytes()
    target.write_bytes(data)
    r = run_cli(["perturb", "--kind", "shuffle", "--format", "jsonl", "--seed", "1", target])
    out = [(TRACEBACK, p) for p in check_boundary(r)]
    if out:
        return out
    lines = re.split(r"\r\n|\r|\n", data.decode("utf-8", "surrogateescape"))
    bad = next((i for i, line in enumerate(lines, start=1) if re.search("[\udc80-\udcff]", line)),
               None)
    if bad is not None:
        byte = ord(re.search("[\udc80-\udcff]", lines[bad - 1].strip())[0]) - 0xDC00
        want = f"synrob: error: {target}:{bad}: not UTF-8: byte 0x{byte:02x}"
        if r.exit_code != 1 or _stderr_lines(r)[-1] != want:
            out.append((WRONG, f"perturb .txt exit {r.exit_code} {r.stderr[-200:]!r}, "
                               f"expected {want!r}"))
        return out
    texts = [line.strip() for line in lines if line.strip()]
    if r.exit_code != 0:
        return [(LOST, f"perturb .txt exit {r.exit_code}: {r.stderr[-300:]!r}")]
    got = [json.loads(line)["original"] for line in r.stdout.splitlines()]
    if len(got) != len(texts):
        out.append((LOST, f"perturb .txt: {len(got)} sentences out of {len(texts)} lines"))
    return out


def target_metrics(suffix: str) -> Target:
    def check(path: Path, exp: Expected) -> list[tuple[str, str]]:
        target = path.with_name(f"m{suffix}")
        target.write_bytes(path.read_bytes())
        r = run_cli(["metrics", target, target, "--json"])
        out = [(TRACEBACK, p) for p in check_boundary(r)]
        if out or suffix != ".conllu":  # other names: metrics sniffs the format (text when
            return out  # the first line is neither a comment nor 10 columns): boundary only
        if exp.invalid:
            first = _first_error(exp).replace(str(path), str(target))
            if r.exit_code != 1 or _stderr_lines(r)[-1] != first:
                out.append((WRONG, f"metrics exit {r.exit_code} {r.stderr[-200:]!r}, "
                                   f"expected {first!r}"))
        elif exp.valid:
            rows = r.stdout.splitlines()
            if r.exit_code != 0 or len(rows) != len(exp.valid) + 1:
                out.append((LOST, f"metrics exit {r.exit_code}, {len(rows)} lines for "
                                  f"{len(exp.valid)} sentences: {r.stderr[-200:]!r}"))
        elif r.exit_code != 1:
            out.append((WRONG, "metrics on a file without sentences did not fail"))
        return out

    return check


def _fails_like_reader(r: CliResult, exp: Expected, name: str) -> list[tuple[str, str]]:
    """encode/probe read the whole file first: exit 0 iff every sentence is valid (and there is
    one), else one error line naming the first invalid one."""
    if exp.invalid:
        if r.exit_code != 1 or _stderr_lines(r)[-1] != _first_error(exp):
            return [(WRONG, f"{name} exit {r.exit_code} {r.stderr[-200:]!r}, expected "
                            f"{_first_error(exp)!r}")]
    elif exp.valid and r.exit_code != 0:
        return [(LOST, f"{name} exit {r.exit_code} on valid input: {r.stderr[-300:]!r}")]
    elif not exp.valid and r.exit_code != 1:
        return [(WRONG, f"{name} did not fail on a file without sentences")]
    return []


def target_encode(path: Path, exp: Expected) -> list[tuple[str, str]]:
    r = run_cli(["encode", "--encoder", "glove-6b-50d", "--device", "cpu", path])
    out = [(TRACEBACK, p) for p in check_boundary(r)]
    if out:
        return out
    out = _fails_like_reader(r, exp, "encode")
    if not out and r.exit_code == 0:
        n = json.loads(r.stdout)["sentences"]
        if n != len(exp.valid):
            out.append((LOST, f"encode: {n} sentences, expected {len(exp.valid)}"))
    return out


def train_probe(dest: Path) -> Path:
    """A distance probe on glove-6b-50d layer 0, trained on 40 clean EWT sentences, saved."""
    text = (DEFAULT_EWT / "en_ewt-ud-train.conllu").read_text(encoding="utf-8")
    blocks = [b for b in text.split("\n\n") if b.strip()]
    train, dev = dest / "train.conllu", dest / "dev.conllu"
    train.write_text("\n\n".join(blocks[:40]) + "\n\n", encoding="utf-8")
    dev.write_text("\n\n".join(blocks[40:50]) + "\n\n", encoding="utf-8")
    saved = dest / "probe"
    r = run_cli(["probe", "--encoder", "glove-6b-50d", "--layer", "0", "--task", "distance",
                 "--train", train, "--dev", dev, "--test", dev, "-p", "epochs=2", "-p", "rank=4",
                 "--device", "cpu", "--no-baselines", "--save", saved])
    if r.exit_code != 0:
        raise RuntimeError(f"training the fuzz probe failed: {r.stderr}")
    return saved


def target_probe(saved: Path) -> Target:
    def check(path: Path, exp: Expected) -> list[tuple[str, str]]:
        r = run_cli(["probe", "--load", saved, "--test", path, "--no-baselines", "--json",
                     "--device", "cpu"])
        out = [(TRACEBACK, p) for p in check_boundary(r)]
        return out or _fails_like_reader(r, exp, "probe")

    return check


# --------------------------------------------------------------------------- driving hypothesis


def fuzz_target(name: str, check: Target, examples: int, workdir: Path, tally: Tally, *,
                seed: int = 0, raise_on_failure: bool = False) -> None:
    """Run ``check`` on ``examples`` fuzzed files; record failures in ``tally`` (and raise
    AssertionError on the first one with ``raise_on_failure``, so hypothesis shrinks it).

    The examples depend only on ``seed`` and the target's name (reproducible, but different
    files for different targets)."""

    @hseed(seed * 1_000_003 + zlib.crc32(name.encode()))
    @settings(max_examples=examples, deadline=None, database=None,
              suppress_health_check=list(HealthCheck), print_blob=False)
    @given(fuzz_files())
    def run_one(fz: FuzzFile) -> None:
        path = workdir / "fuzz.conllu"
        path.write_bytes(fz.data)
        exp = expect(fz.data, str(path), fz.intact)
        try:
            problems = [(WRONG, p) for p in check_intact(exp)] + check(path, exp)
        except Exception as exc:  # noqa: BLE001 - e.g. stdout that is not the JSON promised
            problems = [(WRONG, f"checking the output failed: {type(exc).__name__}: {exc}")]
        tally.examples += 1
        tally.per_target[name] = tally.per_target.get(name, 0) + 1
        for kind, message in problems:
            tally.add(kind, name, message, fz.how)
        if problems and raise_on_failure:
            raise AssertionError(f"[{name}] {problems} | file: {fz.how} | bytes: {fz.data[:300]!r}")

    run_one()


def targets(workdir: Path, probe: bool = True) -> dict[str, Target]:
    out: dict[str, Target] = {"validate": target_validate, "stats": target_stats}
    for config in PERTURB_CONFIGS:
        out[f"perturb-{config}"] = target_perturb(config)
    out["perturb-text"] = target_perturb_text
    out["metrics-conllu"] = target_metrics(".conllu")
    out["metrics-txt"] = target_metrics(".txt")
    out["metrics-nosuffix"] = target_metrics("")
    out["encode"] = target_encode
    if probe:
        d = workdir / "probe-train"
        d.mkdir(exist_ok=True)
        out["probe"] = target_probe(train_probe(d))
    return out


def emit(name: str, value: object) -> None:
    print(f"{name}: {value}", flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=20000,
                        help="fuzz examples in all, spread evenly over the targets")
    parser.add_argument("--seed", type=int, default=0, help="hypothesis seed")
    parser.add_argument("--only", default="", help="comma-separated target names (default all)")
    args = parser.parse_args()
    os.environ.setdefault("SYNROB_STRICT_PLUGINS", "1")
    start = time.perf_counter()
    tally = Tally()
    with tempfile.TemporaryDirectory(prefix="synrob-fuzz-") as tmp:
        workdir = Path(tmp)
        if "SYNROB_CACHE" not in os.environ:  # encode fills a cache: keep it out of the user's
            os.environ["SYNROB_CACHE"] = str(workdir / "cache")
        chosen = targets(workdir)
        if args.only:
            chosen = {k: v for k, v in chosen.items() if k in args.only.split(",")}
        per = max(1, args.examples // len(chosen))
        extra = args.examples - per * len(chosen)
        for i, (name, check) in enumerate(chosen.items()):
            n = per + (1 if i < extra else 0)
            fuzz_target(name, check, n, workdir, tally, seed=args.seed)
            emit(f"examples_{name}", tally.per_target.get(name, 0))
    for failure in tally.failures:
        print(f"failure: {failure}", flush=True)
    emit("fuzz_examples", tally.examples)
    for kind in (TRACEBACK, LOST, WRONG):
        emit(kind, tally.counts[kind])
    emit("wall_s", f"{time.perf_counter() - start:.1f}")
    return 0 if not any(tally.counts.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
