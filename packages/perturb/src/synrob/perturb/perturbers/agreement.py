"""Subject-verb agreement minimal pairs from any UD treebank (cf. MultiBLiMP, Jumelet et al.).

For every finite verb or auxiliary that carries ``Number`` and agrees with its one nominal
subject, the sentence is written again with that one word in the same lemma's form of the other
Number (Person and every other feature kept): a grammatical original beside an ungrammatical
twin. One output per pair (a sentence with two agreeing verbs gives two), none for a sentence
without a pair.

* **The word.** UPOS in ``upos`` (VERB, AUX), ``Number=Sing`` or ``Number=Plur`` (flipped
  as ``direction`` allows), finite (``VerbForm=Fin``, or no VerbForm but a Person and no Case,
  as UD Turkish marks finite verbs), no ``Typo``. Its **subject** is its own ``nsubj`` (any subtype) dependent, or for an ``aux`` or
  ``cop`` its head's; exactly one, with the word's Number (and its Person when both have one).
* **The form.** The forms the treebanks (``reference``, ``lexicon``) attest for the lemma,
  UPOS and flipped FEATS, and of the same shape (a clitic such as ``'s`` is replaced by a
  clitic, ``'re``; a word by a word) and, for a word that follows its host inside a multiword
  token, attested after a host of the same ending (Turkish *yok+tu* takes *tular*, never the
  *ydılar* of *hazır+dı*): the most frequent, then the closest to the original (the longest
  common substring), then alphabetically. None attested and ``rules``: the form that the
  attested edit rule makes (:meth:`~synrob.perturb.paradigms.Paradigms.rule_forms`: the
  closest to the original, then the rule of the most lemmas). No form, no pair. A
  **syncretic** word gives no pair: its own form attested with the other Number (English
  ``walked``, ``I have``), or a new form equal to it, attested for the lemma with the original
  FEATS, or made by a rule the original FEATS also use
  (:meth:`~synrob.perturb.paradigms.Paradigms.marks`).
* **The output.** FORM (cased like the original), FEATS (Number flipped) and XPOS
  (:meth:`~synrob.perturb.paradigms.Paradigms.xpos`) of that word change; LEMMA, UPOS, HEAD,
  DEPREL, DEPS, MISC stay. A word inside a multiword token is changed only when the token is its
  words' forms joined (``don't`` = ``do`` + ``n't`` -> ``doesn't``); the token is rebuilt.
  ``# text`` is the original text with the word's span replaced. ``# synrob.agreement`` holds
  the pair as JSON (1-based integer word IDs)::

    {"target": 5, "subject": 3, "feature": "Number", "from": "Sing", "to": "Plur",
     "form_from": "is", "form_to": "are", "via": "attested"}

Nothing is random: every choice is by frequency, then alphabetical.
"""

from __future__ import annotations

import random
import warnings
from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from ..base import Param, Perturbation, Perturber
from ..corpus import Sentence, Word
from ..errors import ParameterError, SynrobWarning
from ..feats import feats_value, format_feats, parse_feats
from ..morphology import match_case
from ..paradigms import Paradigms, closeness, words_with_hosts

__all__ = ["Agreement", "AgreementWarning", "PERTURBERS", "FLIP", "NOTES"]

#: The Number values flipped, each into the other.
FLIP = {"Sing": "Plur", "Plur": "Sing"}
#: Why a sentence has no pair, by how far its best candidate got (the note is the last one).
NOTES = (
    "no finite verb or auxiliary with Number",
    "no agreeing word with exactly one subject",
    "no subject with the verb's Number (and Person)",
    "no attested form of the lemma with the other Number",
    "the other Number's form is the same (syncretism)",
    "the word is in a multiword token that is not its words' forms joined",
)
_NO_WORD, _NO_SUBJECT, _DISAGREE, _NO_FORM, _SYNCRETIC, _TOKEN = range(len(NOTES))


class AgreementWarning(SynrobWarning):
    """The treebanks lack the features agreement pairs need: no pairs will come."""


@dataclass(frozen=True)
class _Pair:
    target: Word
    subject: Word
    feats: dict[str, str]  # the flipped FEATS
    form: str  # cased like the original
    xpos: str
    via: str  # "attested" or "rule"


def finite_number(upos: str, feats: str, allowed: frozenset[str]) -> dict[str, str] | None:
    """The FEATS (as a dict) of a word that may carry agreement, else None: UPOS in
    ``allowed``, ``Number=Sing|Plur``, finite (``VerbForm=Fin``, or no VerbForm but a Person
    and no Case), no ``Typo``."""
    if upos not in allowed or "Number=" not in feats:
        return None
    parsed = parse_feats(feats, strict=False)
    verbform = parsed.get("VerbForm")
    finite = verbform == "Fin" or (verbform is None and "Person" in parsed
                                   and "Case" not in parsed)
    if not finite or parsed.get("Number") not in FLIP or "Typo" in parsed:
        return None
    return parsed


def _is_subject(deprel: str) -> bool:
    return deprel.split(":", 1)[0] == "nsubj"


def subjects(word: Word, children: dict[int, list[Word]]) -> list[Word]:
    """The word's ``nsubj`` dependents, or for an ``aux``/``cop`` its head's."""
    own = [c for c in children.get(word.id, ()) if _is_subject(c.deprel)]
    if own or word.deprel.split(":", 1)[0] not in ("aux", "cop"):
        return own
    return [c for c in children.get(word.head, ()) if _is_subject(c.deprel)]


def _agrees(feats: dict[str, str], subject: Word) -> bool:
    if subject.feats == "_":
        return False
    subj = subject.feats_dict
    if subj.get("Number") != feats["Number"]:
        return False
    return "Person" not in subj or "Person" not in feats or subj["Person"] == feats["Person"]


def _shape(form: str) -> bool:
    """Whether a form starts with a letter (a word) rather than a mark (a clitic: ``'s``)."""
    return form[:1].isalpha()


def _read(specs: list[str], upos: frozenset[str], min_lemmas: int) -> tuple[Paradigms, int, int]:
    """The treebanks' paradigms of ``upos``, their finite words with Number, and their
    subjects with Number."""
    from ..data import resolve_input

    paradigms = Paradigms(min_lemmas)
    finite = subjects_ = 0
    paths = [p for spec in specs for p in resolve_input(spec)]
    for cols, host in words_with_hosts(paths):
        if cols[3] in upos:
            paradigms.add(cols[1], cols[2], cols[3], cols[4], cols[5], host)
            finite += finite_number(cols[3], cols[5], upos) is not None
        subjects_ += "Number=" in cols[5] and _is_subject(cols[7])
    return paradigms, finite, subjects_


class Agreement(Perturber):
    """One output per agreeing finite verb: the same lemma with the other Number."""

    name = "agreement"
    version = "1.0"
    summary = ("subject-verb agreement minimal pairs: a finite verb or auxiliary in the same "
               "lemma's attested form of the other Number, one output per pair; tree unchanged")
    paper = ("Jumelet, Weissweiler & Bisazza 2025, MultiBLiMP 1.0: A Massively Multilingual "
             "Benchmark of Linguistic Minimal Pairs (agreement pairs from UD); Linzen et al. "
             "2016 (TACL)")
    languages = ("*",)
    language_note = ("any UD treebank whose finite verbs and subjects carry Number: the forms "
                     "come from its own words")
    several_outputs = True
    params = (
        Param("reference", str, None, "comma-separated CoNLL-U files (or ud:/sample: specs) "
              "whose forms are attested; synrob perturb defaults it to its inputs"),
        Param("lexicon", str, "", "more treebanks whose forms are attested too "
              "(comma-separated, e.g. ud:en_ewt:train)"),
        Param("rules", bool, True, "make an unattested form with the edit rule the treebanks' "
              "other lemmas pair with the word's own"),
        Param("min_lemmas", int, 2, "a rule is used when at least this many other lemmas "
              "attest it"),
        Param("upos", str, "VERB,AUX", "comma-separated UPOS of the words that may carry "
              "agreement"),
        Param("direction", str, "both", "which flips are made: both, Sing to Plur only, or "
              "Plur to Sing only", choices=("both", "to_plur", "to_sing")),
    )

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        if self.options["min_lemmas"] < 1:
            raise ParameterError("perturber 'agreement': min_lemmas must be >= 1")
        self._upos = frozenset(u.strip() for u in self.options["upos"].split(",") if u.strip())
        if not self._upos:
            raise ParameterError("perturber 'agreement': upos names no UPOS")
        if not self._specs():
            raise ParameterError(
                "perturber 'agreement' takes its forms from treebanks: give -p reference=FILES "
                "(synrob perturb sets it to its input files) or -p lexicon=FILES")
        self._to = {"both": ("Sing", "Plur"), "to_plur": ("Plur",),
                    "to_sing": ("Sing",)}[self.options["direction"]]
        self._paradigms: Paradigms | None = None

    def _specs(self) -> list[str]:
        opts = self.options
        joined = ",".join(str(opts[k]) for k in ("reference", "lexicon") if opts[k])
        return [s.strip() for s in joined.split(",") if s.strip()]

    def setup(self) -> None:
        """Read the attested forms of ``reference`` and ``lexicon``; warn when the treebanks
        mark Number on no finite verb or on no subject."""
        paradigms, finite, subj = _read(self._specs(), self._upos, self.options["min_lemmas"])
        self._paradigms = paradigms
        names = ", ".join(self._specs())
        if not finite or not subj:
            what = "finite verb or auxiliary" if not finite else "subject (nsubj)"
            warnings.warn(f"perturber 'agreement': {names} mark Number on no {what}: no "
                          "agreement pairs can be made", AgreementWarning, stacklevel=2)
        self._ready = True

    @property
    def paradigms(self) -> Paradigms:
        self.ensure_setup()
        assert self._paradigms is not None
        return self._paradigms

    # ------------------------------------------------------------------ one word
    def _form(self, word: Word, feats: dict[str, str], flipped: dict[str, str],
              host: str | None) -> tuple[str, str] | int:
        """``(lower-cased form, via)`` of the word with ``flipped`` FEATS, or a note index
        (``host``: the word before it in its multiword token)."""
        par = self.paradigms
        source, to, low = format_feats(feats), format_feats(flipped), word.form.lower()
        if low in par.forms(word.lemma, word.upos, to):
            return _SYNCRETIC
        attested = par.forms(word.lemma, word.upos, to, after=host)
        fits = sorted((f for f in attested if _shape(f) == _shape(low)),
                      key=lambda f: (-attested[f], -closeness(f, low), f))
        if fits:
            form, via = fits[0], "attested"
        elif self.options["rules"]:
            made = [f for f, _, _ in par.rule_forms(word.lemma, word.upos, source, low, to)
                    if _shape(f) == _shape(low)]
            if not made:
                return _NO_FORM
            form, via = made[0], "rule"
        else:
            return _NO_FORM
        if (form == low or form in par.forms(word.lemma, word.upos, source)
                or not par.marks(word.lemma, word.upos, form, source)):
            return _SYNCRETIC
        return form, via

    def _pair(self, word: Word, children: dict[int, list[Word]], host: str | None
              ) -> _Pair | int:
        """The pair made by flipping ``word`` (``host``: the word before it in its multiword
        token, if it is not the token's first), or the index of the note saying why not."""
        feats = finite_number(word.upos, word.feats, self._upos)
        if feats is None or FLIP[feats["Number"]] not in self._to:
            return _NO_WORD
        subj = subjects(word, children)
        if len(subj) != 1:
            return _NO_SUBJECT
        if not _agrees(feats, subj[0]):
            return _DISAGREE
        flipped = {**feats, "Number": FLIP[feats["Number"]]}
        made = self._form(word, feats, flipped, host)
        if isinstance(made, int):
            return made
        form, via = made
        xpos = self.paradigms.xpos(word.lemma, word.upos, format_feats(flipped), form, word.xpos)
        return _Pair(word, subj[0], flipped, match_case(word.form, form), xpos, via)

    # ------------------------------------------------------------------ one sentence
    def perturb(self, sentence: Sentence, rng: random.Random) -> Perturbation:
        """The first pair of the sentence (see :meth:`perturb_all`)."""
        return self.perturb_all(sentence, rng)[0]

    def perturb_all(self, sentence: Sentence, rng: random.Random) -> list[Perturbation]:
        """One perturbation per pair, in word order; without a pair, one unchanged sentence
        with the note of the candidate that got furthest."""
        self.ensure_setup()
        words = sentence.words()
        children: dict[int, list[Word]] = defaultdict(list)
        for w in words:
            children[w.head].append(w)
        hosts = {i: words[i - 2].form for a, b, _ in sentence.ranges() for i in range(a + 1, b + 1)}
        out: list[Perturbation] = []
        furthest = _NO_WORD
        for word in words:
            pair = self._pair(word, children, hosts.get(word.id))
            made = respell(sentence, pair) if isinstance(pair, _Pair) else None
            if made is None:
                furthest = max(furthest, pair if isinstance(pair, int) else _TOKEN)
                continue
            out.append(Perturbation(made, made.text, (word.id,),
                                    comments={"synrob.agreement": _comment(pair)}))
        return out or [Perturbation(sentence, sentence.text, (), note=NOTES[furthest])]


def _comment(pair: _Pair) -> dict[str, Any]:
    return {"target": pair.target.id, "subject": pair.subject.id, "feature": "Number",
            "from": pair.target.feats_dict["Number"], "to": pair.feats["Number"],
            "form_from": pair.target.form, "form_to": pair.form, "via": pair.via}


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
