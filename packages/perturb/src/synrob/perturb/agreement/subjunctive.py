"""English *was* and *were* in conditional and counterfactual clauses.

*If it wasn't for my back* and *if it weren't for my back*, *if I was redoing this* and *if I
were*, *I wish it was* and *I wish it were*: in a conditional or counterfactual clause both are
grammatical, whether or not the treebank annotates the subjunctive (UD English GUM has no
``Mood=Sub``). :func:`conditional_be` says when the ``agreement`` perturber refuses a pair of
past *be* (either direction, any feature; reason ``subjunctive``): English, lemma *be*,
``Tense=Past``, in a clause that may take a subjunctive *were*
(:func:`~synrob.perturb.agreement.rules.subjunctive_context`: a ``mark`` *if*, *though* or
*unless*, *as if*, *as though*, *even if*, or the complement of *wish*, *suppose*, *imagine*
or *pretend*).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from .rules import subjunctive_context
from .tree import TreeWord

__all__ = ["conditional_be"]



def conditional_be(lang: str, word: TreeWord, feats: Mapping[str, str], words: Sequence[TreeWord],
                   children: Mapping[int, Sequence[TreeWord]]) -> bool:
    """Whether ``word`` is an English past *be* in a conditional or counterfactual clause."""
    return (lang == "en" and word.lemma.lower() == "be" and feats.get("Tense") == "Past"
            and subjunctive_context(word, words, children))
