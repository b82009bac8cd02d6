"""What the treebanks say about subjects and their verbs (the ``agreement`` perturber).

:class:`Evidence` reads every sentence of the treebanks once and keeps, for one agreement
feature (Number, Person or Gender):

* per subject form (lower-cased FORM and UPOS), the values of the feature it is annotated with
  anywhere (*sheep* ``Sing`` and ``Plur``; Czech *cestující*), and the values of the verbs it is
  the subject of (the collectives *staff*, *police*, *team* take verbs of both Numbers):
  :meth:`Evidence.ambiguous` says whether the form shows its value at all;
* the **configurations** (subject value, verb value) of every agreement target with one
  subject (no coordination, no clausal subject): :meth:`Evidence.mismatch` says how often a
  subject of one value takes a verb of another. Where that is common the "wrong" verb is
  grammatical (Turkish plural subjects with singular verbs: *adamlar geldi*), and the
  perturber refuses that direction.

Both judgements use shares, not single tokens, so that one mis-annotated token among thousands
decides nothing (:data:`MIN_SHARE`, :data:`MISMATCH_SHARE`, :data:`MIN_SUBJECTS`; docs/
perturbers.md gives the figures of five treebanks in three languages behind them).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from pathlib import Path

from ..corpus import Word
from ..lexicon.paradigms import sentences_with_hosts
from .rules import agreeing_feats, clausal_subject, coordinated, subjects
from .tree import children_of, feats_of, rel

__all__ = ["Evidence", "MIN_SHARE", "MISMATCH_SHARE", "MIN_SUBJECTS", "words_of"]

#: An attestation counts when it makes up at least this share of its context's tokens: a form
#: of a lemma's cell, a value of a subject form, the value of a subject form's verbs. EWT's one
#: ``are`` tagged ``Number=Sing|Person=1`` (*aren't I*) is 1 of the cell's 1,7xx tokens;
#: *staff* takes plural verbs as 6 of its 31 EWT train subjects (19 %), *fish* is plural in 30 %.
MIN_SHARE = 0.1
#: A direction (subject value a, new verb value b) is refused when at least this share of the
#: subjects of value a take a verb of value b: 68-78 % in Turkish (BOUN, IMST: plural subjects
#: with singular verbs), at most 10 % anywhere else measured (Czech: numeral phrases,
#: *pět lidí přišlo*).
MISMATCH_SHARE = 0.25
#: ... judged only when at least this many subjects have value a (fewer: no judgement).
MIN_SUBJECTS = 20


def words_of(rows: Sequence[tuple[list[str], str | None]]) -> list[Word]:
    """The :class:`~synrob.perturb.corpus.Word` s of one sentence's CoNLL-U rows (a HEAD that
    is not a number is taken as 0)."""
    return [Word(int(c[0]), c[1], c[2], c[3], c[4], c[5],
                 int(c[6]) if c[6].isascii() and c[6].isdigit() else 0, c[7])
            for c, _ in rows]


def _values(word: Word, feature: str) -> list[str]:
    value = feats_of(word).get(feature)
    return value.split(",") if value else []


class Evidence:
    """Subject forms and subject-verb configurations of one feature in some treebanks."""

    def __init__(self, feature: str, upos: frozenset[str]) -> None:
        self.feature, self.upos = feature, upos
        self.form_values: dict[tuple[str, str], Counter[str]] = defaultdict(Counter)
        self.subject_verbs: dict[tuple[str, str], Counter[str]] = defaultdict(Counter)
        self.configs: Counter[tuple[str, str]] = Counter()
        self.subjects: Counter[str] = Counter()
        self.targets = 0  # words that carry the feature and may agree
        self.marked_subjects = 0  # nsubj words that carry the feature
        # per noun lemma (NOUN, PROPN): (subject value, verb value) of its single subjects
        self.lemma_configs: dict[str, Counter[tuple[str, str]]] = defaultdict(Counter)
        self.coordinated: Counter[str] = Counter()  # values of words with a coordinated subject
        self.accusative: set[tuple[str, str]] = set()  # (form, UPOS) seen with Case=Acc
        # (form, UPOS) seen with Case=Nom: the values of the feature it had there
        self.nominative: dict[tuple[str, str], set[str]] = defaultdict(set)
        self.with_object: set[tuple[str, str]] = set()  # (lemma, UPOS) seen with an obj

    @classmethod
    def from_paths(cls, paths: Iterable[Path], feature: str, upos: frozenset[str]) -> Evidence:
        out = cls(feature, upos)
        for rows in sentences_with_hosts(paths):
            out.add(words_of(rows))
        return out

    def add(self, words: Sequence[Word]) -> None:
        """Count one sentence's words."""
        children = children_of(words)
        for w in words:
            self._count_word(w, words)
        for w in words:
            feats = agreeing_feats(w.upos, w.feats, self.upos, self.feature)
            if feats is None:
                continue
            self.targets += 1
            if clausal_subject(w, children):
                continue
            subj = subjects(w, children)
            if len(subj) == 1 and coordinated(subj[0], children):
                self.coordinated[feats[self.feature]] += 1
            if len(subj) != 1 or coordinated(subj[0], children):
                continue
            own = _values(subj[0], self.feature)
            if len(own) == 1:
                self.subject_verbs[(subj[0].form.lower(), subj[0].upos)][feats[self.feature]] += 1
                self.subjects[own[0]] += 1
                self.configs[(own[0], feats[self.feature])] += 1
                if subj[0].upos in ("NOUN", "PROPN"):
                    self.lemma_configs[subj[0].lemma.lower()][(own[0], feats[self.feature])] += 1

    def _count_word(self, w: Word, words: Sequence[Word]) -> None:
        """The counts of one word alone: marked subjects, forms' values, accusative forms,
        heads of objects."""
        relation = rel(w)
        self.marked_subjects += relation == "nsubj" and bool(_values(w, self.feature))
        if w.upos not in self.upos:
            for v in _values(w, self.feature):
                self.form_values[(w.form.lower(), w.upos)][v] += 1
        cases = _values(w, "Case")
        if "Acc" in cases:
            self.accusative.add((w.form.lower(), w.upos))
        if "Nom" in cases:
            self.nominative[(w.form.lower(), w.upos)].update(_values(w, self.feature))
        if relation == "obj" and 0 < w.head <= len(words):
            head = words[w.head - 1]
            self.with_object.add((head.lemma.lower(), head.upos))

    def coordination_varies(self, min_share: float = MIN_SHARE) -> bool:
        """Whether words with a coordinated subject take both values, the rarer at least
        ``min_share`` of the time and at least twice (Czech: *Velká Británie a Francie je* and
        *jsou*)."""
        if len(self.coordinated) < 2:
            return False
        rarer = self.coordinated.most_common(2)[1][1]
        return rarer >= 2 and rarer / sum(self.coordinated.values()) >= min_share

    def verb_totals(self) -> Counter[str]:
        """How many single subjects' words have each value."""
        out: Counter[str] = Counter()
        for (_, verb), n in self.configs.items():
            out[verb] += n
        return out

    def ambiguous(self, form: str, upos: str, min_share: float = MIN_SHARE) -> bool:
        """Whether a subject form does not show its value: annotated with two values, or the
        subject of verbs of two values, the rarer at least ``min_share`` of the time."""
        key = (form.lower(), upos)
        return any(_second(counts) >= min_share
                   for counts in (self.form_values.get(key), self.subject_verbs.get(key))
                   if counts)

    def mismatch(self, subject: str, verb: str) -> tuple[int, int]:
        """``(n, total)``: of the ``total`` single subjects of value ``subject``, ``n`` take a
        verb of value ``verb``."""
        return self.configs[(subject, verb)], self.subjects[subject]

    def refused(self, subject: str, verb: str, share: float = MISMATCH_SHARE,
                min_subjects: int = MIN_SUBJECTS) -> bool:
        """Whether a verb of value ``verb`` beside a subject of value ``subject`` is attested
        often enough to be grammatical (at least ``share`` of ``min_subjects`` or more)."""
        n, total = self.mismatch(subject, verb)
        return total >= min_subjects and n / total >= share


def _second(counts: Counter[str]) -> float:
    """The share of the second most frequent value (0 with one value)."""
    if len(counts) < 2:
        return 0.0
    return counts.most_common(2)[1][1] / sum(counts.values())
