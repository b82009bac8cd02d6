"""CoNLL-U corpus model on top of the ``conllu`` library.

* :func:`read_conllu` streams sentences from a file (one sentence in memory at a time),
  validating each one and naming file and line for every problem.
* :class:`Sentence` keeps every line of the input (multiword-token ranges ``1-2``, empty nodes
  ``8.1``, comments, enhanced DEPS) so that read -> :meth:`Sentence.serialize` is byte-identical,
  and offers the *syntactic words* view used for probing (:meth:`Sentence.words`: ranges and
  empty nodes excluded) plus tree utilities (:mod:`synrob.perturb.io.tree`).
* :meth:`Sentence.replace_words` and :meth:`Sentence.reorder` build perturbed sentences that are
  still valid CoNLL-U (words renumbered, HEAD remapped, ``# text`` rebuilt).
"""

from __future__ import annotations

import copy
import io
import os
import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from itertools import chain
from pathlib import Path
from typing import Any, TextIO

from conllu.models import Metadata, Token, TokenList
from conllu.parser import (
    DEFAULT_FIELDS,
    parse_comment_line,
    parse_dict_value,
    parse_nullable_value,
)

from .errors import ConlluError, ConlluFileNotFoundError
from .io import tree as _tree
from .io.atomic import atomic_open
from .io.feats import format_feats, parse_feats
from .io.validate import ConlluWarning, split_rows, validate_block

__all__ = [
    "Word",
    "Sentence",
    "read_conllu",
    "iter_blocks",
    "iter_corpus",
    "read_forms",
    "write_conllu",
    "parse_sentence",
    "ConlluWarning",
]


def _parse_misc(line: list[str], i: int) -> dict[str, str | None] | None:
    """MISC as an ordered dict; unlike conllu's default it keeps ``=`` inside values."""
    value = line[i]
    if parse_nullable_value(value) is None:
        return None
    out: dict[str, str | None] = {}
    for part in value.split("|"):
        key, sep, val = part.partition("=")
        out[key] = val if sep else ""
    return out


_FIELD_PARSERS = {"misc": _parse_misc}


@dataclass(frozen=True, slots=True)
class Word:
    """One syntactic word (no ranges, no empty nodes). ``id`` and ``head`` are 1-based."""

    id: int
    form: str
    lemma: str
    upos: str
    xpos: str
    feats: str  # raw FEATS column, "_" when empty, e.g. "Number=Plur"
    head: int
    deprel: str

    @property
    def feats_dict(self) -> dict[str, str]:
        """FEATS as a dict (:func:`~synrob.perturb.io.feats.parse_feats`; ValueError if malformed)."""
        return parse_feats(self.feats)


def _is_word(tok: Token) -> bool:
    return isinstance(tok["id"], int)


def _space_after(misc: Mapping[str, Any] | None) -> bool:
    return not (misc and misc.get("SpaceAfter") == "No")


def _set_space_after(tok: Token, space: bool) -> None:
    misc = dict(tok["misc"] or {})
    if space:
        misc.pop("SpaceAfter", None)
    else:
        misc["SpaceAfter"] = "No"
    tok["misc"] = misc or None


class Sentence:
    """A CoNLL-U sentence: all its lines plus where it came from.

    ``tokens`` is the underlying :class:`conllu.models.TokenList` (comments are its
    ``metadata``). Treat a Sentence as immutable: perturbations return new ones.
    """

    __slots__ = ("tokens", "path", "line", "_words")

    def __init__(self, tokens: TokenList, path: str = "<memory>", line: int = 1) -> None:
        self.tokens = tokens
        self.path = path
        self.line = line
        self._words: list[Word] | None = None

    # ----------------------------------------------------------------- views
    @property
    def metadata(self) -> dict[str, Any]:
        return self.tokens.metadata

    @property
    def sent_id(self) -> str | None:
        return self.tokens.metadata.get("sent_id")

    @property
    def text(self) -> str:
        """The ``# text`` comment, or the text rebuilt from FORM and SpaceAfter."""
        text = self.tokens.metadata.get("text")
        return text if text is not None else self.surface_text()

    def words(self) -> list[Word]:
        """The syntactic words (ranges and empty nodes excluded), in order."""
        if self._words is None:
            self._words = [
                Word(
                    id=t["id"],
                    form=t["form"],
                    lemma=t["lemma"],
                    upos=t["upos"] or "_",
                    xpos=t["xpos"] or "_",
                    feats=format_feats(t["feats"]),
                    head=t["head"],
                    deprel=t["deprel"],
                )
                for t in self.tokens
                if _is_word(t)
            ]
        return self._words

    def __len__(self) -> int:
        return len(self.words())

    def __repr__(self) -> str:
        text = self.text if len(self.text) <= 80 else self.text[:79] + "…"
        where = self.sent_id or f"{self.path}:{self.line}"
        return f"<Sentence {where} ({len(self)} words): {text!r}>"

    def _repr_html_(self) -> str:
        """A notebook's view: the text, then one row per syntactic word."""
        import html
        from dataclasses import asdict

        from .io.table import html_table

        where = html.escape(self.sent_id or f"{self.path}:{self.line}")
        return (f"<p><b>{where}</b>: {html.escape(self.text)}</p>"
                + html_table([asdict(w) for w in self.words()], limit=None))

    @property
    def forms(self) -> list[str]:
        return [w.form for w in self.words()]

    @property
    def heads(self) -> list[int]:
        return [w.head for w in self.words()]

    def distances(self) -> list[list[int]]:
        """Undirected tree distance of every word pair. Shape: (n, n)."""
        return _tree.distances(self.heads)

    def depths(self) -> list[int]:
        """Depth of every word (root 0). Shape: (n,)."""
        return _tree.depths(self.heads)

    def root(self) -> int:
        """0-based position of the root word."""
        return _tree.root(self.heads)

    def max_depth(self) -> int:
        return _tree.max_depth(self.heads)

    def edges(self) -> set[tuple[int, int]]:
        """Undirected edges as 0-based ``(i, j)`` pairs with ``i < j``."""
        return _tree.undirected_edges(self.heads)

    def ranges(self) -> list[tuple[int, int, str]]:
        """Multiword-token ranges as ``(first_id, last_id, surface_form)``."""
        return [(t["id"][0], t["id"][2], t["form"]) for t in self.tokens if _is_range(t)]

    def empty_nodes(self) -> int:
        return sum(1 for t in self.tokens if _is_empty(t))

    def space_after(self) -> list[bool]:
        """Whether each syntactic word is followed by a space in the surface text.

        A word inside a multiword token is followed by no space, except the last one, which
        takes the range's ``SpaceAfter``.
        """
        words = [t for t in self.tokens if _is_word(t)]
        out = [_space_after(t["misc"]) for t in words]
        for t in self.tokens:
            if _is_range(t):
                first, last = t["id"][0], t["id"][2]
                for i in range(first, last):
                    out[i - 1] = False
                out[last - 1] = _space_after(t["misc"])
        return out

    def surface_text(self) -> str:
        """Text rebuilt from the surface tokens (ranges stand for their words) and SpaceAfter."""
        parts: list[str] = []
        covered_until = 0
        for t in self.tokens:
            if _is_range(t):
                parts.append(t["form"])
                parts.append(" " if _space_after(t["misc"]) else "")
                covered_until = t["id"][2]
            elif _is_word(t) and t["id"] > covered_until:
                parts.append(t["form"])
                parts.append(" " if _space_after(t["misc"]) else "")
        return "".join(parts).strip()

    # ----------------------------------------------------------------- output
    def serialize(self) -> str:
        """CoNLL-U text of the sentence, ending with the blank line."""
        return self.tokens.serialize()

    def copy(self) -> Sentence:
        """An independent copy (a structural copy: ~10x faster than ``copy.deepcopy``)."""
        old = self.tokens
        tokens = TokenList(
            [Token({k: _copy_value(v) for k, v in t.items()}) for t in old],
            metadata=type(old.metadata)({k: _copy_value(v) for k, v in old.metadata.items()}),
            default_fields=old.default_fields,
        )
        return Sentence(tokens, self.path, self.line)

    # ----------------------------------------------------------------- edits
    def replace_words(self, changes: Mapping[int, Mapping[str, str]]) -> Sentence:
        """New sentence with some fields of some words replaced (e.g. FORM and LEMMA).

        ``changes`` maps a 1-based word id to ``{column: value}`` with columns among
        ``form, lemma, upos, xpos, misc``. A multiword-token range containing a changed FORM is
        dropped (its words become surface tokens); ``# text`` is rebuilt when FORMs change.
        """
        new = self.copy()
        form_changed = set()
        for tok in new.tokens:
            if _is_word(tok) and tok["id"] in changes:
                for col, value in changes[tok["id"]].items():
                    tok[col] = value
                    if col == "form":
                        form_changed.add(tok["id"])
        if form_changed:
            space = self.space_after()
            keep = []
            for tok in new.tokens:
                if _is_range(tok) and any(
                    tok["id"][0] <= i <= tok["id"][2] for i in form_changed
                ):
                    continue
                keep.append(tok)
            new.tokens = TokenList(keep, metadata=new.tokens.metadata)
            in_range = {
                i for (a, b, _) in new.ranges() for i in range(a, b + 1)
            }
            for tok in new.tokens:
                if _is_word(tok) and tok["id"] not in in_range:
                    _set_space_after(tok, space[tok["id"] - 1])
            new.tokens.metadata["text"] = new.surface_text()
        return new

    def reorder(self, order: Sequence[int]) -> Sentence:
        """New sentence whose words are the old words in ``order`` (old 1-based ids).

        Words are renumbered 1..n and HEAD (and integer DEPS heads) remapped, so the gold tree
        travels with its words. A multiword-token range survives only if its words stay
        adjacent in their original order; otherwise it is dropped. Empty nodes are dropped
        and DEPS that pointed to one become ``_``. A word keeps ``SpaceAfter=No`` only when it
        is still followed by the same word; ``# text`` is rebuilt.
        """
        n = len(self.words())
        if sorted(order) != list(range(1, n + 1)):
            raise ValueError(f"order must be a permutation of 1..{n}")
        new_id = {old: pos + 1 for pos, old in enumerate(order)}
        old_space = self.space_after()
        words = {t["id"]: t for t in self.tokens if _is_word(t)}
        ranges = {t["id"][0]: t for t in self.tokens if _is_range(t)}
        out: list[Token] = []
        pos = 0
        while pos < n:
            old = order[pos]
            rng = ranges.get(old)
            if rng is not None:
                first, last = rng["id"][0], rng["id"][2]
                span = list(range(first, last + 1))
                if list(order[pos : pos + len(span)]) == span:
                    r = _copy_token(rng)
                    r["id"] = (pos + 1, "-", pos + len(span))
                    out.append(r)
            tok = _copy_token(words[old])
            tok["id"] = pos + 1
            tok["head"] = new_id[tok["head"]] if tok["head"] else 0
            tok["deps"] = _remap_deps(tok["deps"], new_id)
            nxt = order[pos + 1] if pos + 1 < n else None
            keep_glue = (not old_space[old - 1]) and nxt == old + 1
            _set_space_after(tok, old_space[old - 1] if nxt is None else not keep_glue)
            out.append(tok)
            pos += 1
        # words inside a kept range carry no SpaceAfter of their own; the range does.
        for r in (t for t in out if _is_range(t)):
            last_word = out[out.index(r) + (r["id"][2] - r["id"][0]) + 1]
            nxt_pos = r["id"][2]
            nxt = order[nxt_pos] if nxt_pos < n else None
            old_last = order[nxt_pos - 1]
            glue = (not old_space[old_last - 1]) and nxt == old_last + 1
            _set_space_after(r, old_space[old_last - 1] if nxt is None else not glue)
            for i in range(r["id"][0], r["id"][2] + 1):
                w = next(t for t in out if t["id"] == i)
                w["misc"] = words[order[i - 1]]["misc"]
                if w is last_word and w["misc"]:
                    m = dict(w["misc"])
                    m.pop("SpaceAfter", None)
                    w["misc"] = m or None
        meta = dict(self.tokens.metadata)
        result = Sentence(TokenList(out, metadata=meta), self.path, self.line)
        result.tokens.metadata["text"] = result.surface_text()
        return result


_IMMUTABLE = (str, int, float, type(None))


def _copy_value(value: Any) -> Any:
    """Copy of one token field or comment: immutable values shared, dicts/lists copied."""
    if isinstance(value, _IMMUTABLE):
        return value
    if isinstance(value, dict) and all(isinstance(v, _IMMUTABLE) for v in value.values()):
        return type(value)(value)
    if isinstance(value, list) and all(isinstance(v, tuple) for v in value):
        return list(value)  # DEPS: (relation, head) tuples of immutables
    return copy.deepcopy(value)


def _copy_token(tok: Token) -> Token:
    return Token({k: _copy_value(v) for k, v in tok.items()})


def _remap_deps(deps: Any, new_id: Mapping[int, int]) -> Any:
    if not deps or isinstance(deps, str):
        return deps
    out = []
    for rel, head in deps:
        if isinstance(head, int):
            out.append((rel, new_id[head] if head else 0))
        else:  # points to an empty node, which reordering drops
            return None
    out.sort(key=lambda pair: pair[1])  # CoNLL-U keeps DEPS sorted by head
    return out


def _is_range(tok: Token) -> bool:
    return isinstance(tok["id"], tuple) and tok["id"][1] == "-"


def _is_empty(tok: Token) -> bool:
    return isinstance(tok["id"], tuple) and tok["id"][1] == "."


# --------------------------------------------------------------------------- reading

#: Kept for callers that validate without parsing (:mod:`synrob.perturb.senteval.source`).
_validate_block = validate_block


def _token_id(value: str) -> int | tuple[int, str, int]:
    """ID column of a validated line: a word id, ``(a, "-", b)`` or ``(n, ".", k)``."""
    if value.isdigit():
        return int(value)
    sep = "-" if "-" in value else "."
    a, _, b = value.partition(sep)
    return (int(a), sep, int(b))


def _deps_value(value: str) -> list[tuple[str, int | tuple[int, str, int]]] | None:
    """DEPS of a validated line as conllu parses it: ``[(deprel, head), ...]`` or None."""
    if value == "_":
        return None
    out = []
    for part in value.split("|"):
        head, _, rel = part.partition(":")
        out.append((rel, _token_id(head)))
    return out


def _token(cols: list[str]) -> Token:
    """One validated row of 10 columns as the Token conllu would build."""
    return Token({
        "id": _token_id(cols[0]),
        "form": cols[1],
        "lemma": cols[2],
        "upos": cols[3],
        "xpos": parse_nullable_value(cols[4]),
        "feats": parse_dict_value(cols[5]),
        "head": None if cols[6] == "_" else int(cols[6]),
        "deprel": cols[7],
        "deps": _deps_value(cols[8]),
        "misc": _parse_misc(cols, 9),
    })


def parse_sentence(lines: list[tuple[int, str]], path: str = "<memory>") -> Sentence:
    """Validate and parse one block of ``(line number, line)`` pairs into a Sentence.

    Raises :class:`ConlluError` (``FILE:LINE: problem``) for anything
    :func:`synrob.perturb.io.validate.validate_block` rejects. Columns are split on tabs only.
    """
    comments, rows = split_rows(lines, path)
    metadata = Metadata()
    for line in comments:
        for key, value in parse_comment_line(line):
            metadata[key] = value
    tokens = TokenList([_token(cols) for cols in rows], metadata, default_fields=DEFAULT_FIELDS)
    return Sentence(tokens, path, lines[0][0])


def _blocks(lines: Iterable[str]) -> Iterator[list[tuple[int, str]]]:
    """Group lines into sentence blocks of ``(1-based line number, line)``.

    A line is stripped of surrounding whitespace (as the conllu library does); a blank line
    ends a block; a byte-order mark at the very start of the input is dropped.
    """
    block: list[tuple[int, str]] = []
    it = iter(lines)
    first = next(it, None)
    if first is None:
        return
    if first.startswith("\ufeff"):
        first = first[1:]
    for lineno, raw in enumerate(chain((first,), it), start=1):
        line = raw.strip()
        if line:
            block.append((lineno, line))
        elif block:
            yield block
            block = []
    if block:
        yield block


def _sent_id_of(block: list[tuple[int, str]]) -> str | None:
    for _, line in block:
        if not line.startswith("#"):
            return None
        key, sep, value = line[1:].partition("=")
        if sep and key.strip() == "sent_id":
            return value.strip() or None
    return None


def iter_blocks(
    source: str | os.PathLike[str] | TextIO, name: str | None = None
) -> Iterator[tuple[str, list[tuple[int, str]]]]:
    """Stream ``(file name, block)`` pairs, a block being one sentence's ``(line number, line)``s.

    ``source`` is a path, ``-`` for stdin, or an open text file; the file is read lazily and
    closed at the end. A missing or unreadable file is a :class:`ConlluError`. A UTF-8
    byte-order mark at the start is dropped. Files and stdin are decoded as UTF-8 with
    ``surrogateescape``, so a byte that is not UTF-8 makes only its own sentence invalid
    (``FILE:LINE: not UTF-8: byte 0x.. ...`` when it is validated). Two sentences with the same
    ``sent_id`` are not an error: after the last block, one :class:`ConlluWarning` names the
    first repeat and how many there were.
    """
    detach = None
    if isinstance(source, (str, os.PathLike)) and str(source) != "-":
        path = name or str(source)
        try:
            fh: TextIO = open(  # noqa: SIM115 - closed below
                source, encoding="utf-8", errors="surrogateescape"
            )
        except FileNotFoundError:
            raise ConlluFileNotFoundError(path) from None
        except IsADirectoryError:
            raise ConlluError(path, 0, "is a directory, not a CoNLL-U file") from None
        except OSError as exc:
            raise ConlluError(path, 0, f"cannot read: {exc.strerror or exc}") from None
        close = True
    else:
        import sys

        fh = sys.stdin if str(source) == "-" else source  # type: ignore[assignment]
        path = name or getattr(fh, "name", "<stdin>")
        close = False
        buffer = getattr(fh, "buffer", None) if fh is sys.stdin else None
        if buffer is not None:  # real stdin: decode its bytes like a file
            fh = io.TextIOWrapper(buffer, encoding="utf-8", errors="surrogateescape")
            detach = fh
    first_seen: dict[str, int] = {}  # sent_id -> line of its first sentence
    first_repeat: tuple[int, str] | None = None
    repeats = 0
    lineno = 0
    try:
        for block in _blocks(fh):
            lineno = block[-1][0]
            sid = _sent_id_of(block)
            if sid is not None:
                if sid in first_seen:
                    repeats += 1
                    if first_repeat is None:
                        first_repeat = (block[0][0], sid)
                else:
                    first_seen[sid] = block[0][0]
            yield path, block
    except UnicodeDecodeError as exc:  # an open text file given by the caller
        raise ConlluError(path, lineno + 1, f"not UTF-8: {exc.reason} (at or after this "
                          "line)") from None
    finally:
        if close:
            fh.close()
        if detach is not None:
            detach.detach()
    if first_repeat is not None:
        line, sid = first_repeat
        more = (f"; {repeats} sentences of this file repeat an earlier sent_id"
                if repeats > 1 else "")
        warnings.warn(f"{path}:{line}: duplicate sent_id {sid!r} (first at line "
                      f"{first_seen[sid]}){more}", ConlluWarning, stacklevel=2)


def read_conllu(
    source: str | os.PathLike[str] | TextIO,
    *,
    skip_invalid: bool = False,
    on_invalid: Callable[[ConlluError], None] | None = None,
    name: str | None = None,
) -> Iterator[Sentence]:
    """Stream the sentences of a CoNLL-U file (a path, ``-`` for stdin, or an open text file).

    Only one sentence is held in memory at a time. A malformed sentence raises
    :class:`ConlluError` (``FILE:LINE: problem``); with ``skip_invalid=True`` it is passed to
    ``on_invalid`` (if given) and skipped.
    """
    for path, block in iter_blocks(source, name):
        try:
            yield parse_sentence(block, path)
        except ConlluError as err:
            if not skip_invalid:
                raise
            if on_invalid is not None:
                on_invalid(err)


def read_forms(
    source: str | os.PathLike[str] | TextIO, *, name: str | None = None
) -> list[list[str]]:
    """The syntactic word forms of every sentence: ``[s.forms for s in read_conllu(source)]``.

    Every sentence is validated exactly as by :func:`read_conllu` (a malformed one raises
    :class:`ConlluError`), but no :class:`Sentence` is built, which makes it several times
    faster (for encoders, which need only the words).
    """
    out: list[list[str]] = []
    for path, block in iter_blocks(source, name):
        _, rows = split_rows(block, path)
        out.append([cols[1] for cols in rows if cols[0].isdigit()])  # validated: ASCII digits
    return out


def iter_corpus(
    sources: Iterable[str | os.PathLike[str]],
    *,
    skip_invalid: bool = False,
    on_invalid: Callable[[ConlluError], None] | None = None,
) -> Iterator[Sentence]:
    """Stream the sentences of several CoNLL-U files in order."""
    for src in sources:
        yield from read_conllu(src, skip_invalid=skip_invalid, on_invalid=on_invalid)


def write_conllu(sentences: Iterable[Sentence], dest: str | os.PathLike[str] | TextIO) -> int:
    """Write sentences as CoNLL-U; returns how many were written (a path is written atomically:
    the file appears whole, or stays as it was if writing fails)."""
    if isinstance(dest, (str, os.PathLike)):
        with atomic_open(dest, newline="\n") as fh:
            return write_conllu(sentences, fh)
    n = 0
    for s in sentences:
        dest.write(s.serialize())
        n += 1
    return n


def sentences_from_string(text: str, name: str = "<memory>") -> list[Sentence]:
    """Parse CoNLL-U held in a string (tests, small inputs)."""
    return list(read_conllu(io.StringIO(text), name=name))


__all__.append("sentences_from_string")
_ = Path  # re-exported type for annotations in callers
