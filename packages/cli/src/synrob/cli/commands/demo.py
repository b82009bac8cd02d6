"""``synrob demo``: the main job on the bundled EWT sample, offline, in about a minute.

It perturbs the bundled EWT test sample with each perturber family of the four papers and
reports how much each rewrite changed (chrF-2, normalised Levenshtein): a quick tour that
needs no model download. (The experiments issue replaces it with the Jabberwocky probing
experiment.)
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated, Any

import typer

#: (output name, kind, parameters) perturbed in the demo.
DEMO_RUNS: tuple[tuple[str, str, dict[str, Any]], ...] = (
    ("jabberwocky", "jabberwocky", {}),
    ("copos-3", "copos", {"budget": 3}),
    ("shuffle-word-full", "shuffle", {"unit": "word", "mode": "full"}),
    ("shuffle-word-phrase-0.5", "shuffle", {"unit": "word", "mode": "phrase", "rho": 0.5}),
    ("flip-word-0.5", "flip", {"unit": "word", "rho": 0.5}),
    ("bshift", "bshift", {}),
    ("coordinv", "coordinv", {}),
)


def demo(
    out: Annotated[Path, typer.Option("--out", "-o", help="Directory for the perturbed files.")] = Path(
        "synrob-demo"
    ),
    seed: Annotated[int, typer.Option(help="Random seed.")] = 0,
    as_json: Annotated[bool, typer.Option("--json", help="Print the results as JSON.")] = False,
) -> None:
    """Perturb the bundled EWT test sample with every family of perturber; print a table."""
    from synrob.perturb.corpus import read_conllu
    from synrob.perturb.data import sample_path
    from synrob.perturb.pipeline import PipelineStats, perturb_records
    from synrob.perturb.plugins import get_registry

    from ..output import emit_json, info, progress

    source = sample_path("test")
    sentences = list(read_conllu(source))
    out.mkdir(parents=True, exist_ok=True)
    registry = get_registry()
    rows = []
    for label, kind, params in progress(DEMO_RUNS, "perturbing", total=len(DEMO_RUNS)):
        perturber = registry.get("perturber", kind)(**params)
        stats = PipelineStats()
        start = time.perf_counter()
        records = list(perturb_records(perturber, sentences, seed=seed, stats=stats))
        seconds = time.perf_counter() - start
        path = out / f"{label}.conllu"
        path.write_text("".join(r.to_conllu() for r in records), encoding="utf-8")
        changed = [r for r in records if r.changed]
        rows.append({
            "run": label,
            "kind": kind,
            "params": params,
            "sentences": len(records),
            "changed": len(changed),
            "chrf2": sum(r.chrf2 for r in changed) / max(len(changed), 1),
            "lev": sum(r.lev for r in changed) / max(len(changed), 1),
            "sentences_per_s": len(records) / seconds if seconds else float("inf"),
            "output": str(path),
        })
    if as_json:
        emit_json({"source": str(source), "seed": seed, "results": rows})
        return
    typer.echo(f"synrob demo: {len(sentences)} sentences of {source.name} (bundled EWT sample), seed {seed}")
    typer.echo("")
    typer.echo("| run | changed | chrF-2 | Lev | sent/s (incl. setup) |")
    typer.echo("|---|---:|---:|---:|---:|")
    for r in rows:
        typer.echo(
            f"| {r['run']} | {r['changed']}/{r['sentences']} | {r['chrf2']:.3f} | "
            f"{r['lev']:.3f} | {r['sentences_per_s']:.0f} |"
        )
    typer.echo("")
    typer.echo("chrF-2 and Lev are averaged over the changed sentences.")
    info(f"perturbed files written to {out}/")


def register(app: typer.Typer) -> None:
    app.command("demo")(demo)
