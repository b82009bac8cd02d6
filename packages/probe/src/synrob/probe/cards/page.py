"""``card.html`` and ``board.html``: self-contained offline pages
(:mod:`synrob.probe.render.html_report`: inline style, PNGs inlined, a Content-Security-Policy
that forbids every resource; the board's only script is the inline table sorter allowed by
its hash), readable at 1400 px and at a phone's width."""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

__all__ = ["card_page", "board_page"]


def _provenance(data: Mapping[str, Any]) -> dict[str, Any]:
    from .markdown import card_command

    m = data["model"]
    return {"command": card_command(data["settings"]), "model": m["name"],
            "identity": m["identity"], "synrob": data["synrob_version"],
            "written": data["written"], "schema": f"{data['schema']} {data['schema_version']}",
            "runs": data["grid"], "versions": data["versions"],
            "treebanks": {lang: e["treebank"] for lang, e in data["languages"].items()}}


def card_page(data: Mapping[str, Any], markdown: str, figures: Sequence[Path]) -> str:
    """``card.html``: the headline first, then ``card.md`` with its figures, every number as
    a table (exact values), and the provenance."""
    from ..render.html_report import Summary, html_page
    from .numbers import flat_rows

    headline = [{"language": lang, "sentence": c["text"]}
                for lang, e in data["languages"].items() for c in e["headline"]]
    return html_page(f"synrob card: {data['model']['name']}", provenance=_provenance(data),
                     markdown=markdown, images=list(figures),
                     tables=[("Every number of the card", flat_rows(data))],
                     summaries=[Summary("Headline", headline, ("language",))],
                     summary_note="Generated from the numbers below (docs/card.md defines "
                     "every phrase); 95 % intervals in brackets.")


def _e(value: Any) -> str:
    return html.escape(str(value), quote=True)


def _cell(cell: Mapping[str, Any] | None) -> str:
    """One board cell: the number with its interval, linked to its card; the exact value in
    ``data-value`` (what the sorter reads)."""
    if cell is None or cell.get("value") is None:
        return '<td data-value="null"></td>'
    lo, hi = cell.get("ci_low"), cell.get("ci_high")
    text = f"{cell['value']:.3f}" + (f" [{lo:.3f}, {hi:.3f}]" if lo is not None
                                     and hi is not None else "")
    return (f'<td class="num" data-value="{_e(repr(float(cell["value"])))}">'
            f'<a href="{_e(cell["href"])}">{_e(text)}</a></td>')


def board_page(board: Any) -> str:
    """``board.html`` of a :class:`~.board.Board`: one row per model, one column per
    language and measure, sortable by a click on a column's name."""
    from ..render.html_report import SORT_SCRIPT, html_document

    head = "".join(f'<th scope="col"><button type="button">{_e(c)}</button></th>'
                   for c in ["model", "comparable", *board.columns])
    rows = []
    for r in board.entries:
        first = (f'<th scope="row"><a href="{_e(r["href"])}">{_e(r["model"])}</a> '
                 f'<span class="target">{_e(r["preset"])}</span></th>')
        comparable = f"<td>{_e(r['comparable'])}</td>"
        rows.append("<tr>" + first + comparable
                    + "".join(_cell(r["cells"].get(c)) for c in board.columns) + "</tr>")
    notes = "".join(f"<li>{_e(n)}</li>" for n in board.notes)
    defs = "".join(f"<li><b>{_e(c)}</b>: {_e(board.definitions[c.split(' ', 1)[1]])}</li>"
                   for c in board.columns)
    body = ('<section id="board"><h2>Board</h2>\n'
            f"<p>{_e(board.summary)}</p>\n"
            + (f'<ul class="missing">{notes}</ul>\n' if notes else "")
            + '<div class="scroll"><table id="board-table" class="data sortable">'
            f"<caption>{len(board.entries)} cards</caption>\n<thead><tr>{head}</tr></thead>\n"
            f"<tbody>\n" + "\n".join(rows) + "\n</tbody></table></div></section>\n"
            f'<section id="measures"><h2>Measures</h2><ul>{defs}</ul></section>')
    return html_document("synrob board", body, nav=["board", "measures"], script=SORT_SCRIPT)
