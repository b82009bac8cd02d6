"""A self-contained HTML report: one file, readable offline, on a phone and on paper.

:func:`html_page` builds the document from a title, a provenance mapping, a markdown text (an
experiment's ``report.md``), tables of rows and PNG figures; :func:`write_report_html` writes
``OUTDIR/report.html`` for an experiment from its ``results.json`` content.

Self-contained: the figures are inlined as ``data:image/png;base64`` URIs, the style sheet is
inline, and a Content-Security-Policy (``default-src 'none'``) forbids the page any other
resource, so opening it never touches the network. There is no script, except on a page asked
for ``sortable`` tables (the comparison page): one short inline script (:data:`SORT_SCRIPT`,
allowed by its SHA-256 in the policy, no other script can run) that sorts a table by the column
whose header is clicked; those tables sit collapsed in a ``<details>`` element, below the
summary tables (:class:`Summary`: a few rows of text, which wrap to fit the page). Result files are untrusted
text: every string from the data is HTML-escaped, markdown is rendered with raw HTML disabled,
and a markdown link is kept as a link only when it points inside the page (``#...``); any other
link becomes its text followed by its target in brackets. A markdown image whose target names
one of the page's PNG files (by file name, or by trailing path components) is inlined there and
not repeated among the figures; an image that names no such file is left out, its alt text in
its place.

Every table cell holding a number (not a boolean) carries the exact value in ``data-value``
(Python's ``repr``: ``float(cell["data-value"])`` gives back the number, NaN included) and a
six-significant-digit form as its text; dicts and lists are compact JSON; ``None`` is an empty
cell with ``data-value="null"``; a column a row lacks is an empty cell without ``data-value``.

Only the standard library and markdown-it-py are imported (no torch, matplotlib, numpy).
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
import math
import posixpath
from collections.abc import Mapping, Sequence
from pathlib import Path, PurePosixPath
from typing import Any, NamedTuple
from urllib.parse import unquote

from markdown_it import MarkdownIt
from synrob.perturb.io.atomic import write_text_atomic
from synrob.perturb.io.table import columns_of

__all__ = ["Summary", "html_page", "html_document", "write_report_html"]

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"

#: A cell longer than this many characters wraps (in a column at least 28rem wide).
LONG_CELL = 40

#: Forbids every resource but inline style and data: images (no script, font, fetch or frame).
CSP = "default-src 'none'; img-src data:; style-src 'unsafe-inline'"

#: Sorts a ``table.sortable`` by the column of the header button clicked (numbers by their
#: exact ``data-value``, text as text, empty cells last; a second click reverses).
SORT_SCRIPT = """
document.querySelectorAll("table.sortable").forEach(function (table) {
  var heads = Array.from(table.tHead.rows[0].cells);
  heads.forEach(function (th, col) {
    th.querySelector("button").addEventListener("click", function () {
      var up = th.getAttribute("aria-sort") !== "ascending";
      heads.forEach(function (h) { h.removeAttribute("aria-sort"); });
      th.setAttribute("aria-sort", up ? "ascending" : "descending");
      var key = function (row) {
        var cell = row.cells[col], v = cell ? cell.getAttribute("data-value") : null;
        if (!cell || cell.textContent === "" && v === null || v === "null") return [2, 0];
        if (v !== null) {
          var n = v === "inf" ? Infinity : v === "-inf" ? -Infinity : Number(v);
          return isNaN(n) ? [2, 0] : [0, n];
        }
        return [1, cell.textContent];
      };
      var body = table.tBodies[0], rows = Array.from(body.rows);
      rows.sort(function (a, b) {
        var x = key(a), y = key(b);
        if (x[0] !== y[0]) return x[0] - y[0];
        if (x[0] === 2) return 0;
        var c = x[0] === 0 ? x[1] - y[1] : String(x[1]).localeCompare(String(y[1]));
        return up ? c : -c;
      });
      rows.forEach(function (r) { body.appendChild(r); });
    });
  });
});
"""


class Summary(NamedTuple):
    """A summary table: a caption and rows of text (dicts; the columns are the union of their
    keys; the ``labels`` columns are row headers)."""

    caption: str
    rows: Sequence[Mapping[str, Any]]
    labels: Sequence[str] = ()


def _csp(script: str | None) -> str:
    """:data:`CSP`, plus the hash of ``script`` (the only script it lets run) when given."""
    if script is None:
        return CSP
    digest = base64.b64encode(hashlib.sha256(script.encode("utf-8")).digest()).decode("ascii")
    return f"{CSP}; script-src 'sha256-{digest}'"

STYLE = """
:root { color-scheme: light; }
* { box-sizing: border-box; }
body { font: 16px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif;
       color: #1b1b1b; background: #fff; margin: 0 auto; padding: 0.75rem; max-width: 72rem; }
h1 { font-size: 1.5rem; margin: 0.5rem 0; overflow-wrap: anywhere; }
h2 { font-size: 1.25rem; border-bottom: 1px solid #ddd; padding-bottom: 0.2rem; }
h3 { font-size: 1.1rem; }
nav a { margin-right: 0.8rem; }
p, li, dd, figcaption { overflow-wrap: break-word; }
code, pre { font-family: ui-monospace, "SFMono-Regular", Menlo, Consolas, monospace;
            font-size: 0.9em; }
pre { background: #f5f5f5; padding: 0.5rem; overflow-x: auto; white-space: pre-wrap; }
.scroll { overflow-x: auto; -webkit-overflow-scrolling: touch; margin: 0.5rem 0 1rem;
          max-width: 100%; }
table { border-collapse: collapse; font-size: 0.85rem; }
caption { text-align: left; font-weight: 600; padding: 0.3rem 0; }
th, td { border: 1px solid #ccc; padding: 0.2rem 0.45rem; vertical-align: top; }
th { background: #f0f0f0; text-align: left; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
table.data th, table.data td { white-space: nowrap; }
table.data td.long { white-space: normal; min-width: 28rem; overflow-wrap: anywhere; }
table.summary { width: 100%; }
table.summary th, table.summary td { white-space: normal; overflow-wrap: anywhere; }
table.summary td { text-align: right; font-variant-numeric: tabular-nums; }
table.sortable th button { font: inherit; font-weight: 600; border: 0; padding: 0;
                           background: none; cursor: pointer; text-align: left; }
table.sortable th[aria-sort="ascending"] button::after { content: " ▲"; }
table.sortable th[aria-sort="descending"] button::after { content: " ▼"; }
details > summary { cursor: pointer; font-weight: 600; margin: 0.5rem 0; }
td.json { font-family: ui-monospace, Menlo, Consolas, monospace; font-size: 0.8em; }
tbody tr:nth-child(even) { background: #fafafa; }
table.kv th { width: 1%; white-space: nowrap; }
dt { font-weight: 600; }
dd { margin: 0 0 0.5rem 1rem; }
img { max-width: 100%; height: auto; display: block; margin: 0.5rem 0; }
figure { margin: 1rem 0; break-inside: avoid; page-break-inside: avoid; }
figcaption { font-size: 0.85rem; color: #555; }
.missing { color: #8a4b00; font-style: italic; }
.target { color: #555; font-size: 0.9em; }
footer { color: #666; font-size: 0.8rem; margin-top: 2rem; }
@media (max-width: 40rem) {
  body { font-size: 15px; padding: 0.5rem; }
  table { font-size: 0.78rem; }
}
@media print {
  body { max-width: none; padding: 0; font-size: 10pt; }
  nav { display: none; }
  .scroll { overflow: visible !important; max-width: none; }
  table { font-size: 7.5pt; }
  th, td { overflow-wrap: anywhere; }
  thead { display: table-header-group; }
  /* a data table prints each row as a block of "column value" pairs, so no column is cut */
  table.data, table.data tbody, table.data tr, table.data caption { display: block; }
  table.data thead { display: none; }
  table.data tr { border-bottom: 1px solid #999; padding: 0.15rem 0; }
  table.data td, table.data td.num, table.data td.long { display: inline; border: none;
      padding: 0 0.6em 0 0; white-space: normal; min-width: 0; overflow-wrap: anywhere; }
  table.data td:empty { display: none; }
  table.data td::before { content: attr(data-col) " "; color: #666; }
  tr, img, figure, pre { break-inside: avoid; page-break-inside: avoid; }
  h2, h3 { break-after: avoid; page-break-after: avoid; }
  tbody tr:nth-child(even) { background: none; }
}
"""


def _e(value: Any) -> str:
    """``value`` as escaped HTML text (quotes too, so it is safe in an attribute)."""
    return html.escape(str(value), quote=True)


def _compact(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False, default=str)


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _short(value: int | float) -> str:
    if isinstance(value, int):
        return str(value)
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "∞" if value > 0 else "−∞"
    return format(value, ".6g")


def _cell(row: Mapping[str, Any], column: str, col: str) -> str:
    """One ``<td>`` (``col``: the escaped column name, for the print layout): see the module
    docstring for what a cell holds."""
    if column not in row:
        return "<td></td>"
    value = row[column]
    if value is None:
        return f'<td data-col="{col}" data-value="null"></td>'
    if _is_number(value):
        return (f'<td class="num" data-col="{col}" data-value="{_e(repr(value))}">'
                f"{_e(_short(value))}</td>")
    if isinstance(value, bool):
        return f'<td data-col="{col}">{"true" if value else "false"}</td>'
    text = _compact(value) if isinstance(value, (Mapping, list, tuple)) else str(value)
    kind = "json" if isinstance(value, (Mapping, list, tuple)) else "text"
    if len(text) > LONG_CELL:
        kind += " long"
    return f'<td class="{kind}" data-col="{col}">{_e(text)}</td>'


def _table(caption: str, rows: Sequence[Mapping[str, Any]], index: int,
           sortable: bool = False) -> str:
    """Every row as a table; ``sortable``: header buttons (:data:`SORT_SCRIPT`), the whole
    collapsed in a ``<details>`` whose summary gives the caption and the size."""
    rows = [{str(k): v for k, v in r.items()} for r in rows]
    columns = columns_of(rows)
    head = "".join(f'<th scope="col"><button type="button">{_e(c)}</button></th>' if sortable
                   else f'<th scope="col">{_e(c)}</th>' for c in columns)
    pairs = [(c, _e(c)) for c in columns]
    body = "\n".join("<tr>" + "".join(_cell(r, c, e) for c, e in pairs) + "</tr>" for r in rows)
    kind = "data sortable" if sortable else "data"
    table = (f'<div class="scroll"><table id="table-{index}" class="{kind}">'
             f"<caption>{_e(caption)} ({len(rows)} rows)</caption>\n"
             + (f"<thead><tr>{head}</tr></thead>\n" if columns else "")
             + f"<tbody>\n{body}\n</tbody></table></div>")
    if not sortable:
        return table
    return (f"<details><summary>{_e(caption)}: {len(rows)} rows × {len(columns)} columns "
            f"(click a column's name to sort)</summary>\n{table}</details>")


def _summary_table(summary: Summary, index: int) -> str:
    """A :class:`Summary` as a table that wraps to the page's width."""
    rows = [{str(k): v for k, v in r.items()} for r in summary.rows]
    columns = columns_of(rows)
    head = "".join(f'<th scope="col">{_e(c)}</th>' for c in columns)
    body = "\n".join("<tr>" + "".join(
        (f'<th scope="row">{_e(r.get(c, ""))}</th>' if c in summary.labels
         else f"<td>{_e(r.get(c, ''))}</td>") for c in columns) + "</tr>"
        for r in rows)
    return (f'<table id="summary-{index}" class="summary"><caption>{_e(summary.caption)}'
            f"</caption>\n<thead><tr>{head}</tr></thead>\n<tbody>\n{body}\n</tbody></table>")


def _value_html(value: Any) -> str:
    """A provenance value: a mapping as a nested key/value table, a list of scalars joined by
    commas, a list of mappings as one table each, other lists as compact JSON, a float in full
    precision."""
    if isinstance(value, Mapping):
        if not value:
            return "—"
        rows = "".join(f'<tr><th scope="row">{_e(k)}</th><td>{_value_html(v)}</td></tr>'
                       for k, v in value.items())
        return f'<div class="scroll"><table class="kv">{rows}</table></div>'
    if isinstance(value, (list, tuple)):
        if all(v is None or isinstance(v, (str, int, float)) for v in value):
            return _e(", ".join("—" if v is None else str(v) for v in value)) or "—"
        if all(isinstance(v, Mapping) for v in value):
            return "".join(_value_html(v) for v in value)
        return f"<code>{_e(_compact(value))}</code>"
    if value is None:
        return "—"
    if isinstance(value, float):
        return _e(repr(value))
    return _e(value)


def _provenance(provenance: Mapping[str, Any]) -> str:
    items = "\n".join(f"<dt>{_e(k)}</dt><dd>{_value_html(v)}</dd>" for k, v in provenance.items())
    return f'<section id="provenance"><h2>Provenance</h2>\n<dl>\n{items}\n</dl></section>'


def _png_uri(path: Path) -> str | None:
    """``data:image/png;base64,...`` for a readable PNG file, else ``None``."""
    try:
        data = Path(path).read_bytes()
    except OSError:
        return None
    if not data.startswith(PNG_MAGIC):
        return None
    return "data:image/png;base64," + base64.b64encode(data).decode("ascii")


def _match_image(src: str, images: Sequence[Path]) -> int | None:
    """The index of the image a relative markdown target names (its trailing path parts)."""
    if not src or "://" in src or src.startswith(("/", "data:", "#")) or ":" in src.split("/")[0]:
        return None
    target = posixpath.normpath(unquote(src.split("#")[0].split("?")[0]))
    parts = PurePosixPath(target).parts
    if not parts or ".." in parts:
        return None
    for i, image in enumerate(images):
        if Path(image).parts[-len(parts):] == parts:
            return i
    return None


def _markdown_html(text: str, images: Sequence[Path], used: set[int]) -> str:
    """``text`` rendered (commonmark + tables, no raw HTML), images inlined, links neutralised;
    adds to ``used`` the indices of the images it inlined."""
    md = MarkdownIt("commonmark", {"html": False}).enable("table")

    def image(self: Any, tokens: Any, idx: int, options: Any, env: Any) -> str:
        token = tokens[idx]
        alt = self.renderInlineAsText(token.children or [], options, env)
        i = _match_image(str(token.attrGet("src") or ""), images)
        uri = None if i is None else _png_uri(images[i])
        if uri is None:
            return f'<span class="missing">[figure left out: {_e(alt or "no file")}]</span>'
        used.add(i)
        return f'<img src="{uri}" alt="{_e(alt)}">'

    def link_open(self: Any, tokens: Any, idx: int, options: Any, env: Any) -> str:
        href = str(tokens[idx].attrGet("href") or "")
        env.setdefault("links", []).append(href)
        return f'<a href="{_e(href)}">' if href.startswith("#") else '<span class="link">'

    def link_close(self: Any, tokens: Any, idx: int, options: Any, env: Any) -> str:
        href = env["links"].pop()
        if href.startswith("#"):
            return "</a>"
        return f'</span> <span class="target">[{_e(href)}]</span>'

    def table_open(self: Any, tokens: Any, idx: int, options: Any, env: Any) -> str:
        return '<div class="scroll"><table>\n'

    def table_close(self: Any, tokens: Any, idx: int, options: Any, env: Any) -> str:
        return "</table></div>\n"

    for name, rule in [("image", image), ("link_open", link_open), ("link_close", link_close),
                       ("table_open", table_open), ("table_close", table_close)]:
        md.add_render_rule(name, rule)
    return md.render(text, {})


def _figures(images: Sequence[Path], used: set[int]) -> str:
    figures = []
    for i, path in enumerate(images):
        if i in used:
            continue
        name = Path(path).name
        uri = _png_uri(path)
        if uri is None:
            figures.append(f'<p class="missing">[figure left out: {_e(name)} is missing or not '
                           "a PNG file]</p>")
            continue
        figures.append(f'<figure><img src="{uri}" alt="{_e(name)}">'
                       f"<figcaption>{_e(name)}</figcaption></figure>")
    if not figures:
        return ""
    return '<section id="figures"><h2>Figures</h2>\n' + "\n".join(figures) + "</section>"


def html_page(title: str, *, provenance: Mapping[str, Any], markdown: str = "",
              tables: Sequence[tuple[str, Sequence[Mapping[str, Any]]]] = (),
              images: Sequence[Path] = (), summaries: Sequence[Summary] = (),
              summary_note: str = "", sortable: bool = False) -> str:
    """One self-contained HTML document: ``title``, the ``summaries`` (short tables of text,
    after ``summary_note``),
    ``markdown`` rendered (its images that name one of ``images`` inlined in place), the
    ``images`` it did not show as figures, each of ``tables`` (caption, rows) as a table of
    every row (columns: the union of the rows' keys in first-seen order; numbers exact in
    ``data-value``; ``sortable``: collapsed, sorted by a click on a column's name) and
    ``provenance`` as a definition list. No network; no script unless ``sortable``; every
    string from the data escaped (see the module docstring)."""
    images = [Path(p) for p in images]
    used: set[int] = set()
    report = _markdown_html(markdown, images, used) if markdown.strip() else ""
    sections = []
    if summaries:
        note = f"<p>{_e(summary_note)}</p>\n" if summary_note else ""
        sections.append('<section id="summary"><h2>Summary</h2>\n' + note + "\n".join(
            f'<div class="scroll">{_summary_table(s, i)}</div>'
            for i, s in enumerate(summaries, 1)) + "</section>")
    if report:
        sections.append(f'<section id="report">\n{report}</section>')
    figures = _figures(images, used)
    if figures:
        sections.append(figures)
    if tables:
        sections.append('<section id="tables"><h2>Tables</h2>\n' + "\n".join(
            _table(caption, rows, i, sortable) for i, (caption, rows) in enumerate(tables, 1))
            + "</section>")
    sections.append(_provenance(provenance))
    nav = [s for s, present in [("summary", summaries), ("report", report),
                                 ("figures", figures), ("tables", tables),
                                 ("provenance", True)] if present]
    script = SORT_SCRIPT if sortable and tables else None
    return html_document(title, "\n".join(sections), nav=nav, script=script)


def html_document(title: str, body: str, *, nav: Sequence[str] = (),
                  script: str | None = None) -> str:
    """The page around ``body`` (HTML of ``<section>`` elements, escaped by the caller):
    ``title``, links to the sections ``nav`` (their ids), the style sheet, the
    Content-Security-Policy (:data:`CSP`, which lets only ``script`` run: :data:`SORT_SCRIPT`
    or None for no script) and the footer. :func:`html_page` and the card's board use it."""
    links = " ".join(f'<a href="#{_e(s)}">{_e(s)}</a>' for s in nav)
    return (
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f'<meta http-equiv="Content-Security-Policy" content="{_csp(script)}">\n'
        f"<title>{_e(title)}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n"
        f"<header><h1>{_e(title)}</h1><nav>{links}</nav></header>\n<main>\n"
        + body
        + "\n</main>\n<footer>Written by synrob; self-contained: no network, "
        + ("one inline script (sorting)." if script else "no script.")
        + "</footer>\n" + (f"<script>{script}</script>\n" if script else "")
        + "</body>\n</html>\n")


def _experiment_provenance(results: Mapping[str, Any]) -> dict[str, Any]:
    """The provenance of an experiment's ``results.json``, in reading order."""
    lang = results.get("lang") or {}
    runs = results.get("runs") or []
    return {
        "experiment": results.get("experiment"), "version": results.get("version"),
        "seed": results.get("seed"),
        "language": (f"{lang.get('code')} ({lang.get('source')})"
                     if isinstance(lang, Mapping) and lang else lang or None),
        "written": results.get("written"), "runs": len(runs) if isinstance(runs, list) else runs,
        "executed": results.get("executed"), "reused": results.get("reused"),
        "seconds": results.get("seconds"), "stages": results.get("stages") or {},
        "options": results.get("options") or {}, "versions": results.get("versions") or {},
        "files": results.get("files") or [],
    }


def write_report_html(outdir: Path, results: Mapping[str, Any]) -> Path:
    """Write OUTDIR/report.html for an experiment from its results.json content (the dict),
    its report.md (rendered) and the PNG files it lists; atomically; returns the path."""
    outdir = Path(outdir)
    md_path = outdir / "report.md"
    markdown = md_path.read_text(encoding="utf-8") if md_path.is_file() else ""
    images = [outdir / f for f in results.get("files") or []
              if str(f).lower().endswith(".png")]
    runs = [{"id": r.get("id"), "label": r.get("label"), "seconds": r.get("seconds"),
             "reused": r.get("reused")} for r in results.get("runs") or []
            if isinstance(r, Mapping)]
    tables: list[tuple[str, Sequence[Mapping[str, Any]]]] = [
        ("Rows of results.json", list(results.get("rows") or []))]
    if runs:
        tables.append(("Runs", runs))
    page = html_page(f"synrob {results.get('experiment', 'experiment')}",
                     provenance=_experiment_provenance(results), markdown=markdown,
                     tables=tables, images=images)
    path = outdir / "report.html"
    write_text_atomic(path, page)
    return path
