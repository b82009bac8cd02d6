"""Carrier CoNLL-U: plain token sequences written as CoNLL-U so that encoders can read them.

A carrier file has no gold: each sentence's tokens become words with ``_`` lemma and features,
a fixed UPOS and a valid dependency tree of a fixed shape, so the file passes the CoNLL-U reader
and only its word forms mean anything. Two shapes are in use, and each caller's bytes are part
of cache keys and result ids, so both are kept exactly:

* ``chain`` - word ``i`` is attached to word ``i - 1`` (SentEval task corpora, UPOS ``_``:
  :func:`synrob.probe.senteval.features.conllu_text`);
* ``flat`` - every word is attached to word 1 (``local-structure``'s subword/char sets, UPOS
  ``X``: :func:`synrob.probe.experiments.local_structure.data.carrier_conllu`).

The first word is the root (``root``), every other word a ``dep``.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence

__all__ = ["TREE_SHAPES", "carrier_block", "carrier_blocks"]

#: The tree shapes of carrier sentences.
TREE_SHAPES = ("chain", "flat")


def carrier_block(sent_id: object, words: Sequence[str], *, tree: str, upos: str) -> str:
    """One carrier sentence: ``# sent_id``, ``# text`` (the words joined by spaces), one line per
    word, then the blank line that ends the block. ``words`` must not be empty."""
    if tree not in TREE_SHAPES:
        raise ValueError(f"carrier tree shape must be one of {', '.join(TREE_SHAPES)}, not {tree!r}")
    lines = [f"# sent_id = {sent_id}", f"# text = {' '.join(words)}"]
    for i, word in enumerate(words, 1):
        if i == 1:
            head, rel = 0, "root"
        else:
            head, rel = (i - 1 if tree == "chain" else 1), "dep"
        lines.append(f"{i}\t{word}\t_\t{upos}\t_\t_\t{head}\t{rel}\t_\t_")
    return "\n".join(lines) + "\n\n"


def carrier_blocks(sentences: Iterable[tuple[object, Sequence[str]]], *, tree: str, upos: str
                   ) -> Iterator[str]:
    """:func:`carrier_block` of each ``(sent_id, words)``, in order."""
    for sent_id, words in sentences:
        yield carrier_block(sent_id, words, tree=tree, upos=upos)
