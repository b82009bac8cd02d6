"""English informal inversion: a singular verb before a plural subject after *here*, *there*
or a wh-word.

*What's your thoughts?*, *Here's the postulates*, *Where's the keys?*, *Here comes the judges*:
a singular *be* (or *come*, *go* after *here*/*there*) before a plural subject is ordinary in
informal English (Biber et al. 1999, *Longman Grammar of Spoken and Written English*, on subject-verb
concord).
The ``agreement`` perturber **refuses** such Plur -> Sing pairs (reason ``informal_inversion``;
*What are your thoughts* -> *What is your thoughts* is not written) and keeps Sing -> Plur
ones (*What are your name* is ungrammatical in every register). Clauses with an expletive
*there* are the older rule :func:`~synrob.perturb.agreement.rules.informal_twin`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from .tree import TreeWord, feats_of, rel

__all__ = ["WH_WORDS", "informal_inversion"]

#: Fronted words that license the informal singular.
WH_WORDS = frozenset({"what", "where", "who", "which", "how", "why", "when", "whose",
                      "here", "there"})
#: Verbs (lemmas) that take it: *be*; *come* and *go* after *here* or *there*.
_VERBS = {"be": WH_WORDS, "come": frozenset({"here", "there"}), "go": frozenset({"here",
                                                                                 "there"})}




def _fronted(w: TreeWord) -> str:
    """The lemma of a wh-word or of *here*/*there* (else "")."""
    lemma = w.lemma.lower()
    if lemma in WH_WORDS:
        return lemma
    feats = feats_of(w)
    return lemma if feats.get("PronType") == "Int" else ""


def informal_inversion(lang: str, feature: str, own: str, new: str, word: TreeWord,
                       subject: TreeWord, children: Mapping[int, Sequence[TreeWord]],
                       words: Sequence[TreeWord]) -> bool:
    """Whether a Plur -> Sing twin is an informal inversion (see the module)."""
    licensed = _VERBS.get(word.lemma.lower())
    if lang != "en" or feature != "Number" or (own, new) != ("Plur", "Sing") or not licensed:
        return False
    if word.id > subject.id:
        return False
    pred = word.head if rel(word) in ("aux", "cop") else word.id
    clause = {pred, word.id} | {c.id for h in (pred, word.id) for c in children.get(h, ())}
    before = [w for w in words if w.id < word.id and w.id in clause]
    return any(_fronted(w) in licensed for w in before)
