"""Validation of one CoNLL-U sentence block: everything the corpus model relies on.

:func:`validate_block` takes a sentence's ``(line number, line)`` pairs and raises
:class:`~synrob.perturb.errors.ConlluError` (``FILE:LINE: problem``) for the first problem:

* text: every line is UTF-8 (the reader decodes with ``surrogateescape``, so a bad byte reaches
  this check and is reported with its line, column and value); a byte-order mark only at the
  very start of a file (the reader drops that one); comments only before the first word line;
* columns: 10 tab-separated, none empty;
* IDs: words ``1, 2, ... n`` in order; multiword ranges ``a-b`` with ``a < b``, placed right
  before word ``a``, ending inside the sentence, not overlapping, with ``_`` in HEAD, DEPREL
  and DEPS; empty nodes ``n.k`` right after word ``n`` (``0.k`` before word 1), ``k`` counting
  ``1, 2, ...``, with ``_`` in HEAD and DEPREL and a non-empty DEPS;
* HEAD: an integer in ``0..n`` for every word, exactly one root, no cycle;
* FEATS: ``_`` or ``Name=Value`` pairs separated by ``|``, no name twice; MISC: ``_`` or
  ``Name`` / ``Name=Value`` items separated by ``|``, none empty, no name twice (so that
  reading and writing a sentence loses nothing);
* DEPS: ``_`` or ``HEAD:DEPREL`` pairs separated by ``|``, sorted by head, each head being
  ``0``, a word of the sentence or one of its empty nodes (``n.k``).

Duplicate ``sent_id``s are not an error: :func:`synrob.perturb.corpus.iter_blocks` warns about
them (:class:`ConlluWarning`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ..errors import ConlluError, SynrobWarning
from . import tree as _tree

__all__ = ["ConlluWarning", "validate_block", "COLUMNS"]

COLUMNS = ("ID", "FORM", "LEMMA", "UPOS", "XPOS", "FEATS", "HEAD", "DEPREL", "DEPS", "MISC")

_WORD_ID = re.compile(r"[1-9][0-9]*")
_RANGE_ID = re.compile(r"([1-9][0-9]*)-([1-9][0-9]*)")
_EMPTY_ID = re.compile(r"(0|[1-9][0-9]*)\.([1-9][0-9]*)")
_HEAD = re.compile(r"0|-?[1-9][0-9]*")
_DEPS_HEAD = re.compile(r"(0|[1-9][0-9]*)(?:\.([1-9][0-9]*))?")
# A DEPREL in DEPS: ':'-separated parts, none empty, none starting with a digit, '_' or '-'
# (the grammar of the conllu library's DEPS parser, without whitespace).
_DEPREL = re.compile(r"[^\d:_\-|\s][^:|\s]*(?::[^\d:_\-|\s][^:|\s]*)*")
_FEAT = re.compile(r"[^=|\s]+=[^=|\s]+")
# Lone surrogates: bytes that were not UTF-8, decoded with errors="surrogateescape".
_BAD_BYTE = re.compile("[\udc80-\udcff]")
_BOM = "\ufeff"

# FEATS, MISC and DEPS values repeat across a treebank: each distinct value is checked once.
_CACHE_MAX = 50_000
_GOOD_FEATS: set[str] = set()
_GOOD_MISC: set[str] = {"SpaceAfter=No"}
# DEPS -> (sorted by head, largest word head, empty-node heads); absent when malformed
_DEPS_INFO: dict[str, tuple[bool, int, tuple[tuple[int, int], ...]]] = {}


def _remember(cache: set[str] | dict, key: str, value: object = None) -> None:
    if len(cache) >= _CACHE_MAX:
        cache.clear()
    if isinstance(cache, set):
        cache.add(key)
    else:
        cache[key] = value


class ConlluWarning(SynrobWarning):
    """A CoNLL-U file is readable but suspicious (e.g. two sentences share a ``sent_id``)."""


def _utf8_problem(line: str) -> str | None:
    """The 'not UTF-8' problem of a line decoded with surrogateescape, or None."""
    m = _BAD_BYTE.search(line)
    if m is None:
        return None
    byte = ord(m.group()) - 0xDC00
    col = len(line[: m.start()].encode("utf-8", "surrogateescape")) + 1
    return f"not UTF-8: byte 0x{byte:02x} at byte {col} of the line"


def _comment_sent_id(line: str) -> str | None:
    """The value of a ``# sent_id = X`` comment, or None for any other comment."""
    key, sep, value = line[1:].partition("=")
    if sep and key.strip() == "sent_id":
        return value.strip() or None
    return None


def _fail(path: str, lineno: int, problem: str, sent_id: str | None) -> ConlluError:
    return ConlluError(path, lineno, problem, sent_id)


def split_rows(
    lines: Sequence[tuple[int, str]], path: str
) -> tuple[list[str], list[list[str]]]:
    """Validate a block; return its comment lines and its token rows (lists of 10 columns)."""
    block = _Block(path)
    for lineno, line in lines:
        block.add_line(lineno, line)
    block.check_tree(lines[0][0])
    return block.comments, block.rows


class _Block:
    """The state of one sentence while its lines are validated, in order (:func:`split_rows`)."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.sent_id: str | None = None
        self.comments: list[str] = []
        self.rows: list[list[str]] = []
        self.heads: list[tuple[int, int]] = []  # (head, line number) of word i + 1
        self.ranges: list[tuple[int, int, int]] = []  # (first, last, line number)
        self.deps_todo: list[tuple[int, str, str]] = []  # (line number, ID, DEPS)
        self.empty_ids: set[tuple[int, int]] = set()
        self.range_end = 0  # last word of the latest multiword range
        self.empty_n, self.empty_k = -1, 0  # latest empty node n.k

    def fail(self, lineno: int, problem: str) -> ConlluError:
        return _fail(self.path, lineno, problem, self.sent_id)

    def add_line(self, lineno: int, line: str) -> None:
        """Check one line of the block and record what the sentence-level checks need."""
        if not line.isascii():
            bad = _utf8_problem(line)
            if bad is not None:
                raise self.fail(lineno, bad)
            if line.startswith(_BOM):
                raise self.fail(lineno, "byte-order mark (U+FEFF) inside the file; it is "
                                "allowed only at the start of a file")
        if line.startswith("#"):
            if self.rows:
                raise self.fail(lineno, "comment line inside a sentence (comments must come "
                                "before its first word line)")
            if self.sent_id is None:
                self.sent_id = _comment_sent_id(line)
            self.comments.append(line)
            return
        cols = self.columns(lineno, line)
        self.rows.append(cols)
        ident = cols[0]
        if ident.isdigit() and ident.isascii() and ident[0] != "0":  # = _WORD_ID, faster
            self.word(lineno, ident, cols)
            return
        m = _RANGE_ID.fullmatch(ident)
        if m:
            self.multiword_range(lineno, ident, int(m[1]), int(m[2]), cols)
            return
        m = _EMPTY_ID.fullmatch(ident)
        if m:
            self.empty_node(lineno, ident, int(m[1]), int(m[2]), cols)
            return
        raise self.fail(lineno, f"invalid ID {ident!r}")

    def columns(self, lineno: int, line: str) -> list[str]:
        """The 10 columns of a token line, with FEATS and MISC checked."""
        cols = line.split("\t")
        if len(cols) != 10:
            raise self.fail(lineno, f"expected 10 tab-separated columns, found {len(cols)}")
        if "" in cols:
            raise self.fail(lineno, f"empty {COLUMNS[cols.index('')]} column (write _ for "
                            "no value)")
        feats, misc = cols[5], cols[9]
        if feats != "_" and feats not in _GOOD_FEATS:
            _check_feats(feats, self.path, lineno, self.sent_id)
            _remember(_GOOD_FEATS, feats)
        if misc != "_" and misc not in _GOOD_MISC:
            _check_misc(misc, self.path, lineno, self.sent_id)
            _remember(_GOOD_MISC, misc)
        return cols

    def word(self, lineno: int, ident: str, cols: list[str]) -> None:
        wid = int(ident)
        if wid != len(self.heads) + 1:
            raise self.fail(lineno, f"word ID {wid} out of sequence (expected "
                            f"{len(self.heads) + 1})")
        head = cols[6]
        if not (head.isdigit() and head.isascii() and (head[0] != "0" or head == "0")
                or _HEAD.fullmatch(head)):
            what = ("non-integer HEAD" if not head.lstrip("-").isdecimal()
                    else "HEAD with a leading zero or sign:")
            raise self.fail(lineno, f"{what} {head!r}")
        self.heads.append((int(head), lineno))
        if cols[8] != "_":
            self.deps_todo.append((lineno, ident, cols[8]))

    def multiword_range(self, lineno: int, ident: str, a: int, b: int, cols: list[str]) -> None:
        nxt = len(self.heads) + 1
        if a >= b:
            raise self.fail(lineno, f"multiword token range {ident}: its first word must "
                            "come before its last")
        if a <= self.range_end:
            raise self.fail(lineno, f"multiword token range {ident} overlaps the range "
                            f"ending at word {self.range_end}")
        if a != nxt:
            raise self.fail(lineno, f"multiword token range {ident} must come right "
                            f"before word {a} (the next word here is {nxt})")
        if cols[6] != "_" or cols[7] != "_" or cols[8] != "_":
            raise self.fail(lineno, f"multiword token {ident} must have _ in HEAD, DEPREL "
                            "and DEPS")
        self.range_end = b
        self.ranges.append((a, b, lineno))

    def empty_node(self, lineno: int, ident: str, n: int, k: int, cols: list[str]) -> None:
        if n != len(self.heads):
            where = f"right after word {n}" if n else "before word 1"
            here = f"after word {len(self.heads)}" if self.heads else "before word 1"
            raise self.fail(lineno, f"empty node {ident} must come {where} (it comes "
                            f"{here})")
        expected = self.empty_k + 1 if n == self.empty_n else 1
        if k != expected:
            raise self.fail(lineno, f"empty node {ident} out of sequence (expected "
                            f"{n}.{expected})")
        self.empty_n, self.empty_k = n, k
        if cols[6] != "_" or cols[7] != "_":
            raise self.fail(lineno, f"empty node {ident} must have _ in HEAD and DEPREL "
                            "(it is attached through DEPS)")
        if cols[8] == "_":
            raise self.fail(lineno, f"empty node {ident} has no DEPS (an empty node is "
                            "attached only in the enhanced graph)")
        self.empty_ids.add((n, k))
        self.deps_todo.append((lineno, ident, cols[8]))

    def check_tree(self, first_line: int) -> None:
        """The checks that need the whole sentence: bounds, DEPS, one root, no cycle."""
        heads = self.heads
        if not heads:
            raise self.fail(first_line, "sentence has no words")
        n = len(heads)
        for a, b, lineno in self.ranges:
            if b > n:
                raise self.fail(lineno, f"multiword token range {a}-{b} goes past the last "
                                f"word ({n})")
        for wid, (head, lineno) in enumerate(heads, start=1):
            if head < 0 or head > n:
                raise self.fail(lineno, f"HEAD {head} of word {wid} points outside the "
                                f"sentence (0..{n})")
        self.check_deps(n)
        roots = [(wid, lineno) for wid, (head, lineno) in enumerate(heads, start=1) if head == 0]
        if not roots:
            raise self.fail(first_line, "no root (no word has HEAD 0)")
        if len(roots) > 1:
            ids = ", ".join(str(w) for w, _ in roots)
            raise self.fail(roots[1][1], f"{len(roots)} roots (words {ids})")
        cycle = _tree.find_cycle([h for h, _ in heads])
        if cycle:
            lineno = heads[cycle[0] - 1][1]
            chain = " -> ".join(str(i) for i in [*cycle, cycle[0]])
            raise self.fail(lineno, f"cycle in HEAD: {chain}")

    def check_deps(self, n: int) -> None:
        for lineno, ident, deps in self.deps_todo:
            info = _DEPS_INFO.get(deps)
            if info is None:
                info = _deps_info(deps)
                if info is not None:
                    _remember(_DEPS_INFO, deps, info)
            if (info is None or not info[0] or info[1] > n
                    or any(k not in self.empty_ids for k in info[2])):
                node = f"empty node {ident}" if "." in ident else f"word {ident}"
                _check_deps(deps, node, n, self.empty_ids, self.path, lineno, self.sent_id)


def _check_feats(feats: str, path: str, lineno: int, sent_id: str | None) -> None:
    parts = feats.split("|")
    if not all(_FEAT.fullmatch(f) for f in parts):
        raise _fail(path, lineno, f"invalid FEATS {feats!r} (expected _ or Name=Value pairs "
                    "separated by |)", sent_id)
    if len(parts) > 1 and len({f.partition("=")[0] for f in parts}) != len(parts):
        raise _fail(path, lineno, f"invalid FEATS {feats!r}: a feature is repeated", sent_id)


def _check_misc(misc: str, path: str, lineno: int, sent_id: str | None) -> None:
    """MISC: ``|``-separated ``Name`` or ``Name=Value`` items, none empty, no name twice
    (what the MISC dict keeps and writes back unchanged)."""
    names = set()
    for part in misc.split("|"):
        name, sep, value = part.partition("=")
        if not name or sep and not value:
            raise _fail(path, lineno, f"invalid MISC {misc!r}: empty item, name or value in "
                        f"{part!r}", sent_id)
        if name in names:
            raise _fail(path, lineno, f"invalid MISC {misc!r}: {name!r} is repeated", sent_id)
        names.add(name)


def _deps_info(deps: str) -> tuple[bool, int, tuple[tuple[int, int], ...]] | None:
    """What the sentence-independent part of a DEPS value says, or None when malformed."""
    keys = []
    for part in deps.split("|"):
        head, sep, rel = part.partition(":")
        m = _DEPS_HEAD.fullmatch(head)
        if not sep or m is None or not _DEPREL.fullmatch(rel):
            return None
        keys.append((int(m[1]), int(m[2]) if m[2] else 0))
    words = [h for h, k in keys if not k]
    return keys == sorted(keys), max(words, default=0), tuple(key for key in keys if key[1])


def _check_deps(deps: str, node: str, n: int, empty_ids: set[tuple[int, int]], path: str,
                lineno: int, sent_id: str | None) -> None:
    prev = (-1, 0)
    for part in deps.split("|"):
        head, sep, rel = part.partition(":")
        m = _DEPS_HEAD.fullmatch(head)
        if not sep or m is None or not _DEPREL.fullmatch(rel):
            raise _fail(path, lineno, f"invalid DEPS {deps!r} of {node}: {part!r} is not "
                        "HEAD:DEPREL", sent_id)
        key = (int(m[1]), int(m[2]) if m[2] else 0)
        if key[1] == 0 and key[0] > n or key[1] and key not in empty_ids:
            raise _fail(path, lineno, f"DEPS {deps!r} of {node}: head {head} is not in the "
                        "sentence", sent_id)
        if key < prev:
            raise _fail(path, lineno, f"DEPS {deps!r} of {node} are not sorted by head",
                        sent_id)
        prev = key


def validate_block(lines: Sequence[tuple[int, str]], path: str = "<memory>") -> None:
    """Raise :class:`ConlluError` for the first problem of one sentence block.

    ``lines`` are the block's ``(1-based line number, line)`` pairs, without line ends.
    """
    split_rows(lines, path)
