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
* in English when the word comes before the subject (*there is a man and a woman*, *where is
  John and Mary*), when the coordination is one of *or* or *nor* (the verb may agree with the
  nearest conjunct: *neither the US nor its allies express(es)*), and when the word is singular
  (*green curry and red curry is awesome* treats the two as one; its plural twin is the
  standard form). After a plain *and*-coordination with a plural verb the pair stays: *the
  battles and demonstrations were* -> *was*.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from .rules import coordinated
from .tree import TreeWord

__all__ = ["SLAVIC", "coordination_refused"]

#: ISO codes (as UD uses them) of the Slavic languages.
SLAVIC = frozenset({"be", "bg", "bs", "cs", "cu", "dsb", "hr", "hsb", "mk", "orv", "pl", "ru",
                    "sk", "sl", "sr", "uk"})



def _english_kept(word: TreeWord, subject: TreeWord, children: Mapping[int, Sequence[TreeWord]]
                  ) -> bool:
    """An English plural word after an *and*-coordination (the only coordination kept)."""
    conjuncts = [c for c in children.get(subject.id, ()) if c.deprel.split(":")[0] == "conj"]
    marks = {g.lemma.lower() for c in conjuncts for g in children.get(c.id, ())
             if g.deprel.split(":")[0] == "cc"}
    plural = "Number=Plur" in word.feats.split("|")
    return word.id > subject.id and plural and marks <= {"and", "&"}


def coordination_refused(lang: str, word: TreeWord, subject: TreeWord,
                         children: Mapping[int, Sequence[TreeWord]], varies: bool) -> bool:
    """Whether a pair of ``word`` with a coordinated ``subject`` is refused (``varies``: the
    treebanks show both values with coordinated subjects)."""
    if not coordinated(subject, children):
        return False
    if lang == "en":
        return not _english_kept(word, subject, children)
    return lang in SLAVIC or varies
