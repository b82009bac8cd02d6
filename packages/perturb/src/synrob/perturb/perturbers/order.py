"""Word-order perturbers: SentEval BShift (and, in this module, shuffles and flips)."""

from __future__ import annotations

import random

from ..base import Perturbation, Perturber
from ..corpus import Sentence


class BShift(Perturber):
    """Invert two random adjacent words (SentEval BShift); the tree travels with its words."""

    name = "bshift"
    summary = "invert two random adjacent words; label I (inverted)"
    paper = "Conneau et al. 2018, What you can cram into a single vector (BShift)"

    def perturb(self, sentence: Sentence, rng: random.Random) -> Perturbation:
        n = len(sentence)
        if n < 2:
            return Perturbation(sentence, sentence.text, (), "O", "fewer than two words")
        i = rng.randrange(1, n)  # swap words i and i+1 (1-based)
        order = list(range(1, n + 1))
        order[i - 1], order[i] = order[i], order[i - 1]
        new = sentence.reorder(order)
        return Perturbation(new, new.text, (i, i + 1), "I")


PERTURBERS = [BShift]
