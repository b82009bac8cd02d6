"""Which attested form is the twin: the word's own paradigm and the subject's animacy.

Two checks on the forms the treebanks attest for the twin's cell:

* **One paradigm** (:func:`own_paradigm`). A UD lemma may merge two verbs: Czech *stát* is
  "become" (*stal*, *stali*) and "stand" (*stál*, *stáli*), and a treebank without ``Aspect``
  (UD Czech PUD) files both in one cell. Among several attested forms the twin is one the
  treebanks' edit rules make from the original form (*stal* -> *stali* like *dal* -> *dali*);
  when forms are attested but none is so made and they disagree, the pair is refused (reason
  ``paradigm``).
* **The subject's animacy** (:func:`animacy_of`). Czech masculine plural participles show
  animacy (*začali* animate, *začaly* inanimate). When the twin's cells carry ``Animacy``, it
  takes the subject's; a subject without ``Animacy`` (a relative pronoun, a neuter noun) gives
  no pair (reason ``animacy``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ..io.feats import parse_feats

__all__ = ["animacy_of", "own_paradigm"]


def animacy_of(want: Mapping[str, str], cells: Sequence[str], subject_feats: Mapping[str, str]
               ) -> dict[str, str] | None:
    """``want`` with the subject's Animacy when the twin is masculine and one of ``cells``
    (the lemma's cells compatible with ``want``) carries Animacy; ``want`` unchanged when
    none does; None when the subject has no Animacy to give."""
    if "Masc" not in want.get("Gender", "").split(","):
        return dict(want)
    if not any("Animacy" in parse_feats(c, strict=False) for c in cells):
        return dict(want)
    animacy = subject_feats.get("Animacy")
    if not animacy or "," in animacy:
        return None
    return {**want, "Animacy": animacy}


def own_paradigm(candidates: Sequence[str], made: Sequence[str]) -> list[str] | None:
    """The attested ``candidates`` (best first) that belong to the word's paradigm: those an
    edit rule makes from the original (``made``, best first) when there are any; all of them
    when there is one candidate; None when several disagree and no rule makes any."""
    ruled = [f for f in candidates if f in made]
    if ruled:
        return ruled
    return list(candidates) if len(candidates) <= 1 else None
