"""``synrob perturb``: perturb CoNLL-U (or raw text) sentences with any registered perturber."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from synrob.perturb.lm.device import DEVICE_HELP

if TYPE_CHECKING:
    from synrob.perturb.base import Perturber
    from synrob.perturb.corpus import Sentence
    from synrob.perturb.io.language import Language
    from synrob.perturb.pipeline import PipelineStats, RawBlock

_IN_FORMATS = ("conllu", "text")
_TEXT_SUFFIXES = (".txt", ".text")


def _input_format(path: Path, format_in: str | None) -> str:
    if format_in is not None:
        return format_in
    return "text" if path.suffix.lower() in _TEXT_SUFFIXES else "conllu"


def _text_lines(path: Path) -> Iterator[str]:
    """The non-blank lines of a text file (or stdin), stripped; a byte that is not UTF-8 is a
    ``FILE:LINE: not UTF-8`` error."""
    from synrob.perturb.errors import SynrobError

    fh = (sys.stdin if str(path) == "-"
          else open(path, encoding="utf-8", errors="surrogateescape"))  # noqa: SIM115
    lineno = 0
    try:
        for lineno, raw in enumerate(fh, start=1):
            line = raw.strip()
            bad = None if line.isascii() else next(
                (c for c in line if "\udc80" <= c <= "\udcff"), None)
            if bad is not None:  # a byte that is not UTF-8, kept by surrogateescape
                raise SynrobError(f"{path}:{lineno}: not UTF-8: byte 0x{ord(bad) - 0xDC00:02x}")
            if line:
                yield line
    except UnicodeDecodeError as exc:  # stdin, decoded strictly
        raise SynrobError(f"{path}:{lineno + 1}: not UTF-8: {exc.reason} (at or after this "
                          "line)") from None
    finally:
        if fh is not sys.stdin:
            fh.close()


def _parse_texts(path: Path, lang: str) -> Iterator[Sentence]:
    from synrob.perturb.io.language import LanguageError

    if lang != "en":
        raise LanguageError(f"{path}: raw text is parsed by spaCy's English model, so it must be "
                            f"English, not {lang}; give a CoNLL-U treebank of that language")
    try:
        from synrob.perturb.parsing import parse_texts
    except ImportError:
        from synrob.perturb.errors import ResourceError

        raise ResourceError(
            f"{path}: raw text input needs synrob.perturb.parsing, which is not available"
        ) from None
    yield from parse_texts(_text_lines(path))


def _items(paths: list[tuple[Path, str]], lang: str,
           stdin_blocks: Iterator[RawBlock] | None = None) -> Iterator[Sentence | RawBlock]:
    """Every input sentence, in order; ``stdin_blocks`` are stdin's blocks when already opened
    (to read its language)."""
    from synrob.perturb.pipeline import read_blocks

    for path, fmt in paths:
        if fmt == "conllu":
            if str(path) == "-" and stdin_blocks is not None:
                yield from stdin_blocks
            else:
                yield from read_blocks("-" if str(path) == "-" else path)
        else:
            yield from _parse_texts(path, lang)


def _input_language(paths: list[tuple[Path, str]], lang: str | None
                    ) -> tuple[Language, Iterator[RawBlock] | None]:
    """The inputs' language (``--lang``, a UD file name, ``# synrob.lang``, else English) and,
    when stdin is read for its comment, stdin's blocks (the first one peeked, not lost)."""
    import itertools

    from synrob.perturb.io.language import Language, infer_language, language_of_lines
    from synrob.perturb.pipeline import read_blocks

    found = infer_language([p for p, _ in paths], lang)
    stdin = any(str(p) == "-" and f == "conllu" for p, f in paths)
    if found.source.startswith("assumed") and stdin:
        blocks = read_blocks("-")
        first = next(blocks, None)
        if first is None:
            return found, iter(())
        code = language_of_lines(line for _, line in first.lines)
        if code:
            found = Language(code, "from '# synrob.lang' on stdin")
        return found, itertools.chain([first], blocks)
    return found, None


def _describe(kind: str, as_json: bool) -> None:
    from synrob.perturb.plugins import get_registry

    from ..output import emit_json

    registry = get_registry()
    cls = registry.get("perturber", kind)
    info = cls.describe()
    comp = registry.info("perturber", kind)
    info["distribution"] = comp.distribution
    if as_json:
        emit_json(info)
        return
    lines = [
        f"{info['kind']} {info['version']} ({comp.distribution})",
        f"  {info['summary']}",
        f"  paper: {info['paper'] or '-'}",
        f"  languages: {', '.join(info['languages'])}"
        + (f" ({info['language_note']})" if info["language_note"] else ""),
    ]
    params = info["params"]
    if not params:
        lines.append("  parameters: none")
    else:
        lines.append("  parameters (-p key=value):")
        rows = [
            (p["name"], p["type"], repr(p["default"]),
             p["help"] + (f" [{'|'.join(map(str, p['choices']))}]" if p.get("choices") else ""))
            for p in params
        ]
        widths = [max(len(r[i]) for r in rows) for i in range(3)]
        head = ("NAME", "TYPE", "DEFAULT")
        widths = [max(w, len(h)) for w, h in zip(widths, head, strict=True)]
        lines.append(
            f"    {head[0]:<{widths[0]}}  {head[1]:<{widths[1]}}  {head[2]:<{widths[2]}}  HELP"
        )
        for r in rows:
            lines.append(f"    {r[0]:<{widths[0]}}  {r[1]:<{widths[1]}}  {r[2]:<{widths[2]}}  {r[3]}")
    typer.echo("\n".join(lines))


def _build_perturber(
    kind: str, params: list[str], budget: str | None, inputs: list[str] | None = None,
    device: str | None = None, lang: Language | None = None,
) -> Perturber:
    """The perturber for language ``lang`` with its parameters; a ``reference`` corpus
    defaults to the inputs; ``--budget`` and ``--device`` are shortcuts for ``-p budget=`` and
    ``-p device=``."""
    from synrob.perturb.api import default_reference, make_perturber
    from synrob.perturb.errors import ParameterError
    from synrob.perturb.params import parse_assignments
    from synrob.perturb.plugins import get_registry

    cls = get_registry().get("perturber", kind)
    given: dict[str, Any] = default_reference(kind, parse_assignments(params), inputs or [])
    if budget is not None:
        if "budget" in given and given["budget"] != budget:
            raise ParameterError(
                f"--budget {budget} conflicts with -p budget={given['budget']}; give one"
            )
        given["budget"] = budget
    if device is not None:
        registry = get_registry()
        with_device = [n for n in registry.names("perturber")
                       if any(p.name == "device" for p in registry.get("perturber", n).params)]
        if kind not in with_device:
            raise ParameterError(
                f"--device: perturber {kind!r} runs no model (perturbers with a device "
                f"parameter: {', '.join(with_device) or 'none'})"
            )
        if "device" in given and given["device"] != device:
            raise ParameterError(
                f"--device {device} conflicts with -p device={given['device']}; give one"
            )
        given["device"] = device
    if lang is None:
        return cls(**given)
    return make_perturber(kind, lang=lang.code, lang_source=lang.source, **given)


# ------------------------------------------------------------------ options of ``synrob perturb``
_Inputs = Annotated[
    list[str] | None,
    typer.Argument(
        help="CoNLL-U or text files, sample:/ud: specs, or - for stdin (the default).",
        show_default=False,
    ),
]
_Kind = Annotated[str | None, typer.Option("--kind", "-k", help="Perturber name.")]
_Param = Annotated[
    list[str] | None,
    typer.Option("--param", "-p", help="Perturber parameter key=value (repeatable)."),
]
_Seed = Annotated[int, typer.Option(help="Random seed (same seed: same output).")]
_Variants = Annotated[int, typer.Option(help="Perturbed variants per sentence (K).")]
_Budget = Annotated[
    str | None, typer.Option(help="Shortcut for -p budget=TAU (substitution budget).")
]
_Device = Annotated[
    str | None,
    typer.Option(help=f"Shortcut for -p device=DEV (perturbers with a model, e.g. coco): "
                 f"{DEVICE_HELP}."),
]
_Format = Annotated[
    str | None,
    typer.Option(
        "--format",
        help="Output format: conllu|text|jsonl (default: conllu for CoNLL-U input when the "
        "perturber keeps a tree, else text); for --kind agreement also the field's pair "
        "files: multiblimp (MultiBLiMP 1.0's TSV) or blimp (BLiMP's JSONL), one pair a line "
        "with synrob's metadata, the same pair ids as the CoNLL-U.",
    ),
]
_Output = Annotated[
    Path | None, typer.Option("--output", "-o", help="Output file (default: stdout).")
]
_Workers = Annotated[int, typer.Option(help="Worker processes (same output for any N).")]
_BatchSize = Annotated[int, typer.Option(help="Sentences per perturber batch.")]
_SkipInvalid = Annotated[
    bool, typer.Option("--skip-invalid", help="Report and skip malformed input sentences.")
]
_FormatIn = Annotated[
    str | None,
    typer.Option(
        "--format-in",
        help="Input format: conllu|text (default: text for .txt files, else conllu).",
    ),
]
_Describe = Annotated[
    str | None,
    typer.Option("--describe", help="Print KIND's parameters, defaults and paper, then exit."),
]
_Json = Annotated[bool, typer.Option("--json", help="With --describe: print JSON.")]
_Refused = Annotated[
    Path | None,
    typer.Option("--refused", help="Write every candidate the perturber refused, with its "
                 "reason, to FILE (TSV; JSON lines for *.jsonl); minimal-pair generators "
                 "(agreement) only."),
]
_Lang = Annotated[
    str | None,
    typer.Option("--lang", help="Language of the inputs (ISO code as UD uses it: en, tr, de...); "
                 "default: from a UD file name (tr_imst-ud-test.conllu), else from a "
                 "'# synrob.lang' comment, else en."),
]


# ------------------------------------------------------------------ the steps of ``synrob perturb``
def _check_options(kind: str | None, fmt: str | None, format_in: str | None) -> str:
    """The perturber name, after checking ``--kind``, ``--format`` and ``--format-in``."""
    from synrob.perturb.errors import ParameterError
    from synrob.perturb.pipeline import FORMATS
    from synrob.perturb.plugins import get_registry

    if kind is None:
        known = ", ".join(get_registry().names("perturber")) or "(none)"
        raise ParameterError(f"--kind is required (or --describe KIND); available: {known}")
    if fmt is not None and fmt not in FORMATS:
        raise ParameterError(f"unknown --format {fmt!r}; available: {', '.join(FORMATS)}")
    if format_in is not None and format_in not in _IN_FORMATS:
        raise ParameterError(
            f"unknown --format-in {format_in!r}; available: {', '.join(_IN_FORMATS)}"
        )
    return kind


def _input_paths(inputs: list[str] | None, format_in: str | None) -> list[tuple[Path, str]]:
    """Every input file (stdin ``-`` by default) with its format (conllu or text)."""
    from synrob.perturb.io.data import resolve_input

    return [
        (path, _input_format(path, format_in))
        for spec in (inputs or ["-"])
        for path in resolve_input(spec)
    ]


def _output_format(fmt: str | None, paths: list[tuple[Path, str]], perturber: Perturber) -> str:
    """``--format``, by default conllu when every input is CoNLL-U and the perturber keeps a
    tree, else text; checked against what the perturber can write."""
    from synrob.perturb.pipeline import check_format

    if fmt is None:
        all_conllu = all(f == "conllu" for _, f in paths)
        fmt = "conllu" if all_conllu and perturber.writes_conllu else "text"
    check_format(perturber, fmt)
    return fmt


def _write_output(perturber: Perturber, kind: str, paths: list[tuple[Path, str]], fmt: str,
                  output: Path | None, stdin_blocks: Iterator[RawBlock] | None = None,
                  refused: Path | None = None, **options: Any) -> PipelineStats:
    """Perturb every input sentence into ``output`` (stdout by default), with a progress bar;
    a skipped invalid sentence is reported on stderr; with ``refused``, every refused
    candidate goes to that file (written atomically after the output). ``options``: seed,
    variants, batch_size, workers and skip_invalid of :func:`perturb_formatted`."""
    from synrob.perturb.errors import ConlluError
    from synrob.perturb.io.refusals import write_refusals
    from synrob.perturb.pipeline import PipelineStats, format_header, perturb_formatted

    from ..output import info, output_file, progress

    def report(err: ConlluError) -> None:
        info(f"synrob: skipped invalid sentence: {err}")

    stats = PipelineStats()
    records: list[dict[str, Any]] = []
    items = _items(paths, perturber.lang, stdin_blocks)
    stream = perturb_formatted(perturber, items, fmt, on_invalid=report, stats=stats,
                               on_refused=records.append if refused else None, **options)
    with output_file(output, [str(p) for p, _ in paths]) as out:
        out.write(format_header(fmt))
        for chunk in progress(stream, f"perturbing ({kind})"):
            out.write(chunk)
    if refused is not None:
        write_refusals(refused, records)
    return stats


def _check_refused(refused: Path | None, output: Path | None, perturber: Perturber,
                   inputs: list[str]) -> None:
    """``--refused`` needs a minimal-pair generator and a file that is neither an input nor
    the output."""
    from synrob.perturb.errors import ParameterError
    from synrob.perturb.io.atomic import refuse_overwriting_inputs

    if refused is None:
        return
    if not perturber.several_outputs:
        raise ParameterError(f"--refused: perturber {perturber.name!r} refuses no candidates "
                             "(it is for minimal-pair generators such as agreement)")
    if str(refused) == "-" or (output is not None and Path(refused) == Path(output)):
        raise ParameterError("--refused needs a file of its own, not stdout or the output")
    refuse_overwriting_inputs(refused, inputs)


def _summarize(stats: PipelineStats, variants: int, perturber: Perturber) -> None:
    """The summary on stderr: outputs perturbed, the five commonest reasons for no change,
    (several outputs) why each candidate without an output had none, and last the
    perturber's advice when it has any (agreement: the lexicon that would give more pairs)."""
    from ..output import info

    info(stats.summary(variants))
    if stats.notes:
        reasons = sorted(stats.notes.items(), key=lambda kv: (-kv[1], kv[0]))
        shown = "; ".join(f"{note} ({n})" for note, n in reasons[:5])
        more = f"; {len(reasons) - 5} other reasons" if len(reasons) > 5 else ""
        info(f"unchanged: {shown}{more}")
    if stats.skipped:
        reasons = sorted(stats.skipped.items(), key=lambda kv: (-kv[1], kv[0]))
        total = sum(stats.skipped.values())
        info(f"candidates without an output ({total}): "
             + "; ".join(f"{note} ({n})" for note, n in reasons))
    advice = perturber.advice(stats.skipped, stats.records)
    if advice:
        info(advice)


def perturb(
    inputs: _Inputs = None,
    kind: _Kind = None,
    param: _Param = None,
    seed: _Seed = 0,
    variants: _Variants = 1,
    budget: _Budget = None,
    device: _Device = None,
    fmt: _Format = None,
    output: _Output = None,
    workers: _Workers = 1,
    batch_size: _BatchSize = 64,
    skip_invalid: _SkipInvalid = False,
    format_in: _FormatIn = None,
    describe: _Describe = None,
    as_json: _Json = False,
    lang: _Lang = None,
    refused: _Refused = None,
) -> None:
    """Perturb sentences with perturber KIND; write CoNLL-U, text or JSON lines.

    Every output sentence carries # synrob.* comments (source, kind, language, params, seed,
    variant, changed word ids, chrF-2, normalised Levenshtein) and a new sent_id. A summary
    goes to stderr.
    """
    if describe is not None:
        _describe(describe, as_json)
        return
    kind = _check_options(kind, fmt, format_in)
    paths = _input_paths(inputs, format_in)
    language, stdin_blocks = _input_language(paths, lang)
    perturber = _build_perturber(kind, param or [], budget, inputs, device, language)
    fmt = _output_format(fmt, paths, perturber)
    _check_refused(refused, output, perturber, [str(p) for p, _ in paths])
    stats = _write_output(perturber, kind, paths, fmt, output, stdin_blocks, refused,
                          seed=seed, variants=variants, batch_size=batch_size,
                          workers=workers, skip_invalid=skip_invalid)
    _summarize(stats, variants, perturber)


def register(app: typer.Typer) -> None:
    app.command("perturb")(perturb)
