"""Lemma-to-form edit rules learned from a treebank, as lemmatizers such as UDPipe learn them.

A word with lemma ``L`` and form ``F`` (both lower-cased) shares a longest common substring
``S`` with its lemma: ``L = lp + S + ls`` and ``F = fp + S + fs``. The word's
:class:`EditRule` is ``(lp, fp, ls, fs)``: strip prefix ``lp`` and suffix ``ls`` from a lemma,
put ``fp`` before and ``fs`` after. Turkish *kitap -> kitabı* is ``('', '', 'p', 'bı')``,
German *machen -> gemacht* ``('', 'ge', 'en', 't')``. A word whose form shares nothing with its
lemma (suppletion: *ser -> fue*) has no rule.

:class:`RuleBook` collects, per (UPOS, FEATS) class, which rules occur and with how many
distinct lemmas: a rule is *attested* for a class when at least ``min_lemmas`` lemmas use it,
so a one-off irregular edit is never applied to a pseudo-lemma.
"""

from __future__ import annotations

import functools
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from difflib import SequenceMatcher

__all__ = ["EditRule", "edit_rule", "RuleBook"]


@dataclass(frozen=True, slots=True)
class EditRule:
    """Strip ``lemma_prefix``/``lemma_suffix`` from a lemma, add ``form_prefix``/``form_suffix``."""

    lemma_prefix: str
    form_prefix: str
    lemma_suffix: str
    form_suffix: str

    def applies(self, lemma: str, min_stem: int = 2) -> bool:
        """Whether ``lemma`` has this rule's prefix and suffix around a stem of ``min_stem``+."""
        return (lemma.startswith(self.lemma_prefix) and lemma.endswith(self.lemma_suffix)
                and len(lemma) - len(self.lemma_prefix) - len(self.lemma_suffix) >= min_stem)

    def apply(self, lemma: str) -> str:
        """The form of ``lemma`` under this rule (check :meth:`applies` first)."""
        stem = lemma[len(self.lemma_prefix):len(lemma) - len(self.lemma_suffix)]
        return self.form_prefix + stem + self.form_suffix

    def __str__(self) -> str:
        return f"{self.lemma_prefix}~{self.lemma_suffix} -> {self.form_prefix}~{self.form_suffix}"


@functools.lru_cache(maxsize=1 << 16)
def edit_rule(lemma: str, form: str) -> EditRule | None:
    """The rule that turns ``lemma`` into ``form`` (lower-cased), None when they share nothing.
    Memoised: the rule book and the perturber ask for the same words' rules."""
    low_l, low_f = lemma.lower(), form.lower()
    m = SequenceMatcher(None, low_l, low_f, autojunk=False).find_longest_match(
        0, len(low_l), 0, len(low_f))
    if m.size == 0:
        return None
    return EditRule(low_l[:m.a], low_f[:m.b], low_l[m.a + m.size:], low_f[m.b + m.size:])


class RuleBook:
    """Edit rules per (UPOS, FEATS) class, each with the lemmas it was seen with."""

    def __init__(self, min_lemmas: int = 2) -> None:
        self.min_lemmas = min_lemmas
        self._lemmas: dict[tuple[str, str], dict[EditRule, set[str]]] = defaultdict(
            lambda: defaultdict(set))

    def add(self, upos: str, feats: str, lemma: str, form: str) -> EditRule | None:
        """Record one word; returns its rule (None when it has none)."""
        rule = edit_rule(lemma, form)
        if rule is not None:
            self._lemmas[(upos, feats)][rule].add(lemma.lower())
        return rule

    def add_all(self, words: Iterable[tuple[str, str, str, str]]) -> RuleBook:
        """Record ``(upos, feats, lemma, form)`` tuples."""
        for upos, feats, lemma, form in words:
            self.add(upos, feats, lemma, form)
        return self

    def attested(self, upos: str, feats: str, rule: EditRule) -> bool:
        """Whether at least ``min_lemmas`` lemmas of class (upos, feats) use ``rule``."""
        return len(self._lemmas.get((upos, feats), {}).get(rule, ())) >= self.min_lemmas

    def attested_rules(self, upos: str) -> set[EditRule]:
        """Every rule attested for some (``upos``, FEATS) class."""
        return {rule for (u, _), by_rule in self._lemmas.items() if u == upos
                for rule, lemmas in by_rule.items() if len(lemmas) >= self.min_lemmas}

    def classes(self) -> int:
        """Number of (UPOS, FEATS) classes seen."""
        return len(self._lemmas)

    def rules(self) -> int:
        """Number of attested (class, rule) pairs."""
        return sum(1 for by_rule in self._lemmas.values() for lemmas in by_rule.values()
                   if len(lemmas) >= self.min_lemmas)
