"""What the agreement filters read of a word in a dependency tree: its fields, its universal
relation, its features and its dependents."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import Protocol, TypeVar

from ..io.feats import parse_feats

__all__ = ["TreeWord", "rel", "feats_of", "children_of"]


class TreeWord(Protocol):
    """A syntactic word as :class:`synrob.perturb.corpus.Word` has it (IDs 1-based)."""

    id: int
    form: str
    lemma: str
    upos: str
    feats: str
    head: int
    deprel: str


def rel(word: TreeWord) -> str:
    """The universal part of the word's relation (``nsubj`` of ``nsubj:pass``)."""
    return word.deprel.split(":", 1)[0]


def feats_of(word: TreeWord) -> dict[str, str]:
    """The word's FEATS as a dict; malformed or empty FEATS read leniently (``{}`` for ``_``)."""
    return parse_feats(word.feats, strict=False)


W = TypeVar("W", bound=TreeWord)


def children_of(words: Sequence[W]) -> dict[int, list[W]]:
    """Each word's dependents in order, by the head's ID (a ``defaultdict``: ``[]`` for a
    word without any)."""
    out: dict[int, list[W]] = defaultdict(list)
    for w in words:
        out[w.head].append(w)
    return out
