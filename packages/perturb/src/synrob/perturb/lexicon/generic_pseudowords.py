"""Pseudo-lemmas for any language, learned from its own treebank (generic Jabberwocky).

* :func:`sibling_splits` finds the other splits of a UD split given as input
  (``NAME-ud-train.conllu`` beside ``NAME-ud-test.conllu``): they join the lexicon.
* :class:`TreebankLexicon` reads CoNLL-U files once: every FORM and LEMMA (lower-cased: the
  vocabulary a pseudoword must avoid), the alphabetic lemmas of each content UPOS (what the
  character model learns from), and each content word's (UPOS, FEATS, lemma, form) for the
  :class:`~synrob.perturb.lexicon.edits.RuleBook`.
* :class:`RealWords` says whether a string is a real word: in the treebank vocabulary, or known
  to ``wordfreq`` for the language when ``wordfreq`` has it.
* :func:`load_pools` draws, per UPOS, a seeded pool of distinct pseudo-lemmas from a
  :class:`~synrob.perturb.lexicon.charmodel.CharNgramModel` of that UPOS's lemmas, none of them a real
  word, keeps only entries no form of which (the entry under any attested rule of its UPOS)
  is a form of an entry kept before it, in any pool, and caches the pools on disk under
  ``<cache>/pseudowords/`` keyed by everything they depend on.
* :class:`ShapeIndex` finds the pool entries that fit a real lemma's *shape* - the same last
  letter, the same last vowel, and no vowel the real lemma lacks - so that a suffix chosen by
  vowel harmony or by the final consonant (Turkish, Finnish, Hungarian) fits the pseudo-lemma
  exactly as it fits the real one.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import ResourceError
from ..io.atomic import write_text_atomic
from ..io.data import SPLITS, cache_dir, resolve_input, resolve_ud
from .charmodel import CharNgramModel, last_vowel, vowels
from .edits import EditRule, RuleBook

__all__ = ["GENERIC_VERSION", "CONTENT_UPOS", "TreebankLexicon", "RealWords", "load_pools",
           "ShapeIndex", "shape_fits", "content_word", "sibling_splits"]

#: Bump when the model, the filter or the pool drawing changes: it keys the on-disk cache.
GENERIC_VERSION = "1"
CONTENT_UPOS = ("NOUN", "VERB", "ADJ", "ADV")
#: UD codes whose wordfreq list has another name.
_WORDFREQ_CODE = {"no": "nb"}


def content_word(upos: str, lemma: str, form: str) -> bool:
    """Whether a word is one the generic generator learns from and replaces: a NOUN, VERB, ADJ
    or ADV with a lemma, lemma and form alphabetic."""
    return (upos in CONTENT_UPOS and bool(lemma) and lemma != "_" and lemma.isalpha()
            and form.isalpha())


_UD_SPLIT = re.compile(r"(?P<name>.+)-ud-(?P<split>train|dev|test)\.conllu")


def _siblings_of(spec: str, path: Path) -> list[Path]:
    """The other splits of one UD split: files beside it, and for ``ud:NAME:SPLIT`` the other
    splits found locally (:func:`~synrob.perturb.io.data.resolve_ud`; nothing is downloaded)."""
    m = _UD_SPLIT.fullmatch(path.name)
    if m is None:
        return []
    others = [s for s in SPLITS if s != m["split"]]
    out = [p for s in others if (p := path.with_name(f"{m['name']}-ud-{s}.conllu")).is_file()]
    scheme, _, rest = spec.partition(":")
    if scheme == "ud" and rest.count(":") == 1 and not Path(spec).exists():
        for split in others:
            try:
                out.append(resolve_ud(rest.partition(":")[0], split, download=False))
            except ResourceError:  # the treebank has no such split here (PUD: test only)
                continue
    return out


def sibling_splits(specs: Sequence[str]) -> tuple[Path, ...]:
    """Other splits of the UD splits among ``specs`` (``NAME-ud-SPLIT.conllu`` files,
    ``ud:NAME:SPLIT``) that ``specs`` do not name already, each once, in order.

    ``tr_boun-ud-test.conllu`` brings the ``tr_boun-ud-train.conllu`` and ``-dev`` files of its
    folder: a word of the training split is a real word too.
    """
    named = [(spec, path) for spec in specs for path in resolve_input(spec)]
    seen = {path.resolve() for _, path in named}
    out: list[Path] = []
    for spec, path in named:
        for sib in _siblings_of(spec, path):
            if sib.resolve() not in seen:
                seen.add(sib.resolve())
                out.append(sib)
    return tuple(out)


def _word_lines(path: Path) -> Iterable[list[str]]:
    """The 10 columns of every syntactic-word line of a CoNLL-U file."""
    with path.open(encoding="utf-8", errors="replace") as fh:
        for line in fh:
            if not line or line[0] in "#\n":
                continue
            cols = line.rstrip("\n").split("\t")
            if len(cols) == 10 and cols[0].isdigit():
                yield cols


@dataclass
class TreebankLexicon:
    """What the generic generator learns from a set of treebanks."""

    vocabulary: set[str] = field(default_factory=set)
    lemmas: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))
    words: list[tuple[str, str, str, str]] = field(default_factory=list)
    files: tuple[str, ...] = ()

    @classmethod
    def from_specs(cls, specs: Sequence[str]) -> TreebankLexicon:
        """Read every file of ``specs`` (paths, ``ud:``/``sample:`` specs)."""
        out = cls()
        paths = [p for spec in specs for p in resolve_input(spec)]
        out.files = tuple(str(p) for p in paths)
        for path in paths:
            for cols in _word_lines(path):
                out.add(cols[1], cols[2], cols[3], cols[5])
        return out

    def add(self, form: str, lemma: str, upos: str, feats: str) -> None:
        """Record one word (FORM, LEMMA, UPOS, FEATS as in the file)."""
        low_f, low_l = form.lower(), lemma.lower()
        self.vocabulary.add(low_f)
        if lemma != "_":
            self.vocabulary.add(low_l)
        if content_word(upos, low_l, low_f):
            self.lemmas[upos].add(low_l)
            self.words.append((upos, feats, low_l, low_f))

    def rulebook(self, min_lemmas: int) -> RuleBook:
        return RuleBook(min_lemmas).add_all(self.words)

    def fingerprint(self) -> str:
        """SHA-256 of the vocabulary and the lemma lists (what a pool depends on)."""
        h = hashlib.sha256()
        for word in sorted(self.vocabulary):
            h.update(word.encode() + b"\n")
        for upos in CONTENT_UPOS:
            h.update(f"|{upos}|".encode())
            for lemma in sorted(self.lemmas.get(upos, ())):
                h.update(lemma.encode() + b"\n")
        return h.hexdigest()


class RealWords:
    """Membership test for real words of language ``lang`` (treebank vocabulary + wordfreq)."""

    def __init__(self, lang: str, vocabulary: set[str]) -> None:
        self.vocabulary = vocabulary
        self.wordfreq_lang = None
        self._wordfreq: dict[str, float] = {}
        try:
            import wordfreq
        except ImportError:  # pragma: no cover - wordfreq is a dependency
            return
        code = _WORDFREQ_CODE.get(lang, lang)
        if code in wordfreq.available_languages(wordlist="best"):
            self.wordfreq_lang = code
            self._wordfreq = wordfreq.get_frequency_dict(code, wordlist="best")

    def __contains__(self, word: str) -> bool:
        low = word.lower()
        return low in self.vocabulary or low in self._wordfreq

    def describe(self) -> dict[str, Any]:
        return {"vocabulary": len(self.vocabulary), "wordfreq": self.wordfreq_lang}


#: Drawing stops after this many draws in a row give no new word (a small treebank's model
#: mostly re-makes its own lemmas).
_PATIENCE = 500


def _draw_pool(model: CharNgramModel, rng: random.Random, size: int, real: RealWords,
               taken: set[str], max_len: int) -> list[str]:
    """Up to ``size`` distinct new words from ``model``."""
    out: list[str] = []
    misses = 0
    while len(out) < size and misses < _PATIENCE:
        word = model.sample(rng, max_len)
        if word is None or len(word) < 3 or word in taken or word in real:
            misses += 1
            continue
        misses = 0
        taken.add(word)
        out.append(word)
    return out


def _forms(pseudo: str, by_suffix: dict[str, list[EditRule]]) -> set[str]:
    """``pseudo`` and every form an attested rule makes of it (rules grouped by lemma suffix)."""
    out = {pseudo}
    for k in range(len(pseudo) - 1):
        for rule in by_suffix.get(pseudo[len(pseudo) - k:] if k else "", ()):
            if rule.applies(pseudo):
                out.add(rule.apply(pseudo))
    return out


def _prune(pools: dict[str, list[str]], rules: RuleBook) -> dict[str, tuple[str, ...]]:
    """Each pool without the entries that share a form with an entry kept before them."""
    claimed: set[str] = set()
    out: dict[str, tuple[str, ...]] = {}
    for upos in CONTENT_UPOS:
        by_suffix: dict[str, list[EditRule]] = defaultdict(list)
        for rule in sorted(rules.attested_rules(upos), key=str):
            by_suffix[rule.lemma_suffix].append(rule)
        kept = []
        for pseudo in pools[upos]:
            forms = _forms(pseudo, by_suffix)
            if forms.isdisjoint(claimed):
                claimed |= forms
                kept.append(pseudo)
        out[upos] = tuple(kept)
    return out


def _pool_key(lang: str, lexicon: TreebankLexicon, real: RealWords, seed: int, size: int,
              order: int, min_lemmas: int) -> str:
    try:
        from importlib.metadata import version

        wf = version("wordfreq")
    except Exception:  # noqa: BLE001 - no version known: the key still separates languages
        wf = "?"
    blob = json.dumps([GENERIC_VERSION, lang, lexicon.fingerprint(), real.wordfreq_lang, wf,
                       seed, size, order, min_lemmas])
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def load_pools(lang: str, lexicon: TreebankLexicon, real: RealWords, rules: RuleBook, *,
               seed: int, size: int, order: int) -> dict[str, tuple[str, ...]]:
    """Per content UPOS, up to ``size`` distinct pseudo-lemmas (cached on disk).

    Each UPOS has its own character model (its lemmas differ: Czech verb lemmas end in *-t*,
    Spanish ones in *-ar/-er/-ir*); a pseudo-lemma is never a real word, and no two
    pseudo-lemmas, in one pool or two, share a form under the attested ``rules``. A UPOS with
    fewer than 20 training lemmas gets an empty pool.
    """
    key = _pool_key(lang, lexicon, real, seed, size, order, rules.min_lemmas)
    path = cache_dir() / "pseudowords" / f"generic-{lang}-{key}.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return {upos: tuple(data["pools"][upos]) for upos in CONTENT_UPOS}
    except (OSError, ValueError, KeyError):
        pass
    rng = random.Random(f"synrob-generic:{lang}:{seed}")
    taken: set[str] = set()
    drawn: dict[str, list[str]] = {}
    for upos in CONTENT_UPOS:
        train = sorted(lexicon.lemmas.get(upos, ()))
        if len(train) < 20:
            drawn[upos] = []
            continue
        model = CharNgramModel(order).fit(train)
        drawn[upos] = _draw_pool(model, rng, size, real, taken, max(len(w) for w in train))
    pools = _prune(drawn, rules)
    write_text_atomic(path, json.dumps({"version": GENERIC_VERSION, "lang": lang, "seed": seed,
                                        "size": size, "order": order, "files": lexicon.files,
                                        "pools": pools}, ensure_ascii=False) + "\n")
    return pools


def shape_fits(pseudo: str, lemma: str) -> bool:
    """Whether ``pseudo`` has ``lemma``'s last letter and last vowel and no other vowels."""
    return (pseudo[-1:] == lemma[-1:] and last_vowel(pseudo) == last_vowel(lemma)
            and vowels(pseudo) <= vowels(lemma))


class ShapeIndex:
    """The pool of one UPOS indexed by last letter, last vowel and vowel set."""

    def __init__(self, pool: Sequence[str]) -> None:
        buckets: dict[tuple[str, str], dict[frozenset[str], list[str]]] = defaultdict(
            lambda: defaultdict(list))
        for word in pool:
            buckets[(word[-1:], last_vowel(word))][vowels(word)].append(word)
        # vowel sets in a fixed order, so that the same lemma always lists the same candidates
        self._buckets = {k: sorted(v.items(), key=lambda kv: sorted(kv[0]))
                         for k, v in buckets.items()}

    def fitting(self, lemma: str) -> list[str]:
        """Pool entries whose shape fits ``lemma`` (by vowel set, then pool order)."""
        have = vowels(lemma)
        bucket = self._buckets.get((lemma[-1:], last_vowel(lemma)), ())
        return [w for vs, words in bucket if vs <= have for w in words]
