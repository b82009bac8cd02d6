"""Minimal-pair files in the field's formats: MultiBLiMP 1.0's TSV and BLiMP's JSONL.

Written from synrob's agreement pairs (``synrob perturb -k agreement --format multiblimp`` or
``--format blimp``) and read back, or read as released, for scoring (``synrob score --pairs``).

* **MultiBLiMP 1.0** (Jumelet, Weissweiler, Nivre & Bisazza 2025; github.com/jumelet/multiblimp,
  huggingface.co/datasets/jumelet/multiblimp, one ``data.tsv`` per language): one pair per row of
  a tab-separated file with a header, the grammatical sentence in ``sen``, the ungrammatical one
  in ``wrong_sen``. synrob writes :data:`MULTIBLIMP_COLUMNS`, the released files' columns that a
  treebank pair determines, in the release's order (``tests/data/pairs/README.md`` says where
  each comes from), and one column ``synrob`` more: the pair's :func:`provenance` as JSON. The
  agreeing words: ``child`` (the subject's head word), ``verb`` (the word the subject depends
  on), ``cop`` (the agreeing auxiliary or copula of that verb, when the agreeing word is not the
  verb itself; else empty) and ``head`` (the agreeing word), each with its 0-based word index
  (``*_idx``: the word's ID minus 1); ``distance`` is ``head_idx - child_idx`` (negative: the
  verb comes first; ``wo`` says ``SV`` or ``VS``); ``swap_head`` is the agreeing word's form in
  ``wrong_sen``; ``feature_vals``, ``grammatical_feature`` and ``ungrammatical_feature`` spell
  the values as UniMorph does (``SG -> PL``); ``phenomenon`` is ``SV-#``, ``SV-P`` or ``SV-G``
  (Number, Person, Gender), ``SP-#``/``SP-P``/``SP-G`` when the agreeing word is a participle
  (``VerbForm=Part``), as MultiBLiMP's subject-participle sets; ``prefix`` is ``sen`` before the
  agreeing word.
* **BLiMP** (Warstadt et al. 2020; github.com/alexwarstadt/blimp, one JSON object per line):
  ``sentence_good``, ``sentence_bad`` and BLiMP's paradigm fields (:func:`blimp_line`), with
  ``pairID`` the pair's id, and the key ``synrob`` holding the same provenance.

A pair's id is its perturbed sentence's ``sent_id`` in every format (the ``id`` of the
``synrob`` object). :func:`read_pairs` reads either format; a file synrob did not write has no
``synrob`` column, so each pair's id is ``FILE:LINE``, the pairs of one ``sen`` share a source
(the first such pair's id; BLiMP: every pair its own) and no pair has agreement metadata.
"""

from __future__ import annotations

import csv
import io
import json
import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import SynrobError
from .tsv import tsv_line

__all__ = ["MULTIBLIMP_COLUMNS", "PAIR_FORMATS", "PairWords", "PairOut", "PairItem",
           "PairsFile", "phenomenon", "unimorph_value", "text_prefix", "provenance",
           "multiblimp_header", "multiblimp_row", "blimp_line", "read_pairs"]

#: The pair formats, and the columns (keys) each must have to be read.
PAIR_FORMATS = {"multiblimp": ("sen", "wrong_sen"), "blimp": ("sentence_good", "sentence_bad")}
#: The columns synrob writes, in order: MultiBLiMP 1.0's that a treebank pair determines, then
#: ``synrob`` (the provenance as JSON).
MULTIBLIMP_COLUMNS = ("sen", "verb", "verb_idx", "cop", "cop_idx", "child", "child_idx",
                      "child_upos", "head", "head_idx", "head_upos", "distance", "swap_head",
                      "feature_vals", "prefix", "wrong_sen", "phenomenon",
                      "grammatical_feature", "ungrammatical_feature", "wo", "synrob")
_CODES = {"Number": "#", "Person": "P", "Gender": "G"}
_UNIMORPH = {"Sing": "SG", "Plur": "PL", "Dual": "DU", "Masc": "MASC", "Fem": "FEM",
             "Neut": "NEUT"}


@dataclass(frozen=True)
class PairWords:
    """The agreeing words of a pair, as MultiBLiMP names them (indices: 0-based words)."""

    child: str
    child_idx: int
    child_upos: str
    verb: str
    verb_idx: int
    cop: str | None
    cop_idx: int | None
    head: str
    head_idx: int
    head_upos: str
    participle: bool


@dataclass(frozen=True)
class PairOut:
    """One agreement pair to write: ``good`` is the original text, ``bad`` its twin."""

    id: str
    source: str
    good: str
    bad: str
    agreement: Mapping[str, Any]  # the pair's synrob.agreement comment
    words: PairWords
    meta: Mapping[str, Any]  # lang, perturber, version, params, seed


def phenomenon(feature: str, participle: bool) -> str:
    """MultiBLiMP's code: ``SV-#`` (Number), ``SV-P`` (Person), ``SV-G`` (Gender); ``SP-``
    for a participle."""
    return f"{'SP' if participle else 'SV'}-{_CODES[feature]}"


def unimorph_value(value: str) -> str:
    """A UD value as UniMorph writes it (``Sing`` -> ``SG``; a person stays ``1``/``2``/``3``)."""
    return _UNIMORPH.get(value, value)


def text_prefix(good: str, bad: str, form: str) -> str:
    """``good`` before the word ``form`` that ``bad`` changes, right-stripped: the text up to
    the last start of ``form`` that covers the first character where the texts differ (else
    up to the space before that character)."""
    d = next((i for i, (a, b) in enumerate(zip(good, bad, strict=False)) if a != b),
             min(len(good), len(bad)))
    starts = [i for i in range(max(0, d - len(form) + 1), d + 1) if form
              and good.startswith(form, i)]
    at = starts[-1] if starts else good.rfind(" ", 0, d) + 1
    return good[:at].rstrip()


def provenance(pair: PairOut) -> dict[str, Any]:
    """The ``synrob`` object of a written pair: its id, source, language, the perturber that
    made it (name, version, parameters, seed) and its ``synrob.agreement`` metadata."""
    return {"id": pair.id, "source": pair.source, **pair.meta, "agreement": dict(pair.agreement)}


def multiblimp_header() -> str:
    """The header line of a MultiBLiMP TSV as synrob writes it."""
    return tsv_line(list(MULTIBLIMP_COLUMNS))


def multiblimp_row(pair: PairOut) -> str:
    """One row of :data:`MULTIBLIMP_COLUMNS` (quoted as pandas' ``to_csv`` quotes)."""
    a, w = pair.agreement, pair.words
    old, new = unimorph_value(str(a["from"])), unimorph_value(str(a["to"]))
    row: dict[str, Any] = {
        "sen": pair.good, "verb": w.verb, "verb_idx": w.verb_idx, "cop": w.cop or "",
        "cop_idx": "" if w.cop_idx is None else w.cop_idx, "child": w.child,
        "child_idx": w.child_idx, "child_upos": w.child_upos, "head": w.head,
        "head_idx": w.head_idx, "head_upos": w.head_upos,
        "distance": w.head_idx - w.child_idx, "swap_head": a["form_to"],
        "feature_vals": f"{old} -> {new}", "prefix": text_prefix(pair.good, pair.bad, w.head),
        "wrong_sen": pair.bad, "phenomenon": phenomenon(str(a["feature"]), w.participle),
        "grammatical_feature": old, "ungrammatical_feature": new,
        "wo": "SV" if w.child_idx < w.head_idx else "VS",
        "synrob": json.dumps(provenance(pair), ensure_ascii=False)}
    return tsv_line([str(row[c]) for c in MULTIBLIMP_COLUMNS])


def blimp_line(pair: PairOut) -> str:
    """One JSON line: ``sentence_good``, ``sentence_bad``, BLiMP's paradigm fields (field
    ``morphology``, linguistics_term ``subject_verb_agreement``, UID
    ``synrob_agreement_<feature>``, the method flags, ``pairID`` = the pair's id) and ``synrob``."""
    record = {"sentence_good": pair.good, "sentence_bad": pair.bad, "field": "morphology",
              "linguistics_term": "subject_verb_agreement",
              "UID": f"synrob_agreement_{str(pair.agreement['feature']).lower()}",
              "simple_LM_method": True, "one_prefix_method": False, "two_prefix_method": False,
              "lexically_identical": False, "pairID": pair.id, "synrob": provenance(pair)}
    return json.dumps(record, ensure_ascii=False) + "\n"


# ------------------------------------------------------------------ reading
@dataclass(frozen=True)
class PairItem:
    """One pair read from a file: ``good`` should be preferred to ``bad``."""

    id: str
    source: str  # pairs of one source sentence share it (the bootstrap's cluster)
    good: str
    bad: str
    agreement: dict[str, Any] | None  # synrob.agreement metadata, when synrob wrote the file
    line: int


@dataclass(frozen=True)
class PairsFile:
    """A pairs file read: its path, its format (``multiblimp`` or ``blimp``) and its pairs."""

    path: str
    format: str
    items: list[PairItem]


def _format_of(path: Path, first: str) -> str:
    suffix = path.suffix.lower()
    if suffix == ".tsv":
        return "multiblimp"
    if suffix in (".jsonl", ".json"):
        return "blimp"
    return "blimp" if first.lstrip().startswith("{") else "multiblimp"


def read_pairs(path: str | os.PathLike[str]) -> PairsFile:
    """The pairs of a MultiBLiMP TSV (``.tsv``, or a file whose first line is not a JSON
    object) or a BLiMP JSONL file (``.jsonl``/``.json``, or a first line ``{...``). A
    missing file, an empty one, a missing required column (key) or value, or a malformed
    line is a :class:`~synrob.perturb.errors.SynrobError` of one line naming the file and
    the column or line; nothing is returned in part."""
    p = Path(path)
    if not p.is_file():
        raise SynrobError(f"{p}: no such pairs file")
    try:
        with open(p, encoding="utf-8-sig", newline="") as fh:  # a quoted field keeps its \r
            text = fh.read()
    except UnicodeDecodeError as exc:
        raise SynrobError(f"{p}: not UTF-8 (byte {exc.start}: {exc.reason})") from None
    lines = text.split("\n")  # JSON leaves U+2028 unescaped: no str.splitlines
    first = next((x for x in lines if x.strip()), None)
    if first is None:
        raise SynrobError(f"{p}: empty pairs file (a MultiBLiMP TSV needs a header with "
                          "sen and wrong_sen; a BLiMP JSONL file one object per line)")
    fmt = _format_of(p, first)
    items = list(_multiblimp_items(p, text) if fmt == "multiblimp" else _blimp_items(p, lines))
    if not items:
        raise SynrobError(f"{p}: no pair (a header and no row)")
    return PairsFile(str(p), fmt, items)


def _synrob(p: Path, line: int, raw: Any) -> dict[str, Any] | None:
    """The ``synrob`` object of a row (JSON text in a TSV, an object in JSONL), checked."""
    if raw in (None, ""):
        return None
    try:
        obj = json.loads(raw) if isinstance(raw, str) else raw
    except json.JSONDecodeError as exc:
        raise SynrobError(f"{p}:{line}: column synrob is not JSON ({exc.msg})") from None
    if not isinstance(obj, dict) or not isinstance(obj.get("id"), str) or not obj["id"]:
        raise SynrobError(f"{p}:{line}: column synrob has no id")
    agreement = obj.get("agreement")
    if agreement is not None and not isinstance(agreement, dict):
        raise SynrobError(f"{p}:{line}: synrob.agreement is not an object")
    return obj


def _item(p: Path, line: int, good: Any, bad: Any, names: tuple[str, str],
          meta: dict[str, Any] | None, sources: dict[str, str]) -> PairItem:
    for value, name in ((good, names[0]), (bad, names[1])):
        if not isinstance(value, str) or not value.strip():
            raise SynrobError(f"{p}:{line}: empty {name}")
    own = f"{p.name}:{line}"
    if meta is not None:
        return PairItem(meta["id"], str(meta.get("source") or meta["id"]), good, bad,
                        meta.get("agreement"), line)
    source = sources.setdefault(good, own) if names[0] == "sen" else own
    return PairItem(own, source, good, bad, None, line)


def _multiblimp_items(p: Path, text: str) -> Iterator[PairItem]:
    reader = csv.reader(io.StringIO(text, newline=""), delimiter="\t")
    header = next(row for row in reader if any(cell.strip() for cell in row))
    for name in PAIR_FORMATS["multiblimp"]:
        if name not in header:
            raise SynrobError(f"{p}: no column {name!r} in the header (a MultiBLiMP TSV needs "
                              f"sen and wrong_sen; it has {', '.join(header[:8]) or 'none'}"
                              f"{', ...' if len(header) > 8 else ''})")
    col = {name: header.index(name) for name in header}
    sources: dict[str, str] = {}
    for row in reader:
        line = reader.line_num
        if not any(cell.strip() for cell in row):
            continue
        if len(row) != len(header):
            raise SynrobError(f"{p}:{line}: {len(row)} columns, the header has {len(header)}")
        meta = _synrob(p, line, row[col["synrob"]]) if "synrob" in col else None
        yield _item(p, line, row[col["sen"]], row[col["wrong_sen"]], ("sen", "wrong_sen"),
                    meta, sources)


def _blimp_items(p: Path, lines: list[str]) -> Iterator[PairItem]:
    sources: dict[str, str] = {}
    for line, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        try:
            obj = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise SynrobError(f"{p}:{line}: not a JSON object ({exc.msg})") from None
        if not isinstance(obj, dict):
            raise SynrobError(f"{p}:{line}: not a JSON object")
        for name in PAIR_FORMATS["blimp"]:
            if name not in obj:
                raise SynrobError(f"{p}:{line}: no key {name!r} (a BLiMP line needs "
                                  "sentence_good and sentence_bad)")
        meta = _synrob(p, line, obj.get("synrob"))
        yield _item(p, line, obj["sentence_good"], obj["sentence_bad"],
                    ("sentence_good", "sentence_bad"), meta, sources)
