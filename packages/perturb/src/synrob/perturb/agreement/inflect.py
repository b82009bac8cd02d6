"""English verb forms the treebanks do not attest, from lemminflect's dictionary and rules.

The ``agreement`` perturber takes a form from the treebanks first (``via: attested``), then
from lemminflect (``via: lemminflect``; accepted only by the language's Hunspell dictionary
where one is installed), then from the treebanks' edit rules (``via: rule``). lemminflect
(Jascob 2019, https://github.com/bjascob/LemmInflect) knows the Penn tag of a finite verb's
form: :func:`english_form` maps the twin's FEATS to it (``VBZ`` for the third person singular
present, ``VBP`` for the other persons and numbers, ``VBD`` for the past) and picks *be*'s
forms by person and number (*am*, *is*, *are*, *was*, *were*).
"""

from __future__ import annotations

from collections.abc import Mapping

__all__ = ["penn_tag", "english_form", "past_forms"]

_BE = {("Pres", "Sing", "1"): "am", ("Pres", "Sing", "3"): "is", ("Past", "Sing", "1"): "was",
       ("Past", "Sing", "3"): "was"}


def penn_tag(feats: Mapping[str, str]) -> str | None:
    """The Penn tag of a finite indicative verb with FEATS ``feats`` (None otherwise)."""
    if feats.get("VerbForm") != "Fin" or feats.get("Mood", "Ind") != "Ind":
        return None
    tense = feats.get("Tense")
    if tense == "Past":
        return "VBD"
    if tense != "Pres":
        return None
    third_singular = feats.get("Number") == "Sing" and feats.get("Person", "3") == "3"
    return "VBZ" if third_singular else "VBP"


def english_form(lemma: str, feats: Mapping[str, str]) -> str | None:
    """The form of ``lemma`` with FEATS ``feats`` by lemminflect (lower-cased), or None."""
    from lemminflect import getInflection

    tag = penn_tag(feats)
    if tag is None or not lemma.isalpha():
        return None
    low = lemma.lower()
    if low == "be":
        key = (feats.get("Tense", ""), feats.get("Number", ""), feats.get("Person", "3"))
        return _BE.get(key, "are" if key[0] == "Pres" else "were")
    forms = getInflection(low, tag=tag)
    return forms[0].lower() if forms else None


def past_forms(lemma: str) -> frozenset[str]:
    """The past-tense forms lemminflect knows for ``lemma`` (lower-cased): a present twin
    spelled like one has a grammatical past reading (*it lets* -> *it let*)."""
    from lemminflect import getAllInflections

    if not lemma.isalpha():
        return frozenset()
    return frozenset(f.lower() for f in getAllInflections(lemma.lower(), upos="VERB").get(
        "VBD", ()))
