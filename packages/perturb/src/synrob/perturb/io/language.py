"""The language of an input: given (``--lang``), inferred, or assumed, and what supports it.

Every input has one language, an ISO 639 code as Universal Dependencies uses it (``en``, ``tr``,
``de``, ``qtd``...). :func:`infer_language` finds it, in order, from

1. a UD file name ``LANG_TREEBANK-ud-SPLIT.conllu`` (``tr_imst-ud-test.conllu`` -> ``tr``, also
   after a ``synrob`` derived suffix such as ``tr_imst-ud-test.jabberwocky.ab12.conllu``);
2. a ``# synrob.lang = CODE`` comment in the first sentence (what every synrob output records);
3. else English (``en``), the language of every bundled resource.

Perturbers declare the languages they support in ``languages`` (codes, or ``"*"`` for any):
:func:`check_supported` turns a mismatch into one :class:`LanguageError` naming them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from ..errors import ParameterError, arg

__all__ = [
    "DEFAULT_LANGUAGE",
    "ANY",
    "LANG_COMMENT",
    "LanguageError",
    "Language",
    "check_code",
    "language_of_name",
    "language_of_comments",
    "language_of_lines",
    "infer_language",
    "language_of_spec",
    "supports",
    "check_supported",
]

DEFAULT_LANGUAGE = "en"
#: A perturber that works for every language declares ``languages = (ANY,)``.
ANY = "*"
#: The comment every synrob output carries, and the second place a language is read from.
LANG_COMMENT = "synrob.lang"

_CODE = re.compile(r"^[a-z]{2,3}$")
_UD_NAME = re.compile(r"^([a-z]{2,3})_[a-z0-9]+-ud-(?:train|dev|test)\b")


class LanguageError(ParameterError):
    """A component was asked for a language it does not support, or a code is malformed."""


@dataclass(frozen=True)
class Language:
    """A language code and how it was found: ``given``, ``file name``, ``comment``, ``default``."""

    code: str
    source: str

    def describe(self) -> str:
        """``tr (from the file name tr_imst-ud-test.conllu)``, for messages."""
        return f"{self.code} ({self.source})"


def check_code(code: str) -> str:
    """``code`` lower-cased, or :class:`LanguageError` when it is not a 2-3 letter ISO code."""
    low = code.strip().lower()
    if not _CODE.match(low):
        raise LanguageError(
            f"{arg('lang', repr(code))} is not a language code: give the ISO 639 code UD uses "
            "(2 or 3 letters, e.g. en, tr, de, qtd)"
        )
    return low


def language_of_name(path: str | Path) -> str | None:
    """The language of a UD file name (``tr_imst-ud-test.conllu`` -> ``tr``), or None."""
    m = _UD_NAME.match(Path(str(path)).name)
    return m.group(1) if m else None


def language_of_comments(metadata: dict[str, object]) -> str | None:
    """The ``# synrob.lang`` of a sentence's comments, when it is a valid code."""
    value = metadata.get(LANG_COMMENT)
    if isinstance(value, str) and _CODE.match(value.strip()):
        return value.strip()
    return None


def language_of_lines(lines: Iterable[str]) -> str | None:
    """The ``# synrob.lang`` among the leading ``# key = value`` comments of a CoNLL-U sentence
    (``lines``: its lines, or a file's, read up to the first word line)."""
    comments: dict[str, object] = {}
    for line in lines:
        if not line.strip():
            if comments:
                break
            continue
        if not line.startswith("#"):
            break
        key, sep, value = line[1:].partition("=")
        if sep:
            comments[key.strip()] = value.strip()
    return language_of_comments(comments)


def _language_of_file(path: Path) -> str | None:
    """:func:`language_of_lines` of a file's first sentence (None when it is unreadable)."""
    try:
        with path.open(encoding="utf-8", errors="replace") as fh:
            return language_of_lines(fh)
    except OSError:
        return None


def infer_language(paths: Iterable[str | Path], given: str | None = None) -> Language:
    """The language of the inputs ``paths`` (stdin ``-`` is skipped), see the module doc.

    ``given`` (``--lang``) wins. Inputs that name two different languages are an error: one
    perturber run has one language.
    """
    if given:
        return Language(check_code(given), "given")
    found: dict[str, Language] = {}
    for raw in paths:
        path = Path(str(raw))
        if str(path) == "-":
            continue
        code = language_of_name(path)
        lang = Language(code, f"from the file name {path.name}") if code else None
        if lang is None and path.is_file():
            code = _language_of_file(path)
            lang = Language(code, f"from '# {LANG_COMMENT}' in {path.name}") if code else None
        if lang is not None:
            found.setdefault(lang.code, lang)
    if len(found) > 1:
        listed = "; ".join(v.describe() for v in found.values())
        raise LanguageError(f"the inputs are in different languages: {listed}; "
                            "perturb one language at a time or give --lang")
    if found:
        return next(iter(found.values()))
    return Language(DEFAULT_LANGUAGE, "assumed: no --lang, UD file name or '# synrob.lang'")


def language_of_spec(spec: str, given: str | None = None) -> Language:
    """The language of one input spec without fetching it: ``--lang``, else the treebank name
    of a ``ud:NAME``/``sample:NAME`` spec (``ud:tr_imst:test`` -> ``tr``), else
    :func:`infer_language` of the file."""
    if given:
        return Language(check_code(given), "given")
    scheme, sep, rest = spec.partition(":")
    if sep and scheme in ("ud", "sample") and not Path(spec).exists():
        code = rest.split(":")[0].split("_")[0].lower()
        if _CODE.match(code):
            return Language(code, f"from the treebank name {spec}")
    return infer_language([spec] if spec else [])


def supports(languages: Iterable[str], code: str) -> bool:
    """Whether a component declaring ``languages`` supports language ``code``."""
    langs = tuple(languages)
    return ANY in langs or code in langs


def check_supported(owner: str, languages: Iterable[str], code: str, why: str = "",
                    origin: str = "") -> None:
    """Raise :class:`LanguageError` when ``code`` is not among ``languages``; ``why`` says why
    the component is limited, ``origin`` how the language was found."""
    langs = tuple(languages)
    if not supports(langs, code):
        reason = f" ({why})" if why else ""
        found = f" ({origin})" if origin and origin != "given" else ""
        hint = "; give --lang if the input's language was found wrongly" if found else ""
        raise LanguageError(f"{owner} supports only {', '.join(langs)}{reason}, not "
                            f"{code}{found}{hint}")
