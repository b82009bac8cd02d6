"""Results as tables: flat rows, ``to_pandas()`` and a notebook's HTML view.

Every result object of the Python API (this package's :mod:`.api` and the probe layer's) is a
:class:`ResultTable`: ``rows`` (a list of flat dicts, one number each under ``value`` where the
result is a measurement), ``columns`` (the union of the rows' keys, in first-seen order),
``to_pandas()`` and ``_repr_html_`` (Jupyter shows the table). pandas is optional
(``pip install 'synrob-perturb[pandas]'``): without it, ``to_pandas()`` is a
:class:`~synrob.perturb.errors.ResourceError` saying so; nothing else needs it.
"""

from __future__ import annotations

import html
import json
import math
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from .errors import ResourceError

__all__ = ["ResultTable", "cell_text", "columns_of", "html_table"]

#: Rows shown by ``_repr_html_`` before "... N more rows".
HTML_ROWS = 60


def columns_of(rows: Sequence[Mapping[str, Any]]) -> list[str]:
    """The union of the rows' keys, in first-seen order."""
    seen: dict[str, None] = {}
    for r in rows:
        for k in r:
            seen.setdefault(k, None)
    return list(seen)


def cell_text(value: Any) -> str:
    """A cell as text: floats to 4 significant decimals, containers as compact JSON."""
    if value is None:
        return ""
    if isinstance(value, float):
        return "nan" if math.isnan(value) else f"{value:.4g}"
    if isinstance(value, (dict, list, tuple)):
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)
    return str(value)


def html_table(rows: Sequence[Mapping[str, Any]], columns: Sequence[str] | None = None,
               limit: int | None = HTML_ROWS) -> str:
    """An HTML ``<table>`` of ``rows`` (escaped; at most ``limit`` rows, then a note)."""
    cols = list(columns) if columns is not None else columns_of(rows)
    shown = rows if limit is None else rows[:limit]
    head = "".join(f"<th>{html.escape(c)}</th>" for c in cols)
    body = "".join(
        "<tr>" + "".join(f"<td>{html.escape(cell_text(r.get(c)))}</td>" for c in cols) + "</tr>"
        for r in shown)
    more = (f"<p>… {len(rows) - len(shown)} more rows (.rows or .to_pandas() for all)</p>"
            if len(shown) < len(rows) else "")
    return (f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>{more}")


class ResultTable:
    """A result with flat rows: ``.rows``, ``.columns``, ``.to_pandas()``, a notebook view.

    Subclasses set :attr:`rows` (and may override :attr:`title`).
    """

    rows: list[dict[str, Any]]
    title: str = "synrob result"

    @property
    def columns(self) -> list[str]:
        """The union of the rows' keys, in first-seen order."""
        return columns_of(self.rows)

    def __len__(self) -> int:
        return len(self.rows)

    def __iter__(self) -> Iterator[dict[str, Any]]:
        return iter(self.rows)

    def to_pandas(self) -> Any:
        """The rows as a ``pandas.DataFrame`` (one column per key; containers stay objects)."""
        try:
            import pandas as pd
        except ImportError:
            raise ResourceError("to_pandas() needs pandas, which is not installed: "
                                "pip install 'synrob-perturb[pandas]' (or pandas)") from None
        return pd.DataFrame(self.rows, columns=self.columns)

    def _repr_html_(self) -> str:
        caption = f"<p><b>{html.escape(self.title)}</b> ({len(self.rows)} rows)</p>"
        return caption + html_table(self.rows, self.columns)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.title!r}: {len(self.rows)} rows>"
