"""What makes a word an agreement target and what its subject is (the ``agreement`` perturber).

* :data:`FEATURES`: the agreement features flipped and their values (Number, Person, Gender,
  as MultiBLiMP has them).
* :func:`agreeing_feats`: a word that carries agreement in ``feature``: a finite verb or
  auxiliary (``VerbForm=Fin``, or no VerbForm but a Person and no Case, as UD Turkish marks
  finite verbs) or a participle (``VerbForm=Part``: Czech and Russian past *l*-participles
  *byl*/*byla*/*bylo*, passive participles), with one value of the feature.
* :func:`subjects`: its ``nsubj`` dependents, or for an ``aux``/``cop`` its head's;
  :func:`clausal_subject`: whether the clause's subject is a clause (``csubj``), whose verb
  would otherwise be taken for the subject's head's subject.
* :func:`coordinated`: a subject with a ``conj`` dependent (*my wife and I are*) agrees as a
  whole, not as its first conjunct.
* :func:`agrees`: the subject has exactly the word's value of the feature and no clash in the
  other agreement features.
* :func:`reading_fits`: the documented rules under which another reading of a new form cannot
  fit its sentence (English subjunctive *were*); without a rule every reading fits.
* :func:`informal_twin`: the documented rules under which a twin is grammatical in a common
  register (English *there's* + plural).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ..io.feats import parse_feats
from ..lexicon.paradigms import values
from .tree import TreeWord, feats_of, rel

__all__ = ["FEATURES", "AGREEMENT", "agreeing_feats", "subjects", "clausal_subject",
           "coordinated", "agrees", "subject_feats", "reading_fits", "subjunctive_context",
           "mandative_context", "informal_twin", "name_hides_gender"]

#: The features a pair may flip, with their values (a word's value must be one of them).
FEATURES: dict[str, tuple[str, ...]] = {
    "Number": ("Sing", "Plur"),
    "Person": ("1", "2", "3"),
    "Gender": ("Masc", "Fem", "Neut"),
}
#: The features a subject and its verb agree in (checked for consistency on every pair).
AGREEMENT = ("Number", "Person", "Gender")




def agreeing_feats(upos: str, feats: str, allowed: frozenset[str], feature: str
                   ) -> dict[str, str] | None:
    """The FEATS (as a dict) of a word that may carry agreement in ``feature``, else None: UPOS
    in ``allowed``, one value of :data:`FEATURES` ``[feature]``, finite (``VerbForm=Fin``, or
    no VerbForm but a Person and no Case) or a participle (``VerbForm=Part``), no ``Typo``."""
    if upos not in allowed or f"{feature}=" not in feats:
        return None
    parsed = parse_feats(feats, strict=False)
    verbform = parsed.get("VerbForm")
    finite = verbform in ("Fin", "Part") or (verbform is None and "Person" in parsed
                                             and "Case" not in parsed)
    if not finite or parsed.get(feature) not in FEATURES[feature] or "Typo" in parsed:
        return None
    return parsed


def subjects(word: TreeWord, children: Mapping[int, Sequence[TreeWord]]) -> list[TreeWord]:
    """The word's ``nsubj`` dependents, or for an ``aux``/``cop`` its head's."""
    own = [c for c in children.get(word.id, ()) if rel(c) == "nsubj"]
    if own or rel(word) not in ("aux", "cop"):
        return own
    return [c for c in children.get(word.head, ()) if rel(c) == "nsubj"]


def clausal_subject(word: TreeWord, children: Mapping[int, Sequence[TreeWord]]) -> bool:
    """Whether the word, or for an ``aux``/``cop`` its head, has a clausal subject
    (``csubj``): *what's scary is that the wolf will come*."""
    heads = [word.id] + ([word.head] if rel(word) in ("aux", "cop") else [])
    return any(rel(c) == "csubj" for h in heads for c in children.get(h, ()))


def coordinated(subject: TreeWord, children: Mapping[int, Sequence[TreeWord]]) -> bool:
    """Whether the subject heads a coordination (a ``conj`` dependent)."""
    return any(rel(c) == "conj" for c in children.get(subject.id, ()))


def subject_feats(subject: TreeWord, implied: bool = False) -> dict[str, str]:
    """The subject's FEATS; with ``implied``, ``Person=3`` when it carries no Person and is
    not a relative pronoun (UD marks Person on personal pronouns only; every other subject
    is third person, a relative one takes its antecedent's)."""
    subj = feats_of(subject)
    if implied and "Person" not in subj and subj.get("PronType") != "Rel":
        subj["Person"] = "3"
    return subj


def agrees(feats: Mapping[str, str], subject: TreeWord, feature: str, implied: bool = False
           ) -> bool:
    """Whether the subject has exactly the word's value of ``feature`` and, for the other
    :data:`AGREEMENT` features both carry, a value in common (English nouns carry no
    Person: only Number is compared, unless ``implied`` makes them third person,
    :func:`subject_feats`)."""
    subj = subject_feats(subject, implied)
    if subj.get(feature) != feats[feature]:
        return False
    return all(values(subj[f]) & values(feats[f]) for f in AGREEMENT
               if f != feature and f in subj and f in feats)


# ---------------------------------------------------------------------- readings that cannot fit
#: English: the heads whose complement clause takes a subjunctive *were* (*I wish he were*).
_SUBJUNCTIVE_HEADS = frozenset({"wish", "suppose", "imagine", "pretend"})
#: English: the subordinators of a clause that takes a subjunctive *were* (*if*, *as if*,
#: *as though*, *even if*, *unless*).
_SUBJUNCTIVE_MARKS = frozenset({"if", "though", "unless"})


def subjunctive_context(word: TreeWord, words: Sequence[TreeWord],
                        children: Mapping[int, Sequence[TreeWord]]) -> bool:
    """English: whether the word's clause may take a subjunctive *were*: its predicate (the
    word, or the head of an ``aux``/``cop``) has a ``mark`` *if*, *though* or *unless* (or
    *as* with a ``fixed`` *if*/*though*), or depends on *wish*, *suppose*, *imagine* or
    *pretend*."""
    pred = word.head if rel(word) in ("aux", "cop") else word.id
    for c in children.get(pred, ()):
        if rel(c) != "mark":
            continue
        lemma = c.lemma.lower()
        fixed = {f.lemma.lower() for f in children.get(c.id, ()) if rel(f) == "fixed"}
        if lemma in _SUBJUNCTIVE_MARKS or fixed & _SUBJUNCTIVE_MARKS:
            return True
    head = words[pred - 1].head if 0 < pred <= len(words) else 0
    return 0 < head <= len(words) and words[head - 1].lemma.lower() in _SUBJUNCTIVE_HEADS


def reading_fits(lang: str, reading: Mapping[str, str], own: Mapping[str, str], word: TreeWord,
                 words: Sequence[TreeWord], children: Mapping[int, Sequence[TreeWord]]) -> bool:
    """Whether another reading (``reading``: a cell's FEATS) of a new form may fit the word's
    sentence. Only a documented rule says no; everywhere else it may (the pair is dropped):

    * English: a past subjunctive (``Mood=Sub|Tense=Past``, *were*) reading of an indicative
      word fits only in a :func:`subjunctive_context` (*If he were rich* is grammatical; *He
      were rich* is not); a present subjunctive (``Mood=Sub|Tense=Pres``, *come*) only in a
      :func:`mandative_context` (*I insist that he come*; not *He come with everything*).
    * A reading from a token marked ``Typo`` is no reading.
    """
    if "Typo" in reading:
        return False
    if lang == "en" and reading.get("Mood") == "Sub" and own.get("Mood") == "Ind":
        if reading.get("Tense") == "Pres":
            return mandative_context(word, children)
        return subjunctive_context(word, words, children)
    return True


def mandative_context(word: TreeWord, children: Mapping[int, Sequence[TreeWord]]) -> bool:
    """English: whether the word's clause may take a present subjunctive: its predicate is a
    complement or adnominal clause (``ccomp``, ``csubj``, ``acl``: *I insist (that) he come*,
    *it is essential that he be*) or has a ``mark`` *that* or *lest*."""
    pred_rel = word.deprel if rel(word) not in ("aux", "cop") else None
    pred = word.id if pred_rel is not None else word.head
    clause = rel(word) if pred_rel is not None else None
    if clause is None:
        heads = [h for ws in children.values() for h in ws if h.id == pred]
        clause = rel(heads[0]) if heads else ""
    if clause in ("ccomp", "csubj", "acl"):
        return True
    return any(rel(c) == "mark" and c.lemma.lower() in ("that", "lest")
               for c in children.get(pred, ()))


def informal_twin(lang: str, feature: str, own: str, new: str, word: TreeWord,
                  children: Mapping[int, Sequence[TreeWord]]) -> bool:
    """Whether the twin is grammatical in a common register, by a documented rule:

    * English: a singular verb after an expletive *there* with a plural subject (*there's
      two reasons*, *is there any questions?*) is ordinary informal English, so a Plur -> Sing
      pair of a clause with an ``expl`` is not made (Sing -> Plur, *there are a problem*, is).
    """
    if lang == "en" and feature == "Number" and (own, new) == ("Plur", "Sing"):
        pred = word.head if rel(word) in ("aux", "cop") else word.id
        return any(rel(c) == "expl" for h in {pred, word.id} for c in children.get(h, ()))
    return False


def name_hides_gender(feature: str, own: str, new: str, subject: TreeWord) -> bool:
    """Whether a Masc <-> Fem pair would rest on a proper name's annotated Gender: a name
    can refer to a man or a woman, and many do not show which (Czech foreign surnames:
    *řekl Guilbeault* and *řekla Guilbeault* are both grammatical). A neuter is never a
    person's, so Masc/Fem <-> Neut pairs stay."""
    return (feature == "Gender" and subject.upos == "PROPN"
            and {own, new} == {"Masc", "Fem"})

