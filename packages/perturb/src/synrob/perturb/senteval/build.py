"""Build the ten SentEval probing tasks from CoNLL-U treebanks, write and read them back.

>>> result = build_suite(["ud:en_ewt"], seed=0)          # doctest: +SKIP
>>> write_suite(result, "senteval/")                      # doctest: +SKIP

:class:`SuiteBuilder` builds one task at a time (the CLI shows progress per task);
:func:`build_suite` builds them all. :func:`write_suite` writes the task files
(:data:`~.format.TASK_FILES`), the O/I tasks' original/modified pairs (:func:`pairs_file`) and
``stats.json``; :func:`read_suite` and :func:`suite_stats`
read a directory of task files, ours or the official SentEval ones.
"""

from __future__ import annotations

import json
import os
import random
import warnings
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ..errors import SynrobWarning
from ..io.atomic import write_text_atomic
from .format import (
    SPLITS,
    TASK_FILES,
    SentEvalError,
    SentEvalExample,
    read_task_file,
    write_task_file,
)
from .source import SourceSentence, load_sources
from .splits import DEFAULT_PROPORTIONS
from .tasks import (
    LEXICAL_LABELS,
    TaskBuild,
    bigram_shift_task,
    coordination_inversion_task,
    lexical_task,
    sentence_length_task,
    somo_task,
    top_constituents_task,
    tree_depth_task,
    word_content_task,
)

__all__ = [
    "DEFAULT_TREEBANKS",
    "SentEvalError",
    "BuildConfig",
    "SuiteResult",
    "SuiteBuilder",
    "build_suite",
    "write_suite",
    "pairs_file",
    "read_pairs",
    "read_suite",
    "class_counts",
    "suite_stats",
]

#: What ``synrob senteval build`` reads when no ``--treebank`` is given: all of UD English EWT.
DEFAULT_TREEBANKS: tuple[str, ...] = ("ud:en_ewt",)


@dataclass(frozen=True)
class BuildConfig:
    """Parameters of the construction (all reported in ``stats.json``)."""

    min_len: int = 5                       #: shortest sentence kept (words)
    max_len: int = 28                      #: longest sentence kept (words)
    proportions: tuple[float, float, float] = DEFAULT_PROPORTIONS  #: tr/va/te shares
    length_bins: int = 6                   #: SentLen classes
    wc_per_word: int = 10                  #: WC sentences per word (all splits)
    wc_zipf_band: tuple[float, float] = (3.0, 5.0)  #: WC wordfreq Zipf band of candidates
    wc_max_words: int = 1000               #: WC upper bound on N (the paper's N)
    depth_min_classes: int = 4             #: TreeDepth: fewest depth classes
    topconst_max_classes: int = 20         #: TopConst: most classes, OTHER included
    topconst_min_per_class: int = 100      #: TopConst: fewest treebank sentences per class
    somo_tolerance: float = 1.0            #: SOMO bigram log-count tolerance

    def __post_init__(self) -> None:
        if not 1 <= self.min_len <= self.max_len:
            raise SentEvalError(f"need 1 <= min_len <= max_len, got {self.min_len}, {self.max_len}")
        if len(self.proportions) != 3 or min(self.proportions) <= 0:
            raise SentEvalError(f"proportions must be three positive shares, got {self.proportions}")
        if self.wc_per_word < len(SPLITS):
            raise SentEvalError("wc_per_word must be at least 3 (one sentence per split)")


@dataclass
class SuiteResult:
    """Built tasks (by task name, in :data:`TASK_FILES` order) and how they were made."""

    tasks: dict[str, TaskBuild]
    treebanks: list[str]
    seed: int
    config: BuildConfig
    sources: dict[str, int] = field(default_factory=dict)
    lang: str = "en"

    def stats(self) -> dict[str, Any]:
        """The ``stats.json`` object: per task, class counts per split, sizes, choices made."""
        tasks = {}
        for name, build in self.tasks.items():
            info = {k: v for k, v in build.info.items() if k != "words"}
            tasks[name] = {
                "file": TASK_FILES[name],
                "sizes": _sizes(build.examples),
                "counts": class_counts(build.examples),
                **info,
            }
        return {
            "treebanks": self.treebanks,
            "lang": self.lang,
            "seed": self.seed,
            "tokens": "UD syntactic word forms, space-separated",
            "config": asdict(self.config),
            "sources": self.sources,
            "tasks": tasks,
        }


def class_counts(examples: Iterable[SentEvalExample]) -> dict[str, dict[str, int]]:
    """``{split: {label: count}}`` (splits in tr, va, te order, labels sorted)."""
    counts: dict[str, Counter[str]] = {sp: Counter() for sp in SPLITS}
    for ex in examples:
        counts[ex.split][ex.label] += 1
    return {sp: dict(sorted(c.items())) for sp, c in counts.items()}


def _sizes(examples: Sequence[SentEvalExample]) -> dict[str, int]:
    c = Counter(ex.split for ex in examples)
    return {sp: c[sp] for sp in SPLITS}


class SuiteBuilder:
    """Reads the treebanks once, then builds tasks one by one (:meth:`build`).

    ``treebanks`` are CoNLL-U paths or ``ud:``/``sample:`` specs
    (:func:`synrob.perturb.io.data.resolve_input`). Each task draws from its own random generator
    seeded by ``seed`` and the task name, so a task does not depend on which others are built.
    ``lang`` is the treebanks' language (default: from their UD file names, see
    :func:`synrob.perturb.io.language.infer_language`); WC takes its word frequencies from it.
    """

    def __init__(self, treebanks: Sequence[str | os.PathLike[str]] = DEFAULT_TREEBANKS,
                 seed: int = 0, config: BuildConfig | None = None,
                 lang: str | None = None) -> None:
        from ..io.data import resolve_input
        from ..io.language import infer_language

        self.treebanks = [str(t) for t in treebanks] or list(DEFAULT_TREEBANKS)
        self.seed = seed
        self.config = config or BuildConfig()
        self.paths = [p for spec in self.treebanks for p in resolve_input(spec)]
        if any(str(p) == "-" for p in self.paths):
            raise SentEvalError("senteval build reads CoNLL-U files, not stdin")
        self.lang = infer_language(self.paths, lang).code
        self.sources: list[SourceSentence]
        self.sources, self.source_counts = load_sources(
            self.paths, min_len=self.config.min_len, max_len=self.config.max_len)
        if not self.sources:
            raise SentEvalError(
                f"no sentence of {self.config.min_len}-{self.config.max_len} words in "
                f"{', '.join(self.treebanks)}")
        self._table: Any = None
        self.built: dict[str, TaskBuild] = {}

    def _rng(self, task: str) -> random.Random:
        return random.Random(f"synrob-senteval:{self.seed}:{task}")

    def bigram_table(self) -> Any:
        """The SOMO bigram table of all the treebanks' sentences (built once)."""
        if self._table is None:
            from ..perturbers.senteval import BigramTable

            self._table = BigramTable.from_conllu(self.paths)
        return self._table

    def build(self, task: str) -> TaskBuild:
        """Build one task (a key of :data:`TASK_FILES`); an empty task is a warning."""
        if task not in TASK_FILES:
            raise SentEvalError(f"unknown SentEval task {task!r}; known: {', '.join(TASK_FILES)}")
        c, src, rng, props = self.config, self.sources, self._rng(task), self.config.proportions
        if task == "SentLen":
            result = sentence_length_task(src, rng, min_len=c.min_len, max_len=c.max_len,
                                          n_bins=c.length_bins, proportions=props)
        elif task == "WC":
            result = word_content_task(src, rng, per_word=c.wc_per_word,
                                       zipf_band=c.wc_zipf_band, max_words=c.wc_max_words,
                                       proportions=props, lang=self.lang)
        elif task == "TreeDepth":
            result = tree_depth_task(src, rng, min_classes=c.depth_min_classes,
                                     proportions=props)
        elif task == "TopConst":
            result = top_constituents_task(src, rng, max_classes=c.topconst_max_classes,
                                           min_per_class=c.topconst_min_per_class,
                                           proportions=props)
        elif task == "BShift":
            result = bigram_shift_task(src, rng, self.seed, proportions=props)
        elif task == "SOMO":
            result = somo_task(src, rng, self.seed, self.bigram_table(),
                               tolerance=c.somo_tolerance, proportions=props)
        elif task == "CoordInv":
            result = coordination_inversion_task(src, rng, self.seed, proportions=props)
        else:
            result = lexical_task(task, src, rng, LEXICAL_LABELS[task], proportions=props)
        if not result.examples:
            warnings.warn(f"SentEval task {task}: no examples could be built from "
                          f"{', '.join(self.treebanks)}", SynrobWarning, stacklevel=2)
        self.built[task] = result
        return result

    def result(self) -> SuiteResult:
        """The tasks built so far, in :data:`TASK_FILES` order."""
        tasks = {t: self.built[t] for t in TASK_FILES if t in self.built}
        return SuiteResult(tasks, self.treebanks, self.seed, self.config,
                           dict(self.source_counts), self.lang)


def build_suite(treebanks: Sequence[str | os.PathLike[str]] = DEFAULT_TREEBANKS, seed: int = 0,
                config: BuildConfig | None = None,
                tasks: Sequence[str] | None = None, lang: str | None = None) -> SuiteResult:
    """Build the SentEval tasks (all ten unless ``tasks`` names some) from ``treebanks`` (in
    language ``lang``, by default inferred from them)."""
    builder = SuiteBuilder(treebanks, seed, config, lang)
    for task in tasks or list(TASK_FILES):
        builder.build(task)
    return builder.result()


def write_suite(result: SuiteResult, outdir: str | os.PathLike[str]) -> list[Path]:
    """Write every built task's file and ``stats.json`` into ``outdir``; return the paths."""
    out = Path(outdir)
    out.mkdir(parents=True, exist_ok=True)
    written = [write_task_file(out / TASK_FILES[name], build.examples)
               for name, build in result.tasks.items()]
    written += [write_text_atomic(pairs_file(out, name), "".join(
                    json.dumps(p, ensure_ascii=False) + "\n" for p in build.pairs))
                for name, build in result.tasks.items() if build.pairs]
    stats = write_text_atomic(out / "stats.json",
                              json.dumps(result.stats(), indent=2, ensure_ascii=False) + "\n")
    return [*written, stats]


def pairs_file(directory: str | os.PathLike[str], task: str) -> Path:
    """``DIR/<task file stem>.pairs.jsonl``: one JSON object per I example of an O/I task
    (BShift, SOMO, CoordInv) - ``{"split", "original", "modified"}`` - for behavioural scores;
    the official SentEval files have none."""
    return Path(directory) / (Path(TASK_FILES[task]).stem + ".pairs.jsonl")


def read_pairs(directory: str | os.PathLike[str], task: str) -> list[dict[str, str]] | None:
    """The pairs of ``task`` written by :func:`write_suite`, or None when there is no file."""
    path = pairs_file(directory, task)
    if not path.is_file():
        return None
    with path.open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def read_suite(directory: str | os.PathLike[str]) -> dict[str, list[SentEvalExample]]:
    """The task files found in ``directory`` (by task name, :data:`TASK_FILES` order).

    Works on the official SentEval probing files too (same names, same format). A directory
    holding none of the ten files is a :class:`SentEvalError`.
    """
    d = Path(directory)
    if not d.is_dir():
        raise SentEvalError(f"{d}: not a directory")
    found = {name: read_task_file(d / fname) for name, fname in TASK_FILES.items()
             if (d / fname).is_file()}
    if not found:
        raise SentEvalError(f"{d}: none of the SentEval task files "
                            f"({', '.join(TASK_FILES.values())})")
    return found


def suite_stats(tasks: Mapping[str, Sequence[SentEvalExample]]) -> dict[str, Any]:
    """Per task: file, split sizes, class counts per split, number of classes, and whether
    classes are balanced within every split and no sentence occurs in two splits."""
    out: dict[str, Any] = {}
    for name, examples in tasks.items():
        counts = class_counts(examples)
        splits_of: dict[str, set[str]] = {}
        for ex in examples:
            splits_of.setdefault(ex.sentence, set()).add(ex.split)
        out[name] = {
            "file": TASK_FILES.get(name, name),
            "sizes": _sizes(examples),
            "classes": len({ex.label for ex in examples}),
            "balanced": all(len(set(c.values())) <= 1 for c in counts.values()),
            "sentences_in_two_splits": sum(1 for v in splits_of.values() if len(v) > 1),
            "counts": counts,
        }
    return out
