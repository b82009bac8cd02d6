"""Results as tables: flat rows, ``to_pandas()`` and a notebook's HTML view.

Every result object of the Python API (this package's :mod:`.api` and the probe layer's) is a
:class:`ResultTable`: ``rows`` (a list of flat dicts, one number each under ``value`` where the
result is a measurement), ``columns`` (the union of the rows' keys, in first-seen order),
``to_pandas()`` and ``_repr_html_`` (Jupyter shows the table); ``where(metric="uuas",
split="test")`` keeps the rows you mean (a table again), and ``pivot(...)`` lays them out wide,
refusing a cell that would hold two numbers (rows differing in role, split, metric, ...) instead
of silently keeping one. pandas is optional
(``pip install 'synrob-perturb[pandas]'``): without it, ``to_pandas()`` is a
:class:`~synrob.perturb.errors.ResourceError` saying so; nothing else needs it.
"""

from __future__ import annotations

import html
import json
import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import ParameterError, ResourceError

__all__ = ["KEY_COLUMNS", "MEASUREMENT_COLUMNS", "ResultTable", "Selection", "cell_text",
           "columns_of", "html_table"]

#: Rows shown by ``_repr_html_`` before "... N more rows".
HTML_ROWS = 60
#: A row's numbers: never part of a pivot's index.
MEASUREMENT_COLUMNS = ("value", "ci_low", "ci_high", "p_value")
#: Columns that say what a number is (not how it was computed), in the order a pivot's default
#: index takes those that vary: what the built-in results and experiments write.
KEY_COLUMNS = ("section", "kind", "task", "erased", "erased_task", "probe", "classifier", "row",
               "role", "encoder", "baseline", "vs", "lm", "layer", "set", "unit", "rho",
               "perturbation", "adversary", "budget", "train_on", "train_draw", "test_on",
               "test", "reference", "draw", "condition", "contrast", "performance",
               "structure_metric", "split", "metric")


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
        return _pandas().DataFrame(self.rows, columns=self.columns)

    def where(self, **conditions: Any) -> Selection:
        """The rows whose column ``c`` equals ``conditions[c]`` for every condition (a list,
        tuple or set accepts any of its values; ``None`` matches a missing value), as a table.
        A column no row has is a :class:`~synrob.perturb.errors.ParameterError` (a typo would
        otherwise give an empty table)."""
        _check_columns(self, conditions)
        rows = [r for r in self.rows if all(_matches(r.get(k), v) for k, v in conditions.items())]
        told = ", ".join(f"{k}={v!r}" for k, v in conditions.items())
        return Selection(rows, f"{self.title} where {told}" if told else self.title)

    def pivot(self, index: str | Sequence[str] | None = None, columns: str = "source",
              values: str | Sequence[str] = "value", **conditions: Any) -> Any:
        """A wide ``pandas.DataFrame`` of the rows meeting ``conditions`` (as :meth:`where`):
        one row per ``index`` tuple, one column per ``columns`` value, in first-seen order.

        ``index`` defaults to the :data:`KEY_COLUMNS` (``role``, ``encoder``, ``layer``,
        ``test_on``, ``split``, ``metric``, ...) whose values differ among those rows. Two rows
        that fall in one cell are a :class:`~synrob.perturb.errors.ParameterError` naming the
        columns they differ in: a pivot never keeps one number of several (as
        ``pivot_table(aggfunc="first")`` does). ``values`` may name several columns
        (``["value", "ci_low", "ci_high"]``)."""
        rows = self.where(**conditions).rows if conditions else self.rows
        _check_columns(self, {columns: None})
        keys = _default_index(rows, columns) if index is None else (
            [index] if isinstance(index, str) else list(index))
        _check_columns(self, dict.fromkeys(keys))
        names = [values] if isinstance(values, str) else list(values)
        cells = _cells(rows, keys, columns, conditions)
        return _frame(cells, keys, columns, names, isinstance(values, str))

    def _repr_html_(self) -> str:
        caption = f"<p><b>{html.escape(self.title)}</b> ({len(self.rows)} rows)</p>"
        return caption + html_table(self.rows, self.columns)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.title!r}: {len(self.rows)} rows>"


@dataclass(repr=False)
class Selection(ResultTable):
    """Rows of a table that met :meth:`ResultTable.where`'s conditions: a table again."""

    rows: list[dict[str, Any]] = field(default_factory=list)
    title: str = "synrob result"


def _matches(value: Any, wanted: Any) -> bool:
    if isinstance(wanted, (list, tuple, set, frozenset)):
        return value in wanted
    return bool(value == wanted)


def _check_columns(table: ResultTable, names: Mapping[str, Any]) -> None:
    """A :class:`ParameterError` for a column no row has (with the close names)."""
    import difflib

    have = table.columns
    for name in names:
        if name not in have:
            close = difflib.get_close_matches(name, have, n=3)
            hint = f" (did you mean {', '.join(close)}?)" if close else ""
            raise ParameterError(f"no column {name!r} in this table{hint}; its columns: "
                                 + ", ".join(have))


def _default_index(rows: Sequence[Mapping[str, Any]], columns: str) -> list[str]:
    """The :data:`KEY_COLUMNS` (other than ``columns``) whose values differ among ``rows``."""
    return [k for k in KEY_COLUMNS if k != columns
            and len({_hashable(r.get(k)) for r in rows}) > 1]


def _hashable(value: Any) -> Any:
    return json.dumps(value, sort_keys=True, default=str) if isinstance(value, (dict, list)) \
        else value


def _cells(rows: Sequence[Mapping[str, Any]], keys: Sequence[str], columns: str,
           conditions: Mapping[str, Any]) -> dict[tuple[Any, ...], dict[Any, Mapping[str, Any]]]:
    """``{index tuple: {column value: row}}`` in first-seen order; two rows in one cell are a
    :class:`ParameterError` naming the columns they differ in."""
    cells: dict[tuple[Any, ...], dict[Any, Mapping[str, Any]]] = {}
    for r in rows:
        key = tuple(_hashable(r.get(k)) for k in keys)
        cell = cells.setdefault(key, {})
        col = _hashable(r.get(columns))
        if col in cell:
            raise ParameterError(_collision(cell[col], r, keys, columns, conditions))
        cell[col] = r
    return cells


def _collision(a: Mapping[str, Any], b: Mapping[str, Any], keys: Sequence[str], columns: str,
               conditions: Mapping[str, Any]) -> str:
    differ = [k for k in dict.fromkeys([*a, *b]) if k not in MEASUREMENT_COLUMNS
              and _hashable(a.get(k)) != _hashable(b.get(k))]
    told = ", ".join(f"{k}={a.get(k)!r}" for k in [*keys, columns])
    what = ", ".join(f"{k} ({cell_text(a.get(k))!r} vs {cell_text(b.get(k))!r})"
                     for k in differ[:6]) or "nothing but their values"
    key_differ = [k for k in differ if k in KEY_COLUMNS]
    hint = (f"; choose with where(...)/pivot({', '.join(f'{k}=...' for k in key_differ)}) or "
            f"add {key_differ} to index=" if key_differ else "; add them to index=")
    return (f"pivot: two rows fall in one cell ({told}) and differ in {what}: a pivot will not "
            f"pick one number of several{hint}")


def _frame(cells: Mapping[tuple[Any, ...], Mapping[Any, Mapping[str, Any]]],
           keys: Sequence[str], columns: str, names: Sequence[str], single: bool) -> Any:
    """The DataFrame of :meth:`ResultTable.pivot`'s cells (index and columns as first seen)."""
    pd = _pandas()
    cols = list(dict.fromkeys(c for cell in cells.values() for c in cell))
    data = [[(cell[c].get(n) if c in cell else None) for n in names for c in cols]
            for cell in cells.values()]
    header = (pd.Index(cols, name=columns) if single else
              pd.MultiIndex.from_product([names, cols], names=[None, columns]))
    if keys:
        index = (pd.Index([k[0] for k in cells], name=keys[0]) if len(keys) == 1 else
                 pd.MultiIndex.from_tuples(list(cells), names=list(keys)))
    else:
        index = pd.RangeIndex(len(cells))
    return pd.DataFrame(data, index=index, columns=header)


def _pandas() -> Any:
    try:
        import pandas as pd
    except ImportError:
        raise ResourceError("to_pandas() needs pandas, which is not installed: "
                            "pip install 'synrob-perturb[pandas]' (or pandas)") from None
    return pd
