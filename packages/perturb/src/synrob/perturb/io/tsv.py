"""One line of a tab-separated file, quoted as Python's ``csv`` module and pandas read it."""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence

__all__ = ["tsv_line"]


def tsv_line(values: Sequence[str]) -> str:
    """One TSV line ending in ``\\n``; a field holding a tab, a quote, ``\\r`` or ``\\n`` is
    quoted, its quotes doubled (the ``\\r\\n`` terminator makes csv quote both line breaks),
    as pandas' ``to_csv(sep="\\t")`` writes it: ``csv.reader(fh, delimiter="\\t")`` and
    ``pandas.read_csv(path, sep="\\t")`` read every field back as written."""
    buf = io.StringIO()
    csv.writer(buf, delimiter="\t", lineterminator="\r\n").writerow(values)
    return buf.getvalue()[:-2] + "\n"
