"""Word-order perturbers: shuffles and neighbour flips (Clouatre et al.) and SentEval BShift.

Units (``unit=``):

* ``word`` - the syntactic words of the sentence. The output is a real CoNLL-U sentence made by
  :meth:`Sentence.reorder`: words renumbered, HEAD remapped so the gold tree travels with its
  words, ``# text`` rebuilt; a multiword-token range whose words are separated is dropped.
* ``subword`` - the tokens of a tokenizer (default: ``roberta``, RoBERTa-base's byte-level BPE as
  Clouatre et al. use it, bundled). The text
  is cut at each token's start offset, so every unit is the exact original text from one token
  to the next (for byte-level BPE that is the token itself, leading space included; for
  WordPiece/SentencePiece it is the token plus the whitespace after it). Units are permuted and
  concatenated: the output is a permutation of the original characters, never re-decoded.
* ``char`` - the characters of the ``# text``; whitespace characters are units too unless
  ``keep_spaces=true``, which leaves every whitespace character in place and permutes only the
  others.

Subword and char outputs are text only (``Perturbation.sentence is None``, ``writes_conllu`` is
False). ``changed`` holds the original word ids whose text overlaps a unit that moved. Word-level
outputs record the permutation in ``extra["order"]``: the old 1-based id of each new word.
"""

from __future__ import annotations

import random
from abc import abstractmethod
from collections.abc import Sequence
from typing import Any

from ..base import Perturbation, Perturber
from ..corpus import Sentence
from ..errors import ParameterError
from ..lm.subword import DEFAULT_TOKENIZER, load_tokenizer
from ..params import Param

__all__ = [
    "BShift",
    "Shuffle",
    "Flip",
    "full_shuffle_order",
    "phrase_shuffle_order",
    "flip_order",
    "load_tokenizer",
    "DEFAULT_TOKENIZER",
    "PERTURBERS",
]


UNITS = ("word", "subword", "char")


# --------------------------------------------------------------------------- orders

def full_shuffle_order(n: int, rng: random.Random) -> list[int]:
    """A uniformly random permutation of ``range(n)`` (0-based positions)."""
    order = list(range(n))
    rng.shuffle(order)
    return order


def phrase_shuffle_order(n: int, rho: float, rng: random.Random) -> list[int]:
    """Clouatre et al. Algorithm 1: cut before each unit with probability ``rho``, shuffle phrases.

    The first unit opens the first phrase; before every later unit a new phrase starts with
    probability ``rho``. The phrases are then put in a uniformly random order and concatenated.
    ``rho=1`` cuts everywhere and draws no cut decisions, so it returns exactly
    :func:`full_shuffle_order` for the same ``rng`` state; ``rho=0`` keeps one phrase (identity).
    """
    if n == 0:
        return []
    phrases: list[list[int]] = [[0]]
    for i in range(1, n):
        cut = rho >= 1.0 or (rho > 0.0 and rng.random() < rho)
        if cut:
            phrases.append([i])
        else:
            phrases[-1].append(i)
    if len(phrases) == 1:
        return phrases[0]
    rng.shuffle(phrases)
    return [i for phrase in phrases for i in phrase]


def flip_order(n: int, rho: float, rng: random.Random) -> list[int]:
    """Clouatre et al. neighbour flip: left to right, swap position i with i+1 with prob. ``rho``.

    Swaps act on the current sequence, so a unit carried to i+1 may be swapped again at the next
    step and travel further right: ``rho=1`` moves the first unit to the end (``[1, ..., n-1,
    0]``); ``rho=0`` is the identity. No random number is drawn when ``rho`` is 0 or 1.
    """
    order = list(range(n))
    for i in range(n - 1):
        if rho >= 1.0 or (rho > 0.0 and rng.random() < rho):
            order[i], order[i + 1] = order[i + 1], order[i]
    return order


# --------------------------------------------------------------------------- units

def _word_spans(sentence: Sentence, text: str) -> list[tuple[int, int] | None]:
    """Character span of every syntactic word in ``text`` (a multiword token's words share it)."""
    words = sentence.words()
    ranges = {a: (b, form) for a, b, form in sentence.ranges()}
    spans: list[tuple[int, int] | None] = [None] * len(words)
    cursor = 0
    i = 1
    while i <= len(words):
        if i in ranges:
            last, form = ranges[i]
        else:
            last, form = i, words[i - 1].form
        k = text.find(form, cursor)
        if k >= 0:
            for j in range(i, last + 1):
                spans[j - 1] = (k, k + len(form))
            cursor = k + len(form)
        i = last + 1
    return spans


def subword_units(text: str, tokenizer: Any) -> list[str]:
    """Cut ``text`` at each token's start offset: a lossless partition into subword units."""
    enc = tokenizer.encode(text, add_special_tokens=False)
    starts = sorted({start for start, end in enc.offsets if end > start} | {0})
    bounds = [*starts, len(text)]
    return [text[a:b] for a, b in zip(bounds, bounds[1:], strict=False) if b > a]


class _UnitOrderPerturber(Perturber):
    """Shared machinery of shuffle and flip: units, the tree-aware word level, ``changed``."""

    _common_params: tuple[Param, ...] = (
        Param("unit", str, "word", "what is moved: syntactic words (CoNLL-U kept), tokenizer "
              "subwords or characters (text only)", choices=UNITS),
        Param("rho", float, 0.5, "probability per unit (phrase cut for shuffle, swap for flip)"),
        Param("tokenizer", str, DEFAULT_TOKENIZER, "subword units: 'roberta' (alias 'gpt2-bpe', "
              "RoBERTa-base's BPE, bundled), 'smollm2', a tokenizer.json path, or a Hugging "
              "Face tokenizer name/directory"),
        Param("keep_spaces", bool, False, "char units: leave whitespace in place and move only "
              "the other characters"),
    )

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        rho = self.options["rho"]
        if not 0.0 <= rho <= 1.0:
            raise ParameterError(f"perturber {self.name!r}: rho must be in [0, 1], got {rho}")
        self._tokenizer: Any = None

    @property
    def writes_conllu(self) -> bool:
        return self.options["unit"] == "word"

    def setup(self) -> None:
        if self.options["unit"] == "subword":
            self._tokenizer = load_tokenizer(self.options["tokenizer"])
        self._ready = True

    @abstractmethod
    def _order(self, n: int, rng: random.Random) -> list[int]:
        """A permutation of ``range(n)``: position p of the output holds unit ``order[p]``."""

    def perturb(self, sentence: Sentence, rng: random.Random) -> Perturbation:
        unit = self.options["unit"]
        if unit == "word":
            return self._perturb_words(sentence, rng)
        self.ensure_setup()
        return self._perturb_text(sentence, rng, unit)

    def _perturb_words(self, sentence: Sentence, rng: random.Random) -> Perturbation:
        n = len(sentence)
        if n < 2:
            return Perturbation(sentence, sentence.text, (), note="fewer than two units")
        order = [i + 1 for i in self._order(n, rng)]
        changed = tuple(sorted(old for pos, old in enumerate(order, 1) if old != pos))
        if not changed:
            return Perturbation(sentence, sentence.text, (), note="order unchanged")
        new = sentence.reorder(order)
        return Perturbation(new, new.text, changed, extra={"order": tuple(order)})

    def _perturb_text(self, sentence: Sentence, rng: random.Random, unit: str) -> Perturbation:
        text = sentence.text
        fixed: list[int] = []
        if unit == "subword":
            units = subword_units(text, self._tokenizer)
        elif self.options["keep_spaces"]:
            units = [c for c in text if not c.isspace()]
            fixed = [k for k, c in enumerate(text) if c.isspace()]
        else:
            units = list(text)
        if len(units) < 2:
            return Perturbation(None, text, (), note="fewer than two units")
        order = self._order(len(units), rng)
        if order == sorted(order):
            return Perturbation(None, text, (), note="order unchanged")
        pieces = [units[i] for i in order]
        if fixed:
            out = list(text)
            slots = [k for k, c in enumerate(text) if not c.isspace()]
            for k, piece in zip(slots, pieces, strict=True):
                out[k] = piece
            new_text = "".join(out)
            moved_spans = [(slots[i], slots[i] + 1) for p, i in enumerate(order) if i != p]
        else:
            new_text = "".join(pieces)
            starts = [0]
            for u in units:
                starts.append(starts[-1] + len(u))
            moved_spans = [(starts[i], starts[i + 1]) for p, i in enumerate(order) if i != p]
        return Perturbation(None, new_text, _changed_words(sentence, text, moved_spans),
                            extra={"units": len(units)})


def _changed_words(
    sentence: Sentence, text: str, moved: Sequence[tuple[int, int]]
) -> tuple[int, ...]:
    """Original word ids whose character span overlaps a moved unit's span."""
    mark = bytearray(len(text) + 1)
    for a, b in moved:
        mark[a:b] = b"\x01" * (b - a)
    out = []
    for wid, span in enumerate(_word_spans(sentence, text), 1):
        if span is not None and any(mark[span[0]:span[1]]):
            out.append(wid)
    return tuple(out)


class Shuffle(_UnitOrderPerturber):
    """Full or phrase shuffle of words, subwords or characters (Clouatre et al. §4).

    ``mode=full``: a uniformly random permutation of the units. ``mode=phrase``: Algorithm 1 -
    cut the unit sequence before each unit with probability ``rho`` and shuffle the phrases
    (``rho=1`` is the full shuffle, ``rho=0`` the identity).
    """

    name = "shuffle"
    languages = ("*",)
    language_note = "language-independent: works on any UD treebank"
    #: 1.1: word units keep DEPS sorted by the new head ids (CoNLL-U order)
    version = "1.1"
    summary = "full or phrase shuffle of words (tree kept), subwords or characters (text only)"
    paper = ("Clouatre et al. 2022, Local Structure Matters Most: Perturbation Study in NLU "
             "(§4, Algorithm 1)")
    params = (
        *_UnitOrderPerturber._common_params,
        Param("mode", str, "full", "full shuffle, or phrase shuffle (Algorithm 1, uses rho)",
              choices=("full", "phrase")),
    )

    def _order(self, n: int, rng: random.Random) -> list[int]:
        if self.options["mode"] == "full":
            return full_shuffle_order(n, rng)
        return phrase_shuffle_order(n, self.options["rho"], rng)


class Flip(_UnitOrderPerturber):
    """Neighbour flip (Clouatre et al. Algorithm 2): left to right, swap with the next unit."""

    name = "flip"
    languages = ("*",)
    language_note = "language-independent: works on any UD treebank"
    #: 1.1: word units keep DEPS sorted by the new head ids (CoNLL-U order)
    version = "1.1"
    summary = "neighbour flip: left to right, swap each unit with the next with probability rho"
    paper = ("Clouatre et al. 2022, Local Structure Matters Most: Perturbation Study in NLU "
             "(§4, neighbour flip)")
    params = _UnitOrderPerturber._common_params

    def _order(self, n: int, rng: random.Random) -> list[int]:
        return flip_order(n, self.options["rho"], rng)


class BShift(Perturber):
    """Invert two random adjacent words (SentEval BShift); the tree travels with its words.

    The pair is drawn uniformly among the adjacent pairs of syntactic words. By default a pair
    holding punctuation (UPOS ``PUNCT``) is never drawn: a moved comma or sentence-final mark
    is a surface cue that Conneau et al. avoid; ``punct=true`` allows such pairs. A sentence
    without an eligible pair is left unchanged (label ``O`` with a note), and so is one whose
    drawn pair holds two identical forms ("very very"): swapping them would not change the text,
    so an ``I`` label would be false (1.2; the draw itself is unchanged, so every other sentence
    gets the same output as in 1.1).
    """

    name = "bshift"
    languages = ("*",)
    language_note = "language-independent: works on any UD treebank"
    version = "1.2"
    summary = "invert two random adjacent words (no punctuation unless punct=true); label I"
    paper = "Conneau et al. 2018, What you can cram into a single vector (BShift)"
    params = (
        Param("punct", bool, False, "also swap pairs holding punctuation (UPOS PUNCT); "
              "off by default, as a moved sentence-final mark is a surface cue"),
    )

    def candidates(self, sentence: Sentence) -> list[int]:
        """The 1-based ids ``i`` of the swappable pairs ``(i, i+1)``."""
        words = sentence.words()
        if self.options["punct"]:
            return list(range(1, len(words)))
        return [i for i in range(1, len(words))
                if words[i - 1].upos != "PUNCT" and words[i].upos != "PUNCT"]

    def perturb(self, sentence: Sentence, rng: random.Random) -> Perturbation:
        n = len(sentence)
        if n < 2:
            return Perturbation(sentence, sentence.text, (), "O", "fewer than two words")
        pairs = self.candidates(sentence)
        if not pairs:
            return Perturbation(sentence, sentence.text, (), "O",
                                "no two adjacent words without punctuation")
        i = pairs[rng.randrange(len(pairs))]  # swap words i and i+1 (1-based)
        words = sentence.words()
        if words[i - 1].form == words[i].form:
            return Perturbation(sentence, sentence.text, (), "O",
                                "the drawn pair holds two identical words")
        order = list(range(1, n + 1))
        order[i - 1], order[i] = order[i], order[i - 1]
        new = sentence.reorder(order)
        return Perturbation(new, new.text, (i, i + 1), "I", extra={"order": tuple(order)})


PERTURBERS = [BShift, Shuffle, Flip]
