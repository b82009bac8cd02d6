"""``synrob metrics``: score a perturbed file against its original, per sentence and on average."""

from __future__ import annotations

from collections.abc import Iterator
from itertools import chain, islice
from pathlib import Path
from typing import Annotated

import typer

_CONLLU_SUFFIXES = (".conllu", ".conll")
_CHUNK = 512
_COLUMNS = ("chrf2", "lev", "compression_original", "compression_perturbed", "words_changed")


def _is_conllu(path: Path) -> bool:
    if path.suffix.lower() in _CONLLU_SUFFIXES:
        return True
    with open(path, encoding="utf-8", errors="surrogateescape") as fh:  # bad bytes: _read
        for line in fh:
            if line.strip():
                return line.startswith("#") or line.count("\t") == 9
    return False


def _read(path: Path) -> Iterator[tuple[str | None, str | None, str, list[str]]]:
    """(sent_id, synrob.source, text, words) for each sentence of a CoNLL-U or text file."""
    if _is_conllu(path):
        from synrob.perturb.corpus import read_conllu

        for s in read_conllu(path):
            yield s.sent_id, s.metadata.get("synrob.source"), s.text, s.forms
    else:
        from synrob.perturb.errors import SynrobError

        with open(path, encoding="utf-8", errors="surrogateescape") as fh:
            for i, line in enumerate(fh, start=1):
                text = line.rstrip("\r\n")
                if not text.isascii():
                    try:
                        text.encode("utf-8")
                    except UnicodeEncodeError as exc:  # a byte that is not UTF-8
                        byte = ord(text[exc.start]) - 0xDC00
                        raise SynrobError(f"{path}:{i}: not UTF-8: byte 0x{byte:02x}") from None
                if text.strip():
                    yield f"line {i}", None, text, text.split()


def _pairs(original: Path, perturbed: Path) -> Iterator[tuple[str, tuple, tuple]]:
    """Aligned (label, original, perturbed) triples.

    A perturbed CoNLL-U file written by ``synrob perturb`` is aligned by its
    ``# synrob.source`` comments (so K variants per sentence work); otherwise sentences are
    aligned by position and the two files must hold as many sentences.
    """
    from synrob.perturb.errors import SynrobError

    pert = _read(perturbed)
    first = next(pert, None)
    if first is None:
        raise SynrobError(f"{perturbed}: no sentences")
    if first[1] is not None:
        by_id = {sid: (sid, src, text, words) for sid, src, text, words in _read(original) if sid}
        for item in chain([first], pert):
            src = item[1]
            if src is None or src not in by_id:
                raise SynrobError(
                    f"{perturbed}: sentence {item[0]} has synrob.source {src!r}, "
                    f"which is not a sent_id of {original}"
                )
            yield item[0] or src, by_id[src], item
        return
    orig = _read(original)
    n = 0
    for o, p in zip(orig, chain([first], pert), strict=False):
        n += 1
        yield p[0] or o[0] or str(n), o, p
    rest_o = sum(1 for _ in orig)
    rest_p = sum(1 for _ in pert)
    if rest_o or rest_p:
        raise SynrobError(
            f"files are not aligned: {original} has {n + rest_o} sentences, "
            f"{perturbed} has {n + rest_p}"
        )


def metrics(
    original: Annotated[Path, typer.Argument(help="Original sentences (CoNLL-U or text).")],
    perturbed: Annotated[Path, typer.Argument(help="Perturbed sentences (CoNLL-U or text).")],
    as_json: Annotated[
        bool, typer.Option("--json", help="JSON lines: one per sentence, then the average.")
    ] = False,
    tokenizer: Annotated[
        str,
        typer.Option(help="Tokenizer for compression rates: roberta (RoBERTa-base BPE, "
                     "bundled; alias gpt2-bpe), smollm2, a tokenizer.json or a HF name."),
    ] = "roberta",
) -> None:
    """Score PERTURBED against ORIGINAL: chrF-2, normalised Levenshtein, compression rates
    (characters per token) of both, and the share of words changed; per sentence and mean.

    Text files hold one sentence per line. A CoNLL-U file written by synrob perturb is
    aligned to ORIGINAL by its synrob.source comments, other files by position.
    """
    from synrob.perturb.errors import MissingFileError
    from synrob.perturb.metrics import chrf2, compression_rates, levenshtein, words_changed

    from ..output import emit_json

    for path in (original, perturbed):
        if not path.is_file():
            raise MissingFileError(f"{path}: no such file")
    totals = dict.fromkeys(_COLUMNS, 0.0)
    n = 0
    if not as_json:
        typer.echo("\t".join(("sentence", *_COLUMNS)))
    pairs = _pairs(original, perturbed)
    while chunk := list(islice(pairs, _CHUNK)):
        rates_o = compression_rates([o[2] for _, o, _ in chunk], tokenizer)
        rates_p = compression_rates([p[2] for _, _, p in chunk], tokenizer)
        for (label, o, p), ro, rp in zip(chunk, rates_o, rates_p, strict=True):
            row = {
                "chrf2": chrf2(o[2], p[2]),
                "lev": levenshtein(o[2], p[2]),
                "compression_original": ro,
                "compression_perturbed": rp,
                "words_changed": words_changed(o[3], p[3]),
            }
            n += 1
            for key, value in row.items():
                totals[key] += value
            if as_json:
                emit_json({"sentence": label, **{k: round(v, 6) for k, v in row.items()}})
            else:
                typer.echo("\t".join([label, *(f"{row[k]:.4f}" for k in _COLUMNS)]))
    mean = {k: (v / n if n else 0.0) for k, v in totals.items()}
    if as_json:
        emit_json({"average": {k: round(v, 6) for k, v in mean.items()}, "sentences": n,
                   "tokenizer": tokenizer})
    else:
        typer.echo("\t".join([f"mean ({n} sentences)", *(f"{mean[k]:.4f}" for k in _COLUMNS)]))


def register(app: typer.Typer) -> None:
    app.command("metrics")(metrics)
