"""A character n-gram model of a language's words, for pseudo-lemmas that sound like it.

:class:`CharNgramModel` counts, for every context of ``order - 1`` characters (words padded
with ``order - 1`` start marks and one end mark), which character follows; :meth:`sample`
draws a word character by character from those counts with a caller's ``random.Random``, so a
seed reproduces it. Every context met while sampling was seen in training (a sampled word only
extends seen contexts), so no smoothing is needed: the model only says what the training words
allow, which is what keeps the pseudowords pronounceable and spelled like the language.
"""

from __future__ import annotations

import bisect
import random
from collections import Counter, defaultdict
from collections.abc import Iterable

__all__ = ["CharNgramModel", "vowels", "last_vowel", "is_vowel"]

_START, _END = "\x02", "\x03"
#: Vowel letters of the Latin (base letters after removing accents), Cyrillic and Greek scripts;
#: ``y`` counts as a vowel (it is one in Finnish, Czech, Polish...), Turkish dotless ``ı`` too.
_VOWELS = frozenset("aeiouyæøœɛɔəıаеёиоуыэюяєіїαεηιουωάέήίόύώ")


def is_vowel(ch: str) -> bool:
    """Whether a (lower-case) letter is a vowel: its base letter, accents removed, is one."""
    import unicodedata

    if ch in _VOWELS:
        return True
    base = unicodedata.normalize("NFD", ch)[:1]
    return base in _VOWELS


def vowels(word: str) -> frozenset[str]:
    """The set of vowel letters in ``word`` (with their accents: ``ä`` is not ``a``)."""
    return frozenset(c for c in word if is_vowel(c))


def last_vowel(word: str) -> str:
    """The last vowel letter of ``word`` ('' when it has none)."""
    for c in reversed(word):
        if is_vowel(c):
            return c
    return ""


class CharNgramModel:
    """Character n-gram counts of a word list; draws new words from them."""

    def __init__(self, order: int = 4) -> None:
        if order < 2:
            raise ValueError("a character model needs order >= 2")
        self.order = order
        self._next: dict[str, tuple[tuple[str, ...], tuple[int, ...]]] = {}

    def fit(self, words: Iterable[str]) -> CharNgramModel:
        """Count the words' n-grams (words are used as given: lower-case them first)."""
        counts: dict[str, Counter[str]] = defaultdict(Counter)
        pad = _START * (self.order - 1)
        for word in words:
            chars = pad + word + _END
            for i in range(self.order - 1, len(chars)):
                counts[chars[i - self.order + 1:i]][chars[i]] += 1
        table = {}
        for ctx, nxt in counts.items():
            items = sorted(nxt.items())  # a fixed order: the same seed draws the same word
            cum, total = [], 0
            for _, n in items:
                total += n
                cum.append(total)
            table[ctx] = (tuple(c for c, _ in items), tuple(cum))
        self._next = table
        return self

    @property
    def fitted(self) -> bool:
        return bool(self._next)

    def sample(self, rng: random.Random, max_len: int = 20) -> str | None:
        """One word drawn from the model, or None when it grows past ``max_len`` letters."""
        if not self._next:
            raise ValueError("the character model was not fitted")
        ctx = _START * (self.order - 1)
        out: list[str] = []
        while True:
            chars, cum = self._next[ctx]
            ch = chars[bisect.bisect_right(cum, rng.random() * cum[-1])]
            if ch == _END:
                return "".join(out)
            out.append(ch)
            if len(out) > max_len:
                return None
            ctx = (ctx + ch)[1:] if self.order > 1 else ""
