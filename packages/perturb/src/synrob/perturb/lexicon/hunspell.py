"""Hunspell dictionaries: is a string a word of the language? (generic Jabberwocky)

A word list cannot hold every form of an agglutinative language; a spell-checker dictionary
(stems plus affix rules) can. The generic Jabberwocky therefore rejects a candidate pseudoword
that the language's Hunspell dictionary accepts.

* :func:`find_dictionary` finds language ``lang``'s dictionary, a ``NAME.dic`` with its
  ``NAME.aff`` (``tr_TR``, ``cs_CZ``...), in :func:`search_dirs`: ``$SYNROB_HUNSPELL_DIR``
  (folders separated by ``os.pathsep``) when set, else ``/usr/share/hunspell`` (where Debian's
  ``hunspell-LANG`` packages put them), ``/usr/share/myspell`` and ``<sys.prefix>/share/hunspell``
  (dev.sh's install without root).
* :func:`debian_package` names the Debian package that ships it, for the warning a missing
  dictionary gives (:func:`missing_dictionary_message`).
* :class:`HunspellWords` answers :meth:`~HunspellWords.accepts` with ``spylls`` (a maintained
  pure-Python port of Hunspell), loaded only when a word is not in its on-disk cache of answers:
  ``<cache>/hunspell/NAME-KEY.json``, keyed by the dictionary files' SHA-256, the spylls version
  and :data:`CHECK_VERSION`, saved every 2,000 new answers and when the process exits. One
  dictionary is loaded once per process (``tr_TR``: about 5 s and 450 MB; a Czech lookup takes
  about 4 ms, a Turkish one 0.05 ms).
"""

from __future__ import annotations

import atexit
import hashlib
import json
import os
import sys
from dataclasses import dataclass
from functools import lru_cache
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

from ..errors import SynrobWarning
from ..io.atomic import write_text_atomic
from ..io.data import cache_dir

__all__ = ["CHECK_VERSION", "DictionaryFiles", "HunspellWarning", "HunspellWords",
           "debian_package", "find_dictionary", "missing_dictionary_message", "search_dirs"]

#: Bump when what is asked of the dictionary changes: it keys the cache of answers.
CHECK_VERSION = "1"
#: Folders searched when ``$SYNROB_HUNSPELL_DIR`` is not set (see :func:`search_dirs`).
_SYSTEM_DIRS = ("/usr/share/hunspell", "/usr/share/myspell")
#: UD codes whose dictionary files are named after another code.
_DICTIONARY_CODE = {"no": "nb"}
#: UD codes whose Debian package is not ``hunspell-CODE``.
_DEBIAN_OTHER = {"de": "hunspell-de-de", "en": "hunspell-en-us", "pt": "hunspell-pt-pt",
                 "no": "hunspell-no", "nb": "hunspell-no", "nn": "hunspell-no",
                 "eo": "myspell-eo", "et": "myspell-et", "fo": "myspell-fo", "tl": "myspell-tl"}
#: Codes of Debian's ``hunspell-CODE`` packages (Debian 12, ``apt-cache search ^hunspell-``).
_DEBIAN_PLAIN = frozenset((
    "af", "an", "ar", "be", "bg", "bn", "bo", "br", "bs", "ca", "cs", "da", "dz", "el", "es",
    "eu", "fr", "gd", "gl", "gu", "gug", "he", "hi", "hr", "hu", "id", "is", "it", "kk", "kmr",
    "ko", "lo", "lt", "lv", "ml", "mn", "ne", "nl", "oc", "pl", "ro", "ru", "si", "sk", "sl",
    "sr", "sv", "sw", "te", "th", "tr", "uk", "uz", "vi"))
#: Unsaved answers that trigger a save of the cache (the rest is saved at exit).
_SAVE_EVERY = 2000


class HunspellWarning(SynrobWarning):
    """A language has no Hunspell dictionary installed (the CLI prints one warning line)."""


def search_dirs() -> list[Path]:
    """Folders searched for dictionaries, in order."""
    env = os.environ.get("SYNROB_HUNSPELL_DIR")
    if env is not None:
        return [Path(p) for p in env.split(os.pathsep) if p]
    return [*map(Path, _SYSTEM_DIRS), Path(sys.prefix) / "share" / "hunspell"]


def debian_package(lang: str) -> str | None:
    """The Debian package with ``lang``'s Hunspell dictionary, or None when Debian has none."""
    if lang in _DEBIAN_OTHER:
        return _DEBIAN_OTHER[lang]
    return f"hunspell-{lang}" if lang in _DEBIAN_PLAIN else None


def missing_dictionary_message(lang: str) -> str:
    """The warning for a language without a dictionary: what is lost and how to install it."""
    where = ", ".join(map(str, search_dirs())) or "(no folder: SYNROB_HUNSPELL_DIR is empty)"
    package = debian_package(lang)
    fix = (f"install the Debian package {package} (apt-get install {package})" if package else
           f"Debian ships none for {lang}: put NAME.dic and NAME.aff in $SYNROB_HUNSPELL_DIR")
    return (f"jabberwocky: no Hunspell dictionary for {lang} in {where}; {fix}. Until then "
            "pseudowords are checked against the treebanks and wordfreq only, and a few may be "
            "real words")


@lru_cache(maxsize=32)
def _sha256(aff: Path, dic: Path, stamp: tuple[int, int, int, int]) -> str:
    """SHA-256 of a dictionary's two files (``stamp``: their sizes and mtimes, for the memo)."""
    h = hashlib.sha256()
    for path in (aff, dic):
        h.update(path.read_bytes())
        h.update(b"\0")
    return h.hexdigest()


def _spylls_version() -> str:
    try:
        return version("spylls")
    except PackageNotFoundError:
        return "none"


@dataclass(frozen=True)
class DictionaryFiles:
    """One installed dictionary: its name (``tr_TR``) and the base path of its two files."""

    name: str
    base: Path

    @property
    def aff(self) -> Path:
        return self.base.with_name(self.name + ".aff")

    @property
    def dic(self) -> Path:
        return self.base.with_name(self.name + ".dic")

    def sha256(self) -> str:
        """SHA-256 of the ``.aff`` and ``.dic`` files (content, not path)."""
        a, d = self.aff.stat(), self.dic.stat()
        return _sha256(self.aff, self.dic, (a.st_size, a.st_mtime_ns, d.st_size, d.st_mtime_ns))

    def identity(self) -> dict[str, str]:
        """What a result depends on: the dictionary's name, its files' hash, the reader."""
        return {"dictionary": self.name, "sha256": self.sha256()[:16],
                "reader": f"spylls {_spylls_version()}"}


def _candidates(folder: Path, code: str) -> list[str]:
    """Names of the complete dictionaries for ``code`` in ``folder``, the preferred first:
    ``code_CODE`` (tr_TR, de_DE), then ``code``, then the others in name order."""
    try:
        names = {p.stem for p in folder.glob("*.dic")
                 if (p.stem == code or p.stem.startswith(code + "_"))
                 and p.with_suffix(".aff").is_file()}
    except OSError:
        return []
    preferred = [n for n in (f"{code}_{code.upper()}", code) if n in names]
    return preferred + sorted(names - set(preferred))


def find_dictionary(lang: str) -> DictionaryFiles | None:
    """The dictionary of UD language ``lang`` in the first folder of :func:`search_dirs` that
    has one, or None."""
    code = _DICTIONARY_CODE.get(lang, lang)
    for folder in search_dirs():
        names = _candidates(folder, code)
        if names:
            return DictionaryFiles(names[0], folder / names[0])
    return None


def _read_answers(path: Path) -> dict[str, bool]:
    """The answers cached in ``path`` (empty when it is missing or unreadable)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return {**dict.fromkeys(data["rejected"], False), **dict.fromkeys(data["accepted"], True)}
    except (OSError, ValueError, KeyError, TypeError):
        return {}


class _Answers:
    """One dictionary's answers in this process: those on disk, those not saved yet, and the
    spylls dictionary once a word needs it (shared by every :class:`HunspellWords` of it)."""

    def __init__(self, files: DictionaryFiles, identity: dict[str, str], path: Path) -> None:
        self.files, self.identity, self.path = files, identity, path
        self.known = _read_answers(path)
        self.unsaved: dict[str, bool] = {}
        self.dictionary: Any = None

    def lookup(self, word: str) -> bool:
        if self.dictionary is None:
            from spylls.hunspell import Dictionary

            self.dictionary = Dictionary.from_files(str(self.files.base))
        return bool(self.dictionary.lookup(word))

    def save(self) -> None:
        """Merge the unsaved answers into the cache file (atomically). A concurrent writer's
        answers may be lost, never a wrong one kept: every answer is deterministic."""
        if not self.unsaved:
            return
        merged = {**_read_answers(self.path), **self.unsaved}
        write_text_atomic(self.path, json.dumps({
            "identity": self.identity, "check_version": CHECK_VERSION,
            "accepted": sorted(w for w, ok in merged.items() if ok),
            "rejected": sorted(w for w, ok in merged.items() if not ok)},
            ensure_ascii=False) + "\n")
        self.unsaved.clear()


#: cache file -> the answers of its dictionary in this process
_ANSWERS: dict[Path, _Answers] = {}


@atexit.register
def _save_all() -> None:
    for answers in _ANSWERS.values():
        answers.save()


class HunspellWords:
    """Whether the dictionary ``files`` accepts a word, with every answer cached on disk.

    The answer is spylls' ``Dictionary.lookup(word)``: True for a word the dictionary spells
    (capitalisation as Hunspell allows it: a lower-case entry also accepts Title and UPPER case).
    """

    def __init__(self, files: DictionaryFiles) -> None:
        self.files = files
        self.identity = files.identity()
        blob = json.dumps([CHECK_VERSION, self.identity], sort_keys=True)
        key = hashlib.sha256(blob.encode()).hexdigest()[:16]
        path = cache_dir() / "hunspell" / f"{files.name}-{key}.json"
        if path not in _ANSWERS:
            _ANSWERS[path] = _Answers(files, self.identity, path)
        self._answers = _ANSWERS[path]

    @property
    def path(self) -> Path:
        """The cache file of the answers."""
        return self._answers.path

    @property
    def loaded(self) -> bool:
        """Whether the dictionary itself was loaded (a word was not in the cache)."""
        return self._answers.dictionary is not None

    def accepts(self, word: str) -> bool:
        """Whether the dictionary accepts ``word`` as written."""
        a = self._answers
        known = a.known.get(word)
        if known is None:
            known = a.known[word] = a.unsaved[word] = a.lookup(word)
            if len(a.unsaved) >= _SAVE_EVERY:
                a.save()
        return known

    def save(self) -> None:
        """Write the answers not yet on disk into the cache file."""
        self._answers.save()
