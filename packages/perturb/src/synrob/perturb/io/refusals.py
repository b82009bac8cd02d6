"""The candidates a minimal-pair generator refused, as a file a linguist can read.

``synrob perturb -k agreement ... --refused FILE`` writes one row per candidate that gave no
pair (a word that carries the feature): the source sentence's ``sent_id``, the word's ID and
form, its subject's ID and form (comma-separated when there are several, empty when there is
none), the reason's code (``notional``, ``coordination``, ``no_form``...), the reason in words
and the sentence's text. A name ending in ``.jsonl`` gets JSON lines (one object per row,
the same keys); any other a TSV with a header line, quoted as Python's ``csv`` module and
pandas read it (a field holding a tab, a quote or a line break is quoted: *" Another
generation ...*). The file is written atomically: it appears whole or not at all.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from .atomic import atomic_open
from .tsv import tsv_line

__all__ = ["REFUSED_COLUMNS", "write_refusals", "refusal_lines"]

#: The columns (and JSON keys) of a refused-candidates file, in order.
REFUSED_COLUMNS = ("sent_id", "verb_id", "verb", "subject_id", "subject", "reason", "note",
                   "text")


def refusal_lines(records: Iterable[Mapping[str, Any]], jsonl: bool) -> Iterable[str]:
    """The lines of the file (each ending in a newline): a TSV header and rows, or JSON."""
    if not jsonl:
        yield tsv_line(REFUSED_COLUMNS)
    for r in records:
        row = {k: r.get(k, "") for k in REFUSED_COLUMNS}
        if jsonl:
            yield json.dumps(row, ensure_ascii=False) + "\n"
        else:
            yield tsv_line([str(row[k]) for k in REFUSED_COLUMNS])


def write_refusals(path: str | os.PathLike[str], records: Iterable[Mapping[str, Any]]) -> Path:
    """Write the records to ``path`` atomically (JSON lines for ``*.jsonl``, else TSV)."""
    jsonl = str(path).lower().endswith(".jsonl")
    with atomic_open(path, newline="\n") as fh:
        fh.writelines(refusal_lines(records, jsonl))
    return Path(path)
