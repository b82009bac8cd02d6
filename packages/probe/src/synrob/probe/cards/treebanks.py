"""The treebank of each language of a card: a default per language, or ``LANG=SPEC``.

A spec names three splits (``ud:NAME``, ``sample:NAME``, or a directory of
``*-ud-{train,dev,test}.conllu`` files) or one file (a path, or ``ud:NAME:SPLIT``). One file
is split 80/10/10 by a seeded permutation of its sentences (each split keeps the file's
order); the split and its seed are recorded. A preset's caps then keep the first N sentences
of each split. Every file the card reads is written under the card's ``data/`` directory
with a content-addressed name (nothing is written over an input) and recorded by SHA-256.

Everything here runs before any model is read, so an unknown language or a treebank that is
not reachable is one line and no work.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from synrob.perturb.errors import ParameterError, arg
from synrob.perturb.io.language import check_code

__all__ = ["DEFAULT_TREEBANKS", "SPLIT_SHARES", "Treebank", "parse_treebank_options",
           "default_treebank", "resolve_treebank"]

#: The treebank of a language when no ``--treebank LANG=SPEC`` names one (English: the
#: preset's, :attr:`~.presets.CardPreset.english`). PUD treebanks are one test file: split.
DEFAULT_TREEBANKS: dict[str, str] = {
    "ar": "ud:ar_padt", "cs": "ud:cs_pud:test", "de": "ud:de_gsd", "en": "ud:en_ewt",
    "es": "ud:es_ancora", "et": "ud:et_edt", "eu": "ud:eu_bdt", "fi": "ud:fi_tdt",
    "fr": "ud:fr_gsd", "hi": "ud:hi_hdtb", "hu": "ud:hu_szeged", "it": "ud:it_isdt",
    "ja": "ud:ja_gsd", "ko": "ud:ko_kaist", "nl": "ud:nl_alpino", "pt": "ud:pt_bosque",
    "sv": "ud:sv_talbanken", "tr": "ud:tr_boun", "zh": "ud:zh_gsd",
}
#: Shares of a single file's sentences in train, dev and test.
SPLIT_SHARES = (0.8, 0.1, 0.1)
SPLITS = ("train", "dev", "test")


@dataclass(frozen=True)
class Treebank:
    """One language's treebank as the card reads it: ``files`` (split -> path under the
    card's ``data/``) and :meth:`record` (what ``card.json`` says of it)."""

    lang: str
    spec: str
    files: dict[str, str]
    #: split -> {"sha256", "sentences", "first"} of each file read
    details: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: the seeded split of a single file (None for a treebank with its own splits)
    split: dict[str, Any] | None = None

    def record(self) -> dict[str, Any]:
        """``{"spec", "split", "files": {split: {"sha256", "sentences", "first", "name"}}}``."""
        files = {s: {**self.details[s], "name": Path(p).name} for s, p in self.files.items()}
        return {"spec": self.spec, "split": self.split, "files": files}


def parse_treebank_options(given: Sequence[str]) -> dict[str, str]:
    """``["cs=FILE", ...]`` (``--treebank``, repeatable) -> ``{"cs": "FILE"}``; a malformed or
    repeated language is a one-line :class:`ParameterError`."""
    out: dict[str, str] = {}
    for item in given:
        lang, sep, spec = str(item).partition("=")
        if not sep or not spec.strip():
            raise ParameterError(f"{arg('treebank')} takes LANG=SPEC (e.g. cs=ud:cs_pud:test or "
                                 f"tr=path/to/file.conllu), not {item!r}")
        code = check_code(lang)
        if code in out:
            raise ParameterError(f"{arg('treebank')} names {code} twice")
        out[code] = spec.strip()
    return out


def default_treebank(lang: str, english: str) -> str:
    """The default spec of ``lang`` (English: ``english``, the preset's), or a one-line
    :class:`~synrob.perturb.io.language.LanguageError` naming the languages that have one."""
    from synrob.perturb.io.language import LanguageError

    if lang == "en":
        return english
    if lang not in DEFAULT_TREEBANKS:
        raise LanguageError(f"unknown language {lang!r} for a card: no default treebank (known: "
                            f"{', '.join(sorted(DEFAULT_TREEBANKS))}); give "
                            f"{arg('treebank')} {lang}=SPEC")
    return DEFAULT_TREEBANKS[lang]


def _three_splits(spec: str) -> dict[str, str] | None:
    """The split specs of a spec that names three splits, else None (one file)."""
    from synrob.perturb.io.data import split_specs

    scheme, sep, rest = spec.partition(":")
    if sep and scheme in ("ud", "sample") and not Path(spec).exists() and ":" not in rest:
        return split_specs(spec)
    return split_specs(spec) if Path(spec).is_dir() else None


def _blocks(path: Path) -> list[str]:
    """The sentence blocks of a CoNLL-U file, each as its text (lines and the blank line)."""
    from synrob.perturb.pipeline import read_blocks

    with path.open(encoding="utf-8") as fh:
        return ["".join(f"{line}\n" for _, line in b.lines) + "\n" for b in read_blocks(fh)]


def _write(dest: Path, blocks: Sequence[str]) -> Path:
    from synrob.perturb.io.atomic import write_text_atomic

    if not dest.is_file():
        write_text_atomic(dest, "".join(blocks))
    return dest


def _split_file(source: Path, lang: str, seed: int, dest: Path
                ) -> tuple[dict[str, Path], dict[str, Any]]:
    """Split one file 80/10/10 by a permutation drawn from ``default_rng(seed)``; each split's
    sentences keep the file's order. Returns the three files and the split's record."""
    import numpy as np

    from ..experiments.data import content_hash

    blocks = _blocks(source)
    n = len(blocks)
    if n < 10:
        raise ParameterError(f"{source}: {n} sentence(s); a single-file treebank is split "
                             "80/10/10 and needs at least 10")
    order = np.random.default_rng(seed).permutation(n)
    n_dev = max(1, math.floor(n * SPLIT_SHARES[1]))
    n_test = max(1, math.floor(n * SPLIT_SHARES[2]))
    parts = {"test": order[:n_test], "dev": order[n_test:n_test + n_dev],
             "train": order[n_test + n_dev:]}
    digest = content_hash(source)[:12]
    name = source.name.split("-ud-")[0] if "-ud-" in source.name else f"{lang}_card"
    files = {s: _write(dest / f"{name}.split{seed}.{digest}-ud-{s}.conllu",
                       [blocks[i] for i in sorted(parts[s].tolist())]) for s in SPLITS}
    record = {"method": "seeded permutation, 80/10/10 (train/dev/test), each split in file "
              "order", "seed": seed, "source": str(source), "source_sha256": content_hash(source),
              "sentences": {s: int(parts[s].size) for s in SPLITS}}
    return files, record


def _first(path: Path, n: int, dest: Path) -> Path:
    """``path``, or its first ``n`` sentences under ``dest`` (``n`` 0: all)."""
    from ..experiments.data import content_hash

    if n <= 0:
        return path
    blocks = _blocks(path)
    if len(blocks) <= n:
        return path
    stem = path.name.removesuffix(".conllu")
    return _write(dest / f"{stem}.first{n}.{content_hash(path)[:12]}.conllu", blocks[:n])


def resolve_treebank(lang: str, spec: str, dest: Path, *, seed: int,
                     first: Mapping[str, int]) -> Treebank:
    """``lang``'s treebank from ``spec``: its three splits (a single file split, see the
    module docstring), each cut to its first ``first[split]`` sentences, under ``dest``."""
    from synrob.perturb.io.data import resolve_one

    from ..experiments.data import content_hash

    dest.mkdir(parents=True, exist_ok=True)
    splits = _three_splits(spec)
    split_record = None
    if splits is not None:
        paths = {s: resolve_one(splits[s], f"treebank {lang}") for s in SPLITS}
    else:
        paths, split_record = _split_file(resolve_one(spec, f"treebank {lang}"), lang, seed, dest)
    files: dict[str, str] = {}
    details: dict[str, dict[str, Any]] = {}
    for s in SPLITS:
        path = _first(Path(paths[s]), int(first.get(s, 0)), dest)
        files[s] = str(path)
        details[s] = {"sha256": content_hash(path), "sentences": len(_blocks(path)),
                      "first": int(first.get(s, 0))}
    return Treebank(lang, spec, files, details, split_record)
