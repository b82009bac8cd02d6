"""``synrob conllu validate|stats``: check and describe CoNLL-U files."""

from __future__ import annotations

import sys
from typing import Annotated

import typer

conllu_app = typer.Typer(help="Validate and describe CoNLL-U files.", no_args_is_help=True)


@conllu_app.command("validate")
def validate(
    files: Annotated[list[str], typer.Argument(help="CoNLL-U files (or sample:/ud: specs).")],
) -> None:
    """Check every sentence; print FILE:LINE: problem for each invalid one (exit 1 if any)."""
    from synrob.perturb.corpus import read_conllu
    from synrob.perturb.errors import ConlluError
    from synrob.perturb.io.data import resolve_input

    problems = 0
    for spec in files:
        for path in resolve_input(spec):
            def report(err: ConlluError) -> None:
                nonlocal problems
                problems += 1
                print(str(err), file=sys.stderr)

            try:
                for _ in read_conllu(path, skip_invalid=True, on_invalid=report):
                    pass
            except ConlluError as err:  # unreadable file
                report(err)
    if problems:
        raise typer.Exit(1)


@conllu_app.command("stats")
def stats(
    files: Annotated[list[str], typer.Argument(help="CoNLL-U files (or sample:/ud: specs).")],
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object per file.")] = False,
    skip_invalid: Annotated[
        bool, typer.Option("--skip-invalid", help="Report and skip malformed sentences.")
    ] = False,
) -> None:
    """Count sentences, syntactic words, multiword tokens, empty nodes; the maximum tree depth."""
    from synrob.perturb.corpus import read_conllu
    from synrob.perturb.io.data import resolve_input

    from ..output import emit_json, info

    for spec in files:
        for path in resolve_input(spec):
            row = {"file": str(path), "sentences": 0, "words": 0, "multiword_tokens": 0,
                   "empty_nodes": 0, "max_depth": 0, "skipped": 0}

            def skip(err: Exception, row: dict = row) -> None:
                row["skipped"] += 1
                info(f"synrob: skipped invalid sentence: {err}")

            for s in read_conllu(path, skip_invalid=skip_invalid, on_invalid=skip):
                row["sentences"] += 1
                row["words"] += len(s)
                row["multiword_tokens"] += len(s.ranges())
                row["empty_nodes"] += s.empty_nodes()
                row["max_depth"] = max(row["max_depth"], s.max_depth())
            if as_json:
                emit_json(row)
            else:
                typer.echo("\t".join(f"{k}={v}" for k, v in row.items()))


def register(app: typer.Typer) -> None:
    app.add_typer(conllu_app, name="conllu")
