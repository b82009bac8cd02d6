"""Source sentences for the SentEval tasks: every sentence of the treebanks, read fast.

Each sentence is kept as its syntactic words (:class:`~synrob.perturb.corpus.Word`; multiword
ranges and empty nodes excluded) plus its raw CoNLL-U block, which is parsed into a full
:class:`~synrob.perturb.corpus.Sentence` only for the few tasks that edit sentences (BShift, SOMO,
CoordInv). Every block is validated (ids, heads, one root, no cycle) like :func:`read_conllu`.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from ..corpus import Sentence, Word, _validate_block, iter_blocks, parse_sentence
from ..io import tree as _tree

__all__ = ["SourceSentence", "load_sources", "words_from_block"]


@dataclass
class SourceSentence:
    """One treebank sentence usable by the tasks.

    ``index`` is its position among the kept sentences (0-based; seeds per-sentence rngs);
    ``tokens`` are the UD word forms (syntactic words), written space-separated.
    """

    index: int
    words: list[Word]
    block: list[tuple[int, str]] = field(repr=False)
    path: str
    sent_id: str | None = None
    _sentence: Sentence | None = field(default=None, repr=False)
    _kids: list[list[int]] | None = field(default=None, repr=False)

    @property
    def tokens(self) -> list[str]:
        return [w.form for w in self.words]

    @property
    def text(self) -> str:
        """The sentence as written in a SentEval file: UD word forms joined by spaces."""
        return " ".join(w.form for w in self.words)

    def __len__(self) -> int:
        return len(self.words)

    @property
    def heads(self) -> list[int]:
        return [w.head for w in self.words]

    def children(self) -> list[list[int]]:
        """0-based dependents of every word (cached)."""
        if self._kids is None:
            self._kids = _tree.children(self.heads)
        return self._kids

    def root(self) -> int:
        """0-based position of the root word."""
        return _tree.root(self.heads)

    def max_depth(self) -> int:
        return _tree.max_depth(self.heads)

    def sentence(self) -> Sentence:
        """The full parsed :class:`Sentence` (parsed on first use, then cached)."""
        if self._sentence is None:
            self._sentence = parse_sentence(self.block, self.path)
        return self._sentence


def words_from_block(block: Sequence[tuple[int, str]]) -> list[Word]:
    """The syntactic words of a validated CoNLL-U block (ranges and empty nodes skipped)."""
    out: list[Word] = []
    for _, line in block:
        if line.startswith("#"):
            continue
        cols = line.split("\t")
        if not cols[0].isdigit():
            continue
        out.append(Word(int(cols[0]), cols[1], cols[2], cols[3], cols[4], cols[5] or "_",
                        int(cols[6]), cols[7]))
    return out


def _sent_id(block: Sequence[tuple[int, str]]) -> str | None:
    for _, line in block:
        if line.startswith("# sent_id"):
            return line.partition("=")[2].strip() or None
        if not line.startswith("#"):
            break
    return None


def load_sources(paths: Iterable[str | os.PathLike[str]], *, min_len: int = 5,
                 max_len: int = 28) -> tuple[list[SourceSentence], dict[str, int]]:
    """Read every sentence of ``paths``; keep those of ``min_len..max_len`` words, deduplicated.

    Two sentences with the same space-joined word forms are one (the first is kept), so that no
    sentence can land in two splits of a task. Returns the kept sentences and counts
    ``{"read", "kept", "out_of_length", "duplicates"}``. A malformed sentence is a
    :class:`~synrob.perturb.errors.ConlluError` naming file and line.
    """
    out: list[SourceSentence] = []
    seen: set[str] = set()
    counts = {"read": 0, "kept": 0, "out_of_length": 0, "duplicates": 0}
    for src in paths:
        for path, block in iter_blocks(src):
            _validate_block(block, path)
            counts["read"] += 1
            words = words_from_block(block)
            if not min_len <= len(words) <= max_len:
                counts["out_of_length"] += 1
                continue
            key = " ".join(w.form for w in words)
            if key in seen:
                counts["duplicates"] += 1
                continue
            seen.add(key)
            out.append(SourceSentence(len(out), words, block, path, _sent_id(block)))
    counts["kept"] = len(out)
    return out, counts
