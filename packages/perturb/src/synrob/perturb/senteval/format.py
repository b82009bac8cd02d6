"""The SentEval probing file format: one example per line, ``SPLIT<TAB>LABEL<TAB>SENTENCE``,
SPLIT one of ``tr`` (train), ``va`` (dev), ``te`` (test); sentences are space-tokenised.

The ten probing tasks of Conneau et al. (2018) and their file names are :data:`TASK_FILES`.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from ..errors import ConlluError, SynrobError
from ..io.atomic import atomic_open

__all__ = ["SPLITS", "TASK_FILES", "SentEvalError", "SentEvalExample", "read_task_file",
           "write_task_file"]


class SentEvalError(SynrobError):
    """SentEval tasks cannot be built or read (no sentences, unknown task, empty directory)."""

#: SentEval split codes.
SPLITS: tuple[str, ...] = ("tr", "va", "te")

#: Task name -> file name, in the order of the paper's Table 2.
TASK_FILES: dict[str, str] = {
    "SentLen": "sentence_length.txt",
    "WC": "word_content.txt",
    "TreeDepth": "tree_depth.txt",
    "TopConst": "top_constituents.txt",
    "BShift": "bigram_shift.txt",
    "Tense": "past_present.txt",
    "SubjNum": "subj_number.txt",
    "ObjNum": "obj_number.txt",
    "SOMO": "odd_man_out.txt",
    "CoordInv": "coordination_inversion.txt",
}


@dataclass(frozen=True)
class SentEvalExample:
    """One line of a task file."""

    split: str      # tr | va | te
    label: str
    sentence: str   # space-separated tokens


def read_task_file(path: str | os.PathLike[str]) -> list[SentEvalExample]:
    """Read a SentEval task file; a malformed line is a :class:`ConlluError` ``FILE:LINE: ...``."""
    out: list[SentEvalExample] = []
    p = Path(path)
    with p.open(encoding="utf-8") as fh:
        for n, line in enumerate(fh, 1):
            line = line.rstrip("\n").rstrip("\r")
            if not line.strip():
                continue
            parts = line.split("\t", 2)
            if len(parts) != 3:
                raise ConlluError(str(p), n, "expected SPLIT<TAB>LABEL<TAB>SENTENCE")
            split, label, sentence = parts
            if split not in SPLITS:
                raise ConlluError(str(p), n, f"split {split!r} is not one of tr, va, te")
            if not label or not sentence.strip():
                raise ConlluError(str(p), n, "empty label or sentence")
            out.append(SentEvalExample(split, label, sentence.strip()))
    return out


def write_task_file(path: str | os.PathLike[str], examples: Iterable[SentEvalExample]) -> Path:
    """Write examples in the SentEval format (atomically: ``PATH.tmp`` then rename)."""
    p = Path(path)
    with atomic_open(p) as fh:
        for ex in examples:
            if ex.split not in SPLITS or "\t" in ex.label or "\t" in ex.sentence or "\n" in ex.sentence:
                raise ValueError(f"not writable in the SentEval format: {ex!r}")
            fh.write(f"{ex.split}\t{ex.label}\t{ex.sentence}\n")
    return p
