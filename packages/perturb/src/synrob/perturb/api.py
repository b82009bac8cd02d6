"""The Python API of synrob.perturb: what a notebook needs, the same functions the CLI calls.

Exported by :mod:`synrob.perturb` (``from synrob.perturb import perturb, read_conllu``); see
docs/python.md. Nothing here imports torch: perturbers that run a model load it when used.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .base import Perturber
from .corpus import Sentence
from .errors import ParameterError
from .io.catalog import Catalog
from .io.table import ResultTable
from .pipeline import PerturbRecord, PipelineStats

__all__ = ["PerturbResult", "list_perturbers", "make_perturber", "perturb", "read_conllu",
           "write_conllu"]

Corpus = str | os.PathLike[str] | Iterable[Sentence]


def read_conllu(source: str | os.PathLike[str], *, skip_invalid: bool = False
                ) -> list[Sentence]:
    """Every sentence of ``source``: a CoNLL-U file, ``sample:en_ewt:test`` (the bundled
    sample) or ``ud:NAME:SPLIT`` (a UD treebank, from ``$SYNROB_DATA`` or downloaded). A spec
    without a split (``sample:en_ewt``) reads train, dev and test in that order."""
    from .corpus import iter_corpus
    from .io.data import resolve_input

    paths = resolve_input(os.fspath(source))
    return list(iter_corpus(paths, skip_invalid=skip_invalid))


def write_conllu(sentences: Iterable[Sentence], dest: str | os.PathLike[str]) -> int:
    """Write ``sentences`` to ``dest`` atomically (the file appears whole); returns how many."""
    from .corpus import write_conllu as _write

    return _write(sentences, dest)


def list_perturbers() -> Catalog:
    """Every registered perturber's description (name, version, summary, paper, languages,
    parameters), built-in and plugin alike, as ``synrob perturb --describe`` prints it: a list
    of dicts that is also a table (``.to_pandas()``, a notebook view)."""
    from .plugins import get_registry

    reg = get_registry()
    return Catalog([{**reg.get("perturber", n).describe(),
                     "distribution": reg.info("perturber", n).distribution}
                    for n in reg.names("perturber")], "perturbers",
                   ("name", "version", "summary", "languages", "distribution"))


def make_perturber(kind: str, *, lang: str = "en", lang_source: str = "",
                   **params: Any) -> Perturber:
    """The registered perturber ``kind`` for language ``lang``, with ``params`` (the ``-p``
    values of the CLI, as Python values or strings); an unknown kind, a language the perturber
    does not support or a bad parameter is a :class:`~synrob.perturb.errors.SynrobError`."""
    from .base import create_perturber
    from .io.language import check_code, check_supported
    from .plugins import get_registry

    cls = get_registry().get("perturber", kind)
    code = check_code(lang)
    check_supported(f"perturber {kind!r}", getattr(cls, "languages", ("*",)), code,
                    getattr(cls, "language_note", ""), lang_source)
    return create_perturber(cls, code, **params)


@dataclass(repr=False)
class PerturbResult(ResultTable):
    """What :func:`perturb` made: one :class:`PerturbRecord` per output (``records``), the
    perturbed sentences (``sentences``; None for text-only perturbers) and the counts
    (``stats``). ``rows``: one per output with its source, kind, params, seed, variant,
    changed word ids, chrF-2, Levenshtein, original and perturbed text."""

    records: list[PerturbRecord]
    stats: PipelineStats
    kind: str
    seed: int
    lang: str
    rows: list[dict[str, Any]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.title = f"perturb --kind {self.kind} (seed {self.seed}, {self.lang})"
        self.rows = [{"kind": r.kind, "seed": r.seed, "lang": r.lang, **r.to_dict()}
                     for r in self.records]

    @property
    def sentences(self) -> list[Sentence]:
        """The perturbed sentences, with their ``# synrob.*`` comments."""
        out = [r.sentence for r in self.records]
        if any(s is None for s in out):
            raise ParameterError(f"perturber {self.kind!r} writes text only: no sentences "
                                 "(use .records or .rows)")
        return [s for s in out if s is not None]

    def write_conllu(self, dest: str | os.PathLike[str]) -> int:
        """Write the outputs as CoNLL-U, byte for byte what ``synrob perturb`` writes
        (atomically); returns how many sentences were written."""
        from .io.atomic import atomic_open

        self.sentences  # noqa: B018  # a text-only perturber fails before any write
        with atomic_open(dest, newline="\n") as fh:
            for r in self.records:
                fh.write(r.to_conllu())
        return len(self.records)


def _corpus(corpus: Corpus) -> tuple[list[Sentence], list[Path]]:
    """The sentences of ``corpus`` and the files they came from (none for sentences)."""
    if isinstance(corpus, (str, os.PathLike)):
        from .corpus import iter_corpus
        from .io.data import resolve_input

        paths = resolve_input(os.fspath(corpus))
        return list(iter_corpus(paths)), paths
    return list(corpus), []


def perturb(corpus: Corpus, kind: str | Perturber, *, seed: int = 0, variants: int = 1,
            lang: str | None = None, workers: int = 1, batch_size: int = 64,
            **params: Any) -> PerturbResult:
    """Perturb every sentence of ``corpus`` (a spec or path as for :func:`read_conllu`, or
    sentences) with perturber ``kind`` (a name, with ``params``, or a built perturber).

    The language is ``lang``, else read from the file name or ``# synrob.lang`` comment, else
    English; a perturber with a ``reference`` parameter gets the input file by default (as on
    the command line). Output is identical to ``synrob perturb`` with the same seed."""
    from .io.language import Language, infer_language
    from .pipeline import perturb_records

    sentences, paths = _corpus(corpus)
    if isinstance(kind, Perturber):
        if params:
            raise ParameterError("give params to make_perturber, not with a built perturber")
        perturber, name = kind, kind.name
    else:
        language = infer_language(paths, lang) if paths else Language(lang or "en", "given")
        specs = [os.fspath(corpus)] if paths else []  # type: ignore[arg-type]
        params = default_reference(kind, params, specs)
        perturber, name = make_perturber(kind, lang=language.code,
                                         lang_source=language.source, **params), kind
    stats = PipelineStats()
    records = list(perturb_records(perturber, sentences, seed=seed, variants=variants,
                                   workers=workers, batch_size=batch_size, stats=stats))
    return PerturbResult(records, stats, name, seed, perturber.lang)


def default_reference(kind: str, params: dict[str, Any], inputs: Sequence[str]
                      ) -> dict[str, Any]:
    """``params`` with ``reference`` set to the input specs when perturber ``kind`` declares
    one (e.g. SOMO's bigram counts, agreement's lexicon: the input treebanks) and none is
    given; stdin (``-``) is no reference."""
    from .plugins import get_registry

    cls = get_registry().get("perturber", kind)
    declares = any(p.name == "reference" for p in getattr(cls, "params", ()))
    if declares and "reference" not in params and inputs and "-" not in inputs:
        return {**params, "reference": ",".join(inputs)}
    return params
