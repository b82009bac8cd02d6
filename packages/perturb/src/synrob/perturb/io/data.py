"""Where treebanks come from: the bundled sample, a local data directory, or a download.

Specs accepted wherever a CoNLL-U input is expected:

* a path to a file;
* ``sample:en_ewt:SPLIT`` - the small EWT sample shipped inside this package (offline);
* ``ud:NAME:SPLIT`` or ``ud:NAME`` (all splits) - a UD treebank looked up, in order, in
  ``$SYNROB_DATA/ud/NAME/``, ``$SYNROB_DATA/NAME/`` and ``<cache>/data/ud/NAME/``; when absent
  it is downloaded from the official UD GitHub repository into the cache.
"""

from __future__ import annotations

import os
import urllib.error
import urllib.request
from importlib import resources
from pathlib import Path

from ..errors import MissingFileError, ParameterError, ResourceError, UnknownNameError, arg
from .atomic import atomic_open

SPLITS = ("train", "dev", "test")

#: UD name -> (GitHub repository, release tag) of the official treebank.
UD_TREEBANKS: dict[str, tuple[str, str]] = {
    "en_ewt": ("UD_English-EWT", "r2.15"),
    "en_gum": ("UD_English-GUM", "r2.15"),
    "en_lines": ("UD_English-LinES", "r2.15"),
    "en_partut": ("UD_English-ParTUT", "r2.15"),
    "en_pud": ("UD_English-PUD", "r2.15"),
    "en_atis": ("UD_English-Atis", "r2.15"),
    # other languages (docs/languages.md); single-file splits, same release
    "ar_padt": ("UD_Arabic-PADT", "r2.15"),
    "cs_pud": ("UD_Czech-PUD", "r2.15"),
    "de_gsd": ("UD_German-GSD", "r2.15"),
    "es_ancora": ("UD_Spanish-AnCora", "r2.15"),
    "et_edt": ("UD_Estonian-EDT", "r2.15"),
    "eu_bdt": ("UD_Basque-BDT", "r2.15"),
    "fi_tdt": ("UD_Finnish-TDT", "r2.15"),
    "fr_gsd": ("UD_French-GSD", "r2.15"),
    "hi_hdtb": ("UD_Hindi-HDTB", "r2.15"),
    "hu_szeged": ("UD_Hungarian-Szeged", "r2.15"),
    "it_isdt": ("UD_Italian-ISDT", "r2.15"),
    "ja_gsd": ("UD_Japanese-GSD", "r2.15"),
    "ko_kaist": ("UD_Korean-Kaist", "r2.15"),
    "nl_alpino": ("UD_Dutch-Alpino", "r2.15"),
    "pt_bosque": ("UD_Portuguese-Bosque", "r2.15"),
    "sv_talbanken": ("UD_Swedish-Talbanken", "r2.15"),
    "tr_boun": ("UD_Turkish-BOUN", "r2.15"),
    "tr_imst": ("UD_Turkish-IMST", "r2.15"),
    "zh_gsd": ("UD_Chinese-GSD", "r2.15"),
}
_RAW_URL = "https://raw.githubusercontent.com/UniversalDependencies/{repo}/{tag}/{name}-ud-{split}.conllu"


def cache_dir() -> Path:
    """synrob's cache root: ``$SYNROB_CACHE``, else ``$XDG_CACHE_HOME/synrob`` or ``~/.cache/synrob``."""
    env = os.environ.get("SYNROB_CACHE")
    if env:
        return Path(env).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "synrob"


def sample_path(split: str = "train", name: str = "en_ewt") -> Path:
    """Path of a bundled sample file (``en_ewt`` train/dev/test)."""
    if name != "en_ewt" or split not in SPLITS:
        raise UnknownNameError(f"no bundled sample {name}:{split}; available: "
                               "en_ewt:train|dev|test")
    ref = resources.files("synrob.perturb") / "data" / "en_ewt_sample" / f"en_ewt-ud-{split}.conllu"
    return Path(str(ref))


def _local_dirs(name: str) -> list[Path]:
    dirs = []
    env = os.environ.get("SYNROB_DATA")
    if env:
        dirs += [Path(env) / "ud" / name, Path(env) / name]
    dirs.append(cache_dir() / "data" / "ud" / name)
    return dirs


def _download(name: str, split: str, dest: Path) -> Path:
    repo, tag = UD_TREEBANKS[name]
    url = _RAW_URL.format(repo=repo, tag=tag, name=name, split=split)
    try:
        with urllib.request.urlopen(url, timeout=30) as resp, \
                atomic_open(dest, "wb") as out:  # noqa: S310 - fixed https URL
            while chunk := resp.read(1 << 20):
                out.write(chunk)
    except (urllib.error.URLError, OSError, TimeoutError) as exc:
        reason = getattr(exc, "reason", exc)
        raise ResourceError(
            f"ud:{name}:{split} is not available locally and downloading {url} failed ({reason}); "
            f"offline? put the CoNLL-U files in $SYNROB_DATA/ud/{name}/ or pass file paths"
        ) from None
    return dest


def resolve_ud(name: str, split: str, *, download: bool = True) -> Path:
    """Local path of ``{name}-ud-{split}.conllu``, downloading it into the cache when allowed."""
    if split not in SPLITS:
        raise UnknownNameError(f"unknown split {split!r}; expected one of {', '.join(SPLITS)}")
    fname = f"{name}-ud-{split}.conllu"
    for d in _local_dirs(name):
        if (d / fname).is_file():
            return d / fname
    if name not in UD_TREEBANKS:
        known = ", ".join(sorted(UD_TREEBANKS))
        raise MissingFileError(
            f"treebank {name!r} not found locally and not downloadable (known: {known}); "
            f"put {fname} in $SYNROB_DATA/ud/{name}/"
        )
    if not download:
        raise MissingFileError(f"ud:{name}:{split} not found in {', '.join(map(str, _local_dirs(name)))}")
    return _download(name, split, cache_dir() / "data" / "ud" / name / fname)


def split_specs(treebank: str) -> dict[str, str]:
    """``{train, dev, test}`` specs of one treebank: ``ud:NAME`` -> ``ud:NAME:SPLIT``, or a
    directory holding ``*-ud-{train,dev,test}.conllu`` (each split exactly once)."""
    scheme, sep, rest = treebank.partition(":")
    if sep and scheme in ("ud", "sample") and not Path(treebank).exists():
        if ":" in rest:
            raise ResourceError(f"treebank {treebank!r}: give the treebank (ud:NAME), not a split")
        return {s: f"{scheme}:{rest}:{s}" for s in SPLITS}
    path = Path(treebank)
    if not path.is_dir():
        raise ResourceError(f"treebank {treebank!r}: give ud:NAME or a directory of "
                            "NAME-ud-{train,dev,test}.conllu files")
    out = {}
    for split in SPLITS:
        found = sorted(path.glob(f"*-ud-{split}.conllu"))
        if len(found) != 1:
            raise ResourceError(f"treebank {treebank}: expected one *-ud-{split}.conllu file, "
                                f"found {len(found)}")
        out[split] = str(found[0])
    return out


def resolve_input(spec: str) -> list[Path]:
    """Paths for one input spec (a file path, ``sample:...`` or ``ud:...``); ``-`` stays stdin."""
    if spec == "-":
        return [Path("-")]
    scheme, sep, rest = spec.partition(":")
    if sep and scheme in ("ud", "sample") and not Path(spec).exists():
        name, _, split = rest.partition(":")
        splits = [split] if split else list(SPLITS)
        if scheme == "sample":
            return [sample_path(s, name) for s in splits]
        return [resolve_ud(name, s) for s in splits]
    path = Path(spec)
    if not path.exists():
        raise MissingFileError(f"{spec}: no such file")
    return [path]


def resolve_one(spec: str | os.PathLike[str], what: str = "") -> Path:
    """The one CoNLL-U file a spec names (a path, ``sample:NAME:SPLIT``, ``ud:NAME:SPLIT``); a
    spec of several files, or stdin, is a :class:`ParameterError` that names the caller's
    argument ``what`` (e.g. ``test``: ``test='…'`` in Python, ``--test '…'`` on the command
    line) when given."""
    paths = resolve_input(os.fspath(spec))
    if len(paths) != 1 or str(paths[0]) == "-":
        given = repr(os.fspath(spec))
        raise ParameterError(f"{arg(what, given) if what else given} must name one CoNLL-U file")
    return paths[0]
