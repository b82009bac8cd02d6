"""The inflected forms a treebank attests for its lemmas, and the edit rules between two cells.

A :class:`Paradigms` reads CoNLL-U words (LEMMA, UPOS, FEATS, FORM, XPOS) and answers two
questions about a lemma's *cell* (its UPOS and FEATS):

* :meth:`Paradigms.forms`: the forms attested for the cell, with how often each was seen
  (forms lower-cased; FEATS compared in canonical order, so ``Number=Sing|Mood=Ind`` and
  ``Mood=Ind|Number=Sing`` are one cell);
* :meth:`Paradigms.rule_forms`: when the lemma's cell is not attested, the forms that
  :class:`~synrob.perturb.lexicon.edits.EditRule` s make of it - the rules that the treebank's *other*
  lemmas use in the target cell, among the lemmas whose form in the word's own cell is made by
  the word's own rule and ends like the word (the same last letter and last vowel).
  ``reconciles`` (rule ``~ -> ~s`` in the 3rd singular present) gives ``reconcile`` because
  the lemmas whose 3rd singular is ``~s`` make their plural with ``~``; Turkish ``geldi``
  (``~ -> ~di``) gives ``geldiler``, ``yaptı`` (``~ -> ~tı``) ``yaptılar`` and ``gerek``
  ``gerekler`` (not ``-lar``: the partners end in *e*-*k*), so vowel harmony and consonant
  assimilation are taken from the lemmas that behave like the word. A rule counts only when at
  least ``min_lemmas`` such lemmas use it and the generic Jabberwocky's
  :class:`~synrob.perturb.lexicon.edits.RuleBook` attests it for the target cell.

:meth:`Paradigms.xpos` gives the XPOS a form takes in a cell: the most frequent XPOS attested
with that form in that cell (else in the cell), so a treebank whose XPOS encodes number (EWT
``VBZ``/``VBP``, Czech positional tags) gets the other tag and one whose XPOS does not keeps it.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from difflib import SequenceMatcher
from pathlib import Path

from ..io.data import resolve_input
from ..io.feats import format_feats, parse_feats
from .charmodel import last_vowel
from .edits import EditRule, RuleBook, edit_rule

__all__ = ["Paradigms", "canonical_feats", "compatible", "values", "sentences_with_hosts",
           "words_with_hosts", "ending", "closeness", "LOOSE"]


#: Features that may be left out on either side of :func:`compatible`: Animacy subdivides the
#: masculine Gender (Czech *byli* ``Animacy=Anim|Gender=Masc``), so a cell of another Gender
#: has none.
LOOSE = frozenset({"Animacy"})


def values(value: str) -> frozenset[str]:
    """The values of a (possibly multi-valued) feature: ``Fem,Neut`` -> {Fem, Neut}."""
    return frozenset(value.split(","))


def compatible(cell: Mapping[str, str], want: Mapping[str, str]) -> bool:
    """Whether a cell's FEATS (as a dict) can be a word with FEATS ``want``: the same feature
    names (but :data:`LOOSE` ones), and each of ``want``'s values among the cell's (a
    multi-valued cell holds several readings: Czech *napsala* ``Gender=Fem,Neut|Number=Plur,
    Sing`` holds *Fem Sing* and *Neut Plur*, but which value goes with which is not written:
    such a cell, with two multi-valued features, is compatible with nothing; one with a single
    multi-valued feature, ``Animacy=Inan|Gender=Fem,Masc|Number=Plur``, holds each value)."""
    if (cell.keys() ^ want.keys()) - LOOSE:
        return False
    if sum("," in v for k, v in cell.items() if k not in LOOSE) > 1:
        return False
    return all(values(want[k]) <= values(cell[k]) for k in cell.keys() & want.keys()
               if k not in LOOSE) and all(values(want[k]) & values(cell[k])
                                          for k in cell.keys() & want.keys() & LOOSE)


def canonical_feats(feats: str) -> str:
    """FEATS with its features in UD's order (by name, case-insensitively); ``_`` stays."""
    if feats in ("_", ""):
        return "_"
    return "|".join(sorted(feats.split("|"), key=lambda f: f.split("=", 1)[0].lower()))


def _is_int(text: str) -> bool:
    return text.isascii() and text.isdigit()


def words_with_hosts(paths: Iterable[Path]) -> Iterator[tuple[list[str], str | None]]:
    """The 10 columns of every syntactic-word line (an integer ID) of some CoNLL-U files, with
    its *host*: for a word of a multiword token other than its first, the FORM of the word
    before it (``it`` for the ``'s`` of ``it's``, Turkish ``yok`` for the ``tu`` of
    ``yoktu``), else None."""
    for sentence in sentences_with_hosts(paths):
        yield from sentence


def sentences_with_hosts(paths: Iterable[Path]) -> Iterator[list[tuple[list[str], str | None]]]:
    """The words of :func:`words_with_hosts`, one list per sentence (a sentence without a
    word is not yielded)."""
    for path in paths:
        with path.open(encoding="utf-8", errors="replace") as fh:
            first = last = 0
            prev = ""
            words: list[tuple[list[str], str | None]] = []
            for line in fh:
                if not line.strip():
                    first = last = 0
                    if words:
                        yield words
                    words = []
                    continue
                cols = line.rstrip("\n").split("\t")
                if line[0] == "#" or len(cols) != 10:
                    continue
                a, dash, b = cols[0].partition("-")
                if dash and _is_int(a) and _is_int(b):
                    first, last = int(a), int(b)
                elif _is_int(cols[0]):
                    words.append((cols, prev if first < int(cols[0]) <= last else None))
                    prev = cols[1]
            if words:
                yield words


def ending(form: str) -> tuple[str, str]:
    """A form's last letter and last vowel: what a suffix's shape depends on (vowel harmony,
    consonant assimilation)."""
    return form[-1:], last_vowel(form)


def closeness(a: str, b: str) -> int:
    """The length of the longest common substring of two forms (lower-cased)."""
    a, b = a.lower(), b.lower()
    return SequenceMatcher(None, a, b, autojunk=False).find_longest_match(
        0, len(a), 0, len(b)).size


_Cell = tuple[str, str, str]  # (lemma, upos, canonical feats)
_Table = tuple[tuple[EditRule, frozenset[str]], ...]  # rules of a cell, each with its lemmas


class Paradigms:
    """Attested forms per (lemma, UPOS, FEATS) cell and the edit rules of each lemma."""

    def __init__(self, min_lemmas: int = 2) -> None:
        self.rules = RuleBook(min_lemmas)
        self._forms: dict[_Cell, Counter[str]] = defaultdict(Counter)
        self._form_xpos: dict[tuple[_Cell, str], Counter[str]] = defaultdict(Counter)
        self._hosts: dict[tuple[_Cell, str], Counter[tuple[str, str]]] = defaultdict(Counter)
        self._cell_xpos: dict[tuple[str, str], Counter[str]] = defaultdict(Counter)
        self._lemma_cells: dict[tuple[str, str], set[str]] = defaultdict(set)
        self._rules_of: dict[tuple[str, str], dict[str, set[EditRule]]] = defaultdict(
            lambda: defaultdict(set))
        self._lemmas_with: dict[tuple[str, str, EditRule], set[str]] = defaultdict(set)
        self._tables: dict[tuple[str, str, EditRule, str, tuple[str, str]], _Table] = {}
        self._cell_lemmas: dict[tuple[str, str], set[str]] = defaultdict(set)
        self._kept: dict[tuple[str, str, str, tuple[str, str]], tuple[int, int]] = {}
        self.words = 0

    @property
    def min_lemmas(self) -> int:
        return self.rules.min_lemmas

    @classmethod
    def from_specs(cls, specs: Sequence[str], upos: Iterable[str],
                   min_lemmas: int = 2) -> Paradigms:
        """Read the words of the given UPOS from every file of ``specs`` (paths, ``ud:``/
        ``sample:`` specs)."""
        keep = set(upos)
        out = cls(min_lemmas)
        paths = [p for spec in specs for p in resolve_input(spec)]
        for cols, host in words_with_hosts(paths):
            if cols[3] in keep:
                out.add(cols[1], cols[2], cols[3], cols[4], cols[5], host)
        return out

    def add(self, form: str, lemma: str, upos: str, xpos: str, feats: str,
            host: str | None = None) -> None:
        """Record one word (columns as in the file; ``host``: see :func:`words_with_hosts`).
        A word without a lemma is not recorded."""
        if lemma in ("_", "") or form in ("_", ""):
            return
        low_l, low_f, feats = lemma.lower(), form.lower(), canonical_feats(feats)
        cell = (low_l, upos, feats)
        self.words += 1
        self._forms[cell][low_f] += 1
        self._lemma_cells[(low_l, upos)].add(feats)
        self._form_xpos[(cell, low_f)][xpos] += 1
        if host:
            self._hosts[(cell, low_f)][ending(host.lower())] += 1
        self._cell_xpos[(upos, feats)][xpos] += 1
        self._cell_lemmas[(upos, feats)].add(low_l)
        if self._kept:
            self._kept.clear()
        rule = self.rules.add(upos, feats, low_l, low_f)
        if rule is not None:
            self._rules_of[(low_l, upos)][feats].add(rule)
            self._lemmas_with[(upos, feats, rule)].add(low_l)
        if self._tables:
            self._tables.clear()

    def cells(self) -> Iterator[tuple[str, str]]:
        """Every (UPOS, FEATS) cell seen, as ``(upos, canonical feats)``."""
        return iter(self._cell_xpos)

    def forms(self, lemma: str, upos: str, feats: str, after: str | None = None
              ) -> Counter[str]:
        """The lower-cased forms attested for the cell, with their counts; with ``after``
        (a host), only those attested after a host with the same :func:`ending` (a clitic's
        shape depends on its host's), with those counts."""
        cell = (lemma.lower(), upos, canonical_feats(feats))
        forms = self._forms.get(cell, Counter())
        if after is None:
            return forms
        end = ending(after.lower())
        return Counter({f: n for f in forms if (n := self._hosts[(cell, f)][end])})

    def cells_of(self, lemma: str, upos: str) -> list[str]:
        """The lemma's cells (canonical FEATS) seen with ``upos``, sorted."""
        return sorted(self._lemma_cells.get((lemma.lower(), upos), ()))

    def compatible_cells(self, lemma: str, upos: str, want: Mapping[str, str]) -> list[str]:
        """The lemma's cells that can be a word with FEATS ``want`` (:func:`compatible`), the
        exact cell first."""
        exact = canonical_feats(format_feats(want))
        found = [c for c in self.cells_of(lemma, upos)
                 if compatible(parse_feats(c, strict=False), want)]
        return sorted(found, key=lambda c: c != exact)

    def share(self, lemma: str, upos: str, feats: str, form: str) -> float:
        """The share of the cell's tokens spelled ``form`` (0 for a cell never seen)."""
        forms = self._forms.get((lemma.lower(), upos, canonical_feats(feats)))
        if not forms:
            return 0.0
        return forms[form.lower()] / sum(forms.values())

    def readings(self, lemma: str, upos: str, form: str, min_share: float) -> list[str]:
        """The lemma's cells of which ``form`` spells at least ``min_share`` of the tokens: the
        readings the treebanks attest for it (one stray token among many is not one)."""
        return [c for c in self.cells_of(lemma, upos)
                if self.share(lemma, upos, c, form) >= min_share and form.lower()
                in self._forms[(lemma.lower(), upos, c)]]

    def marks(self, lemma: str, upos: str, form: str, feats: str) -> bool:
        """Whether ``form`` is not made by a rule attested for cell ``feats``: a form that
        the rule book says the cell itself also makes (Turkish *başla* -> *başlamakta*, seen
        with ``Number=Plur`` but made by the same rule in the singular) does not mark the other
        value. A suppletive form (no rule: English *be* -> *are*) marks it."""
        rule = edit_rule(lemma.lower(), form.lower())
        return rule is None or not self.rules.attested(upos, canonical_feats(feats), rule)

    def rule_forms(self, lemma: str, upos: str, feats: str, form: str,
                   to_feats: str) -> list[tuple[str, EditRule, int]]:
        """Forms of ``lemma`` in cell ``to_feats`` made by attested rules, best first.

        Each is ``(form, rule, lemmas)``: ``lemmas`` other lemmas make their ``to_feats`` form
        with ``rule`` and their ``feats`` form with the rule that turns ``lemma`` into
        ``form``, that form ending like ``form`` (:func:`ending`); only rules with at least
        ``min_lemmas`` such lemmas, attested for the target cell, that apply to ``lemma``.
        Ordered by :func:`closeness` to ``form`` (a minimal pair changes as little as it can:
        Turkish *yazıyor* -> *yazıyorlar* before *yazmaktadırlar*), then by ``lemmas`` (most
        first), then by the rule.
        """
        low_l, low_f = lemma.lower(), form.lower()
        own = edit_rule(low_l, low_f)
        if own is None:
            return []
        table = self._rule_table(upos, canonical_feats(feats), own, canonical_feats(to_feats),
                                 ending(low_f))
        out = []
        for rule, lemmas in table:
            others = len(lemmas - {low_l})
            if others >= self.min_lemmas and rule.applies(low_l):
                out.append((rule.apply(low_l), rule, others))
        out.sort(key=lambda t: (-closeness(t[0], low_f), -t[2], str(t[1])))
        return out

    def _rule_table(self, upos: str, feats: str, own: EditRule, to_feats: str,
                    end: tuple[str, str]) -> _Table:
        """The rules of cell ``to_feats`` with the lemmas that pair them with ``own``, whose
        ``own`` form has ending ``end`` (memoised until the next :meth:`add`)."""
        key = (upos, feats, own, to_feats, end)
        if key in self._tables:
            return self._tables[key]
        by_rule: dict[EditRule, set[str]] = defaultdict(set)
        for lemma in self._lemmas_with.get((upos, feats, own), ()):
            if ending(own.apply(lemma)) != end:
                continue
            for rule in self._rules_of[(lemma, upos)].get(to_feats, ()):
                if self.rules.attested(upos, to_feats, rule):
                    by_rule[rule].add(lemma)
        table = tuple((rule, frozenset(lemmas)) for rule, lemmas in by_rule.items())
        self._tables[key] = table
        return table

    def kept_form(self, upos: str, feats: str, to_feats: str, form: str | None = None
                  ) -> tuple[int, int]:
        """``(same, other)``: of the lemmas attested in both cells whose most frequent form
        in ``feats`` ends like ``form`` (:func:`ending`; every lemma when ``form`` is None),
        how many spell ``to_feats`` with that same form and how many otherwise (Czech
        feminines in *-ce*: *organizace* is nominative singular and plural; masculine
        inanimates are accusative as nominative; memoised until the next :meth:`add`)."""
        feats, to_feats = canonical_feats(feats), canonical_feats(to_feats)
        key = (upos, feats, to_feats, ending(form.lower()) if form is not None else ("", ""))
        if key not in self._kept:
            same = other = 0
            for lemma in self._cell_lemmas.get((upos, feats), set()) & self._cell_lemmas.get(
                    (upos, to_feats), set()):
                own = self._forms[(lemma, upos, feats)].most_common(1)[0][0]
                if form is not None and ending(own) != key[3]:
                    continue
                new = self._forms[(lemma, upos, to_feats)].most_common(1)[0][0]
                same, other = same + (new == own), other + (new != own)
            self._kept[key] = (same, other)
        return self._kept[key]

    def xpos(self, lemma: str, upos: str, feats: str, form: str, original: str) -> str:
        """The XPOS of ``form`` in the cell: the most frequent attested with the form there,
        else in the (UPOS, FEATS) cell; ``original`` wins a tie, and is kept when neither is
        attested."""
        feats = canonical_feats(feats)
        counts = self._form_xpos.get(((lemma.lower(), upos, feats), form.lower()))
        if not counts:
            counts = self._cell_xpos.get((upos, feats))
        if not counts:
            return original
        return min(counts, key=lambda x: (-counts[x], x != original, x))
