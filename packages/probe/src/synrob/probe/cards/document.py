"""``card.json`` from the grid's rows, and the card's other files: the pairs' scores, the
figures (:mod:`.figure`), ``card.md`` (:mod:`.markdown`) and ``card.html`` (:mod:`.page`).

``card.json`` follows the JSON Schema shipped beside this module (``card.schema.json``,
:data:`SCHEMA_VERSION`; docs/card.md): ``schema``, ``schema_version``, ``model`` (name,
identity, dtype, revision, content hash of its files, quantization and placement, layers, LM
head), ``settings`` (everything the card depends on, and per section key the settings and runs
that made its numbers), ``languages`` (per language its treebank, sections and headline),
``synrob_version``, ``versions``, ``written``, ``grid`` (runs executed and reused) and
``files``. Every file is written atomically; NaN is written as null.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .figure import card_figure

__all__ = ["SCHEMA", "SCHEMA_VERSION", "schema_path", "card_json", "write_card"]

SCHEMA = "synrob-card"
#: 1.0.0: the first schema.
SCHEMA_VERSION = "1.0.0"


def schema_path() -> Path:
    """The JSON Schema of ``card.json`` (shipped in the package)."""
    return Path(__file__).with_name("card.schema.json")


def _portable(value: Any, root: Path) -> Any:
    """``value`` with every absolute path inside ``root`` made relative to it."""
    if isinstance(value, Mapping):
        return {k: _portable(v, root) for k, v in value.items()}
    if isinstance(value, list):
        return [_portable(v, root) for v in value]
    if isinstance(value, str) and value.startswith(str(root) + "/"):
        return value[len(str(root)) + 1:]
    return value


def _finite(obj: Any) -> Any:
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    if isinstance(obj, Mapping):
        return {k: _finite(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_finite(v) for v in obj]
    return obj


def _model(info: Any) -> dict[str, Any]:
    options = info.identity.get("options", {})
    return {"name": info.name, "identity": info.identity, "num_layers": info.num_layers,
            "lm_head": info.lm_kind, "dtype": options.get("precision"),
            "revision": options.get("revision"),
            "content_hash": info.identity.get("resource", {}),
            "quantization": options.get("quantization", "none"), "placement": info.placement}


def _pairs_files(grid: Any, rows: list[dict[str, Any]], outdir: Path) -> dict[str, str]:
    """Write each behaviour run's pairs (every pair's scores and its metadata) as
    ``pairs/LANG-FEATURE.jsonl``; ``{"LANG/FEATURE": file}``."""
    from synrob.perturb.io.atomic import write_text_atomic

    out = {}
    for r in rows:
        if r.get("part") == "behaviour" and r.get("bucket") == "all" and "_pairs" in r:
            rel = f"pairs/{r['lang']}-{r['feature']}.jsonl"
            write_text_atomic(outdir / rel, "".join(
                json.dumps(_finite(p), ensure_ascii=False) + "\n" for p in r["_pairs"]))
            out[f"{r['lang']}/{r['feature']}"] = rel
    return out


def card_json(grid: Any, result: Any, outdir: Path) -> dict[str, Any]:
    """The content of ``card.json`` (see the module docstring)."""
    from ..runtime.provenance import probe_version, utc_now, versions
    from .headline import headline
    from .sections import language_sections

    rows = list(result.rows)
    keys = {r["id"]: r["key"] for r in result.runs}
    pairs = _pairs_files(grid, rows, outdir)
    languages, sections_settings = {}, {}
    for lang in grid.settings.languages:
        counts = grid.pair_counts(lang, _ctx(outdir))
        sections, settings = language_sections(grid, rows, lang, counts, keys)
        for f, entry in sections["behaviour"].get("features", {}).items():
            entry["scores_file"] = pairs.get(f"{lang}/{f}")
            entry["pairs_file"] = _pairs_file(grid, lang, f, outdir)
        sections_settings.update(settings)
        languages[lang] = {"treebank": grid.treebanks[lang].record(), "sections": sections,
                           "headline": headline(lang, sections, grid.settings.model)}
    data = {"schema": SCHEMA, "schema_version": SCHEMA_VERSION, "model": _model(grid.info),
            "settings": {**grid.settings.as_json(), "sections": sections_settings},
            "languages": languages, "synrob_version": probe_version(), "versions": versions(),
            "written": utc_now(), "definitions": "docs/card.md",
            "grid": {"experiment": grid.name, "version": grid.version, "runs": len(result.runs),
                     "executed": result.executed, "results": "work/results.json"},
            "files": []}
    return _finite(_portable(data, outdir.resolve()))


def _ctx(outdir: Path) -> Any:
    from ..experiments.base import Context

    return Context(outdir / "work")


def _pairs_file(grid: Any, lang: str, feature: str, outdir: Path) -> dict[str, Any]:
    """The agreement pairs file (CoNLL-U, with every pair's ``synrob.agreement`` metadata)."""
    from ..experiments.data import content_hash

    sub = grid.sub(_ctx(outdir), lang, f"agreement-{feature}")
    path = Path(grid.amnesic(lang, feature).paths(sub)["pairs"])
    return {"path": str(path), "sha256": content_hash(path)}


def write_card(grid: Any, result: Any, outdir: Path) -> Any:
    """Write ``card.json``, the figures, ``card.md`` and ``card.html``; the :class:`~.result.Card`."""
    from synrob.perturb.io.atomic import write_text_atomic

    from ..render.figures import save_png
    from .markdown import card_markdown
    from .page import card_page
    from .result import Card

    data = card_json(grid, result, outdir)
    figures = [save_png(card_figure(data, lang), outdir / f"card-{lang}.png")
               for lang in data["languages"]]
    data["files"] = ["card.json", "card.md", "card.html", *(f.name for f in figures),
                     *sorted({e["scores_file"] for lang in data["languages"].values()
                              for e in lang["sections"]["behaviour"].get("features", {}).values()
                              if e.get("scores_file")})]
    text = card_markdown(data)
    write_text_atomic(outdir / "card.md", text)
    write_text_atomic(outdir / "card.html", card_page(data, text, figures))
    write_text_atomic(outdir / "card.json", json.dumps(data, indent=1, ensure_ascii=False,
                                                      allow_nan=False) + "\n")
    return Card(data, outdir)
