"""Where an agreement pair's subject and word stand: their distance and the attractors between.

The ``agreement`` perturber writes these keys into every pair's ``synrob.agreement`` comment,
so that accuracy can be broken down as Linzen, Dupoux & Goldberg (2016, TACL) did:

* ``distance``: the linear distance in words between the subject's head word and the agreeing
  word, ``abs(target - subject)`` over syntactic word IDs (at least 1);
* ``attractors``: how many nouns and pronouns (UPOS NOUN, PROPN, PRON) stand strictly between
  the two in linear order with a value of the pair's feature other than the subject's (a word
  without the feature is no attractor; a word annotated with several values, Czech
  ``Gender=Fem,Neut``, is one only when none of them is the subject's);
* ``attractor_in_pp``: some attractor lies inside a prepositional or case-marked phrase: it, or
  an ancestor of it below the subject (or below the subject's predicate when the subject does
  not dominate it), has a ``case`` dependent or is attached as ``nmod`` or ``obl`` (any
  subtype);
* ``attractor_in_rc``: some attractor lies inside a relative clause: it, or such an ancestor,
  is attached as ``acl:relcl``, or as ``acl`` with a relative pronoun (``PronType=Rel``) in its
  subtree.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..lexicon.paradigms import values
from .tree import TreeWord, feats_of, rel

__all__ = ["ATTRACTOR_UPOS", "Position", "position", "attractor_ids", "DISTANCE_BUCKETS"]

#: The UPOS of the words that may be attractors.
ATTRACTOR_UPOS = frozenset({"NOUN", "PROPN", "PRON"})
#: The distance buckets of the breakdowns (``4+``: 4 and more words apart).
DISTANCE_BUCKETS = ("1", "2-3", "4+")



@dataclass(frozen=True)
class Position:
    """The distance between subject and word and the attractors between them."""

    distance: int
    attractors: int
    in_pp: bool
    in_rc: bool

    def metadata(self) -> dict[str, Any]:
        """The keys of ``synrob.agreement`` (in the order they are written)."""
        return {"distance": self.distance, "attractors": self.attractors,
                "attractor_in_pp": self.in_pp, "attractor_in_rc": self.in_rc}


def _values(word: TreeWord, feature: str) -> frozenset[str]:
    value = feats_of(word).get(feature)
    return values(value) if value else frozenset()



def attractor_ids(words: Sequence[TreeWord], subject: TreeWord, target: TreeWord, feature: str
                  ) -> list[int]:
    """The IDs of the attractors strictly between ``subject`` and ``target``."""
    own = _values(subject, feature)
    lo, hi = sorted((subject.id, target.id))
    return [w.id for w in words[lo:hi - 1]
            if w.upos in ATTRACTOR_UPOS and (vals := _values(w, feature)) and not vals & own]


def _chain(word_id: int, by_id: Mapping[int, TreeWord], stop: frozenset[int]) -> list[TreeWord]:
    """The word and its ancestors up to (not including) a word of ``stop`` or the root."""
    out: list[TreeWord] = []
    seen: set[int] = set()
    node = by_id.get(word_id)
    while node is not None and node.id not in stop and node.id not in seen:
        out.append(node)
        seen.add(node.id)
        node = by_id.get(node.head)
    return out


def _has_relative(node: TreeWord, children: Mapping[int, Sequence[TreeWord]]) -> bool:
    """Whether the subtree of ``node`` holds a relative pronoun (``PronType=Rel``)."""
    todo, seen = [node.id], set()
    while todo:
        for c in children.get(todo.pop(), ()):
            if c.id in seen:
                continue
            seen.add(c.id)
            if "PronType=Rel" in c.feats.split("|"):
                return True
            todo.append(c.id)
    return False


def _in_pp(chain: Sequence[TreeWord], children: Mapping[int, Sequence[TreeWord]]) -> bool:
    return any(rel(n) in ("nmod", "obl") or any(rel(c) == "case" for c in children.get(n.id, ()))
               for n in chain)


def _in_rc(chain: Sequence[TreeWord], children: Mapping[int, Sequence[TreeWord]]) -> bool:
    return any(n.deprel == "acl:relcl" or (n.deprel == "acl" and _has_relative(n, children))
               for n in chain)


def position(words: Sequence[TreeWord], children: Mapping[int, Sequence[TreeWord]], subject: TreeWord,
             target: TreeWord, feature: str) -> Position:
    """The :class:`Position` of a pair (``words``: the sentence's syntactic words in order,
    ``children``: each word's dependents by head ID)."""
    found = attractor_ids(words, subject, target, feature)
    by_id = {w.id: w for w in words}
    stop = frozenset({subject.id, subject.head})
    chains = [_chain(a, by_id, stop) for a in found]
    return Position(abs(target.id - subject.id), len(found),
                    any(_in_pp(c, children) for c in chains),
                    any(_in_rc(c, children) for c in chains))
