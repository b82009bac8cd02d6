"""Derived data files of experiments and content addresses of run keys.

**Perturbed files.** :func:`perturbed_file` names each file by a hash of its *recipe*: the
SHA-256 of the source file's content, the perturber's name, version and full options (defaults
included), the seed, variants, format and sentence limit. The path of the source is not part of
it, so the same treebank at another path reuses the file, a changed treebank or a new perturber
version is a new file. Each file has a sidecar ``NAME.provenance.json`` (its recipe, the source
path, the time it was made and the package versions); both are written atomically.

**Content keys.** :func:`content_key` turns a run key into the value its id hashes: every
string naming a file (a path, a ``sample:``/``ud:`` specifier, or a file name in ``OUTDIR/data``)
becomes ``{"sha256": ...}`` of the file's content (plus the recipe of a perturbed file); a
perturber named by its registered name under a ``perturber``, ``perturbation`` or ``kind`` field
becomes its name, version and full options (a sibling ``params`` dict is applied); an encoder
spec under an ``encoder`` field (with a sibling ``encoder_params``) becomes its identity (name,
version, options, model revision or file fingerprints). So results are keyed by what went in,
never by where it lay.

File hashes are memoised per process by (path, device, inode, size, mtime, ctime); a file
modified less than :data:`RACY_SECONDS` before it was hashed is hashed again next time (its
timestamp could hide a second write).
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from synrob.perturb.base import create_perturber
from synrob.perturb.errors import ParameterError, SynrobError
from synrob.perturb.io.atomic import atomic_open, write_text_atomic
from synrob.perturb.io.data import resolve_input, resolve_one

from ..runtime.provenance import utc_now

__all__ = ["resolve_one", "perturbed_file", "perturbed_files", "perturber_info", "content_hash",
           "content_key", "content_keys", "key_components", "provenance_of", "utc_now",
           "RACY_SECONDS"]

#: A file whose mtime is this close to the moment it was hashed is not memoised.
RACY_SECONDS = 2.0
_PROVENANCE = ".provenance.json"
_HASHES: dict[str, tuple[tuple[int, ...], str]] = {}


def content_hash(path: str | os.PathLike[str]) -> str:
    """SHA-256 of a file's bytes (the representation cache's :func:`corpus_hash`), memoised."""
    from ..representations.cache import corpus_hash

    real = os.path.realpath(path)
    st = os.stat(real)
    sig = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
    hit = _HASHES.get(real)
    if hit is not None and hit[0] == sig:
        return hit[1]
    digest = corpus_hash(real)
    if time.time_ns() - st.st_mtime_ns > RACY_SECONDS * 1e9:
        _HASHES[real] = (sig, digest)
    return digest


def perturber_info(kind: str, params: Mapping[str, Any] | None = None, *,
                   lenient: bool = False, lang: str = "en") -> dict[str, Any]:
    """``{"perturber", "perturber_version", "params"}`` of perturber ``kind`` (all params), and
    ``depends_on`` when the built perturber records more than its options (:func:`_depends_on`).

    By default the perturber is built, so params it rejects raise as they would at use, and
    ``params`` are its options. With ``lenient`` it is not built: the params are parsed against its
    declared parameters, and params that do not parse (meant for something else) are laid over
    the defaults as given - what a content key needs, which must never fail.
    """
    from synrob.perturb.params import parse_params
    from synrob.perturb.plugins import get_registry

    cls = get_registry().get("perturber", kind)
    given = dict(params or {})
    extra: dict[str, Any] = {}
    if not lenient:
        made = create_perturber(cls, lang, **given)
        options = dict(getattr(made, "options", given))
        extra = _depends_on(made, options)
    else:
        try:
            options = parse_params(cls.params, given, f"perturber {kind!r}")
        except ParameterError:  # params meant for something else: the defaults, then them
            options = {**{p.name: p.default for p in cls.params}, **given}
    info = {"perturber": kind, "perturber_version": getattr(cls, "version", ""),
            "params": options}
    return {**info, "depends_on": extra} if extra else info


def _depends_on(perturber: Any, options: Mapping[str, Any]) -> dict[str, Any]:
    """What a perturber records in its outputs beyond its options (the generic Jabberwocky's
    Hunspell dictionary and the sibling splits it read), so a perturbed file's recipe changes
    when they do; empty for most perturbers (their recipes are those of before)."""
    recorded = getattr(perturber, "recorded_options", options)
    return {k: v for k, v in recorded.items() if k not in options}


def provenance_of(path: str | os.PathLike[str]) -> dict[str, Any] | None:
    """The sidecar of a file made by :func:`perturbed_file` (None for any other file)."""
    side = Path(path).with_name(Path(path).name + _PROVENANCE)
    try:
        return json.loads(side.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def perturbed_file(source: str | Path, kind: str, params: dict[str, Any] | None, *, seed: int,
                   dest: Path, variants: int = 1, fmt: str = "conllu",
                   max_sentences: int | None = None, lang: str = "en") -> Path:
    """Perturb ``source`` (in language ``lang``) with perturber ``kind`` into ``dest`` (``fmt``:
    conllu, jsonl, text).

    A perturber that learns from a ``reference`` treebank (generic Jabberwocky) learns from
    ``source`` when the language is not English and no reference is given.

    Returns the file's path; builds it only when no file of the same recipe is in ``dest``
    (whatever the source file's name). With ``variants`` > 1, the variants of each sentence
    follow each other (``synrob.variant`` comment / JSONL field). With ``max_sentences`` only
    the first N sentences of the source are perturbed.
    """
    from itertools import islice

    from synrob.perturb.pipeline import perturb_formatted, read_blocks
    from synrob.perturb.plugins import get_registry

    from ..runtime.provenance import versions

    src, params, recipe, out, existing = _perturbed_target(
        source, kind, params, seed=seed, dest=dest, variants=variants, fmt=fmt,
        max_sentences=max_sentences, lang=lang)
    if existing is not None:
        return existing
    dest.mkdir(parents=True, exist_ok=True)
    perturber = create_perturber(get_registry().get("perturber", kind), lang, **dict(params or {}))
    write_text_atomic(out.with_name(out.name + _PROVENANCE), json.dumps({
        "recipe": recipe, "source": str(src), "created": utc_now(), "versions": versions()},
        indent=1, sort_keys=True, default=str) + "\n")
    with src.open(encoding="utf-8") as fh, atomic_open(out) as w:
        blocks = read_blocks(fh, str(src))
        if max_sentences is not None:
            blocks = islice(blocks, max_sentences)
        for chunk in perturb_formatted(perturber, blocks, fmt, seed=seed, variants=variants):
            w.write(chunk)
    return out


def _perturbed_target(source: str | Path, kind: str, params: dict[str, Any] | None, *,
                      seed: int, dest: Path, variants: int, fmt: str,
                      max_sentences: int | None, lang: str
                      ) -> tuple[Path, dict[str, Any], dict[str, Any], Path, Path | None]:
    """``(source path, params, recipe, path to build, existing file of the recipe or None)``
    for :func:`perturbed_file`'s arguments; builds nothing."""
    from synrob.perturb.metrics import METRICS_VERSION

    src = resolve_one(source)
    params = _with_reference(kind, params, src, lang)
    info = perturber_info(kind, params, lang=lang)
    # the metrics recorded with each sentence (chrf2, lev) are part of the file's content
    recipe = {"source_sha256": content_hash(src), **info, "seed": seed, "variants": variants,
              "format": fmt, "max_sentences": max_sentences, "metrics_version": METRICS_VERSION,
              "lang": lang}
    tag = hashlib.sha256(json.dumps(recipe, sort_keys=True, default=str).encode()).hexdigest()[:12]
    ext = {"conllu": "conllu", "jsonl": "jsonl", "text": "txt"}[fmt]
    suffix = f".{kind}.{tag}.{ext}"
    out = dest / f"{src.stem}{suffix}"
    if out.is_file():
        return src, params, recipe, out, out
    if dest.is_dir():  # the same recipe from a source of another name
        for existing in sorted(dest.glob(f"*{suffix}")):
            if existing.is_file() and provenance_of(existing) is not None:
                return src, params, recipe, out, existing
    return src, params, recipe, out, None


#: The keyword arguments of one :func:`perturbed_file` call.
PerturbJob = dict[str, Any]


#: Source bytes to perturb below which :func:`perturbed_files` stays in this process:
#: starting processes costs more than it saves there (the demo's two sample test files, 0.7 MB,
#: took 0.9 s in 2 processes against 0.3 s in one; the jabberwocky default preset's nine files,
#: 53 MB, 15.4-16.7 s against 26.2-32.0 s, on 2 cores).
PARALLEL_MIN_BYTES = 4 << 20


def perturbed_files(jobs: Sequence[PerturbJob], workers: int = 1, *,
                    min_bytes: int = PARALLEL_MIN_BYTES) -> list[Path]:
    """``perturbed_file(**job)`` for every job, in order. With ``workers`` > 1 the files not
    built yet, if their sources hold ``min_bytes`` or more, are built in that many spawned
    processes at once. Each file depends only on its own recipe (source, perturber, seed),
    so the files are the same either way."""
    if workers < 2 or len(jobs) < 2:
        return [perturbed_file(**j) for j in jobs]
    todo = [j for j in jobs if _perturbed_target(**_target_args(j))[4] is None]
    size = sum(resolve_one(j["source"]).stat().st_size for j in todo)
    if len(todo) > 1 and size >= min_bytes:
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        with ProcessPoolExecutor(max_workers=min(workers, len(todo)),
                                 mp_context=multiprocessing.get_context("spawn")) as pool:
            list(pool.map(_build_job, todo))
    return [perturbed_file(**j) for j in jobs]


def _build_job(job: PerturbJob) -> Path:
    return perturbed_file(**job)


def _target_args(job: PerturbJob) -> dict[str, Any]:
    """``job`` with :func:`perturbed_file`'s defaults filled in (for :func:`_perturbed_target`),
    read from its signature."""
    import inspect

    bound = inspect.signature(perturbed_file).bind(**job)
    bound.apply_defaults()
    return dict(bound.arguments)


def _with_reference(kind: str, params: dict[str, Any] | None, src: Path, lang: str
                    ) -> dict[str, Any]:
    """``params``, with ``reference`` set to ``src`` for a non-English perturber declaring it."""
    from synrob.perturb.plugins import get_registry

    out = dict(params or {})
    declared = any(p.name == "reference" for p in get_registry().get("perturber", kind).params)
    if lang != "en" and declared and not out.get("reference"):
        out["reference"] = str(src)
    return out


# ---------------------------------------------------------------------- content keys
_PERTURBER_FIELDS = ("perturber", "perturbation", "kind")


class _Addresser:
    """Content addresses for the keys of one plan (each file hashed at most once per plan)."""

    def __init__(self, data_dir: Path | None) -> None:
        from synrob.perturb.plugins import get_registry

        self.data_dir = data_dir
        self.registry = get_registry()
        self.perturbers = set(self.registry.names("perturber"))
        self.files: dict[str, Any] = {}
        self.encoders: dict[str, dict[str, Any]] = {}

    # ---------------------------------------------------------------- values
    def value(self, v: Any) -> Any:
        if isinstance(v, Mapping):
            return self.mapping(v)
        if isinstance(v, (list, tuple)):
            return [self.value(x) for x in v]
        if isinstance(v, str):
            return self.string(v)
        if isinstance(v, Path):
            return self.string(str(v))
        return v

    def mapping(self, d: Mapping[str, Any]) -> dict[str, Any]:
        out = {str(k): self.value(v) for k, v in d.items()}
        for name in _PERTURBER_FIELDS:
            v = d.get(name)
            if isinstance(v, str) and v in self.perturbers:
                params = d.get("params") if isinstance(d.get("params"), Mapping) else {}
                out[name] = self.perturber(v, params)
        enc = d.get("encoder")
        if isinstance(enc, str) and enc:
            params = d.get("encoder_params") if isinstance(d.get("encoder_params"), Mapping) else {}
            out["encoder"] = self.encoder(enc, params)
        return out

    def string(self, s: str) -> Any:
        if s in self.files:
            return self.files[s]
        paths = self._paths(s)
        if paths is None:
            return s
        addr = [self._address(p) for p in paths]
        self.files[s] = addr[0] if len(addr) == 1 else addr
        return self.files[s]

    # ---------------------------------------------------------------- files
    def _paths(self, s: str) -> list[Path] | None:
        """The files a string names, or None when it names none."""
        if not s or "\n" in s or len(s) > 4096:
            return None
        scheme, sep, _ = s.partition(":")
        if sep and scheme in ("sample", "ud") and not os.path.exists(s):
            return list(resolve_input(s))
        if "/" in s or "." in s:
            for p in (Path(s), *([self.data_dir / s] if self.data_dir else [])):
                try:
                    if p.is_file():
                        return [p]
                except (OSError, ValueError):
                    return None
        return None

    def _address(self, p: Path) -> dict[str, Any]:
        addr: dict[str, Any] = {"sha256": content_hash(p)}
        made = provenance_of(p)
        if made is not None and isinstance(made.get("recipe"), Mapping):
            recipe = dict(made["recipe"])
            name = recipe.get("perturber")
            if isinstance(name, str) and name in self.perturbers:
                recipe["perturber"] = self.perturber(name, recipe.get("params") or {})
            addr["made_by"] = recipe
        return addr

    # ---------------------------------------------------------------- components
    def perturber(self, name: str, params: Mapping[str, Any]) -> dict[str, Any]:
        """Name, current version and full options of a registered perturber (lenient
        :func:`perturber_info`)."""
        info = perturber_info(name, params, lenient=True)
        return {"component": "perturber", "name": name, "version": info["perturber_version"],
                "options": info["params"]}

    def encoder(self, spec: str, params: Mapping[str, Any]) -> dict[str, Any]:
        """The identity of an encoder spec (name, version, options, resource fingerprint)."""
        from ..encoders.resolve import resolve_encoder

        memo = json.dumps([spec, params], sort_keys=True, default=str)
        if memo not in self.encoders:
            try:
                ident = resolve_encoder(spec, dict(params)).identity()
            except SynrobError:  # not an encoder spec after all: the key keeps the string
                return spec  # type: ignore[return-value]
            self.encoders[memo] = {"component": "encoder", "spec": spec, **ident}
        return self.encoders[memo]


def content_key(key: Mapping[str, Any], data_dir: Path | None = None) -> dict[str, Any]:
    """The content address of a run key (see the module docstring)."""
    return _Addresser(data_dir).mapping(key)


def content_keys(keys: list[Mapping[str, Any]], data_dir: Path | None = None
                 ) -> list[dict[str, Any]]:
    """:func:`content_key` of every key of a plan, hashing each file once."""
    addresser = _Addresser(data_dir)
    return [addresser.mapping(k) for k in keys]


def key_components(ckey: Any) -> dict[str, dict[str, str]]:
    """``{"perturbers": {name: version}, "encoders": {spec: "name version"}}`` of a content key."""
    out: dict[str, dict[str, str]] = {"perturbers": {}, "encoders": {}}

    def walk(v: Any) -> None:
        if isinstance(v, Mapping):
            if v.get("component") == "perturber":
                out["perturbers"][str(v["name"])] = str(v["version"])
            elif v.get("component") == "encoder":
                out["encoders"][str(v["spec"])] = f"{v['encoder']} {v['version']}"
            for x in v.values():
                walk(x)
        elif isinstance(v, list):
            for x in v:
                walk(x)

    walk(ckey)
    return out
