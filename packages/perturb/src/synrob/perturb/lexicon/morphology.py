"""Regular English inflection and spelling rules, for pseudo-lemmas (Jabberwocky).

Only the regular paradigm exists here (no irregular verbs or plurals): that is the point of a
pseudoword. Rules (input and output lower case):

* ``-s``/``-es``/``-ies`` (:func:`plural`, :func:`third_singular`): sibilant endings ``s x z ch
  sh`` and consonant + ``o`` take ``-es`` (a doubling ``z`` doubles: ``quiz -> quizzes``); consonant + ``y`` becomes ``-ies``; otherwise ``-s``.
* ``-ing`` (:func:`present_participle`): ``ie -> ying``; a silent final ``e`` after a consonant
  is dropped (``ee``, ``oe``, ``ye`` keep it); a one-syllable word ending consonant-vowel-
  consonant (final consonant not ``w x y``) doubles it (``blip -> blipping``). Stress is unknown
  for pseudowords, so longer words never double (``visit -> visiting``).
* ``-ed`` (:func:`past`), ``-er``/``-est`` (:func:`comparative`, :func:`superlative`): ``e``
  endings add ``-d``/``-r``/``-st``; consonant + ``y`` becomes ``-ied``/``-ier``/``-iest``; the
  same doubling rule.
"""

from __future__ import annotations

import re
from typing import Literal

__all__ = [
    "FORMS",
    "Form",
    "plural",
    "third_singular",
    "present_participle",
    "past",
    "comparative",
    "superlative",
    "inflect",
    "syllables",
    "match_case",
]

#: The inflected forms :func:`inflect` knows.
Form = Literal["base", "plural", "3sg", "ing", "ed", "cmp", "sup"]
FORMS: tuple[Form, ...] = ("base", "plural", "3sg", "ing", "ed", "cmp", "sup")

_VOWELS = frozenset("aeiou")
_SIBILANT = re.compile(r"(?:s|x|z|ch|sh)$")
_VOWEL_GROUP = re.compile(r"[aeiouy]+")


def _is_consonant(word: str, i: int) -> bool:
    """Whether ``word[i]`` is a consonant (``y`` is a vowel after a consonant)."""
    c = word[i]
    if c in _VOWELS:
        return False
    if c == "y":
        return i == 0 or not _is_consonant(word, i - 1)
    return True


def syllables(word: str) -> int:
    """Number of vowel groups, not counting a silent final ``e`` (at least 1)."""
    w = word.lower()
    if len(w) > 2 and w.endswith("e") and not w.endswith(("ee", "ie", "oe", "ye", "le")):
        w = w[:-1]
    groups = _VOWEL_GROUP.findall(w[1:] if w.startswith("y") else w)
    return max(1, len(groups))


def _doubles(word: str) -> bool:
    """One syllable ending consonant-vowel-consonant, final consonant not w/x/y: ``blip``.

    ``qu`` counts as a consonant (``quit -> quitting``); a vowel digraph does not double
    (``blook -> blooking``).
    """
    n = len(word)
    if n < 3 or word[-1] in "wxy":
        return False
    if not (_is_consonant(word, n - 1) and not _is_consonant(word, n - 2)):
        return False
    before = _is_consonant(word, n - 3) or (word[n - 3] == "u" and n >= 4 and word[n - 4] == "q")
    return before and syllables(word) == 1


def _consonant_y(word: str) -> bool:
    return len(word) >= 2 and word.endswith("y") and _is_consonant(word, len(word) - 2)


def plural(noun: str) -> str:
    """Regular noun plural: ``blick -> blicks``, ``blish -> blishes``, ``blarpy -> blarpies``."""
    return _s_form(noun)


def third_singular(verb: str) -> str:
    """Regular third person singular present: same spelling rules as :func:`plural`."""
    return _s_form(verb)


def _s_form(word: str) -> str:
    if word.endswith("z") and _doubles(word):  # quiz -> quizzes
        return word + "zes"
    if _SIBILANT.search(word):
        return word + "es"
    if _consonant_y(word):
        return word[:-1] + "ies"
    if word.endswith("o") and len(word) >= 2 and _is_consonant(word, len(word) - 2):
        return word + "es"
    return word + "s"


def present_participle(verb: str) -> str:
    """``-ing`` form: ``tie -> tying``, ``blake -> blaking``, ``glee -> gleeing``, ``blip -> blipping``."""
    if len(verb) > 2 and verb.endswith("ie"):
        return verb[:-2] + "ying"
    if verb.endswith("e") and len(verb) > 2 and not verb.endswith(("ee", "oe", "ye")):
        return verb[:-1] + "ing"
    if _doubles(verb):
        return verb + verb[-1] + "ing"
    return verb + "ing"


def _suffix(word: str, suffix: str) -> str:
    """Add a vowel-initial suffix (``ed``, ``er``, ``est``) by the shared spelling rules."""
    if word.endswith("e"):
        return word + suffix[1:]
    if _consonant_y(word):
        return word[:-1] + "i" + suffix
    if _doubles(word):
        return word + word[-1] + suffix
    return word + suffix


def past(verb: str) -> str:
    """Regular past / past participle: ``blake -> blaked``, ``blarpy -> blarpied``, ``blip -> blipped``."""
    return _suffix(verb, "ed")


def comparative(adj: str) -> str:
    """``-er``: ``blake -> blaker``, ``blarpy -> blarpier``, ``blip -> blipper``."""
    return _suffix(adj, "er")


def superlative(adj: str) -> str:
    """``-est``: ``blake -> blakest``, ``blarpy -> blarpiest``, ``blip -> blippest``."""
    return _suffix(adj, "est")


_INFLECT = {
    "base": lambda w: w,
    "plural": plural,
    "3sg": third_singular,
    "ing": present_participle,
    "ed": past,
    "cmp": comparative,
    "sup": superlative,
}


def inflect(lemma: str, form: Form) -> str:
    """``lemma`` (lower case) in the regular ``form``; ``KeyError`` for an unknown form."""
    return _INFLECT[form](lemma)


def match_case(original: str, new: str) -> str:
    """``new`` cased like ``original``: UPPER (2+ letters), Title, or as given."""
    if len(original) > 1 and original.isupper():
        return new.upper()
    if original[:1].isupper():
        return new[:1].upper() + new[1:]
    return new
