"""The QWERTY layout: which keys a finger can slip to from a given letter."""

from __future__ import annotations

from functools import cache

#: Letter rows of a US QWERTY keyboard, top to bottom. Each row is shifted right by about half
#: a key relative to the one above, so key (r, c) touches (r-1, c), (r-1, c+1) above it and
#: (r+1, c-1), (r+1, c) below it, besides its left and right neighbours.
ROWS: tuple[str, ...] = ("qwertyuiop", "asdfghjkl", "zxcvbnm")


@cache
def _positions() -> dict[str, tuple[int, int]]:
    return {ch: (r, c) for r, row in enumerate(ROWS) for c, ch in enumerate(row)}


@cache
def neighbors(letter: str) -> str:
    """The lowercase letters on keys adjacent to ``letter`` (any case), sorted; "" if none.

    >>> neighbors("s")
    'adewxz'
    """
    pos = _positions().get(letter.lower())
    if pos is None:
        return ""
    r, c = pos
    cells = [(r, c - 1), (r, c + 1), (r - 1, c), (r - 1, c + 1), (r + 1, c - 1), (r + 1, c)]
    out = {ROWS[rr][cc] for rr, cc in cells if 0 <= rr < len(ROWS) and 0 <= cc < len(ROWS[rr])}
    return "".join(sorted(out))


def has_neighbors(letter: str) -> bool:
    return bool(neighbors(letter))


def match_case(letter: str, like: str) -> str:
    """``letter`` in the case of ``like`` (``match_case("d", "S") == "D"``)."""
    return letter.upper() if like.isupper() else letter
