"""Quantity subjects: a quantity or partitive head whose verb may agree with its complement.

*A number of people are* and *the majority of voters want*, Czech *většina informací pochází*
and *pocházejí*, *řada lidí otevírá* and *otevírají*, *devět z deseti osob podceňuje* and
*podceňují*: the verb may agree with the quantity noun or with the counted noun, so a pair on
such a subject may have a grammatical twin. :func:`quantity_subject` says when the
``agreement`` perturber refuses it (reason ``quantity``): the subject

* is a quantity noun or pronoun of its language (:data:`QUANTITY_WORDS`) with an ``nmod``
  dependent (in English one with the ``case`` *of*: *the number is wrong* stays a pair);
* is a numeral (UPOS NUM) with an ``nmod`` dependent (*devět z deseti osob*); or
* has a governing numeral or quantifier (UD ``nummod:gov``, ``det:numgov``, ``det:nummod``:
  Czech *pět lidí přišlo*).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from .collectives import QUANTITY_NOUNS
from .tree import TreeWord, rel

__all__ = ["QUANTITY_WORDS", "GOVERNING", "quantity_subject"]

#: Quantity and partitive heads per language (lemmas, lower-cased).
QUANTITY_WORDS: dict[str, frozenset[str]] = {
    "en": QUANTITY_NOUNS | frozenset({"none", "all", "some", "any", "neither", "either",
                                      "half", "most"}),
    "cs": frozenset({"většina", "menšina", "řada", "množství", "spousta", "hromada", "část",
                     "polovina", "třetina", "čtvrtina", "desítka", "stovka", "tisíc",
                     "tisícovka", "milion", "miliarda", "pár", "skupina", "procento",
                     "dvojice", "trojice"}),
}
#: Relations of a numeral or quantifier that governs its noun's case (Czech *pět lidí*).
GOVERNING = frozenset({"nummod:gov", "det:numgov", "det:nummod"})




def quantity_subject(lang: str, subject: TreeWord, children: Mapping[int, Sequence[TreeWord]]
                     ) -> bool:
    """Whether the subject is a quantity subject (see the module)."""
    deps = children.get(subject.id, ())
    if any(c.deprel in GOVERNING for c in deps):
        return True
    nmods = [c for c in deps if rel(c) == "nmod"]
    if not nmods:
        return False
    if subject.upos == "NUM":
        return True
    if subject.lemma.lower() not in QUANTITY_WORDS.get(lang, frozenset()):
        return False
    if lang != "en":
        return True
    return any(rel(g) == "case" and g.lemma.lower() == "of"
               for n in nmods for g in children.get(n.id, ()))
