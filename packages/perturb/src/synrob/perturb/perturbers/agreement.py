"""Agreement minimal pairs from any UD treebank (cf. MultiBLiMP, Jumelet et al. 2025).

For every word that agrees with its one nominal subject in ``feature`` (Number, Person or
Gender) -- a finite verb or auxiliary, or a participle (Czech *byl*/*byla*) -- the sentence is
written again with that one word in the same lemma's form of another value of the feature
(every other feature kept): a grammatical original beside an ungrammatical twin. One output per
pair (a sentence with two agreeing verbs gives two), none for a sentence without a pair.

* **The word** (:func:`~synrob.perturb.agreement.rules.agreeing_feats`): UPOS in ``upos``, one
  value of the feature, finite or a participle, no ``Typo``. Its **subject** is its own
  ``nsubj`` dependent, or for an ``aux`` or ``cop`` its head's; exactly one, with the word's
  value and no clash in the other agreement features; a clausal subject (``csubj``) gives no
  pair.
* **No grammatical twin** (agreement 3.0 adds the filters of ``synrob.perturb.agreement``'s
  modules: a coordinated or quantity subject, English notional agreement, the object reading
  under pro-drop, a subject of one form in both numbers, English conditional *was*/*were* and
  informal inversion, a lemma of two paradigms, a twin without the subject's animacy; each a
  reason of :data:`REASONS`, and every refused candidate a record, ``Perturbation.refused``).
  No pair when the subject's form does not show its value (attested
  with two values, or with verbs of two: *sheep*, *staff*; :class:`~synrob.perturb.
  agreement_evidence.Evidence`), when the treebanks show the new configuration to be
  grammatical (Turkish plural subjects with singular verbs: that direction is refused, with a
  warning), when the new form is the old one's (syncretism), or when the new form has another
  reading that agrees with the subject (past *put*, subjunctive *were*) that a documented rule
  does not exclude (:func:`~synrob.perturb.agreement.rules.reading_fits`). Every attestation is
  a share of its context (``min_share``), so a stray token decides nothing.
* **The form.** The forms the treebanks (``reference``, ``lexicon``) attest for the lemma, UPOS
  and new FEATS (a multi-valued cell such as Czech ``Gender=Fem,Neut|Number=Plur,Sing`` counts
  for each of its readings), of the same shape (a clitic for a clitic) and after a host of the
  same ending inside a multiword token: the most frequent, then the closest to the original,
  then alphabetically. None attested: in English lemminflect's form (``via: lemminflect``,
  Hunspell-checked); then, ``rules`` on, the form the attested edit rule makes
  (:meth:`~synrob.perturb.lexicon.paradigms.Paradigms.rule_forms`), accepted by the language's Hunspell
  dictionary (``rules=auto``, the default, makes forms only where there is one). No form, no
  pair.
* **The output.** FORM (cased like the original), FEATS (the feature changed; Animacy, which
  subdivides the masculine, follows Gender) and XPOS of that word change; LEMMA, UPOS, HEAD,
  DEPREL, DEPS, MISC stay. A word inside a multiword token is changed only when the token is its
  words' forms joined; the token is rebuilt. ``# text`` is the original text with the word's
  span replaced. ``# synrob.agreement`` holds the pair as JSON (1-based integer word IDs)::

    {"target": 5, "subject": 3, "feature": "Number", "from": "Sing", "to": "Plur",
     "form_from": "is", "form_to": "are", "via": "attested", "distance": 2,
     "attractors": 0, "attractor_in_pp": false, "attractor_in_rc": false}

  ``distance``, ``attractors``, ``attractor_in_pp`` and ``attractor_in_rc`` say where subject
  and word stand (:mod:`~synrob.perturb.agreement.attractors`).

Nothing is random: every choice is by frequency, then alphabetical.
"""

from __future__ import annotations

import random
import warnings
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from ..agreement.attractors import position
from ..agreement.coordination import coordination_refused
from ..agreement.evidence import MIN_SHARE, MIN_SUBJECTS, MISMATCH_SHARE, Evidence, words_of
from ..agreement.inflect import english_form, past_forms
from ..agreement.inversion import informal_inversion
from ..agreement.notional import Notional
from ..agreement.paradigm import animacy_of, own_paradigm
from ..agreement.prodrop import object_reading, swapped_roles
from ..agreement.quantity import quantity_subject
from ..agreement.rules import (
    FEATURES,
    agreeing_feats,
    agrees,
    clausal_subject,
    informal_twin,
    name_hides_gender,
    reading_fits,
    subject_feats,
    subjects,
)
from ..agreement.spelling import keep_marks
from ..agreement.subjunctive import conditional_be
from ..agreement.syncretism import NOMINAL_UPOS, hides_number, nominative_values, reads_as
from ..agreement.tree import children_of
from ..base import Param, Perturbation, Perturber
from ..corpus import Sentence, Word
from ..errors import ParameterError, SynrobWarning
from ..io.feats import feats_value, format_feats, parse_feats
from ..lexicon.hunspell import HunspellWords, find_dictionary
from ..lexicon.morphology import match_case
from ..lexicon.paradigms import Paradigms, canonical_feats, closeness, sentences_with_hosts, values

__all__ = ["Agreement", "AgreementWarning", "PERTURBERS", "NOTES", "CODES", "REASONS", "note",
           "refusal"]

#: Why a candidate has no pair, in the order its checks run (a sentence's note is that of the
#: candidate that got furthest), each with its code (the ``reason`` of a ``--refused`` file);
#: ``{f}`` is the feature.
REASONS = (
    ("no_word", "no finite verb, auxiliary or participle with {f}"),
    ("clausal", "the subject is a clause (csubj)"),
    ("no_subject", "no agreeing word with exactly one subject"),
    ("disagree", "no subject with the word's {f} (and its other agreement features)"),
    ("coordination", "coordination: the subject is a coordination, whose word may agree with "
     "one conjunct or with all"),
    ("quantity", "quantity: the subject is a quantity or partitive phrase, whose word may "
     "agree with its complement (a number of, the majority of, většina)"),
    ("notional", "notional: the subject is a collective noun or an organisation's name (a "
     "plural verb is grammatical in British English)"),
    ("ambiguous", "the subject's form does not show its {f} (attested with two values, with "
     "verbs of two, or a name)"),
    ("object_reading", "object_reading: the twin reads the subject as the object of a verb "
     "whose subject is dropped (pro-drop)"),
    ("direction", "the new {f} is grammatical with this subject in the treebanks (direction "
     "refused)"),
    ("informal", "the twin is grammatical in informal use (English: there's + plural)"),
    ("informal_inversion", "informal_inversion: a singular verb before a plural subject after "
     "here, there or a wh-word is grammatical in informal English"),
    ("subjunctive", "subjunctive: English was and were in a conditional or counterfactual "
     "clause"),
    ("no_form", "no attested form of the lemma with the other {f}"),
    ("paradigm", "paradigm: the attested forms of the other {f} belong to different verbs (a "
     "lemma of two paradigms)"),
    ("animacy", "animacy: the twin's form shows an animacy the subject does not carry"),
    ("dictionary", "the rule-made form is not in the language's Hunspell dictionary"),
    ("syncretism", "the other {f}'s form is the same (syncretism)"),
    ("reading", "the new form has another reading that agrees with the subject"),
    ("token", "the word is in a multiword token that is not its words' forms joined"),
)
NOTES = tuple(text for _, text in REASONS)
CODES = tuple(code for code, _ in REASONS)
(_NO_WORD, _CLAUSAL, _NO_SUBJECT, _DISAGREE, _COORDINATION, _QUANTITY, _NOTIONAL, _AMBIGUOUS,
 _OBJECT, _REFUSED, _INFORMAL, _INVERSION, _SUBJUNCTIVE, _NO_FORM, _PARADIGM, _ANIMACY,
 _DICTIONARY, _SYNCRETIC, _READING, _TOKEN) = range(len(NOTES))
#: A UD treebank per language whose train split the advice names as a lexicon.
LEXICON_EXAMPLES = {"en": "en_ewt", "cs": "cs_pdt", "de": "de_gsd", "es": "es_ancora",
                    "fr": "fr_gsd", "it": "it_isdt", "pl": "pl_pdb", "pt": "pt_bosque",
                    "ru": "ru_syntagrus", "tr": "tr_boun"}
#: Notes counted per candidate (a word that carries the feature): from the subject on.
_COUNTED = _CLAUSAL


def note(index: int, feature: str = "Number") -> str:
    """The text of note ``index`` for ``feature``."""
    return NOTES[index].format(f=feature)


class AgreementWarning(SynrobWarning):
    """The treebanks lack the features agreement pairs need, or show a direction to be
    grammatical: fewer or no pairs will come."""


@dataclass(frozen=True)
class _Pair:
    target: Word
    subject: Word
    feature: str
    feats: dict[str, str]  # the new FEATS
    form: str  # cased like the original
    xpos: str
    via: str  # "attested", "lemminflect", "rule" (dictionary-checked) or "rule-unchecked"
    cell: str  # the FEATS the form is attested with (made forms: the new FEATS)
    notional: bool = False  # the subject is notional (kept with notional=keep)


@dataclass(frozen=True)
class _Context:
    """One sentence: its words and each word's dependents."""

    words: list[Word]
    children: dict[int, list[Word]]


def _shape(form: str) -> bool:
    """Whether a form starts with a letter (a word) rather than a mark (a clitic: ``'s``)."""
    return form[:1].isalpha()


def new_feats(feats: dict[str, str], feature: str, value: str) -> dict[str, str]:
    """``feats`` with ``feature`` set to ``value``; a Gender other than Masc drops Animacy."""
    out = {**feats, feature: value}
    if feature == "Gender" and value != "Masc":
        out.pop("Animacy", None)
    return out


class Agreement(Perturber):
    """One output per agreeing word: the same lemma with another value of the feature."""

    name = "agreement"
    version = "3.0"
    summary = ("agreement minimal pairs (Number, Person or Gender; finite verbs, auxiliaries "
               "and participles): the lemma's attested form of another value, one output per "
               "pair, grammatical twins refused; tree unchanged")
    paper = ("Jumelet, Weissweiler & Bisazza 2025, MultiBLiMP 1.0: A Massively Multilingual "
             "Benchmark of Linguistic Minimal Pairs (agreement pairs from UD); Linzen et al. "
             "2016 (TACL)")
    languages = ("*",)
    language_note = ("any UD treebank whose agreeing words and subjects carry the feature: the "
                     "forms come from its own words")
    several_outputs = True
    params = (
        Param("feature", str, "Number", "the agreement feature flipped",
              choices=tuple(FEATURES)),
        Param("reference", str, None, "comma-separated CoNLL-U files (or ud:/sample: specs) "
              "whose forms are attested; synrob perturb defaults it to its inputs"),
        Param("lexicon", str, "", "more treebanks whose forms are attested too "
              "(comma-separated, e.g. ud:en_ewt:train)"),
        Param("rules", str, "auto", "make an unattested form with the edit rule the treebanks' "
              "other lemmas pair with the word's own: auto (only where the language has a "
              "Hunspell dictionary, which must accept the form), true (checked by the "
              "dictionary where there is one, unchecked elsewhere) or false",
              choices=("auto", "true", "false")),
        Param("min_lemmas", int, 2, "a rule is used when at least this many other lemmas "
              "attest it"),
        Param("upos", str, "VERB,AUX,ADJ", "comma-separated UPOS of the words that may carry "
              "agreement (ADJ: predicative participles with VerbForm=Part)"),
        Param("direction", str, "both", "Number only: which flips are made: both, Sing to "
              "Plur only, or Plur to Sing only", choices=("both", "to_plur", "to_sing")),
        Param("min_share", float, MIN_SHARE, "an attestation counts when it is at least this "
              "share of its context's tokens (a form of its cell, a value of a subject form)"),
        Param("mismatch_share", float, MISMATCH_SHARE, "a direction is refused when at least "
              "this share of the subjects of one value take verbs of the new value"),
        Param("min_subjects", int, MIN_SUBJECTS, "... judged when at least this many subjects "
              "have that value"),
        Param("notional", str, "refuse", "English Number: a collective or organisation subject "
              "(notional agreement): refuse its pairs, or keep them marked \"notional\": \"yes\"",
              choices=("refuse", "keep")),
        Param("lemminflect", str, "true", "English: make a form the treebanks do not attest "
              "with lemminflect (before the edit rules; Hunspell must accept it)",
              choices=("true", "false")),
    )

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        opts = self.options
        if opts["min_lemmas"] < 1:
            raise ParameterError("perturber 'agreement': min_lemmas must be >= 1")
        if not 0 < opts["min_share"] <= 1 or not 0 < opts["mismatch_share"] <= 1:
            raise ParameterError("perturber 'agreement': min_share and mismatch_share must be "
                                 "in (0, 1]")
        self._upos = frozenset(u.strip() for u in opts["upos"].split(",") if u.strip())
        if not self._upos:
            raise ParameterError("perturber 'agreement': upos names no UPOS")
        if not self._specs():
            raise ParameterError(
                "perturber 'agreement' takes its forms from treebanks: give -p reference=FILES "
                "(synrob perturb sets it to its input files) or -p lexicon=FILES")
        self.feature: str = opts["feature"]
        if opts["direction"] != "both" and self.feature != "Number":
            raise ParameterError(f"perturber 'agreement': direction={opts['direction']} is for "
                                 f"feature=Number, not {self.feature}")
        self._to = {"both": FEATURES[self.feature], "to_plur": ("Plur",),
                    "to_sing": ("Sing",)}[opts["direction"]]
        self._paradigms: Paradigms | None = None
        self._evidence: Evidence | None = None
        self._dictionary: HunspellWords | None = None
        self._rules = False  # set by setup: make forms by edit rules
        self._order: tuple[str, ...] = FEATURES[self.feature]
        self.refused: dict[tuple[str, str], tuple[int, int]] = {}
        self._notional: Notional | None = None  # set by setup in English Number
        self._nominals: Paradigms | None = None  # set by setup for Number: nouns' forms
        self._coordination_varies = False  # set by setup

    def _specs(self) -> list[str]:
        return _split(self.options["reference"]) + _split(self.options["lexicon"])

    # ------------------------------------------------------------------ setup
    def setup(self) -> None:
        """Read the treebanks' forms and subjects; warn when they mark the feature on no
        agreeing word or no subject, and for each refused direction."""
        from ..io.data import resolve_input

        opts = self.options
        reference = [p for s in _split(opts["reference"]) for p in resolve_input(s)]
        lexicon = [p for s in _split(opts["lexicon"]) for p in resolve_input(s)]
        par = Paradigms(opts["min_lemmas"])
        nominals = Paradigms(opts["min_lemmas"])
        ev = Evidence(self.feature, self._upos)
        names: list[list[Word]] = []  # reference sentences with a proper name
        for paths, is_reference in ((reference, True), (lexicon, False)):
            for rows in sentences_with_hosts(paths):
                for cols, host in rows:
                    if cols[3] in self._upos:
                        par.add(cols[1], cols[2], cols[3], cols[4], cols[5], host)
                    if cols[3] in NOMINAL_UPOS:
                        nominals.add(cols[1], cols[2], cols[3], cols[4], cols[5])
                words = words_of(rows)
                ev.add(words)
                if is_reference and self._notional_applies() and any(
                        w.upos == "PROPN" for w in words):
                    names.append(words)
        self._paradigms, self._evidence, self._nominals = par, ev, nominals
        self._coordination_varies = ev.coordination_varies(opts["min_share"])
        if self._notional_applies():
            self._notional = Notional(ev.lemma_configs, min_share=opts["min_share"])
            self._notional.add_names(names)
        self._setup_rules()
        self._check_treebanks(ev)
        self._ready = True

    def _notional_applies(self) -> bool:
        return self.lang == "en" and self.feature == "Number"

    @property
    def recorded_options(self) -> dict[str, Any]:
        """Every option, but ``notional`` outside English Number and ``lemminflect`` outside
        English; in English Number also ``notional_sources``, the sources the notional filter
        used (WordNet and spaCy's model may be missing)."""
        out = dict(self.options)
        if not self._notional_applies():
            out.pop("notional")
        else:
            self.ensure_setup()
            assert self._notional is not None
            out["notional_sources"] = self._notional.sources
        if self.lang != "en":
            out.pop("lemminflect")
        return out

    def _setup_rules(self) -> None:
        mode = self.options["rules"]
        files = find_dictionary(self.lang) if mode != "false" else None
        self._dictionary = HunspellWords(files) if files is not None else None
        self._rules = mode == "true" or (mode == "auto" and self._dictionary is not None)

    def _check_treebanks(self, ev: Evidence) -> None:
        names, f = ", ".join(self._specs()), self.feature
        verbs = ev.verb_totals()
        self._order = tuple(sorted(FEATURES[f], key=lambda v: (-verbs[v], FEATURES[f].index(v))))
        if not ev.targets or not ev.marked_subjects:
            what = ("finite verb, auxiliary or participle" if not ev.targets
                    else "subject (nsubj)")
            warnings.warn(f"perturber 'agreement': {names} mark {f} on no {what}: no "
                          "agreement pairs can be made", AgreementWarning, stacklevel=3)
        opts = self.options
        for a in FEATURES[f]:
            for b in self._to:
                if a != b and ev.refused(a, b, opts["mismatch_share"], opts["min_subjects"]):
                    n, total = self.refused[(a, b)] = ev.mismatch(a, b)
                    warnings.warn(
                        f"perturber 'agreement': in {names}, {n} of {total} subjects with "
                        f"{f}={a} ({n / total:.0%}) take a word with {f}={b}, so that is "
                        f"grammatical there: no {a} -> {b} pairs (mismatch_share "
                        f"{opts['mismatch_share']})", AgreementWarning, stacklevel=3)

    @property
    def paradigms(self) -> Paradigms:
        self.ensure_setup()
        assert self._paradigms is not None
        return self._paradigms

    @property
    def nominals(self) -> Paradigms:
        """The forms of the treebanks' nouns, pronouns, determiners, adjectives, numerals."""
        self.ensure_setup()
        assert self._nominals is not None
        return self._nominals

    def _accusative(self, word: Word) -> bool:
        """Whether the word's form is also an accusative (treebanks or paradigm)."""
        return ((word.form.lower(), word.upos) in self.evidence.accusative
                or reads_as(word, "Acc", self.nominals))

    def _nominative(self, word: Word) -> set[str]:
        """The values of the feature the word's form has as a nominative (treebanks or
        paradigm)."""
        seen = self.evidence.nominative.get((word.form.lower(), word.upos), set())
        return seen | nominative_values(word, self.feature, self.nominals)

    @property
    def evidence(self) -> Evidence:
        self.ensure_setup()
        assert self._evidence is not None
        return self._evidence

    # ------------------------------------------------------------------ one word
    def _attested(self, word: Word, want: dict[str, str], host: str | None
                  ) -> tuple[str, str] | int | None:
        """``(form, cell)``: the best attested form of the word's shape in a cell compatible
        with ``want`` (a form at least ``min_share`` of its cell, of the word's own paradigm:
        :func:`~synrob.perturb.agreement.paradigm.own_paradigm`); None when none is attested,
        ``_PARADIGM`` when the attested ones belong to different paradigms."""
        par, low, share = self.paradigms, word.form.lower(), self.options["min_share"]
        found: Counter[str] = Counter()
        cell_of: dict[str, str] = {}
        for cell in par.compatible_cells(word.lemma, word.upos, want):
            forms = par.forms(word.lemma, word.upos, cell, after=host)
            total = sum(forms.values())
            for f, n in forms.items():
                if n >= share * total:
                    found[f] += n
                    cell_of.setdefault(f, cell)
        fits = sorted((f for f in found if _shape(f) == _shape(low)),
                      key=lambda f: (-found[f], -closeness(f, low), f))
        if not fits:
            return None
        mine = own_paradigm(fits, self._rule_made(word, want))
        if mine is None:
            return _PARADIGM
        return mine[0], cell_of[mine[0]]

    def _rule_made(self, word: Word, want: dict[str, str]) -> list[str]:
        """The forms the treebanks' edit rules make of the word for ``want``, best first."""
        return [f for f, _, _ in self.paradigms.rule_forms(
            word.lemma, word.upos, word.feats, word.form.lower(), format_feats(want))]

    def _checked(self, form: str, via: str) -> tuple[str, str] | int:
        """``(form, via)`` when the language's dictionary accepts ``form``, ``_DICTIONARY``
        when it does not; ``via`` ends in ``-unchecked`` without a dictionary."""
        if self._dictionary is None:
            return form, f"{via}-unchecked"
        return (form, via) if self._dictionary.accepts(form) else _DICTIONARY

    def _made_form(self, word: Word, want: dict[str, str], host: str | None
                   ) -> tuple[str, str] | int:
        """``(form, via)`` for an unattested cell: lemminflect's form (English; not for a
        word after its host in a multiword token, a clitic spelled its own way: *I+m*), then
        an edit rule's, each accepted by the dictionary; else a note."""
        low, best = word.form.lower(), _NO_FORM
        if (self.lang == "en" and self.options["lemminflect"] == "true" and _shape(low)
                and host is None):
            made = english_form(word.lemma, want)
            if made is not None and made != low:
                checked = self._checked(made, "lemminflect")
                if not isinstance(checked, int):
                    return checked
                best = checked
        if not self._rules:
            return best
        ruled = [f for f in self._rule_made(word, want) if _shape(f) == _shape(low)]
        if not ruled:
            return best
        if self._dictionary is None:
            return ruled[0], "rule-unchecked"
        return next(((f, "rule") for f in ruled if self._dictionary.accepts(f)), _DICTIONARY)

    def _syncretic(self, word: Word, cells: list[str], form: str) -> bool:
        """Whether ``form`` is at least ``min_share`` of one of ``cells``."""
        share = self.options["min_share"]
        return any(self.paradigms.share(word.lemma, word.upos, c, form) >= share for c in cells)

    def _other_reading(self, word: Word, subject: Word, feats: dict[str, str], form: str,
                       targets: list[str], ctx: _Context) -> bool:
        """Whether ``form`` has a reading (a cell it spells ``min_share`` of) outside the
        target cells that agrees with the subject and that no rule excludes here."""
        par, f = self.paradigms, self.feature
        for cell in par.readings(word.lemma, word.upos, form, self.options["min_share"]):
            reading = parse_feats(cell, strict=False)
            if cell in targets or feats[f] not in values(reading.get(f, "")):
                continue
            if agrees({**reading, f: feats[f]}, subject, f, implied=True) and reading_fits(
                    self.lang, reading, feats, word, ctx.words, ctx.children):
                return True
        return False

    def _want(self, word: Word, subject: Word, feats: dict[str, str], value: str
              ) -> tuple[dict[str, str], list[str]] | int:
        """The twin's FEATS (the subject's Animacy where the twin's cells show one) and the
        lemma's cells compatible with them, or ``_ANIMACY``."""
        par = self.paradigms
        want = new_feats(feats, self.feature, value)
        cells = par.compatible_cells(word.lemma, word.upos, want)
        animate = animacy_of(want, cells, subject_feats(subject))
        if animate is None:
            return _ANIMACY
        if animate != want:
            want, cells = animate, par.compatible_cells(word.lemma, word.upos, animate)
        return want, cells

    def _form(self, word: Word, subject: Word, feats: dict[str, str], value: str,
              host: str | None, ctx: _Context) -> _Pair | int:
        """The pair made by giving ``word`` the feature's ``value``, or a note index."""
        par, low = self.paradigms, word.form.lower()
        wanted = self._want(word, subject, feats, value)
        if isinstance(wanted, int):
            return wanted
        want, targets = wanted
        if self._syncretic(word, targets, low):
            return _SYNCRETIC
        attested = self._attested(word, want, host)
        if isinstance(attested, int):
            return attested
        if attested is not None:
            (form, cell), via = attested, "attested"
        else:
            made = self._made_form(word, want, host)
            if isinstance(made, int):
                return made
            (form, via), cell = made, canonical_feats(format_feats(want))
        own = par.compatible_cells(word.lemma, word.upos, feats)
        if (form == low or self._syncretic(word, own, form)
                or not par.marks(word.lemma, word.upos, form, format_feats(feats))):
            return _SYNCRETIC
        if self._other_reading(word, subject, feats, form, targets, ctx) or (
                self.lang == "en" and want.get("Tense") == "Pres"
                and form in past_forms(word.lemma)):
            return _READING
        out = _with_animacy(want, cell)
        xpos = par.xpos(word.lemma, word.upos, cell, form, word.xpos)
        spelled = match_case(word.form, keep_marks(word.form, form))
        return _Pair(word, subject, self.feature, out, spelled, xpos, via, cell)

    def _values_to(self, feats: dict[str, str]) -> list[str] | int:
        """The values the word may take, best first, or a note index."""
        own = feats[self.feature]
        allowed = [v for v in self._order if v != own and v in self._to]
        if not allowed:
            return _NO_WORD
        kept = [v for v in allowed if (own, v) not in self.refused]
        return kept or _REFUSED

    def _subject_note(self, word: Word, subject: Word, ctx: _Context) -> int | None:
        """Why the subject gives no pair (coordination, quantity, notional, a form that does
        not show its value, an object reading), or None."""
        lang, f = self.lang, self.feature
        if coordination_refused(lang, word, subject, ctx.children, self._coordination_varies):
            return _COORDINATION
        if quantity_subject(lang, subject, ctx.children):
            return _QUANTITY
        if self._notional is not None and self.options["notional"] == "refuse" and (
                self._notional.source(subject, ctx.words, ctx.children)):
            return _NOTIONAL
        if self.evidence.ambiguous(subject.form, subject.upos, self.options["min_share"]) or (
                f == "Number" and hides_number(subject, ctx.children, self.nominals)):
            return _AMBIGUOUS
        ev = self.evidence
        if object_reading(lang, f, word, subject, ctx.children, self._accusative,
                          ev.with_object):
            return _OBJECT
        return None

    def _twin_values(self, word: Word, subject: Word, feats: dict[str, str], to: list[str],
                     ctx: _Context) -> list[str] | int:
        """The values whose twin no rule shows grammatical (a name's gender, informal
        English, a conditional *was*/*were*), or the note of the last rule that refused."""
        f = self.feature
        own = feats[f]
        rules = ((_AMBIGUOUS, lambda v: name_hides_gender(f, own, v, subject)),
                 (_OBJECT, lambda v: swapped_roles(f, v, word, subject, ctx.children,
                                                   self._accusative, self._nominative)),
                 (_INFORMAL, lambda v: informal_twin(self.lang, f, own, v, word, ctx.children)),
                 (_INVERSION, lambda v: informal_inversion(self.lang, f, own, v, word, subject,
                                                           ctx.children, ctx.words)),
                 (_SUBJUNCTIVE, lambda v: conditional_be(self.lang, word, feats, ctx.words,
                                                         ctx.children)))
        for why, refuses in rules:
            to = [v for v in to if not refuses(v)]
            if not to:
                return why
        return to

    def _pair(self, word: Word, ctx: _Context, host: str | None) -> _Pair | int:
        """The pair made from ``word`` (``host``: the word before it in its multiword token,
        if it is not the token's first), or the index of the note saying why not."""
        feats = agreeing_feats(word.upos, word.feats, self._upos, self.feature)
        if feats is None:
            return _NO_WORD
        self.ensure_setup()
        if clausal_subject(word, ctx.children):
            return _CLAUSAL
        subj = subjects(word, ctx.children)
        if len(subj) != 1:
            return _NO_SUBJECT
        if not agrees(feats, subj[0], self.feature):
            return _DISAGREE
        why = self._subject_note(word, subj[0], ctx)
        if why is not None:
            return why
        to = self._values_to(feats)
        if not isinstance(to, int):
            to = self._twin_values(word, subj[0], feats, to, ctx)
        if isinstance(to, int):
            return to
        best = _NO_FORM
        for value in to:
            made = self._form(word, subj[0], feats, value, host, ctx)
            if isinstance(made, _Pair):
                return self._marked(made, ctx)
            best = max(best, made)
        return best

    def _marked(self, pair: _Pair, ctx: _Context) -> _Pair:
        """The pair marked notional where the filter flags its subject (``notional=keep``)."""
        if self._notional is None or self.options["notional"] != "keep":
            return pair
        flagged = self._notional.source(pair.subject, ctx.words, ctx.children) is not None
        return replace(pair, notional=flagged)

    def advice(self, skipped: Mapping[str, int], outputs: int) -> str | None:
        """When at least half as many candidates had no attested form as pairs were written
        (or none were), the line that names the fix: a lexicon treebank of the language."""
        unattested = skipped.get(note(_NO_FORM, self.feature), 0)
        if not unattested or unattested < outputs / 2:
            return None
        example = LEXICON_EXAMPLES.get(self.lang)
        eg = f" (e.g. -p lexicon=ud:{example}:train)" if example else ""
        return (f"few pairs: {unattested} candidates had no attested form of the other "
                f"{self.feature} ({outputs} pairs written); add a treebank's forms with "
                f"-p lexicon=ud:<a treebank of the language>:train{eg}")

    # ------------------------------------------------------------------ one sentence
    def perturb(self, sentence: Sentence, rng: random.Random) -> Perturbation:
        """The first pair of the sentence (see :meth:`perturb_all`)."""
        return self.perturb_all(sentence, rng)[0]

    def perturb_all(self, sentence: Sentence, rng: random.Random) -> list[Perturbation]:
        """One perturbation per pair, in word order; without a pair, one unchanged sentence
        with the note of the candidate that got furthest. The first perturbation's
        ``skipped`` holds the note of every other candidate (a word with the feature), and its
        ``refused`` a record of each (:func:`refusal`)."""
        self.ensure_setup()
        words = sentence.words()
        ctx = _Context(words, children_of(words))
        hosts = {i: words[i - 2].form for a, b, _ in sentence.ranges() for i in range(a + 1, b + 1)}
        out: list[Perturbation] = []
        refused: list[dict[str, Any]] = []
        furthest = _NO_WORD
        for word in words:
            pair = self._pair(word, ctx, hosts.get(word.id))
            made = respell(sentence, pair) if isinstance(pair, _Pair) else None
            if made is None:
                why = pair if isinstance(pair, int) else _TOKEN
                furthest = max(furthest, why)
                if why >= _COUNTED:
                    refused.append(refusal(word, subjects(word, ctx.children), why, self.feature))
                continue
            out.append(Perturbation(made, made.text, (word.id,),
                                    comments={"synrob.agreement": _comment(pair, ctx)}))
        if not out:
            out = [Perturbation(sentence, sentence.text, (), note=note(furthest, self.feature))]
        out[0].skipped = tuple(r["note"] for r in refused)
        out[0].refused = tuple(refused)
        return out


def refusal(word: Word, subjects: list[Word], why: int, feature: str) -> dict[str, Any]:
    """The record of a candidate without a pair: the word, its subjects (IDs and forms,
    comma-separated), the reason's code and its note."""
    return {"verb_id": word.id, "verb": word.form,
            "subject_id": ",".join(str(s.id) for s in subjects),
            "subject": ",".join(s.form for s in subjects),
            "reason": CODES[why], "note": note(why, feature)}


def _split(specs: str | None) -> list[str]:
    """The comma-separated items of an option (none for None or "")."""
    return [s.strip() for s in str(specs or "").split(",") if s.strip()]


def _with_animacy(want: dict[str, str], cell: str) -> dict[str, str]:
    """The new FEATS in UD's order; a masculine takes the attested cell's Animacy when it has
    one value there."""
    out = dict(want)
    animacy = parse_feats(cell, strict=False).get("Animacy", "")
    if out.get("Gender") == "Masc" and "Animacy" not in out and animacy and "," not in animacy:
        out["Animacy"] = animacy
    return parse_feats(canonical_feats(format_feats(out)))


def _comment(pair: _Pair, ctx: _Context) -> dict[str, Any]:
    f = pair.feature
    where = position(ctx.words, ctx.children, pair.subject, pair.target, f)
    out = {"target": pair.target.id, "subject": pair.subject.id, "feature": f,
           "from": pair.target.feats_dict[f], "to": pair.feats[f],
           "form_from": pair.target.form, "form_to": pair.form, "via": pair.via,
           **where.metadata(), "attested_feats": pair.cell}
    if pair.notional:
        out["notional"] = "yes"
    return out


def respell(sentence: Sentence, pair: _Pair) -> Sentence | None:
    """The sentence with the pair's word respelled (FORM, XPOS, FEATS), its multiword token
    rebuilt and its span of ``# text`` replaced; None when the word is in a multiword token
    that is not its words' forms joined."""
    target = pair.target.id
    forms = {w.id: w.form for w in sentence.words()}
    new = sentence.copy()
    surface = None
    for tok in new.tokens:
        tid = tok["id"]
        if isinstance(tid, tuple) and tid[1] == "-" and tid[0] <= target <= tid[2]:
            parts = [forms[i] for i in range(tid[0], tid[2] + 1)]
            if "".join(parts) != tok["form"]:
                return None
            parts[target - tid[0]] = pair.form
            surface = (tok["form"], "".join(parts))
            tok["form"] = surface[1]
        elif tid == target:
            tok["form"], tok["xpos"] = pair.form, pair.xpos
            tok["feats"] = feats_value(format_feats(pair.feats))
    old = surface or (pair.target.form, pair.form)
    new.tokens.metadata["text"] = _replaced_text(sentence, target, old) or new.surface_text()
    return new


def _replaced_text(sentence: Sentence, target: int, change: tuple[str, str]) -> str | None:
    """``# text`` with the surface token holding word ``target`` changed from ``change[0]``
    to ``change[1]``, found by reading the surface tokens through the text; None when the
    text does not spell them out (separated by nothing but whitespace)."""
    text = sentence.text
    covered = {i for a, b, _ in sentence.ranges() for i in range(a, b + 1)}
    pos = 0
    for tok in sentence.tokens:
        tid = tok["id"]
        if isinstance(tid, tuple):
            if tid[1] != "-":
                continue  # an empty node: not in the text
            span, form = (tid[0], tid[2]), tok["form"]
        elif tid in covered:
            continue  # a word spelled by its multiword token
        else:
            span, form = (tid, tid), tok["form"]
        at = text.find(form, pos)
        if at < 0 or text[pos:at].strip():
            return None
        if span[0] <= target <= span[1]:
            if form != change[0]:
                return None
            return text[:at] + change[1] + text[at + len(form):]
        pos = at + len(form)
    return None


PERTURBERS = [Agreement]
