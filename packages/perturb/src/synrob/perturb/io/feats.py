"""The CoNLL-U FEATS column: the one parser and the one formatter of synrob.

FEATS is ``_`` (no features) or ``Name=Value|Name2=Value2``. :func:`parse_feats` reads it into
a dict (``{}`` for ``_`` or an empty string), :func:`feats_value` into the value the ``conllu``
library keeps on a token (``None`` when there are no features), and :func:`format_feats`
writes a dict (or ``None``) back. ``format_feats(parse_feats(s)) == s`` for every well-formed
FEATS string, and ``parse_feats(format_feats(d)) == d`` for every dict of well-formed pairs.

A part without ``=`` is malformed: ``strict=True`` (the default) raises :class:`ValueError`,
``strict=False`` skips the part.
"""

from __future__ import annotations

from collections.abc import Mapping

__all__ = ["EMPTY", "parse_feats", "feats_value", "format_feats"]

#: The FEATS value of a word without features.
EMPTY = "_"


def parse_feats(feats: str, *, strict: bool = True) -> dict[str, str]:
    """``Name=Value|...`` -> ``{Name: Value, ...}`` in column order; ``{}`` for ``_`` or ``""``.

    Each part is split at its first ``=`` (a value may contain ``=``). A part without ``=``
    raises :class:`ValueError` when ``strict``, and is skipped otherwise.
    """
    if feats in (EMPTY, ""):
        return {}
    parts = feats.split("|")
    if not strict:
        parts = [p for p in parts if "=" in p]
    return dict(part.split("=", 1) for part in parts)


def feats_value(feats: str) -> dict[str, str] | None:
    """FEATS as a ``conllu`` token holds it: the dict of :func:`parse_feats` (strict), or
    ``None`` for ``_`` or ``""`` (no features)."""
    if feats in (EMPTY, ""):
        return None
    return parse_feats(feats)


def format_feats(feats: Mapping[str, str] | None) -> str:
    """``{Name: Value, ...}`` -> ``Name=Value|...`` in mapping order; ``_`` for ``None`` or ``{}``."""
    if not feats:
        return EMPTY
    return "|".join(f"{k}={v}" for k, v in feats.items())
