"""Property: corrupted real EWT sentences are either accepted or rejected with FILE:LINE.

Sentences of EWT train (all with a multiword range or an empty node, every 20th other one; all
carry enhanced DEPS) are corrupted
— ranges and empty nodes moved or renumbered, IDs, HEADs and DEPS replaced by near-misses or
garbage, lines dropped, duplicated or swapped, bytes that are not UTF-8 inserted — and read
through the real reader. Every rejection must be a ConlluError ``FILE:LINE: problem`` naming a
line of the file; every accepted sentence must survive everything the corpus model does with
it (views, tree utilities, edits, serialize and read back) without any other exception.
"""

from __future__ import annotations

import functools
import io
import re
import tempfile
import warnings
from pathlib import Path

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from synrob.perturb.corpus import ConlluWarning, Sentence, read_conllu, sentences_from_string
from synrob.perturb.errors import ConlluError

NAME = "corrupt.conllu"
ERROR = re.compile(rf"^{re.escape(NAME)}:(\d+): \S")


@functools.cache
def _blocks(path: str) -> tuple[str, ...]:
    """Sentence blocks of ``path``: all with a range or an empty node, plus every 20th."""
    text = Path(path).read_text(encoding="utf-8")
    blocks = [b for b in text.split("\n\n") if b.strip()]
    special = [b for b in blocks if re.search(r"^\d+[-.]\d+\t", b, re.M)]
    return tuple(special + blocks[::20])


@pytest.fixture(scope="module")
def blocks(ewt_train: Path) -> tuple[str, ...]:
    out = _blocks(str(ewt_train))
    assert sum(re.search(r"^\d+\.1\t", b, re.M) is not None for b in out) > 20  # empty nodes
    return out


_SMALL = st.integers(min_value=-1, max_value=45)
IDS = st.one_of(
    _SMALL.map(str),
    st.tuples(_SMALL, _SMALL).map(lambda t: f"{t[0]}-{t[1]}"),
    st.tuples(_SMALL, st.integers(0, 3)).map(lambda t: f"{t[0]}.{t[1]}"),
    st.sampled_from(["", "_", "01", "1.", ".1", "1-", "\u00b2", "\u0661", " 1", "1 "]),
)
_RELS = st.sampled_from(["root", "nsubj", "conj:and", "obl:in_front_of", "", "_x", "1", "a b",
                         "x::y", "-x", "nmod:poss"])
DEPS = st.one_of(
    st.lists(st.tuples(IDS, _RELS), min_size=1, max_size=3).map(
        lambda parts: "|".join(f"{h}:{r}" for h, r in parts)),
    st.sampled_from(["_", "", "|", "0:root|", "root", "0:root|0:root"]),
    st.text(st.characters(exclude_characters="\n\r"), max_size=8),
)
# Free text for FORM/LEMMA/MISC that keeps the sentence valid (no tab, no edge blanks, no |/=).
SAFE_TEXT = st.text(st.characters(exclude_characters="\t|=", exclude_categories=["Z", "Cc", "Cs"]),
                    min_size=1, max_size=6)
COLUMN_TEXT = st.one_of(
    st.sampled_from(["_", "", " ", "  ", "a  b", "A=1", "A", "=", "|", "SpaceAfter=No", "\ufeff"]),
    st.text(st.characters(exclude_characters="\n\r"), max_size=6),
)


def _token_rows(lines: list[str]) -> list[int]:
    return [i for i, line in enumerate(lines) if line and not line.startswith("#")]


@st.composite
def corruption(draw, lines: list[str]) -> list[str]:
    """One edit of a block's lines."""
    lines = list(lines)
    rows = _token_rows(lines)
    kind = draw(st.sampled_from(["id", "head", "deps", "column", "text", "move", "drop", "dup",
                                 "swap", "tab", "blank", "comment", "safe", "safe", "safe"]))
    i = draw(st.sampled_from(rows))
    cols = lines[i].split("\t")
    if kind == "safe" and len(cols) == 10:  # usually still valid: exercises what accepts it
        cols[draw(st.sampled_from([1, 2, 3, 4]))] = draw(SAFE_TEXT)
        lines[i] = "\t".join(cols)
    elif kind in ("id", "head", "deps", "column", "text") and len(cols) == 10:
        col = {"id": 0, "head": 6, "deps": 8}.get(kind)
        if kind == "text":  # FORM, LEMMA, MISC: free text, mostly still valid
            col = draw(st.sampled_from([1, 2, 9]))
        elif col is None:
            col = draw(st.integers(0, 9))
        cols[col] = draw({"id": IDS, "deps": DEPS}.get(kind, st.one_of(IDS, COLUMN_TEXT)))
        lines[i] = "\t".join(cols)
    elif kind == "move":  # e.g. a range or an empty node out of place
        line = lines.pop(i)
        lines.insert(draw(st.integers(0, len(lines))), line)
    elif kind == "drop" and len(rows) > 1:
        del lines[i]
    elif kind == "dup":
        lines.insert(i, lines[i])
    elif kind == "swap":
        j = draw(st.sampled_from(rows))
        lines[i], lines[j] = lines[j], lines[i]
    elif kind == "tab":
        lines[i] = lines[i] + "\t_" if draw(st.booleans()) else lines[i].rsplit("\t", 1)[0]
    elif kind == "blank":  # splits the sentence in two
        lines.insert(i, "")
    elif kind == "comment":
        lines.insert(i, draw(st.sampled_from(["# sent_id = x", "#", "# text", "\ufeff# x = y"])))
    return lines


@st.composite
def corrupted_block(draw, blocks: tuple[str, ...]) -> tuple[str, str]:
    original = draw(st.sampled_from(blocks))
    lines = original.split("\n")
    for _ in range(draw(st.integers(1, 3))):
        lines = draw(corruption(lines))
    return original, "\n".join(lines) + "\n\n"


def _exercise(s: Sentence) -> None:
    """Everything the corpus model does with a sentence; none of it may raise."""
    n = len(s)
    words = s.words()
    assert [w.id for w in words] == list(range(1, n + 1))
    assert len(s.space_after()) == n
    s.surface_text()
    assert s.text is not None
    assert len(s.distances()) == n and len(s.depths()) == n
    assert 0 <= s.root() < n
    s.edges()
    for a, b, _ in s.ranges():
        assert 1 <= a < b <= n
    again = sentences_from_string(s.serialize(), name="again")
    assert [len(x) for x in again] == [n]
    assert again[0].heads == s.heads and again[0].forms == s.forms
    for new in (s.reorder(list(range(n, 0, -1))), s.reorder(list(range(1, n + 1))),
                s.replace_words({1: {"form": "Zzyzx", "lemma": "zzyzx"}})):
        (back,) = sentences_from_string(new.serialize(), name="edited")
        assert len(back) == n


def _check(text: str, name: str = NAME) -> list[ConlluError]:
    errors: list[ConlluError] = []
    n_lines = text.count("\n") + 1
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConlluWarning)
        for s in read_conllu(io.StringIO(text), skip_invalid=True, on_invalid=errors.append,
                             name=name):
            _exercise(s)
    event("rejected" if errors else "accepted")
    for err in errors:
        m = ERROR.match(str(err))
        assert m, str(err)
        assert 1 <= int(m[1]) <= n_lines and int(m[1]) == err.line
    return errors


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_corrupted_ewt_sentences_are_accepted_or_rejected_with_file_line(blocks, data) -> None:
    original, text = data.draw(corrupted_block(blocks))
    _check(text)
    # the sentence between two good ones: exactly the blocks it makes are at stake
    good = original + "\n\n"
    errors = _check(good + text + good)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConlluWarning)
        strict_ok = True
        try:
            list(read_conllu(io.StringIO(good + text + good), name=NAME))
        except ConlluError as err:
            strict_ok = False
            assert err.line == errors[0].line
    assert strict_ok == (not errors)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_bytes_that_are_not_utf8_name_their_line(blocks, data) -> None:
    block = data.draw(st.sampled_from(blocks)) + "\n\n"
    raw = bytearray(block.encode("utf-8"))
    bad = data.draw(st.sampled_from([b"\xff", b"\xe9", b"\xc3", b"\x80", b"\xed\xa0\x80"]))
    at = data.draw(st.integers(0, len(raw) - 3))
    while at and (raw[at] & 0xC0) == 0x80:  # keep the original characters whole
        at -= 1
    raw[at:at] = bad
    line = raw[:at].count(b"\n") + 1
    col = at - (raw.rfind(b"\n", 0, at) + 1) + 1
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / NAME
        path.write_bytes(bytes(raw))
        errors: list[ConlluError] = []
        out = list(read_conllu(path, skip_invalid=True, on_invalid=errors.append))
    # every line of the block is a non-blank line of the one sentence, valid before the byte
    assert out == []
    assert [str(e) for e in errors] == [
        f"{path}:{line}: not UTF-8: byte 0x{bad[0]:02x} at byte {col} of the line"]
