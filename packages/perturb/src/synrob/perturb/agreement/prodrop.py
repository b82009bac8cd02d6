"""The object reading of a twin in a pro-drop language.

Where a subject pronoun may be dropped, a twin whose verb no longer agrees with its subject
can be read with a dropped subject and the old subject as the object: Czech *Vyšetřování
začalo* ("the investigation began") -> *Vyšetřování začal* ("he began the investigation"),
*Začalo to jako rutinní vyšetření* -> *Začal to ...* ("he began it ..."). The twin is then
grammatical. :func:`object_reading` says when the ``agreement`` perturber refuses such a pair
in Gender and Number (reason ``object_reading``): the language is pro-drop
(:data:`PRO_DROP`), the subject's form (lower-cased, with its UPOS) is attested with
``Case=Acc`` in the reference treebanks or is its lemma's accusative by the paradigm
(:func:`~synrob.perturb.agreement.syncretism.reads_as`), the word's lemma (with its UPOS) is attested with
an ``obj`` dependent, and the word has no object of its own nor a reflexive (``obj``,
``expl:pv``, ``expl:pass``...: *který napsal několik knih*, *měsíc se stal* have no object
reading). Neuter nouns, inanimate masculines, feminine plurals, *to* and relative *které*
are the Czech subjects whose nominative is also an accusative.

:func:`swapped_roles` is the same reading with the roles swapped in the sentence itself: the
word's object can be read as its subject when its form is attested as a nominative with the
twin's value (in the treebanks, or by its lemma's paradigm:
:func:`~synrob.perturb.agreement.syncretism.nominative_values`) and the subject's form as an
accusative: *To má tři paralelní kaple* ("it has
three chapels") -> *To mají tři paralelní kaple* ("three chapels have it"). Refused in any
language with case (same reason).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence

from .tree import TreeWord, rel

__all__ = ["PRO_DROP", "object_reading", "swapped_roles"]

#: ISO codes of languages whose finite verbs (or participles) go without an overt subject
#: pronoun in ordinary use: Slavic (Russian only partly: in speech and in the past tense
#: with context), Romance but French, Greek, Latin, Turkish, Hungarian, Basque, Semitic,
#: Indo-Iranian, and East Asian languages.
PRO_DROP = frozenset({"ar", "be", "bg", "bs", "ca", "cs", "el", "es", "eu", "fa", "gl", "he",
                      "hi", "hr", "hsb", "hu", "it", "ja", "ko", "la", "mk", "pl", "pt", "ro",
                      "ru", "sk", "sl", "sr", "ta", "tr", "uk", "ur", "zh"})
#: The features whose pairs the object reading concerns.
FEATURES = ("Gender", "Number")



def _object_slot_taken(word: TreeWord, children: Mapping[int, Sequence[TreeWord]]) -> bool:
    return any(rel(c) in ("obj", "expl") for c in children.get(word.id, ()))


def object_reading(lang: str, feature: str, word: TreeWord, subject: TreeWord,
                   children: Mapping[int, Sequence[TreeWord]],
                   accusative: Callable[[TreeWord], bool],
                   with_object: Collection[tuple[str, str]]) -> bool:
    """Whether the twin of ``word`` may read ``subject`` as its object (see the module;
    ``accusative``: whether a word's form is also an accusative)."""
    return (lang in PRO_DROP and feature in FEATURES
            and (word.lemma.lower(), word.upos) in with_object
            and not _object_slot_taken(word, children) and accusative(subject))


def swapped_roles(feature: str, value: str, word: TreeWord, subject: TreeWord,
                  children: Mapping[int, Sequence[TreeWord]],
                  accusative: Callable[[TreeWord], bool],
                  nominative: Callable[[TreeWord], Collection[str]]) -> bool:
    """Whether the twin with ``value`` may read the word's object as its subject and the
    subject as its object (see the module; ``nominative``: the values of ``feature`` a
    word's form has as a nominative)."""
    if feature not in FEATURES:
        return False
    objects = [c for c in children.get(word.id, ()) if rel(c) == "obj"]
    return any(value in nominative(o) for o in objects) and accusative(subject)
