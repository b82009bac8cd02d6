"""The four keyboard-typo edits. Each takes a word and an rng and returns the misspelled word,
or None when the edit cannot apply to that word. Every returned word differs from the input.
"""

from __future__ import annotations

import random
from collections.abc import Callable

from .keyboard import match_case, neighbors

Edit = Callable[[str, random.Random], "str | None"]


def substitute(word: str, rng: random.Random) -> str | None:
    """Replace one letter by a QWERTY-adjacent one, keeping its case (``house`` -> ``hoise``)."""
    slots = [i for i, ch in enumerate(word) if neighbors(ch)]
    if not slots:
        return None
    i = rng.choice(slots)
    new = match_case(rng.choice(neighbors(word[i])), word[i])
    return word[:i] + new + word[i + 1 :]


def insert(word: str, rng: random.Random) -> str | None:
    """Add a key adjacent to one letter, before or after it (``house`` -> ``hpouse``)."""
    slots = [i for i, ch in enumerate(word) if neighbors(ch)]
    if not slots:
        return None
    i = rng.choice(slots)
    new = match_case(rng.choice(neighbors(word[i])), word[i])
    at = i + rng.randrange(2)
    return word[:at] + new + word[at:]


def delete(word: str, rng: random.Random) -> str | None:
    """Drop one letter (``house`` -> ``huse``); words shorter than two letters are left alone."""
    if len(word) < 2:
        return None
    i = rng.randrange(len(word))
    return word[:i] + word[i + 1 :]


def transpose(word: str, rng: random.Random) -> str | None:
    """Swap two adjacent, different letters (``house`` -> ``huose``)."""
    slots = [i for i in range(len(word) - 1) if word[i] != word[i + 1]]
    if not slots:
        return None
    i = rng.choice(slots)
    return word[:i] + word[i + 1] + word[i] + word[i + 2 :]


#: Edit name (as given in the ``ops`` parameter) -> edit function, in canonical order.
EDITS: dict[str, Edit] = {
    "sub": substitute,
    "ins": insert,
    "del": delete,
    "swap": transpose,
}
