"""Coordinated subjects: when a verb may agree with one conjunct or with the whole coordination.

In Slavic languages a verb before or after a coordinated subject may agree with the nearest
conjunct or with the coordination as a whole (Czech *jako je Velká Británie a Francie* and
*jako jsou ...*; Corbett 2006, *Agreement*, ch. 7), so a pair built on such a subject may have
a grammatical twin. :func:`coordination_refused` says when the ``agreement`` perturber refuses
it (reason ``coordination``):

* in a Slavic language (:data:`SLAVIC`), or in any language whose treebanks show words with a
  coordinated subject in both values (:meth:`Evidence.coordination_varies
  <synrob.perturb.agreement.evidence.Evidence.coordination_varies>`): every subject with a
  ``conj`` dependent;
* in English only when the word comes before the subject (*there is a man and a woman*,
  *where is John and Mary*): after it a coordination takes a plural verb.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Protocol

from .rules import coordinated

__all__ = ["SLAVIC", "coordination_refused"]

#: ISO codes (as UD uses them) of the Slavic languages.
SLAVIC = frozenset({"be", "bg", "bs", "cs", "cu", "dsb", "hr", "hsb", "mk", "orv", "pl", "ru",
                    "sk", "sl", "sr", "uk"})


class _Word(Protocol):
    id: int
    head: int
    deprel: str


def coordination_refused(lang: str, word: _Word, subject: _Word,
                         children: Mapping[int, Sequence[_Word]], varies: bool) -> bool:
    """Whether a pair of ``word`` with a coordinated ``subject`` is refused (``varies``: the
    treebanks show both values with coordinated subjects)."""
    if not coordinated(subject, children):
        return False
    if lang == "en":
        return word.id < subject.id
    return lang in SLAVIC or varies
