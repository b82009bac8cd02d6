"""Offline WordNet 3.0 for nltk, built from the Debian ``wordnet-base`` database.

nltk's :class:`~nltk.corpus.reader.wordnet.WordNetCorpusReader` wants the database files in
``<NLTK_DATA>/corpora/wordnet/`` on ``nltk.data.path`` plus a ``lexnames`` file that Debian does
not ship. :func:`get_wordnet` uses nltk's own ``wordnet`` corpus when it is installed; otherwise
it builds ``<cache>/nltk_data/corpora/wordnet/`` holding the files of ``$SYNROB_WORDNET_DIR``
(default ``/usr/share/wordnet``, 36 MB) and a generated ``lexnames``, puts that ``nltk_data`` on
``nltk.data.path`` and returns the reader (loaded once per process). The files are copied, not
symlinked: nltk >= 3.10 refuses a corpus file whose resolved path leaves the corpus root, and
any multiply-linked file.
"""

from __future__ import annotations

import os
import shutil
import threading
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import ResourceError
from ..io.atomic import atomic_path, write_text_atomic
from ..io.data import cache_dir

if TYPE_CHECKING:
    from nltk.corpus.reader.wordnet import WordNetCorpusReader

__all__ = [
    "LEXNAMES",
    "get_wordnet",
    "wordnet_dir",
    "wordnet_source_dir",
    "build_nltk_wordnet",
    "synonym_table",
]

#: The standard WordNet 3.0 lexicographer files: (number, name, syntactic category).
LEXNAMES: tuple[tuple[int, str, int], ...] = tuple(
    (i, name, cat)
    for i, (name, cat) in enumerate(
        [("adj.all", 3), ("adj.pert", 3), ("adv.all", 4)]
        + [
            (f"noun.{n}", 1)
            for n in ["Tops", "act", "animal", "artifact", "attribute", "body", "cognition", "communication", "event", "feeling", "food", "group", "location", "motive", "object", "person", "phenomenon", "plant", "possession", "process", "quantity", "relation", "shape", "state", "substance", "time"]
        ]
        + [
            (f"verb.{v}", 2)
            for v in ["body", "change", "cognition", "communication", "competition", "consumption", "contact", "creation", "emotion", "motion", "perception", "possession", "social", "stative", "weather"]
        ]
        + [("adj.ppl", 3)]
    )
)

#: Files the reader opens (the rest of the Debian directory is linked too, but not required).
_REQUIRED = tuple(
    f"{kind}.{pos}" for kind in ("index", "data") for pos in ("noun", "verb", "adj", "adv")
) + tuple(f"{pos}.exc" for pos in ("noun", "verb", "adj", "adv"))

_INSTALL_HINT = "apt-get install wordnet-base wordnet-sense-index"

_LOCK = threading.Lock()
_READER: WordNetCorpusReader | None = None


def lexnames_text() -> str:
    """The ``lexnames`` file: 45 lines ``"%02d\\t%s\\t%d"``."""
    return "".join(f"{i:02d}\t{name}\t{cat}\n" for i, name, cat in LEXNAMES)


def wordnet_source_dir() -> Path:
    """Directory of the WordNet database files: ``$SYNROB_WORDNET_DIR`` or ``/usr/share/wordnet``."""
    return Path(os.environ.get("SYNROB_WORDNET_DIR", "/usr/share/wordnet"))


def build_nltk_wordnet(source: Path | None = None, root: Path | None = None) -> Path:
    """Create ``ROOT/corpora/wordnet`` (copies of ``source`` + ``lexnames``); return ROOT.

    ``ROOT`` defaults to ``<cache>/nltk_data``. Raises :class:`ResourceError` when ``source``
    lacks the WordNet files.
    """
    source = (source or wordnet_source_dir()).resolve()
    missing = [f for f in _REQUIRED if not (source / f).is_file()]
    if missing:
        raise ResourceError(
            f"WordNet 3.0 not found in {source} (missing {missing[0]}); {_INSTALL_HINT} "
            f"or set SYNROB_WORDNET_DIR"
        )
    root = root or cache_dir() / "nltk_data"
    target = root / "corpora" / "wordnet"
    target.mkdir(parents=True, exist_ok=True)
    for src in sorted(source.iterdir()):
        if src.is_file():
            _place(src, target / src.name)
    lexnames = target / "lexnames"
    text = lexnames_text()
    if not lexnames.is_file() or lexnames.read_text() != text:
        write_text_atomic(lexnames, text)
    return root


def _place(src: Path, dest: Path) -> None:
    """Copy ``src`` to ``dest`` (mtime kept) unless an identical-looking copy is there.

    A copy, not a link: nltk >= 3.10 refuses symlinks that resolve outside the corpus root and
    any file with more than one hard link.
    """
    if dest.is_file() and not dest.is_symlink():
        a, b = src.stat(), dest.stat()
        if a.st_size == b.st_size and a.st_mtime_ns == b.st_mtime_ns and b.st_nlink == 1:
            return
    with atomic_path(dest) as tmp:
        shutil.copy2(src, tmp)


def _reader_class() -> type[WordNetCorpusReader]:
    from nltk.corpus.reader.wordnet import WordNetCorpusReader

    class EnglishWordNet(WordNetCorpusReader):
        """nltk's reader without the Open Multilingual WordNet version map.

        nltk builds that map at construction by parsing ``index.sense`` twice (seconds); synrob
        uses English WordNet 3.0 only, which needs no mapping.
        """

        def map_wn(self, version: str = "wordnet") -> None:
            return None

    return EnglishWordNet


def wordnet_dir() -> Path:
    """The nltk ``corpora/wordnet`` directory: nltk's own, else built by :func:`build_nltk_wordnet`."""
    import nltk

    try:
        path = nltk.data.find("corpora/wordnet")
    except LookupError:
        root = build_nltk_wordnet()
        if str(root) not in nltk.data.path:
            nltk.data.path.append(str(root))
        path = nltk.data.find("corpora/wordnet")
    return Path(str(path))


def _load() -> WordNetCorpusReader:
    import warnings

    path = wordnet_dir()
    try:
        with warnings.catch_warnings():  # "multilingual functions are not available": by design
            warnings.simplefilter("ignore", UserWarning)
            return _reader_class()(str(path), None)
    except (OSError, LookupError) as exc:
        raise ResourceError(f"WordNet could not be loaded from {path} ({exc}); {_INSTALL_HINT}") from None


def get_wordnet() -> WordNetCorpusReader:
    """The process-wide nltk WordNet reader (built on first use, then cached)."""
    global _READER
    if _READER is None:
        with _LOCK:
            if _READER is None:
                _READER = _load()
    return _READER


# --------------------------------------------------------------------------- synonyms

_POS_FILES = {"n": "noun", "v": "verb", "a": "adj", "r": "adv"}
_TABLE_VERSION = "1"
_SYNONYMS: dict[str, dict[str, tuple[str, ...]]] | None = None


def _parse_synonyms(directory: Path, pos: str) -> dict[str, tuple[str, ...]]:
    """lemma -> its synonyms in WordNet sense order, read straight from ``index.POS``/``data.POS``.

    The same lists as ``[l for s in wn.synsets(lemma, pos) for l in s.lemma_names()]`` (lemma
    itself removed, duplicates dropped, adjective markers like ``(p)`` stripped), restricted to
    single lower-case alphabetic words; lemmas without any are left out.
    """
    name = _POS_FILES[pos]
    words: dict[str, list[str]] = {}
    with open(directory / f"data.{name}", encoding="utf-8") as fh:
        for line in fh:
            if line.startswith("  "):
                continue  # licence header
            fields = line.split(" ", 4 + 2 * 256)
            n = int(fields[3], 16)
            out = []
            for w in fields[4 : 4 + 2 * n : 2]:
                w = w.split("(", 1)[0]
                if w.isalpha() and w.islower():
                    out.append(w)
            words[fields[0]] = out
    table: dict[str, tuple[str, ...]] = {}
    with open(directory / f"index.{name}", encoding="utf-8") as fh:
        for line in fh:
            if line.startswith("  "):
                continue
            fields = line.split()
            lemma, count = fields[0], int(fields[2])
            syns: dict[str, None] = {}
            for offset in fields[len(fields) - count :]:
                for w in words.get(offset, ()):
                    if w != lemma:
                        syns[w] = None
            if syns:
                table[lemma] = tuple(syns)
    return table


def _database_dir() -> Path:
    """The WordNet files to parse: the Debian directory when complete (no nltk import needed)."""
    source = wordnet_source_dir()
    if all((source / f).is_file() for f in _REQUIRED):
        return source
    return wordnet_dir()


def synonym_table() -> dict[str, dict[str, tuple[str, ...]]]:
    """``{pos: {lemma: synonyms}}`` for WordNet POS ``n v a r`` (see :func:`_parse_synonyms`).

    Parsed once (about a second) and cached as JSON under ``<cache>/wordnet/``, keyed by the
    size and mtime of the database files; loaded once per process.
    """
    global _SYNONYMS
    if _SYNONYMS is not None:
        return _SYNONYMS
    import hashlib
    import json

    with _LOCK:
        if _SYNONYMS is not None:
            return _SYNONYMS
        directory = _database_dir()
        stamp = "|".join(
            f"{f}:{(directory / f).stat().st_size}:{(directory / f).stat().st_mtime_ns}"
            for f in _REQUIRED[:8]
        )
        key = hashlib.sha1(f"{_TABLE_VERSION}|{stamp}".encode()).hexdigest()[:12]
        path = cache_dir() / "wordnet" / f"synonyms-{key}.json"
        table = None
        if path.is_file():
            try:
                raw = json.loads(path.read_text())
                table = {p: {k: tuple(v) for k, v in raw[p].items()} for p in _POS_FILES}
            except (ValueError, KeyError, TypeError, AttributeError):
                table = None
        if table is None:
            table = {p: _parse_synonyms(directory, p) for p in _POS_FILES}
            write_text_atomic(
                path, json.dumps({p: {k: list(v) for k, v in t.items()} for p, t in table.items()}))
        _SYNONYMS = table
    return _SYNONYMS
