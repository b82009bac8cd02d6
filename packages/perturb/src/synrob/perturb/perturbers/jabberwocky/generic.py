"""Jabberwocky for any language with UD morphology: the rules and sounds of its own treebank.

Used by :class:`~synrob.perturb.perturbers.jabberwocky.perturber.Jabberwocky` for every language but
English. A content word (NOUN, VERB, ADJ, ADV) with an alphabetic lemma and form is replaced when
the edit that turns its lemma into its form (:func:`~synrob.perturb.lexicon.edits.edit_rule`) is
attested for its (UPOS, FEATS) class in the reference treebanks with at least ``min_lemmas``
lemmas. Its lemma gets a pseudo-lemma from the UPOS's pool that

* fits the real lemma's shape (:func:`~synrob.perturb.lexicon.generic_pseudowords.shape_fits`: same last
  letter and last vowel, no vowel the lemma lacks), so harmony- and consonant-conditioned
  suffixes stay right,
* takes every rule of that lemma's words in the sentence (its prefix and suffix are there), and
* yields forms that are not real words, not another pseudo-lemma's form in the sentence:
  no form, as lower-cased and as written, nor the pseudo-lemma is in the treebanks' vocabulary,
  known to ``wordfreq`` or (when the language has one installed) accepted by its Hunspell
  dictionary (:class:`~synrob.perturb.lexicon.hunspell.HunspellWords`).

The same lemma (and UPOS) gets the same pseudo-lemma within a sentence, different lemmas
different ones. The new FORM is the rule applied to the pseudo-lemma, cased like the original;
LEMMA becomes the pseudo-lemma; UPOS, XPOS, FEATS, HEAD and DEPREL are kept.
"""

from __future__ import annotations

import random
from collections import defaultdict
from dataclasses import dataclass

from ...base import Perturbation
from ...corpus import Sentence, Word
from ...lexicon.edits import EditRule, RuleBook, edit_rule
from ...lexicon.generic_pseudowords import (
    CONTENT_UPOS,
    RealWords,
    ShapeIndex,
    TreebankLexicon,
    content_word,
    load_pools,
)
from ...lexicon.hunspell import HunspellWords
from ...lexicon.morphology import match_case

__all__ = ["GenericJabberwocky", "NO_RULE", "NO_FIT"]

NO_RULE = "no content word whose lemma-to-form rule is attested for its UPOS and FEATS"
NO_FIT = "no pseudo-lemma fits the shape and rules of any eligible word"
#: Candidate pseudo-lemmas tried per real lemma before the lemma is left alone.
_TRIES = 40


@dataclass(frozen=True)
class _Target:
    word: Word
    rule: EditRule


class GenericJabberwocky:
    """The generic generator for language ``lang``, learned from ``specs`` (treebank files)."""

    def __init__(self, lang: str, specs: list[str], *, seed: int, size: int, order: int,
                 min_lemmas: int, dictionary: HunspellWords | None = None) -> None:
        lexicon = TreebankLexicon.from_specs(specs)
        self.lang = lang
        self.real = RealWords(lang, lexicon.vocabulary)
        self.dictionary = dictionary
        self.rules: RuleBook = lexicon.rulebook(min_lemmas)
        pools = load_pools(lang, lexicon, self.real, self.rules, seed=seed, size=size,
                           order=order)
        self.pools = {upos: pools[upos] for upos in CONTENT_UPOS}
        self.index = {upos: ShapeIndex(pool) for upos, pool in pools.items()}

    # ------------------------------------------------------------------ selection
    def target(self, word: Word) -> _Target | None:
        """The word with its attested rule, or None when it is not replaced."""
        if not content_word(word.upos, word.lemma, word.form):
            return None
        rule = edit_rule(word.lemma, word.form)
        if rule is None or not self.rules.attested(word.upos, word.feats, rule):
            return None
        return _Target(word, rule)

    def _clashes(self, pseudo: str, made: dict[EditRule, str], group: list[_Target],
                 forms: dict[str, str]) -> bool:
        """Whether a candidate makes a real word or another pseudo-lemma's form."""
        if any(f in self.real or forms.get(f, pseudo) != pseudo for f in made.values()):
            return True
        if self.dictionary is None:
            return False
        written = {pseudo, *made.values(), *(match_case(t.word.form, made[t.rule]) for t in group)}
        return any(self.dictionary.accepts(w) for w in sorted(written))

    def _choose(self, lemma: str, upos: str, group: list[_Target], rng: random.Random,
                used: set[str], forms: dict[str, str]) -> tuple[str, dict[EditRule, str]] | None:
        """A pseudo-lemma for ``lemma`` (the words ``group``) and its form under each rule, or
        None."""
        rules = {t.rule for t in group}
        # the rules' affixes are all affixes of one lemma, so the longest ones imply the others
        suffix = max((r.lemma_suffix for r in rules), key=len)
        prefix = max((r.lemma_prefix for r in rules), key=len)
        shortest = 2 + max(len(r.lemma_prefix) + len(r.lemma_suffix) for r in rules)
        fitting = [p for p in self.index[upos].fitting(lemma)
                   if p.endswith(suffix) and p.startswith(prefix) and len(p) >= shortest
                   and p not in used]
        for _ in range(min(_TRIES, len(fitting))):
            pseudo = fitting.pop(rng.randrange(len(fitting)))
            made = {r: r.apply(pseudo) for r in rules}
            if not self._clashes(pseudo, made, group, forms):
                return pseudo, made
        return None

    # ------------------------------------------------------------------ perturbation
    def perturb(self, sentence: Sentence, rng: random.Random, rate: float) -> Perturbation:
        targets = [t for w in sentence.words() if (t := self.target(w)) is not None]
        if not targets:
            return Perturbation(sentence, sentence.text, (), note=NO_RULE)
        if rate < 1.0:
            keep = set(rng.sample(range(len(targets)), round(rate * len(targets))))
            targets = [t for i, t in enumerate(targets) if i in keep]
            if not targets:
                return Perturbation(sentence, sentence.text, (), note=f"rate {rate} selects no word")
        groups: dict[tuple[str, str], list[_Target]] = defaultdict(list)
        for t in targets:
            groups[(t.word.lemma.lower(), t.word.upos)].append(t)
        used: set[str] = set()
        forms: dict[str, str] = {}  # every form made so far -> its pseudo-lemma
        changes: dict[int, dict[str, str]] = {}
        for (lemma, upos), group in groups.items():
            chosen = self._choose(lemma, upos, group, rng, used, forms)
            if chosen is None:
                continue
            pseudo, made = chosen
            used.add(pseudo)
            for t in group:
                forms[made[t.rule]] = pseudo
                changes[t.word.id] = {"form": match_case(t.word.form, made[t.rule]),
                                      "lemma": pseudo}
        if not changes:
            return Perturbation(sentence, sentence.text, (), note=NO_FIT)
        new = sentence.replace_words(changes)
        return Perturbation(new, new.text, tuple(sorted(changes)))
