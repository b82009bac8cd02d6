"""The ``typo`` perturber: keyboard-typo noise on the FORM of some words."""

from __future__ import annotations

import math
import random
from typing import Any, ClassVar

from synrob.perturb.base import Perturbation, Perturber
from synrob.perturb.corpus import Sentence
from synrob.perturb.errors import ParameterError
from synrob.perturb.params import Param

from . import __version__
from .edits import EDITS


class Typo(Perturber):
    """Misspell a share of the words as a hurried typist would on a QWERTY keyboard.

    A word is *eligible* when its FORM is alphabetic (``str.isalpha``), has at least
    ``min_length`` characters and is not part of a multiword token (``don't`` = ``do`` +
    ``n't`` is left alone, so the surface text stays a faithful typo of the original). Of the
    ``E`` eligible words, ``floor(rate * E)`` are chosen, plus one more with probability
    ``rate * E - floor(rate * E)``, so the expected share is exactly ``rate``. Each chosen word
    gets one edit drawn uniformly from ``ops`` (another one is tried when it cannot apply):

    * ``sub``  - replace a letter by a QWERTY-adjacent key (``house`` -> ``hoise``);
    * ``ins``  - add an adjacent key before or after a letter (``house`` -> ``hpouse``);
    * ``del``  - drop a letter (``house`` -> ``huse``);
    * ``swap`` - transpose two adjacent different letters (``house`` -> ``huose``).

    Only FORM changes (and ``# text``, rebuilt from the forms). LEMMA, UPOS, XPOS, FEATS, HEAD,
    DEPREL, DEPS and MISC are kept: the gold annotation is that of the intended word.
    """

    name = "typo"
    version = __version__
    summary = "keyboard-typo noise: QWERTY-adjacent substitution, insertion, deletion, transposition"
    languages = ("*",)
    language_note = "any Latin-script language (the QWERTY layout decides the neighbours)"
    paper = (
        "Belinkov & Bisk 2018, Synthetic and Natural Noise Both Break Neural Machine "
        "Translation (keyboard typos)"
    )
    params: ClassVar[tuple[Param, ...]] = (
        Param("rate", float, 0.1, "share of eligible words that get one typo (0..1)"),
        Param("ops", str, "sub,ins,del,swap",
              "comma-separated edits to draw from: sub, ins, del, swap"),
        Param("min_length", int, 3, "only words of at least this many letters are eligible (>= 2)"),
    )

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        rate = self.options["rate"]
        if not 0.0 <= rate <= 1.0:
            raise ParameterError(f"perturber 'typo': rate must be within 0..1, got {rate}")
        ops = [op.strip() for op in self.options["ops"].split(",") if op.strip()]
        unknown = [op for op in ops if op not in EDITS]
        if not ops or unknown:
            bad = unknown[0] if unknown else self.options["ops"]
            raise ParameterError(
                f"perturber 'typo': unknown edit {bad!r} in ops; choose from: {', '.join(EDITS)}"
            )
        if self.options["min_length"] < 2:
            raise ParameterError(
                f"perturber 'typo': min_length must be >= 2, got {self.options['min_length']}"
            )
        self.ops: tuple[str, ...] = tuple(dict.fromkeys(ops))

    def eligible(self, sentence: Sentence) -> list[int]:
        """1-based ids of the words that may get a typo."""
        in_range = {i for first, last, _ in sentence.ranges() for i in range(first, last + 1)}
        return [
            w.id
            for w in sentence.words()
            if w.form.isalpha() and len(w.form) >= self.options["min_length"]
            and w.id not in in_range
        ]

    def misspell(self, word: str, rng: random.Random) -> tuple[str, str] | None:
        """``(edit name, misspelled word)`` for one word, or None if no edit in ``ops`` applies."""
        order = list(self.ops)
        rng.shuffle(order)
        for op in order:
            new = EDITS[op](word, rng)
            if new is not None:
                return op, new
        return None

    def perturb(self, sentence: Sentence, rng: random.Random) -> Perturbation:
        candidates = self.eligible(sentence)
        if not candidates:
            return Perturbation(sentence, sentence.text, note="no eligible word")
        expected = self.options["rate"] * len(candidates)
        k = math.floor(expected)
        if rng.random() < expected - k:
            k += 1
        chosen = sorted(rng.sample(candidates, k))
        forms = {w.id: w.form for w in sentence.words()}
        changes: dict[int, dict[str, str]] = {}
        edits: list[dict[str, Any]] = []
        for wid in chosen:
            result = self.misspell(forms[wid], rng)
            if result is None:
                continue
            op, new = result
            changes[wid] = {"form": new}
            edits.append({"id": wid, "op": op, "from": forms[wid], "to": new})
        if not changes:
            note = "rate selected no word" if not chosen else "no edit applies"
            return Perturbation(sentence, sentence.text, note=note)
        new_sentence = sentence.replace_words(changes)
        return Perturbation(
            new_sentence, new_sentence.text, tuple(sorted(changes)), extra={"edits": edits}
        )
