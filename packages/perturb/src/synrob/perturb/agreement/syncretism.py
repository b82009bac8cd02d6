"""Subjects whose words do not show their number: the same form in the singular and plural.

Czech *práce* ("work", "works"), *zatýkání* ("arrest", "arrests"), *cestující* ("passenger",
"passengers"), English *sheep*: with such a head and modifiers of the same kind (*naše
práce*, *aktuální zatýkání*), the subject can be read in either number, so the twin of its
verb is grammatical (*naše práce budou pokračovat*: "our works will continue").
:func:`hides_number` says when the ``agreement`` perturber refuses such a Number pair (reason
``ambiguous``, with the subject forms that do not show their value): the subject and each of
its dependents that carries Number (``amod``, ``det``, ``nummod``) have a form that is also
their lemma's form of the other Number in the same case, attested in the treebanks or made by
the edit rule their other lemmas of the same ending follow (Czech feminines in *-ce* keep *-ce*
in the nominative plural: *organizace*). One word that shows its number (*prachové bouře*,
*schodek*) makes the subject's number plain.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ..io.feats import format_feats
from ..lexicon.paradigms import Paradigms
from .tree import TreeWord, feats_of, rel

__all__ = ["NOMINAL_UPOS", "hides_number", "nominative_values", "reads_as"]

#: The UPOS of the words whose forms are read for number syncretism.
NOMINAL_UPOS = frozenset({"NOUN", "PROPN", "PRON", "DET", "ADJ", "NUM"})
_OTHER = {"Sing": "Plur", "Plur": "Sing"}



def _spelled(word: TreeWord, want: str, paradigms: Paradigms) -> bool:
    """Whether the word's form is its lemma's form with FEATS ``want``: attested, or made by
    the edit rule most of the lemmas of its kind use (strictly more than any other rule:
    English *boy* is no plural because a few nouns ending like it, *sheep*, keep their form),
    or, where no rule changes it, kept by most lemmas of its ending (of its cell when fewer
    than ``min_lemmas`` end like it: :meth:`~synrob.perturb.lexicon.paradigms.Paradigms.
    kept_form`)."""
    low = word.form.lower()
    if low in paradigms.forms(word.lemma, word.upos, want):
        return True
    made = paradigms.rule_forms(word.lemma, word.upos, word.feats, low, want)
    if not made:  # no edit rule: do the lemmas of its kind keep the form? (práce, okres)
        same, other = paradigms.kept_form(word.upos, word.feats, want, low)
        if same + other < paradigms.min_lemmas:  # too few of its ending: every lemma
            same, other = paradigms.kept_form(word.upos, word.feats, want)
        return same >= paradigms.min_lemmas and same > other
    counts = sorted((n for _, _, n in made), reverse=True)
    best = next(form for form, _, n in made if n == counts[0])
    return best == low and (len(counts) == 1 or counts[0] > counts[1])


def reads_as(word: TreeWord, case: str, paradigms: Paradigms) -> bool:
    """Whether the word's form is also its lemma's form in ``case`` (its other FEATS kept):
    Czech *projekty* nominative = accusative plural."""
    feats = feats_of(word)
    if "Case" not in feats:
        return False
    return feats["Case"] == case or _spelled(word, format_feats({**feats, "Case": case}),
                                             paradigms)


def nominative_values(word: TreeWord, feature: str, paradigms: Paradigms) -> set[str]:
    """The word's value of ``feature`` when its form is also its lemma's nominative (Czech
    *kaple* accusative plural = nominative plural), else none."""
    feats = feats_of(word)
    if "Case" not in feats or feature not in feats:
        return set()
    return set(feats[feature].split(",")) if reads_as(word, "Nom", paradigms) else set()


def _syncretic(word: TreeWord, paradigms: Paradigms) -> bool | None:
    """Whether the word's form is also its lemma's form of the other Number (None: the word
    has no single Number)."""
    feats = feats_of(word)
    other = _OTHER.get(feats.get("Number", ""))
    if other is None:
        return None
    return _spelled(word, format_feats({**feats, "Number": other}), paradigms)


def hides_number(subject: TreeWord, children: Mapping[int, Sequence[TreeWord]],
                 paradigms: Paradigms) -> bool:
    """Whether no word of the subject shows its Number (see the module)."""
    words = [subject] + [c for c in children.get(subject.id, ())
                         if rel(c) in ("amod", "det", "nummod")]
    seen = [_syncretic(w, paradigms) for w in words]
    return seen[0] is True and all(s is not False for s in seen)
