"""The perturber interface every built-in and third-party perturber implements."""

from __future__ import annotations

import random
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from .corpus import Sentence
from .io.language import ANY, DEFAULT_LANGUAGE, check_code, check_supported
from .params import Param, parse_params

__all__ = ["Perturber", "Perturbation", "Param", "sentence_rng", "create_perturber"]


@dataclass
class Perturbation:
    """The result of perturbing one sentence.

    ``sentence`` is the perturbed sentence with its tree (None for text-only outputs such as
    subword or character shuffles); ``text`` is the perturbed surface text; ``changed`` holds the
    1-based ids of the *original* words that were changed or moved (empty when nothing could be
    changed); ``label`` is ``"O"``/``"I"`` for the SentEval generators; ``note`` says why a
    sentence was left unchanged; ``skipped`` (a perturber with several outputs, on the first
    perturbation of a sentence) says why each other candidate of the sentence gave no output,
    one note per candidate, counted in the summary; ``refused`` (there too) holds a record of
    each such candidate (JSON values by name: the word, its subject, the reason), which
    ``synrob perturb --refused FILE`` writes. ``comments`` are more ``synrob.*`` comments of this output
    (name -> a string, or a JSON value written as compact JSON), written after the standard
    ones, and in JSON lines as fields named without ``synrob.``.
    """

    sentence: Sentence | None
    text: str
    changed: tuple[int, ...] = ()
    label: str | None = None
    note: str | None = None
    skipped: tuple[str, ...] = ()
    extra: dict[str, Any] = field(default_factory=dict)
    comments: dict[str, Any] = field(default_factory=dict)
    refused: tuple[dict[str, Any], ...] = ()


def sentence_rng(seed: int, index: int, variant: int = 0) -> random.Random:
    """The random generator for one (sentence, variant): independent of batching and workers."""
    return random.Random(f"synrob:{seed}:{index}:{variant}")


def create_perturber(cls: type[Perturber], lang: str, **params: Any) -> Perturber:
    """``cls(lang=lang, **params)``; a plugin whose ``__init__`` takes no ``lang`` (written
    before languages existed) is built without it and given ``lang`` after its check."""
    import inspect

    try:
        sig = inspect.signature(cls)
        takes = "lang" in sig.parameters or any(
            p.kind is p.VAR_KEYWORD for p in sig.parameters.values())
    except (TypeError, ValueError):  # no signature to read: assume the base class's
        takes = True
    if takes:
        return cls(lang=lang, **params)
    check_supported(f"perturber {cls.name!r}", cls.languages, check_code(lang),
                    cls.language_note)
    obj = cls(**params)
    obj.lang = check_code(lang)
    return obj


class Perturber(ABC):
    """Base class: subclasses set ``name``, ``params``, and implement :meth:`perturb`.

    Construct with keyword parameters (strings from the CLI are converted by the declared
    :class:`Param` types) and the input's language ``lang`` (an ISO code, default ``en``).
    ``languages`` declares the languages the perturber supports (codes, or ``"*"`` for any;
    ``language_note`` says why, e.g. ``"English WordNet 3.0"``): constructing it for another
    language raises :class:`~synrob.perturb.io.language.LanguageError`. Heavy resources (models,
    lexicons) are loaded lazily in :meth:`setup`, which the caller may invoke once before the
    first sentence.
    """

    name: ClassVar[str]
    version: ClassVar[str] = "1.0"
    summary: ClassVar[str] = ""
    paper: ClassVar[str] = ""
    params: ClassVar[tuple[Param, ...]] = ()
    languages: ClassVar[tuple[str, ...]] = (ANY,)
    language_note: ClassVar[str] = ""
    #: Whether a sentence gives any number of outputs, :meth:`perturb_all`'s, instead of
    #: exactly one (a minimal-pair generator: one output per pair, none without a pair).
    several_outputs: ClassVar[bool] = False

    def __init__(self, *, lang: str = DEFAULT_LANGUAGE, **params: Any) -> None:
        self.lang = check_code(lang)
        check_supported(f"perturber {self.name!r}", self.languages, self.lang, self.language_note)
        self.options: dict[str, Any] = parse_params(self.params, params, f"perturber {self.name!r}")
        self._ready = False

    @property
    def recorded_options(self) -> dict[str, Any]:
        """The options written into every output (``# synrob.params``): by default all of them;
        a perturber may leave out options that have no effect in its language."""
        return self.options

    @property
    def writes_conllu(self) -> bool:
        """Whether outputs keep a tree (CoNLL-U) or are text only (subword/char units)."""
        return True

    def advice(self, skipped: Mapping[str, int], outputs: int) -> str | None:
        """A line for the end of the run's summary, or None (the default): what the user can
        do when a run gave few outputs (``skipped``: how many candidates gave no output, by
        note; ``outputs``: how many outputs were written)."""
        return None

    def setup(self) -> None:
        """Load heavy resources once (lexicons, models). Idempotent."""
        self._ready = True

    def ensure_setup(self) -> None:
        if not self._ready:
            self.setup()
            self._ready = True

    @abstractmethod
    def perturb(self, sentence: Sentence, rng: random.Random) -> Perturbation:
        """Perturb one sentence using only ``rng`` for random choices."""

    def perturb_all(self, sentence: Sentence, rng: random.Random) -> list[Perturbation]:
        """Every output for one sentence, for a perturber with ``several_outputs``: the
        perturbations that changed something are written, each as its own output; when none
        did, nothing is written and the first one's ``note`` says why. By default
        ``[self.perturb(sentence, rng)]``."""
        return [self.perturb(sentence, rng)]

    def perturb_batch(
        self, items: Sequence[tuple[Sentence, random.Random]]
    ) -> list[Perturbation]:
        """Perturb several sentences; model-based perturbers override this to batch."""
        self.ensure_setup()
        return [self.perturb(s, rng) for s, rng in items]

    @classmethod
    def describe(cls) -> dict[str, Any]:
        from .params import describe_component

        return {"kind": cls.name, **describe_component(cls), "languages": list(cls.languages),
                "language_note": cls.language_note}
