"""``synrob parse``: raw text (one sentence per line) -> UD CoNLL-U on stdout."""

from __future__ import annotations

import sys
import warnings
from collections.abc import Iterator
from typing import Annotated

import typer


def _lines(paths: list[str]) -> Iterator[str]:
    """Lines of every input file in order (``-`` or no file: stdin)."""
    from synrob.perturb.errors import ResourceError

    for path in paths or ["-"]:
        if path == "-":
            yield from sys.stdin
            continue
        try:
            fh = open(path, encoding="utf-8")  # noqa: SIM115 - closed below
        except OSError as exc:
            raise ResourceError(f"{path}: {exc.strerror or exc}") from None
        try:
            yield from fh
        except UnicodeDecodeError as exc:
            raise ResourceError(f"{path}: not UTF-8 text: {exc.reason}") from None
        finally:
            fh.close()


def _flush(caught: list[warnings.WarningMessage], ours: type[Warning]) -> None:
    """Print our parser warnings as one ``synrob: warning:`` line; show the others as usual."""
    from ..output import info

    for w in caught:
        if issubclass(w.category, ours):
            info(f"synrob: warning: {w.message}")
        else:
            warnings.showwarning(w.message, w.category, w.filename, w.lineno)
    caught.clear()


def parse(
    inputs: Annotated[
        list[str] | None,
        typer.Argument(help="Text files, one sentence per line (none or '-': stdin)."),
    ] = None,
    output: Annotated[
        str | None, typer.Option("--output", "-o", help="Write CoNLL-U here instead of stdout.")
    ] = None,
    backend: Annotated[
        str,
        typer.Option("--backend", help="auto (stanza when its English models are installed, "
                     "else spaCy), stanza or spacy."),
    ] = "auto",
) -> None:
    """Tokenise, tag and parse raw sentences into UD CoNLL-U (one sentence per input line)."""
    from synrob.perturb.errors import ParameterError
    from synrob.perturb.parsing import ParserWarning, parse_texts

    from ..output import info, output_file

    if backend not in ("auto", "stanza", "spacy"):
        raise ParameterError(f"--backend {backend!r} is not one of: auto, stanza, spacy")
    count = 0
    with output_file(output, inputs or []) as out, warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ParserWarning)
        for sentence in parse_texts(_lines(inputs or []), backend=backend):  # type: ignore[arg-type]
            _flush(caught, ParserWarning)
            out.write(sentence.serialize())
            count += 1
        _flush(caught, ParserWarning)  # no sentence at all (empty input)
    if output:
        info(f"synrob: wrote {count} sentences to {output}")


def register(app: typer.Typer) -> None:
    app.command("parse")(parse)
