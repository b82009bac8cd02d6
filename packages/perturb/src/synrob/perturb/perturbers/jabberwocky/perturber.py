"""Jabberwocky: content words replaced by pseudowords (Hall Maudslay & Cotterell 2021, §3).

English (``lang=en``) uses the paper's generator, described here; every other language uses the
generic generator learned from the language's own treebank
(:mod:`~synrob.perturb.perturbers.jabberwocky.generic`, docs/languages.md).

Eligible words are NOUN, VERB, ADJ and ADV whose FEATS is one of the paper's regular classes
(see :func:`form_class`). Each is replaced by a pseudo-lemma from a pre-generated, seeded pool
(:func:`synrob.perturb.lexicon.pseudowords.load_lexicon`: pronounceable, none of its forms an English
word), inflected by regular English morphology (:mod:`synrob.perturb.lexicon.morphology`) to the
original FEATS and cased like the original. Within a sentence the same real lemma (and UPOS)
gets the same pseudo-lemma and different lemmas get different ones. Only FORM and LEMMA change
(LEMMA := pseudo-lemma); UPOS, XPOS, FEATS, HEAD and DEPREL stay as they were.
"""

from __future__ import annotations

import random
import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ...base import Param, Perturbation, Perturber
from ...corpus import Sentence, Word
from ...errors import ParameterError, param
from ...lexicon.generic_pseudowords import sibling_splits
from ...lexicon.hunspell import (
    HunspellWarning,
    HunspellWords,
    find_dictionary,
    missing_dictionary_message,
)
from ...lexicon.morphology import Form, inflect, match_case
from .generic import GenericJabberwocky

__all__ = ["Jabberwocky", "PERTURBERS", "form_class"]

#: Parameters only the generic (non-English) generator reads: not recorded for English.
_GENERIC_ONLY = ("reference", "lexicon", "order", "min_lemmas")

_PRES_FIN = {"Mood": "Ind", "Tense": "Pres", "VerbForm": "Fin"}
_DEGREE = {"Cmp": "cmp", "Sup": "sup", "Pos": "base"}


def form_class(upos: str, feats: Mapping[str, str], gerunds: bool = False) -> Form | None:
    """The regular form a word takes (``base``, ``plural``, ``3sg``, ``ing``, ``cmp``, ``sup``).

    None when the word is outside the paper's classes. Classes: NOUN ``Number=Sing`` (base) or
    ``Number=Plur`` (plural); VERB ``VerbForm=Inf`` (base), ``VerbForm=Fin|Mood=Ind|Tense=Pres``
    with ``Number=Sing|Person=3`` (3sg) or without it (base; UD >= 2.8 EWT adds the other
    ``Number``/``Person`` values, which are accepted), ``VerbForm=Part|Tense=Pres`` (ing; with
    ``gerunds`` also ``VerbForm=Ger``, which later EWT releases use for gerunds); ADJ/ADV
    ``Degree=Cmp`` (cmp), ``Degree=Sup`` (sup), or unmarked: no FEATS or ``Degree=Pos`` (base).
    """
    if upos == "NOUN":
        if len(feats) == 1:
            return {"Sing": "base", "Plur": "plural"}.get(feats.get("Number", ""))  # type: ignore[return-value]
        return None
    if upos == "VERB":
        if feats == {"VerbForm": "Inf"}:
            return "base"
        if feats == {"VerbForm": "Part", "Tense": "Pres"} or (gerunds and feats == {"VerbForm": "Ger"}):
            return "ing"
        core = {k: v for k, v in feats.items() if k not in ("Number", "Person")}
        if core == _PRES_FIN:
            number, person = feats.get("Number"), feats.get("Person")
            if number == "Sing" and person == "3":
                return "3sg"
            if (number is None) == (person is None):
                return "base"
        return None
    if upos in ("ADJ", "ADV"):
        if not feats:
            return "base"
        if len(feats) == 1 and "Degree" in feats:
            return _DEGREE.get(feats["Degree"])  # type: ignore[return-value]
    return None


class Jabberwocky(Perturber):
    """Replace regularly inflected content words by inflected pseudowords."""

    name = "jabberwocky"
    #: 1.1: any language (generic generator); English output unchanged for the same seed.
    #: 1.2: not English: the Hunspell dictionary rejects pseudowords, a UD split's sibling
    #: splits join the lexicon (English output unchanged)
    version = "1.2"
    summary = (
        "replace NOUN/VERB/ADJ/ADV by pronounceable pseudowords inflected like the originals "
        "(English: the paper's regular classes; other languages: the treebank's own rules); "
        "tags and tree unchanged"
    )
    languages = ("*",)
    language_note = ("English: the paper's generator; any other language: learned from its UD "
                     "treebank's lemmas and FEATS")
    paper = (
        "Hall Maudslay & Cotterell 2021, Do Syntactic Probes Probe Syntax? Experiments with "
        "Jabberwocky Probing (NAACL), section 3"
    )
    params = (
        Param("rate", float, 1.0, "share of the eligible words replaced (rounded; 1.0 = all)"),
        Param("gerunds", bool, False, "also replace VERB with VerbForm=Ger (not a class of the paper)"),
        Param("lexicon_seed", int, 0, "seed of the pseudoword pool (not of the per-sentence choices)"),
        Param("lexicon_size", int, 8000, "pseudo-lemmas per POS in the pool"),
        Param("reference", str, None, "not English: comma-separated CoNLL-U files (or ud:/sample: "
              "specs) the generator learns from; synrob perturb defaults it to its inputs"),
        Param("lexicon", str, "", "not English: more treebanks to learn sounds, rules and the "
              "real-word vocabulary from (comma-separated)"),
        Param("order", int, 4, "not English: order of the character n-gram model of lemmas"),
        Param("min_lemmas", int, 2, "not English: a lemma-to-form rule is applied only when at "
              "least this many lemmas of the (UPOS, FEATS) class use it"),
    )

    def __init__(self, **params: object) -> None:
        super().__init__(**params)
        if not 0.0 <= self.options["rate"] <= 1.0:
            raise ParameterError(f"perturber 'jabberwocky': rate must be in [0, 1], got {self.options['rate']}")
        if self.options["lexicon_size"] < 100:
            raise ParameterError("perturber 'jabberwocky': lexicon_size must be >= 100")
        if self.options["order"] < 2 or self.options["min_lemmas"] < 1:
            raise ParameterError("perturber 'jabberwocky': order must be >= 2 and min_lemmas >= 1")
        if self.lang != "en" and not self.options["reference"]:
            raise ParameterError(
                f"perturber 'jabberwocky' for {self.lang} learns from treebanks: give "
                f"{param('reference=FILES')} (synrob perturb and perturb() set it to their "
                "input files)")
        self._pools: dict[str, tuple[str, ...]] = {}
        self._generic: GenericJabberwocky | None = None
        self._siblings: tuple[Path, ...] | None = None
        self._recorded: dict[str, object] | None = None
        self._dictionary = None if self.lang == "en" else find_dictionary(self.lang)
        if self.lang != "en" and self._dictionary is None:
            warnings.warn(missing_dictionary_message(self.lang), HunspellWarning, stacklevel=1)

    @property
    def recorded_options(self) -> dict[str, object]:
        """English records the paper generator's options only (the output is unchanged by the
        generic generator's); other languages all but ``gerunds`` (an English class), plus what
        else the output depends on: ``hunspell`` (the dictionary's name, the SHA-256 of its
        files and the reader, or None without one) and ``siblings`` (the other splits of the
        reference UD splits, which join the lexicon)."""
        if self.lang == "en":
            return {k: v for k, v in self.options.items() if k not in _GENERIC_ONLY}
        if self._recorded is None:
            hunspell = None if self._dictionary is None else self._dictionary.identity()
            self._recorded = {**{k: v for k, v in self.options.items() if k != "gerunds"},
                              "hunspell": hunspell,
                              "siblings": [str(p) for p in self._sibling_splits()]}
        return self._recorded

    def _reference_specs(self) -> list[str]:
        opts = self.options
        return [s.strip() for s in str(opts["reference"]).split(",") if s.strip()]

    def _sibling_splits(self) -> tuple[Path, ...]:
        if self._siblings is None:
            self._siblings = sibling_splits(self._reference_specs())
        return self._siblings

    def _setup_generic(self) -> None:
        """Learn the generic generator from the reference treebanks, their sibling splits and
        ``lexicon``; pseudowords checked against the language's Hunspell dictionary if any."""
        opts: dict[str, Any] = self.options
        lexicon = [s.strip() for s in str(opts["lexicon"]).split(",") if s.strip()]
        specs = [*self._reference_specs(), *map(str, self._sibling_splits()), *lexicon]
        words = None if self._dictionary is None else HunspellWords(self._dictionary)
        self._generic = GenericJabberwocky(
            self.lang, specs, seed=opts["lexicon_seed"], size=opts["lexicon_size"],
            order=opts["order"], min_lemmas=opts["min_lemmas"], dictionary=words)

    def setup(self) -> None:
        """Load (or generate once and cache on disk) the pseudoword pool; for a language other
        than English, learn the generic generator from the reference treebanks."""
        if self.lang != "en":
            self._setup_generic()
            self._ready = True
            return
        from ...lexicon.pseudowords import load_lexicon

        self._pools = load_lexicon(self.options["lexicon_seed"], self.options["lexicon_size"])
        self._ready = True

    def eligible(self, word: Word) -> Form | None:
        """The form ``word`` would take, or None when it is not replaced."""
        return form_class(word.upos, word.feats_dict, self.options["gerunds"])

    def perturb(self, sentence: Sentence, rng: random.Random) -> Perturbation:
        self.ensure_setup()
        if self._generic is not None:
            return self._generic.perturb(sentence, rng, self.options["rate"])
        targets = [(w, f) for w in sentence.words() if (f := self.eligible(w)) is not None]
        if not targets:
            return Perturbation(sentence, sentence.text, (), note="no word of a regular inflection class")
        rate = self.options["rate"]
        if rate < 1.0:
            k = round(rate * len(targets))
            keep = set(rng.sample(range(len(targets)), k))
            targets = [t for i, t in enumerate(targets) if i in keep]
            if not targets:
                return Perturbation(sentence, sentence.text, (), note=f"rate {rate} selects no word")
        lemma_of: dict[tuple[str, str], str] = {}
        used: set[str] = set()
        changes: dict[int, dict[str, str]] = {}
        for word, form in targets:
            key = (word.lemma.lower(), word.upos)
            pseudo = lemma_of.get(key)
            if pseudo is None:
                pool = self._pools[word.upos]
                pseudo = pool[rng.randrange(len(pool))]
                while pseudo in used:
                    pseudo = pool[rng.randrange(len(pool))]
                used.add(pseudo)
                lemma_of[key] = pseudo
            changes[word.id] = {"form": match_case(word.form, inflect(pseudo, form)), "lemma": pseudo}
        new = sentence.replace_words(changes)
        return Perturbation(new, new.text, tuple(changes))


PERTURBERS = [Jabberwocky]
