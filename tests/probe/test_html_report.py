"""report.html (:mod:`synrob.probe.render.html_report`): unit tests of :func:`html_page`, and the page
of a real small experiment (``synrob run robustness --preset sample``, reduced) opened in
headless chromium: it loads with no console error, its table holds exactly the numbers of
``results.json``, and a phone-width screenshot is not blank.

Console errors are read through the DevTools protocol over ``--remote-debugging-pipe`` (file
descriptors 3 and 4, NUL-separated JSON), which reports uncaught exceptions, ``console.error``
and the browser's own log (a resource that fails to load, a Content-Security-Policy violation);
:func:`test_console_error_detection_catches_errors` checks that it does, on pages made to fail.
"""

from __future__ import annotations

import base64
import io
import json
import math
import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from synrob.probe.render.html_report import html_page, write_report_html

from tests.chromium import PHONE, chromium, needs_chromium, page_values

EVIL = '<script>alert("x")</script><img src=x onerror=alert(1)>'


def _png(path: Path, color: tuple[int, int, int] = (200, 30, 30)) -> Path:
    from PIL import Image, ImageDraw

    im = Image.new("RGB", (120, 80), "white")
    ImageDraw.Draw(im).rectangle((10, 10, 100, 60), fill=color)
    im.save(path, format="PNG")
    return path


class _Tables(HTMLParser):
    """Every ``<table>`` of a document: id, caption, header cells and rows of ``(attrs, text)``
    cells (text unescaped)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tables: list[dict[str, Any]] = []
        self._stack: list[dict[str, Any]] = []
        self._cell: list[Any] | None = None
        self._in_caption = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag == "table":
            table = {"id": a.get("id"), "caption": "", "header": [], "rows": []}
            self.tables.append(table)
            self._stack.append(table)
        elif not self._stack:
            return
        elif tag == "caption":
            self._in_caption = True
        elif tag == "tr":
            self._stack[-1]["rows"].append([])
        elif tag in ("td", "th"):
            self._cell = [tag, a, ""]

    def handle_endtag(self, tag: str) -> None:
        if tag == "table" and self._stack:
            table = self._stack.pop()
            if table["rows"] and table["rows"][0] and all(c[0] == "th" for c in table["rows"][0]):
                table["header"] = [c[2] for c in table["rows"].pop(0)]
            table["rows"] = [[(c[1], c[2]) for c in r] for r in table["rows"]]
        elif tag == "caption":
            self._in_caption = False
        elif tag in ("td", "th") and self._cell is not None and self._stack:
            self._stack[-1]["rows"][-1].append(self._cell)
            self._cell = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell[2] += data
        elif self._in_caption and self._stack:
            self._stack[-1]["caption"] += data


def _tables(page: str) -> dict[str, dict[str, Any]]:
    parser = _Tables()
    parser.feed(page)
    return {t["id"]: t for t in parser.tables if t["id"]}


def _same(a: Any, b: Any) -> bool:
    return a == b or (isinstance(a, float) and isinstance(b, float) and math.isnan(a)
                      and math.isnan(b))


def _check_table(table: dict[str, Any], rows: list[dict[str, Any]]) -> int:
    """Assert that ``table`` holds exactly ``rows``; returns how many numbers it compared."""
    columns = list(dict.fromkeys(k for r in rows for k in r))
    assert table["header"] == columns
    assert len(table["rows"]) == len(rows)
    numbers = 0
    for row, cells in zip(rows, table["rows"], strict=True):
        assert len(cells) == len(columns)
        for column, (attrs, text) in zip(columns, cells, strict=True):
            if column not in row:
                assert text == "" and "data-value" not in attrs, (column, attrs)
                continue
            value = row[column]
            where = f"{column}={value!r}"
            if value is None:
                assert attrs.get("data-value") == "null" and text == "", where
            elif isinstance(value, bool):
                assert text == json.dumps(value), where
            elif isinstance(value, (int, float)):
                parsed = int(attrs["data-value"]) if isinstance(value, int) else float(
                    attrs["data-value"])
                assert _same(parsed, value) and type(parsed) is type(value), where
                numbers += 1
            elif isinstance(value, (dict, list)):
                assert json.dumps(json.loads(text)) == json.dumps(value), where
            else:
                assert text == str(value), where
    return numbers


class _Tags(HTMLParser):
    """Every start tag with its attributes, and the text of ``<style>`` elements."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str]]] = []
        self.style = ""
        self._in_style = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, {k: v or "" for k, v in attrs}))
        self._in_style = tag == "style"

    def handle_endtag(self, tag: str) -> None:
        self._in_style = False

    def handle_data(self, data: str) -> None:
        if self._in_style:
            self.style += data


FORBIDDEN_TAGS = {"script", "link", "iframe", "frame", "object", "embed", "base", "audio",
                  "video", "source", "form", "svg", "math"}
URL_ATTRS = {"src", "href", "srcset", "action", "formaction", "poster", "data", "background",
             "cite", "manifest", "ping", "xlink:href"}


def _assert_self_contained(page: str) -> None:
    """No script, no event handler, no reference to anything outside the page: every ``src``
    is an inline PNG, every ``href`` a fragment, the style sheet loads nothing."""
    assert not re.search(r"""(?:src|href)\s*=\s*["']?\s*https?:""", page, re.I)
    parser = _Tags()
    parser.feed(page)
    assert parser.tags and parser.style
    for tag, attrs in parser.tags:
        assert tag not in FORBIDDEN_TAGS, tag
        assert not [a for a in attrs if a.startswith("on")], (tag, attrs)
        assert "url(" not in attrs.get("style", ""), (tag, attrs)
        assert attrs.get("http-equiv", "").lower() != "refresh"
        for name in URL_ATTRS & set(attrs):
            ok = "#" if name == "href" else "data:image/png;base64,"
            assert name in ("src", "href") and attrs[name].startswith(ok), (tag, name, attrs)
    assert not re.search(r"url\s*\(|@import", parser.style, re.I)


# --- html_page -------------------------------------------------------------------------------


def test_html_page_escapes_everything_from_the_data(tmp_path: Path) -> None:
    rows = [{EVIL: EVIL, "n": 1.5, "d": {"k": EVIL}, "l": [EVIL]}]
    page = html_page(EVIL, provenance={EVIL: EVIL, "options": {"x": EVIL}, "files": [EVIL]},
                     markdown=f"# {EVIL}\n\n{EVIL}\n\n| a |\n| - |\n| {EVIL} |\n",
                     tables=[(EVIL, rows)], images=[tmp_path / "missing.png"])
    assert "<script" not in page.lower() and "<img src=x" not in page
    assert "&lt;script&gt;" in page
    assert page.startswith("<!DOCTYPE html>") and '<meta name="viewport"' in page
    _assert_self_contained(page)
    table = _tables(page)["table-1"]
    assert table["caption"].startswith(EVIL)  # escaped in the file, the same text when read
    assert _check_table(table, rows) == 1


def test_html_page_inlines_pngs_and_references_nothing_outside(tmp_path: Path) -> None:
    a, b = _png(tmp_path / "a.png"), _png(tmp_path / "b.png", (30, 30, 200))
    (tmp_path / "not-png.png").write_text("<svg onload=alert(1)>")
    markdown = "\n\n".join([
        "# Report", "![figure a](a.png) and ![gone](missing.png) and ![abs](/etc/a.png)",
        "![up](../a.png) ![remote](http://example.com/a.png) ![r2](https://example.com/b.png)",
        "[paper](https://arxiv.org/abs/2106.01234), <https://example.org/auto>, "
        "[doc](languages.md), [js](javascript:alert(1)), [inside](#tables)",
    ])
    page = html_page("t", provenance={"experiment": "x"}, markdown=markdown,
                     images=[a, b, tmp_path / "not-png.png", tmp_path / "absent.png"])
    _assert_self_contained(page)
    srcs = re.findall(r'<img src="([^"]*)"', page)
    assert len(srcs) == 2  # a inline in the text (not repeated among figures), b as a figure
    assert [base64.b64decode(s.split(",", 1)[1]) for s in srcs] == [a.read_bytes(),
                                                                     b.read_bytes()]
    assert page.index("figure a") < page.index('id="figures"')
    assert "figure left out: gone" in page and "figure left out: absent.png" in page
    assert "not-png.png is missing or not a PNG" in page
    assert "[https://arxiv.org/abs/2106.01234]" in page  # a link's target, as text only
    assert '<a href="#tables">inside</a>' in page
    assert "max-width: 100%" in page and "@media print" in page


def test_html_page_tables_hold_every_number_exactly() -> None:
    rows = [
        {"experiment": "e", "value": 0.1 + 0.2, "ci_low": 1e-300, "ci_high": -0.0,
         "p_value": float("nan"), "seed": 12345678901234567890, "derived": True},
        {"value": 1 / 3, "p_value": float("inf"), "params": {"budget": 1, "w": [0.5, "x"]},
         "run": None, "seeds": [0, 1], "model": "a" * 100},
        {"value": -2.5e-7, "layer": 0, "ci_low": float("-inf"), "ci_high": 123456.78912345678},
    ]
    page = html_page("t", provenance={}, tables=[("rows", rows), ("empty", [])])
    table = _tables(page)["table-1"]
    assert table["header"] == ["experiment", "value", "ci_low", "ci_high", "p_value", "seed",
                               "derived", "params", "run", "seeds", "model", "layer"]
    assert _check_table(table, rows) == 11
    assert _tables(page)["table-2"]["rows"] == []


def test_html_page_provenance_and_no_heavy_imports() -> None:
    page = html_page("t", provenance={"experiment": "robustness", "seed": 0, "seconds": 0.1 + 0.2,
                                      "stages": {"runs": 1.5}, "versions": {"torch": "2.13"}})
    assert '<section id="provenance">' in page and "<dt>experiment</dt>" in page
    assert "0.30000000000000004" in page and "torch" in page
    code = ("import sys, synrob.probe.render.html_report; "
            "print([m for m in ('torch', 'transformers', 'matplotlib') if m in sys.modules])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, timeout=120)
    assert out.stdout.strip() == "[]"


def test_write_report_html_from_results(tmp_path: Path) -> None:
    _png(tmp_path / "fig.png")
    (tmp_path / "report.md").write_text(f"# exp\n\n![fig](fig.png)\n\n{EVIL}\n", encoding="utf-8")
    results = {
        "experiment": "exp", "version": "1.0", "options": {"a": 1}, "seed": 3,
        "lang": {"code": "en", "source": "default"}, "written": "2026-01-01T00:00:00Z",
        "versions": {"python": "3.11"}, "runs": [{"id": "r1", "label": "l", "seconds": 0.5,
                                                  "reused": False, "key": {}}],
        "executed": 1, "reused": 0, "seconds": 1.25, "stages": {"runs": 1.0},
        "files": ["results.json", "report.md", "fig.png", "report.html"],
        "rows": [{"experiment": "exp", "run": "r1", "seed": 3, "metric": "m", "value": 0.1,
                  "ci_low": 0.05, "ci_high": 0.15, "p_value": 0.01}],
    }
    path = write_report_html(tmp_path, results)
    assert path == tmp_path / "report.html"
    page = path.read_text(encoding="utf-8")
    assert not list(tmp_path.glob(".*.tmp"))
    _assert_self_contained(page)
    assert page.count("data:image/png;base64,") == 1 and "<script" not in page
    assert _check_table(_tables(page)["table-1"], results["rows"]) == 5
    for text in ("en (default)", "2026-01-01T00:00:00Z", "<dt>runs</dt><dd>1</dd>", "1.25"):
        assert text in page


# --- headless chromium -----------------------------------------------------------------------


def _load(url: str, *, timeout: float = 90) -> tuple[list[str], dict[str, Any]]:
    """Open ``url`` at phone width in headless chromium; returns its console errors and, after
    the load event, the page's scroll width and whether every image decoded."""
    probe = ("JSON.stringify({scrollWidth: document.documentElement.scrollWidth, "
             "images: document.images.length, decoded: Array.from(document.images)"
             ".every(i => i.complete && i.naturalWidth > 0)})")
    errors, (info,) = page_values(url, [probe], width=PHONE[0], height=PHONE[1], mobile=True,
                                  timeout=timeout)
    return errors, info


@needs_chromium
def test_console_error_detection_catches_errors(tmp_path: Path) -> None:
    """The detector sees a failing inline script, console.error, a missing resource and a CSP
    violation, and nothing on a page html_page wrote."""
    bad = tmp_path / "bad.html"
    bad.write_text('<!DOCTYPE html><meta charset="utf-8"><p>x</p><img src="missing.png">'
                   '<script>console.error("deliberate error"); notDefinedAnywhere();</script>')
    errors, _ = _load(bad.as_uri())
    text = "\n".join(errors)
    assert "deliberate error" in text and "notDefinedAnywhere" in text, errors
    assert "ERR_FILE_NOT_FOUND" in text, errors
    csp = tmp_path / "csp.html"
    csp.write_text(html_page("t", provenance={}).replace(
        "<main>", '<main><img src="http://example.invalid/x.png">'))
    errors, _ = _load(csp.as_uri())
    assert any("Content Security Policy" in e for e in errors), errors

    good = tmp_path / "good.html"
    rows = [{"metric": "m", "value": 0.1 + 0.2, "params": {"k": "v" * 300}}] * 50
    good.write_text(html_page("t", provenance={"experiment": "x"}, markdown="# r\n\n![f](f.png)",
                              tables=[("rows", rows)], images=[_png(tmp_path / "f.png")]))
    errors, info = _load(good.as_uri())
    assert errors == []
    assert info == {"scrollWidth": PHONE[0], "images": 1, "decoded": True}


@pytest.fixture(scope="module")
def experiment_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real small experiment run through the CLI once (robustness sample, reduced: ~20 s)."""
    from contextlib import redirect_stderr, redirect_stdout

    from synrob.cli.app import run

    out = tmp_path_factory.mktemp("html-report") / "rob"
    err = io.StringIO()
    with redirect_stdout(io.StringIO()), redirect_stderr(err):
        code = run(["run", "robustness", "--preset", "sample", "-o", str(out),
                    "-p", "test_limit=20", "-p", "tasks=pos,root", "-p", "budgets=1",
                    "-p", "epochs=2"])
    assert code == 0, err.getvalue()
    return out


@needs_chromium
@pytest.mark.slow
def test_experiment_report_html_in_headlesschromium(experiment_dir: Path) -> None:
    results = json.loads((experiment_dir / "results.json").read_text(encoding="utf-8"))
    page_path = experiment_dir / "report.html"
    assert "report.html" in results["files"] and page_path.is_file()
    _assert_self_contained(page_path.read_text(encoding="utf-8"))

    # (a) no console error; nothing wider than a phone; the inline figure decodes
    errors, info = _load(page_path.as_uri())
    assert errors == []
    assert info["scrollWidth"] <= PHONE[0] and info["images"] >= 1 and info["decoded"], info

    # (b) the DOM chromium built holds every row of results.json, every number exactly
    dom = chromium("--dump-dom", page_path.as_uri())
    assert dom.returncode == 0, dom.stderr.decode(errors="replace")[-2000:]
    table = _tables(dom.stdout.decode("utf-8"))["table-1"]
    numbers = _check_table(table, results["rows"])
    assert numbers == sum(1 for r in results["rows"] for v in r.values()
                          if isinstance(v, (int, float)) and not isinstance(v, bool))
    assert numbers > 100

    # (c) a screenshot at phone width is not blank
    from PIL import Image

    shot = experiment_dir / "phone.png"
    done = chromium(f"--window-size={PHONE[0]},{PHONE[1]}", f"--screenshot={shot}",
                     page_path.as_uri())
    assert done.returncode == 0 and shot.is_file(), done.stderr.decode(errors="replace")[-2000:]
    with Image.open(shot) as im:
        rgb = im.convert("RGB")
        assert rgb.width == PHONE[0]
        colors = rgb.getcolors(maxcolors=1 << 20) or []
        white = sum(n for n, c in colors if min(c) >= 250)
    assert len(colors) > 50 and white < 0.97 * rgb.width * rgb.height
