"""A board of cards: one row per model, one column per language and measure
(``synrob board CARD_DIR... -o DIR``: ``board.html``, ``board.csv``).

Every cell is a number of a card with its 95 % interval, linked to the card's page. Cards are
comparable when they were made with the same preset and read the same treebank files (by
SHA-256) in every language they share; the first card is the reference. Others are marked
"not comparable" with the reason, or refused with ``strict``.
"""

from __future__ import annotations

import csv
import io
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from synrob.perturb.errors import ParameterError, arg

__all__ = ["MEASURES", "Board", "build_board", "board"]

Cell = dict[str, Any] | None


def _number(n: Mapping[str, Any] | None) -> Cell:
    if not n or n.get("value") is None:
        return None
    lo, hi = n["ci95"]
    return {"value": n["value"], "ci_low": lo, "ci_high": hi}


def _best_uuas(s: Mapping[str, Any]) -> Cell:
    task = s["structure"].get("tasks", {}).get("distance")
    if not task or task["best_layer"] is None:
        return None
    entry = next(e for e in task["layers"] if e["layer"] == task["best_layer"])
    return _number(entry["measures"].get("uuas"))


def _best_layer(s: Mapping[str, Any]) -> Cell:
    task = s["structure"].get("tasks", {}).get("distance")
    best = task.get("best_layer") if task else None
    return None if best is None else {"value": best, "ci_low": None, "ci_high": None}


def _number_selectivity(s: Mapping[str, Any]) -> Cell:
    task = s["morphosyntax"].get("tasks", {}).get("feats:Number")
    if not task or task["best_layer"] is None:
        return None
    entry = next(e for e in task["layers"] if e["layer"] == task["best_layer"])
    return _number(entry["measures"].get("selectivity_acc"))


def _agreement(s: Mapping[str, Any]) -> Cell:
    return _number(s["behaviour"].get("features", {}).get("Number", {}).get("accuracy"))


def _erasure(s: Mapping[str, Any]) -> Cell:
    entry = s["causal"].get("features", {}).get("Number")
    if not entry or entry["hurts_most"] is None:
        return None
    e = next(x for x in entry["layers"] if x["layer"] == entry["hurts_most"])
    return _number(e["measures"].get("accuracy_change_erased"))


#: measure -> (definition, value from a language's sections)
MEASURES: dict[str, tuple[str, Callable[[Mapping[str, Any]], Cell]]] = {
    "UUAS": ("the structural probe's test UUAS at its best layer on dev", _best_uuas),
    "best layer": ("that layer", _best_layer),
    "Number selectivity": ("the Number probe's selectivity (accuracy minus its control "
                           "task's) at its best layer on dev", _number_selectivity),
    "lead lost": ("the share of the UUAS lead over the chosen baseline lost on Jabberwocky "
                  "sentences", lambda s: _number(s["jabberwocky"].get("lead_lost"))),
    "agreement": ("Number agreement accuracy (the model prefers the grammatical sentence)",
                  _agreement),
    "erasure": ("the change of Number agreement accuracy under LEACE erasure inside the model "
                "at the layer where it hurts most", _erasure),
}


@dataclass
class Board:
    """The board's content: ``entries`` (one per card: model, preset, href, comparable,
    cells by column), ``columns`` (``LANG MEASURE``), ``notes`` (why cards are not
    comparable) and the measures' ``definitions``."""

    entries: list[dict[str, Any]]
    columns: list[str]
    notes: list[str] = field(default_factory=list)
    definitions: dict[str, str] = field(default_factory=dict)
    summary: str = ""
    #: the files :func:`board` wrote
    files: list[Path] = field(default_factory=list)


def _mismatch(ref: Mapping[str, Any], data: Mapping[str, Any]) -> str:
    """Why ``data`` is not comparable with ``ref`` ("" when it is)."""
    rp, dp = ref["settings"]["preset"]["name"], data["settings"]["preset"]["name"]
    if rp != dp:
        return f"preset {dp}, not {rp}"
    for lang in set(ref["languages"]) & set(data["languages"]):
        a = {s: f["sha256"] for s, f in ref["languages"][lang]["treebank"]["files"].items()}
        b = {s: f["sha256"] for s, f in data["languages"][lang]["treebank"]["files"].items()}
        if a != b:
            return f"another {lang} treebank ({data['languages'][lang]['treebank']['spec']})"
    return ""


def build_board(cards: Sequence[str | os.PathLike[str]], out: str | os.PathLike[str], *,
                strict: bool = False) -> Board:
    """The board of ``cards`` (card directories or their ``card.json``) for a page in
    ``out`` (links are relative to it); ``strict``: refuse cards that are not comparable."""
    from .make import _card_json, _read

    if not cards:
        raise ParameterError("board: no card given (give card directories made by synrob card)")
    loaded = [(Path(_card_json(Path(c))), _read(Path(c))) for c in cards]
    ref = loaded[0][1]
    langs = list(dict.fromkeys(lang for _, d in loaded for lang in d["languages"]))
    columns = [f"{lang} {m}" for lang in langs for m in MEASURES]
    entries, notes = [], []
    for path, data in loaded:
        why = _mismatch(ref, data)
        if why and strict:
            raise ParameterError(f"{path}: not comparable with {loaded[0][0]}: {why} "
                                 f"(without {arg('strict')}, it is marked instead)")
        if why:
            notes.append(f"{data['model']['name']} ({path.parent}): not comparable: {why}")
        href = Path(os.path.relpath(path.with_name("card.html").resolve(),
                                    Path(out).resolve())).as_posix()
        cells = {}
        for lang, entry in data["languages"].items():
            for m, (_, get) in MEASURES.items():
                cell = get(entry["sections"])
                if cell is not None:
                    cells[f"{lang} {m}"] = {**cell, "href": href}
        entries.append({"model": data["model"]["name"], "preset": data["settings"]["preset"]
                        ["name"], "card": str(path.parent), "href": href,
                        "comparable": f"no: {why}" if why else "yes", "cells": cells})
    summary = (f"{len(entries)} cards; a cell is a card's number with its 95 % interval and "
               "links to the card; click a column's name to sort.")
    return Board(entries, columns, notes, {m: d for m, (d, _) in MEASURES.items()}, summary)


def _csv(b: Board) -> str:
    buf = io.StringIO()
    head = ["model", "card", "preset", "comparable"]
    for c in b.columns:
        head += [c, f"{c} ci_low", f"{c} ci_high"]
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(head)
    for e in b.entries:
        row = [e["model"], e["card"], e["preset"], e["comparable"]]
        for c in b.columns:
            cell = e["cells"].get(c) or {}
            row += [cell.get(k, "") if cell.get(k) is not None else ""
                    for k in ("value", "ci_low", "ci_high")]
        w.writerow(row)
    return buf.getvalue()


def board(cards: Sequence[str | os.PathLike[str]], out: str | os.PathLike[str] = "synrob-board",
          *, strict: bool = False) -> Board:
    """``synrob board``: the board of ``cards`` (card directories or their ``card.json``),
    written to ``out`` as ``board.html`` and ``board.csv`` (:attr:`Board.files`); ``strict``
    refuses cards that are not comparable instead of marking them."""
    from synrob.perturb.io.atomic import refuse_overwriting_inputs, write_text_atomic

    from .page import board_page

    dest = Path(out)
    if dest.exists() and not dest.is_dir():
        raise ParameterError(f"{dest}: not a directory ({arg('out')} takes a directory)")
    from .make import _card_json

    inputs = [_card_json(Path(c)) for c in cards]
    for name in ("board.html", "board.csv"):
        refuse_overwriting_inputs(dest / name, inputs)
    b = build_board(cards, dest, strict=strict)
    dest.mkdir(parents=True, exist_ok=True)
    b.files = [write_text_atomic(dest / "board.html", board_page(b)),
               write_text_atomic(dest / "board.csv", _csv(b))]
    return b
