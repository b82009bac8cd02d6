"""The streaming perturbation engine behind ``synrob perturb`` and the experiments.

Input items are :class:`~synrob.perturb.corpus.Sentence` objects or :class:`RawBlock` (an
unparsed CoNLL-U block, parsed and validated where it is perturbed, so that ``workers > 1``
parallelises parsing too). Item ``i`` of the stream (0-based, invalid blocks included) and
variant ``v`` get the random generator ``sentence_rng(seed, i, v)``, so the output does not
depend on the batch size or on the number of worker processes.

Each output is a :class:`PerturbRecord`: the perturbed sentence carrying ``# synrob.*``
comments (``synrob.lang`` is the perturber's language) and a new ``sent_id``
(``<source>.synrob-<kind>-v<variant>``), its text, the ids of the original words that changed,
and chrF-2 / normalised Levenshtein against the original text. A perturber with
``several_outputs`` (a minimal-pair generator) gives each (sentence, variant) as many outputs
as :meth:`~synrob.perturb.base.Perturber.perturb_all` changed, ``k = 0, 1, ...``, each with
the ``sent_id`` ``<source>.synrob-<kind>-v<variant>-<k>``, and none when it changed nothing.
:func:`perturb_records` yields records; :func:`perturb_formatted` yields them already written
as CoNLL-U, text lines or JSON lines (what the worker processes send back), or, for agreement
pairs, as the rows of the field's pair formats (MultiBLiMP's TSV after :func:`format_header`,
BLiMP's JSON lines; :mod:`synrob.perturb.io.pairs`). Outputs come in
input order, variants ``0..K-1`` of a sentence together. Memory stays bounded: at most
``2 * workers`` chunks of ``batch_size`` sentences are in flight.
"""

from __future__ import annotations

import json
import multiprocessing
import os
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, TextIO

from conllu.models import TokenList
from conllu.serializer import serialize_field

from .base import Perturbation, Perturber, sentence_rng
from .corpus import Sentence, iter_blocks, parse_sentence
from .errors import ConlluError, ParameterError, SynrobError
from .metrics import chrf2, levenshtein

__all__ = [
    "FORMATS",
    "RawBlock",
    "PerturbRecord",
    "PipelineStats",
    "read_blocks",
    "check_format",
    "format_header",
    "perturb_records",
    "perturb_formatted",
]

#: Output formats of :func:`perturb_formatted`; the last two are agreement pairs' only.
FORMATS = ("conllu", "text", "jsonl", "multiblimp", "blimp")
#: The formats of minimal-pair files (:mod:`synrob.perturb.io.pairs`): one pair per output.
PAIR_FORMATS = ("multiblimp", "blimp")
_DECIMALS = 4


@dataclass(frozen=True, slots=True)
class RawBlock:
    """One unparsed CoNLL-U sentence: its ``(line number, line)`` pairs and the file name."""

    lines: tuple[tuple[int, str], ...]
    path: str

    def parse(self) -> Sentence:
        """Validate and parse the block; raises :class:`ConlluError` (FILE:LINE: problem)."""
        return parse_sentence(list(self.lines), self.path)


def read_blocks(source: str | os.PathLike[str] | TextIO, name: str | None = None
                ) -> Iterator[RawBlock]:
    """Stream the sentence blocks of a CoNLL-U file (path, ``-`` for stdin, or open file)."""
    for path, block in iter_blocks(source, name):
        yield RawBlock(tuple(block), path)


@dataclass(slots=True)
class PerturbRecord:
    """One output: variant ``variant`` of input sentence ``index`` under perturber ``kind``.

    ``sentence`` is the perturbed sentence with the ``# synrob.*`` comments and the new
    ``sent_id`` (None for text-only perturbers); ``changed`` holds 1-based ids of original
    words that were changed or moved; ``chrf2`` and ``lev`` compare ``perturbed`` with
    ``original`` (see :mod:`synrob.perturb.metrics`).
    """

    index: int
    variant: int
    kind: str
    params: dict[str, Any]
    seed: int
    source: str
    sent_id: str
    changed: tuple[int, ...]
    chrf2: float
    lev: float
    original: str
    perturbed: str
    label: str | None = None
    note: str | None = None
    sentence: Sentence | None = None
    lang: str = "en"
    output: int | None = None  # k of a perturber with several outputs per sentence
    more: dict[str, Any] = field(default_factory=dict)  # the perturber's own synrob.* comments
    version: str = ""  # the perturber's version

    def comments(self) -> dict[str, str]:
        """The ``# synrob.*`` comments, in output order."""
        out = {
            "synrob.source": self.source,
            "synrob.kind": self.kind,
            "synrob.lang": self.lang,
            "synrob.params": _params_json(self.params),
            "synrob.seed": str(self.seed),
            "synrob.variant": str(self.variant),
            "synrob.changed": ",".join(map(str, self.changed)),
            "synrob.chrf2": f"{self.chrf2:.{_DECIMALS}f}",
            "synrob.lev": f"{self.lev:.{_DECIMALS}f}",
        }
        if self.label is not None:
            out["synrob.label"] = self.label
        if self.note:
            out["synrob.note"] = self.note
        for key, value in self.more.items():
            out[key] = value if isinstance(value, str) else json.dumps(
                value, ensure_ascii=False, separators=(", ", ": "))
        return out

    def to_dict(self) -> dict[str, Any]:
        """The JSONL record: the comment fields plus ``original`` and ``perturbed`` text."""
        out: dict[str, Any] = {
            "sent_id": self.sent_id,
            "source": self.source,
            "kind": self.kind,
            "lang": self.lang,
            "params": self.params,
            "seed": self.seed,
            "variant": self.variant,
            "changed": list(self.changed),
            "chrf2": round(self.chrf2, _DECIMALS),
            "lev": round(self.lev, _DECIMALS),
            "original": self.original,
            "perturbed": self.perturbed,
        }
        if self.label is not None:
            out["label"] = self.label
        if self.note:
            out["note"] = self.note
        for key, value in self.more.items():
            out[key.removeprefix("synrob.")] = value
        return out

    def to_jsonl(self) -> str:
        return json.dumps(self.to_dict(), ensure_ascii=False, default=str) + "\n"

    def to_text(self) -> str:
        return self.perturbed.replace("\n", " ") + "\n"

    def to_conllu(self) -> str:
        """CoNLL-U of the perturbed sentence, comments first, ending with the blank line."""
        if self.sentence is None:
            raise SynrobError(
                f"perturber {self.kind!r} produced no tree for {self.source}; "
                "use --format text or jsonl"
            )
        lines = []
        for key, value in self.sentence.metadata.items():
            if value is None:
                lines.append(f"# {key}")
            elif value == "":
                lines.append(f"# {key} =")
            else:
                lines.append(f"# {key} = {value}")
        for tok in self.sentence.tokens:
            lines.append("\t".join([
                v if type(v) is str else str(v) if type(v) is int else serialize_field(v)
                for v in tok.values()
            ]))
        return "\n".join(lines) + "\n\n"

    def to_pair(self, fmt: str) -> str:
        """The agreement pair as a MultiBLiMP TSV row (``multiblimp``) or a BLiMP JSON line
        (``blimp``): the original text is the good sentence, the perturbed one the bad."""
        from .agreement.export import pair_out
        from .io.pairs import blimp_line, multiblimp_row

        agreement = self.more.get("synrob.agreement")
        if self.sentence is None or not isinstance(agreement, dict):
            raise SynrobError(f"{self.sent_id}: --format {fmt} writes agreement pairs, and "
                              "this output has no synrob.agreement")
        meta = {"lang": self.lang, "perturber": self.kind, "version": self.version,
                "params": self.params, "seed": self.seed}
        pair = pair_out(self.sentence, agreement, pair_id=self.sent_id, source=self.source,
                        good=self.original, bad=self.perturbed, meta=meta)
        return multiblimp_row(pair) if fmt == "multiblimp" else blimp_line(pair)

    def format(self, fmt: str) -> str:
        """The record written as ``conllu``, ``text``, ``jsonl``, ``multiblimp`` or
        ``blimp``."""
        if fmt == "conllu":
            return self.to_conllu()
        if fmt == "text":
            return self.to_text()
        if fmt == "jsonl":
            return self.to_jsonl()
        if fmt in PAIR_FORMATS:
            return self.to_pair(fmt)
        raise ParameterError(f"unknown format {fmt!r}; available: {', '.join(FORMATS)}")


@dataclass
class PipelineStats:
    """Counts updated while a stream is consumed (read them after it is exhausted)."""

    sentences: int = 0  # valid input sentences perturbed
    records: int = 0  # outputs (sentences x variants)
    unchanged_records: int = 0  # outputs in which nothing could be changed
    unchanged_sentences: int = 0  # sentences of which no variant changed
    invalid: int = 0  # malformed input sentences skipped
    notes: dict[str, int] = field(default_factory=dict)  # why outputs were left unchanged
    # several outputs: why each candidate (e.g. an agreeing verb) gave no output
    skipped: dict[str, int] = field(default_factory=dict)
    several: bool = False  # the perturber writes any number of outputs per sentence

    @property
    def changed_records(self) -> int:
        return self.records - self.unchanged_records

    def summary(self, variants: int = 1) -> str:
        """One line for stderr, e.g. ``perturbed 1734/2001 sentences (267 unchanged)``; for a
        perturber with several outputs ``perturbed 277/2077 sentences (1800 without an
        output); wrote 412 outputs``."""
        if self.several:
            done = self.sentences - self.unchanged_sentences
            line = (f"perturbed {done}/{self.sentences} sentences ({self.unchanged_sentences} "
                    f"without an output); wrote {self.records} outputs")
            if variants > 1:
                line += f" from {variants} variants each"
        elif variants == 1:
            line = (f"perturbed {self.changed_records}/{self.records} sentences "
                    f"({self.unchanged_records} unchanged)")
        else:
            line = (f"perturbed {self.changed_records}/{self.records} outputs "
                    f"({self.unchanged_records} unchanged) from {self.sentences} sentences "
                    f"x {variants} variants")
        if self.invalid:
            line += f"; skipped {self.invalid} invalid sentences"
        return line


def _params_json(params: dict[str, Any]) -> str:
    return json.dumps(params, sort_keys=True, ensure_ascii=False, default=str)


def check_format(perturber: Perturber, fmt: str) -> None:
    """Raise :class:`ParameterError` when ``fmt`` is unknown, needs a tree it cannot write, or
    is a pair format and the perturber is not ``agreement``."""
    if fmt not in FORMATS:
        raise ParameterError(f"unknown format {fmt!r}; available: {', '.join(FORMATS)}")
    if fmt in PAIR_FORMATS and perturber.name != "agreement":
        raise ParameterError(f"--format {fmt} writes agreement minimal pairs: use it with "
                             f"--kind agreement, not {perturber.name!r}")
    if fmt == "conllu" and not perturber.writes_conllu:
        opts = ", ".join(f"{k}={v}" for k, v in sorted(perturber.options.items()))
        raise ParameterError(
            f"perturber {perturber.name!r} ({opts}) writes text only (no tree): "
            "use --format text or --format jsonl"
        )


def format_header(fmt: str) -> str:
    """What a file of ``fmt`` starts with: MultiBLiMP's header line, else nothing."""
    from .io.pairs import multiblimp_header

    return multiblimp_header() if fmt == "multiblimp" else ""


# --------------------------------------------------------------------------- the engine

@dataclass(frozen=True)
class _Job:
    seed: int
    variants: int
    fmt: str | None  # None: return PerturbRecord objects


@dataclass(frozen=True)
class _Invalid:
    path: str
    line: int
    problem: str
    sent_id: str | None

    def error(self) -> ConlluError:
        return ConlluError(self.path, self.line, self.problem, self.sent_id)


# per item: _Invalid, or per variant its outputs as (payload, changed?, note, skipped,
# refused): refused holds a record per candidate without an output, with its sentence
_Entry = tuple[Any, bool, str | None, tuple[str, ...], tuple[dict[str, Any], ...]]
_ItemOut = _Invalid | list[_Entry]


def _record(perturber: Perturber, job: _Job, index: int, variant: int, original: Sentence,
            p: Perturbation, output: int | None = None) -> PerturbRecord:
    source = original.sent_id or f"s{index + 1}"
    sent_id = f"{source}.synrob-{perturber.name}-v{variant}"
    if output is not None:
        sent_id += f"-{output}"
    orig_text = original.text
    rec = PerturbRecord(
        index=index,
        variant=variant,
        kind=perturber.name,
        params=perturber.recorded_options,
        seed=job.seed,
        source=source,
        sent_id=sent_id,
        changed=tuple(p.changed),
        chrf2=chrf2(orig_text, p.text),
        lev=levenshtein(orig_text, p.text),
        original=orig_text,
        perturbed=p.text,
        label=p.label,
        note=p.note,
        lang=perturber.lang,
        output=output,
        more=dict(p.comments),
        version=perturber.version,
    )
    if p.sentence is not None:
        old_meta = p.sentence.metadata
        meta: dict[str, Any] = {} if "sent_id" in old_meta else {"sent_id": sent_id}
        for key, value in old_meta.items():
            meta[key] = sent_id if key == "sent_id" else value
        meta.update(rec.comments())
        # a new TokenList sharing the (perturber-made) tokens: no copy of the words
        rec.sentence = Sentence(TokenList(p.sentence.tokens, metadata=meta),
                                original.path, original.line)
    return rec


def _process_chunk(perturber: Perturber, job: _Job, chunk: list[tuple[int, Any]]
                   ) -> list[_ItemOut]:
    """Perturb one chunk of ``(index, Sentence | RawBlock)``; one output entry per item."""
    parsed: list[tuple[int, Sentence]] = []
    out: list[_ItemOut] = []
    slots: list[int] = []
    for index, item in chunk:
        if isinstance(item, RawBlock):
            try:
                item = item.parse()
            except ConlluError as err:
                out.append(_Invalid(err.path, err.line, err.problem, err.sent_id))
                continue
        slots.append(len(out))
        out.append([])
        parsed.append((index, item))
    if not parsed:
        return out
    perturber.ensure_setup()
    batch = [(s, sentence_rng(job.seed, i, v)) for i, s in parsed for v in range(job.variants)]
    results = _perturb_batch(perturber, batch)
    k = 0
    for slot, (index, sentence) in zip(slots, parsed, strict=True):
        entry = out[slot]
        assert isinstance(entry, list)
        for v in range(job.variants):
            entry.extend(_payloads(perturber, job, index, v, sentence, results[k]))
            k += 1
    return out


def _perturb_batch(perturber: Perturber, batch: list[tuple[Sentence, Any]]
                   ) -> list[list[Perturbation]]:
    """The perturbations of each (sentence, rng): one each, or any number for a perturber
    with ``several_outputs``."""
    if perturber.several_outputs:
        return [perturber.perturb_all(s, rng) for s, rng in batch]
    results = perturber.perturb_batch(batch)
    if len(results) != len(batch):
        raise SynrobError(
            f"perturber {perturber.name!r} returned {len(results)} results for {len(batch)} inputs"
        )
    return [[p] for p in results]


def _payloads(perturber: Perturber, job: _Job, index: int, variant: int, sentence: Sentence,
              results: list[Perturbation]) -> list[_Entry]:
    """``(payload, changed, note, skipped)`` of each output of one (sentence, variant). With
    several outputs only the changed perturbations are written; none changed: one entry with
    payload None (nothing written) and the first one's note. ``skipped`` (on the first entry)
    holds the notes of the candidates that gave no output."""
    if not perturber.several_outputs:
        rec = _record(perturber, job, index, variant, sentence, results[0])
        return [(rec if job.fmt is None else rec.format(job.fmt), bool(rec.changed), rec.note,
                 (), ())]
    skipped = tuple(n for p in results for n in p.skipped)
    source = sentence.sent_id or f"s{index + 1}"
    refused = tuple({"sent_id": source, **r, "text": sentence.text}
                    for p in results for r in p.refused) if variant == 0 else ()
    written = [p for p in results if p.changed]
    if not written:
        return [(None, False, results[0].note if results else None, skipped, refused)]
    out: list[_Entry] = []
    for k, p in enumerate(written):
        rec = _record(perturber, job, index, variant, sentence, p, output=k)
        out.append((rec if job.fmt is None else rec.format(job.fmt), True, None,
                    skipped if k == 0 else (), refused if k == 0 else ()))
    return out


_WORKER: Perturber | None = None


def _init_worker(perturber: Perturber) -> None:
    global _WORKER
    _WORKER = perturber


def _worker_chunk(job: _Job, chunk: list[tuple[int, Any]]) -> list[_ItemOut]:
    assert _WORKER is not None
    return _process_chunk(_WORKER, job, chunk)


def _chunks(items: Iterable[Sentence | RawBlock], size: int
            ) -> Iterator[list[tuple[int, Sentence | RawBlock]]]:
    chunk: list[tuple[int, Sentence | RawBlock]] = []
    for index, item in enumerate(items):
        chunk.append((index, item))
        if len(chunk) >= size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


def _chunk_results(perturber: Perturber, job: _Job, items: Iterable[Sentence | RawBlock],
                   batch_size: int, workers: int) -> Iterator[list[_ItemOut]]:
    chunks = _chunks(items, batch_size)
    if workers <= 1:
        for chunk in chunks:
            yield _process_chunk(perturber, job, chunk)
        return
    methods = multiprocessing.get_all_start_methods()
    ctx = multiprocessing.get_context("fork" if "fork" in methods else "spawn")
    with ctx.Pool(workers, initializer=_init_worker, initargs=(perturber,)) as pool:
        pending: deque[Any] = deque()
        for chunk in chunks:
            pending.append(pool.apply_async(_worker_chunk, (job, chunk)))
            if len(pending) >= 2 * workers:
                yield pending.popleft().get()
        while pending:
            yield pending.popleft().get()


def _run(
    perturber: Perturber,
    items: Iterable[Sentence | RawBlock],
    job: _Job,
    *,
    batch_size: int,
    workers: int,
    skip_invalid: bool,
    on_invalid: Callable[[ConlluError], None] | None,
    stats: PipelineStats | None,
    on_refused: Callable[[dict[str, Any]], None] | None = None,
) -> Iterator[Any]:
    if job.variants < 1:
        raise ParameterError(f"variants must be at least 1, got {job.variants}")
    if batch_size < 1:
        raise ParameterError(f"batch size must be at least 1, got {batch_size}")
    if workers < 1:
        raise ParameterError(f"workers must be at least 1, got {workers}")
    if job.fmt is not None:
        check_format(perturber, job.fmt)
    st = stats if stats is not None else PipelineStats()
    st.several = perturber.several_outputs
    for chunk_out in _chunk_results(perturber, job, items, batch_size, workers):
        for entry in chunk_out:
            if isinstance(entry, _Invalid):
                err = entry.error()
                if not skip_invalid:
                    raise err
                st.invalid += 1
                if on_invalid is not None:
                    on_invalid(err)
                continue
            st.sentences += 1
            any_changed = False
            for payload, changed, note, skipped, refused in entry:
                for reason in skipped:
                    st.skipped[reason] = st.skipped.get(reason, 0) + 1
                if on_refused is not None:
                    for record in refused:
                        on_refused(record)
                if payload is None:  # several outputs, none for this (sentence, variant)
                    if note:
                        st.notes[note] = st.notes.get(note, 0) + 1
                    continue
                st.records += 1
                if changed:
                    any_changed = True
                else:
                    st.unchanged_records += 1
                    if note:
                        st.notes[note] = st.notes.get(note, 0) + 1
                yield payload
            if not any_changed:
                st.unchanged_sentences += 1


def perturb_records(
    perturber: Perturber,
    items: Iterable[Sentence | RawBlock],
    *,
    seed: int = 0,
    variants: int = 1,
    batch_size: int = 64,
    workers: int = 1,
    skip_invalid: bool = False,
    on_invalid: Callable[[ConlluError], None] | None = None,
    stats: PipelineStats | None = None,
    on_refused: Callable[[dict[str, Any]], None] | None = None,
) -> Iterator[PerturbRecord]:
    """Perturb a stream of sentences; yield ``variants`` records per sentence, in input order.

    ``batch_size`` sentences go to :meth:`Perturber.perturb_batch` at once (times
    ``variants``); ``workers > 1`` perturbs chunks in that many processes (records, sentences
    included, are sent back, so prefer :func:`perturb_formatted` for throughput). A malformed
    :class:`RawBlock` raises :class:`ConlluError`, or with ``skip_invalid`` goes to
    ``on_invalid`` and is counted in ``stats.invalid``. ``on_refused`` gets the record of
    every candidate a perturber with several outputs refused (``Perturbation.refused``, with
    the source's ``sent_id`` and ``text``), once per sentence, in input order.
    """
    yield from _run(perturber, items, _Job(seed, variants, None), batch_size=batch_size,
                    workers=workers, skip_invalid=skip_invalid, on_invalid=on_invalid,
                    stats=stats, on_refused=on_refused)


def perturb_formatted(
    perturber: Perturber,
    items: Iterable[Sentence | RawBlock],
    fmt: str,
    *,
    seed: int = 0,
    variants: int = 1,
    batch_size: int = 64,
    workers: int = 1,
    skip_invalid: bool = False,
    on_invalid: Callable[[ConlluError], None] | None = None,
    stats: PipelineStats | None = None,
    on_refused: Callable[[dict[str, Any]], None] | None = None,
) -> Iterator[str]:
    """Like :func:`perturb_records`, but yield each record written as ``fmt`` (see FORMATS).

    Output is byte-identical for any ``batch_size`` and ``workers``. ``fmt="conllu"`` with a
    text-only perturber (subword/char units) raises :class:`ParameterError` before any work.
    """
    yield from _run(perturber, items, _Job(seed, variants, fmt), batch_size=batch_size,
                    workers=workers, skip_invalid=skip_invalid, on_invalid=on_invalid,
                    stats=stats, on_refused=on_refused)
