"""The perturbed test sets of the ``local-structure`` experiment (Clouatre et al. 2022, App. A).

A :class:`PerturbedSet` is one cell of the perturbation grid: the unperturbed set, a full shuffle,
a phrase shuffle or a neighbour flip of words, subwords or characters (``rho`` for the last two).
:func:`build_set` writes, once, the files a set needs under ``dest``:

* ``jsonl`` - the perturber's JSON lines (original and perturbed text, chrF-2, Levenshtein);
* ``conllu`` - what the encoders read. Word-level sets are real CoNLL-U (words reordered with
  their tags and heads, so POS gold moves with its words). Subword/char sets have no tree: their
  perturbed text is split on whitespace and written as a *carrier* CoNLL-U (one token per word,
  UPOS ``X``, a flat tree) that only serves to encode the text; it has no gold. ``word_gold``
  tells which case applies.

The unperturbed set is the first ``limit`` sentences of the test file, written the same way.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from itertools import islice
from pathlib import Path
from typing import Any

from synrob.perturb.io.atomic import atomic_open
from synrob.probe.runtime.carrier import carrier_blocks

__all__ = ["PerturbedSet", "SetFiles", "grid", "build_set", "clean_file", "carrier_conllu"]

UNITS = ("word", "subword", "char")


@dataclass(frozen=True)
class PerturbedSet:
    """One perturbation of the test set: ``kind`` none|shuffle|phrase|flip, ``unit``, ``rho``."""

    kind: str
    unit: str = "word"
    rho: float | None = None

    @property
    def name(self) -> str:
        """``none``, ``shuffle/char``, ``phrase/word/0.25``, ``flip/subword/0.5``."""
        if self.kind == "none":
            return "none"
        parts = [self.kind, self.unit]
        if self.rho is not None:
            parts.append(f"{self.rho:g}")
        return "/".join(parts)

    def perturber(self, tokenizer: str, keep_spaces: bool) -> tuple[str, dict[str, Any]]:
        """``(perturber name, params)`` that makes this set (not for ``none``)."""
        common: dict[str, Any] = {"unit": self.unit}
        if self.unit == "subword":
            common["tokenizer"] = tokenizer
        if self.unit == "char":
            common["keep_spaces"] = keep_spaces
        if self.kind == "shuffle":
            return "shuffle", {**common, "mode": "full"}
        if self.kind == "phrase":
            return "shuffle", {**common, "mode": "phrase", "rho": self.rho}
        if self.kind == "flip":
            return "flip", {**common, "rho": self.rho}
        raise ValueError(f"no perturber for set kind {self.kind!r}")

    def as_key(self) -> dict[str, Any]:
        return {"kind": self.kind, "unit": self.unit, "rho": self.rho}


def grid(units: list[str], rhos: list[float], kinds: list[str]) -> list[PerturbedSet]:
    """The unperturbed set, then every (kind, unit[, rho]) of the grid, in a stable order.

    ``kinds`` is a subset of shuffle (full shuffle, no rho), phrase and flip (one set per rho).
    """
    from synrob.perturb.errors import ParameterError

    for u in units:
        if u not in UNITS:
            raise ParameterError(f"unknown unit {u!r}; known: {', '.join(UNITS)}")
    for k in kinds:
        if k not in ("shuffle", "phrase", "flip"):
            raise ParameterError(f"unknown perturbation {k!r}; known: shuffle, phrase, flip")
    for r in rhos:
        if not 0.0 < r < 1.0:
            raise ParameterError(f"rho must be in (0, 1), got {r}")
    sets = [PerturbedSet("none")]
    for kind in kinds:
        for unit in units:
            if kind == "shuffle":
                sets.append(PerturbedSet("shuffle", unit))
            else:
                sets.extend(PerturbedSet(kind, unit, r) for r in rhos)
    return sets


@dataclass(frozen=True)
class SetFiles:
    """The files of one set: JSON lines (texts and metrics) and the CoNLL-U the encoders read."""

    jsonl: Path
    conllu: Path
    word_gold: bool  # conllu holds the gold words (POS probe applies)


def _atomic_write(path: Path, text_chunks: Any) -> Path:
    with atomic_open(path) as fh:
        for chunk in text_chunks:
            fh.write(chunk)
    return path


def clean_file(test: Path, dest: Path, limit: int | None) -> tuple[Path, Path]:
    """``(conllu, jsonl)`` of the unperturbed set: the test file (or its first ``limit``
    sentences, copied once) and JSON lines with ``original == perturbed``."""
    from synrob.perturb.corpus import iter_blocks, read_conllu

    conllu = test
    if limit:
        conllu = dest / f"{test.stem}.first{limit}.conllu"
        if not conllu.exists():
            blocks = islice(iter_blocks(test), limit)
            _atomic_write(conllu, ("\n".join(line for _, line in b) + "\n\n"
                                   for _, b in blocks))
    jsonl = dest / f"{conllu.stem}.none.jsonl"
    if not jsonl.exists():
        _atomic_write(jsonl, (json.dumps({"sent_id": s.sent_id, "original": s.text,
                                          "perturbed": s.text, "chrf2": 1.0, "lev": 0.0},
                                         ensure_ascii=False) + "\n"
                              for s in read_conllu(conllu)))
    return conllu, jsonl


def carrier_conllu(jsonl: Path, dest: Path) -> Path:
    """A CoNLL-U whose words are the whitespace tokens of each ``perturbed`` text (no gold).

    Every token gets UPOS ``X`` and a flat tree (token 1 the root, the others attached to it), so
    the file is valid and the encoders can read it; only its words mean anything. An empty text
    becomes the one token ``_``. Written by :func:`synrob.probe.runtime.carrier.carrier_blocks`.
    """
    out = dest / f"{jsonl.stem}.carrier.conllu"
    if out.exists():
        return out

    def sentences() -> Iterator[tuple[object, list[str]]]:
        with jsonl.open(encoding="utf-8") as fh:
            for k, line in enumerate(fh):
                rec = json.loads(line)
                yield rec.get("sent_id") or k + 1, rec["perturbed"].split() or ["_"]

    return _atomic_write(out, carrier_blocks(sentences(), tree="flat", upos="X"))


def build_set(pset: PerturbedSet, test: Path, *, seed: int, dest: Path, limit: int | None,
              tokenizer: str, keep_spaces: bool, lang: str = "en") -> SetFiles:
    """Write (once) the files of ``pset`` perturbing the first ``limit`` sentences of ``test``."""
    from ..data import perturbed_file

    if pset.kind == "none":
        conllu, jsonl = clean_file(test, dest, limit)
        return SetFiles(jsonl, conllu, True)
    kind, params = pset.perturber(tokenizer, keep_spaces)
    jsonl = perturbed_file(test, kind, params, seed=seed, dest=dest, fmt="jsonl",
                           max_sentences=limit, lang=lang)
    if pset.unit == "word":
        conllu = perturbed_file(test, kind, params, seed=seed, dest=dest, fmt="conllu",
                                max_sentences=limit, lang=lang)
        return SetFiles(jsonl, conllu, True)
    return SetFiles(jsonl, carrier_conllu(jsonl, dest), False)


def read_texts(jsonl: str | Path) -> list[dict[str, Any]]:
    """The JSON lines of a set file."""
    with Path(jsonl).open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]
