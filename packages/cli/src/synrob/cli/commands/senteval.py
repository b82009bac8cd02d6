"""``synrob senteval build|stats``: build the SentEval probing tasks from treebanks, or check a
directory of task files (ours or the official SentEval ones)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

senteval_app = typer.Typer(
    help="The SentEval probing tasks (Conneau et al. 2018) built from UD treebanks.",
    no_args_is_help=True,
)


@senteval_app.command("build")
def build(
    outdir: Annotated[Path, typer.Option("-o", "--output", help="Directory for the task files.")],
    treebank: Annotated[
        list[str] | None,
        typer.Option("--treebank", help="CoNLL-U file or ud:/sample: spec (repeatable; "
                     "default ud:en_ewt, all of EWT)."),
    ] = None,
    seed: Annotated[int, typer.Option("--seed", help="Seed of every random choice.")] = 0,
    task: Annotated[
        list[str] | None,
        typer.Option("--task", help="Build only this task (repeatable), e.g. Tense, SOMO."),
    ] = None,
    min_len: Annotated[int, typer.Option("--min-len", help="Shortest sentence (words).")] = 5,
    max_len: Annotated[int, typer.Option("--max-len", help="Longest sentence (words).")] = 28,
    lang: Annotated[str | None, typer.Option("--lang", help="Language of the treebanks (ISO "
                    "code as UD uses it); default: from their UD file names, else en. WC takes "
                    "its word frequencies in it.")] = None,
) -> None:
    """Write the ten task files (SPLIT<TAB>LABEL<TAB>SENTENCE), stats.json and, for BShift,
    SOMO and CoordInv, each modified sentence's original (*.pairs.jsonl) into OUTDIR."""
    from synrob.perturb.senteval.build import (
        DEFAULT_TREEBANKS,
        BuildConfig,
        SentEvalError,
        SuiteBuilder,
        write_suite,
    )
    from synrob.perturb.senteval.format import TASK_FILES

    from ..output import info, progress

    names = list(task) if task else list(TASK_FILES)
    unknown = [t for t in names if t not in TASK_FILES]
    if unknown:
        raise SentEvalError(f"unknown task {', '.join(unknown)}; known: {', '.join(TASK_FILES)}")
    builder = SuiteBuilder(treebank or list(DEFAULT_TREEBANKS), seed,
                           BuildConfig(min_len=min_len, max_len=max_len), lang)
    info(f"synrob: language {builder.lang}")
    for name in progress(names, "building SentEval tasks", total=len(names)):
        builder.build(name)
    result = builder.result()
    for path in write_suite(result, outdir):
        info(f"wrote {path}")
    for name, b in result.tasks.items():
        sizes = {sp: 0 for sp in ("tr", "va", "te")}
        for ex in b.examples:
            sizes[ex.split] += 1
        info(f"{name}: " + " ".join(f"{sp}={n}" for sp, n in sizes.items()))


@senteval_app.command("stats")
def stats(
    directory: Annotated[Path, typer.Argument(help="Directory of SentEval task files.")],
) -> None:
    """Print per task the split sizes and per-split class counts as one JSON object."""
    from synrob.perturb.senteval.build import read_suite, suite_stats

    from ..output import emit_json

    emit_json(suite_stats(read_suite(directory)))


def register(app: typer.Typer) -> None:
    app.add_typer(senteval_app, name="senteval")
