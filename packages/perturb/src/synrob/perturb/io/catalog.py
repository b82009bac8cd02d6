"""Lists of components (``list_perturbers()``, ``list_experiments()``) as tables.

A :class:`Catalog` is still the list of description dicts it always was (indexing, iteration,
``json.dumps``), and also a :class:`~synrob.perturb.io.table.ResultTable`: ``.to_pandas()``,
``.where(...)``, an HTML view of the columns a reader scans (name, version, summary, parameter
names, ...) and a text repr with one line per component.
"""

from __future__ import annotations

import html
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from .table import ResultTable, cell_text, html_table

__all__ = ["Catalog"]

#: Characters of a summary in the text repr.
SUMMARY_CHARS = 72


class Catalog(list[dict[str, Any]], ResultTable):  # type: ignore[misc]
    """The descriptions of registered components, one dict each (``name``, ``version``,
    ``summary``, ``paper``, ``params``, ...), as a list and as a table."""

    def __init__(self, rows: Iterable[dict[str, Any]], title: str,
                 shown: Sequence[str] = ("name", "version", "summary")) -> None:
        super().__init__(rows)
        self.title = title
        self.shown = tuple(shown)

    @property
    def rows(self) -> list[dict[str, Any]]:  # type: ignore[override]
        """The descriptions (a copy of the list)."""
        return list(self)

    def _display(self, row: Mapping[str, Any]) -> dict[str, Any]:
        """The shown columns of one description; parameters by name only."""
        out = {k: row.get(k) for k in self.shown}
        if "params" in row:
            out["params"] = ", ".join(str(p.get("name")) for p in row["params"])
        return out

    def _repr_html_(self) -> str:
        caption = f"<p><b>{html.escape(self.title)}</b> ({len(self)})</p>"
        return caption + html_table([self._display(r) for r in self], limit=None)

    def __repr__(self) -> str:
        width = max((len(str(r.get("name", ""))) for r in self), default=0)
        lines = [f"{self.title} ({len(self)}):"]
        for r in self:
            summary = cell_text(r.get("summary", ""))
            if len(summary) > SUMMARY_CHARS:
                summary = summary[:SUMMARY_CHARS - 1] + "…"
            lines.append(f"  {r.get('name', ''):<{width}}  {r.get('version', '')!s:<7}  {summary}")
        return "\n".join(lines)

    __str__ = __repr__
