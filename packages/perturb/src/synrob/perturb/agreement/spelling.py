"""The twin keeps the original's spelling outside the agreement morpheme.

A form taken from the treebanks or made by a rule is spelled as the treebanks spell it, which
may differ from the original in its marks: EWT has *'s* where the original has *’re* (a
curly apostrophe), so *They’re* would become *They's*. :func:`keep_marks` gives the new form
the original's apostrophe; :func:`~synrob.perturb.lexicon.morphology.match_case` its case.
"""

from __future__ import annotations

__all__ = ["APOSTROPHES", "keep_marks"]

#: The characters used as an apostrophe.
APOSTROPHES = "'\u2019\u2018\u02bc\u00b4`"


def keep_marks(original: str, new: str) -> str:
    """``new`` with each apostrophe written as the original's (its first one); unchanged when
    the original has none."""
    mark = next((c for c in original if c in APOSTROPHES), None)
    if mark is None:
        return new
    return "".join(mark if c in APOSTROPHES else c for c in new)
