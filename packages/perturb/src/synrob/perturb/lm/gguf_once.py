"""One parse of a GGUF file while it is dequantised, and the dequantised model kept for the
first load of its copy (:func:`synrob.perturb.lm.models.dequantised_copy`).

transformers reads a GGUF file's metadata anew for each object it builds from it: the config
(``read_gguf_metadata``, then ``load_gguf_checkpoint`` for the architectures its fast reader
does not map, LLaMA among them), the weights (both again, then the tensors) and the
tokenizer (both again): SmolLM2's file was parsed four times from an empty cache, about 4 s
each on the 2-core development machine. Inside :func:`parsed_once` the metadata reads of one
file are made once and handed out again (deep copies: a caller may change what it gets), and
the tensors are read through the same ``gguf.GGUFReader``. What is parsed is unchanged, so
the config, weights and tokenizer are those of separate parses.

The model a dequantisation built is then kept (:func:`keep_fresh`) until the process first
loads the copy as a language model (:func:`take_fresh`, :func:`synrob.perturb.lm.loaded.load_lm`):
its weights are those the copy holds, so they are not read back from disk. From an empty
cache a command then reads the model's weights once.
"""

from __future__ import annotations

import contextlib
import copy
import functools
import importlib
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

__all__ = ["parsed_once", "keep_fresh", "take_fresh"]

#: (module, attribute) of transformers' GGUF metadata readers, as they are looked up when
#: called (modules that bound the name at import are listed too).
_METADATA = (("transformers.modeling_gguf_pytorch_utils", "load_gguf_checkpoint"),
             ("transformers.integrations.gguf", "read_gguf_metadata"),
             ("transformers.integrations.gguf.reader", "read_gguf_metadata"),
             ("transformers.quantizers.quantizer_gguf", "read_gguf_metadata"),
             ("transformers.quantizers.quantizer_gguf", "load_gguf_checkpoint"))
_LOCK = threading.RLock()
_FRESH: dict[str, Any] = {}


def _real(path: Any) -> str:
    try:
        return str(Path(str(path)).resolve())
    except (OSError, ValueError):
        return str(path)


def _memo(real: Callable[..., Any], path: str, memo: dict[Any, Any]) -> Callable[..., Any]:
    """``real`` with its metadata-only calls on ``path`` made once per argument set."""
    @functools.wraps(real)
    def once(target: Any, *args: Any, **kwargs: Any) -> Any:
        if _real(target) != path or kwargs.get("return_tensors") or (args and args[0] is True):
            return real(target, *args, **kwargs)
        key = (real.__module__, real.__name__, repr(args), repr(sorted(kwargs.items())))
        if key not in memo:
            memo[key] = real(target, *args, **kwargs)
        return copy.deepcopy(memo[key])

    return once


@contextlib.contextmanager
def parsed_once(path: str | Path) -> Iterator[None]:
    """Within the block, GGUF file ``path``'s metadata is parsed once and its tensors are
    read through the same reader (see the module docstring); other files are untouched."""
    target = _real(path)
    memo: dict[Any, Any] = {}
    saved: list[tuple[Any, str, Any]] = []
    with _LOCK:
        try:
            for module_name, name in _METADATA:
                try:
                    module = importlib.import_module(module_name)
                except ImportError:
                    continue
                real = getattr(module, name, None)
                if real is not None:
                    saved.append((module, name, real))
                    setattr(module, name, _memo(real, target, memo))
            gguf = importlib.import_module("gguf")
            reader = gguf.GGUFReader
            saved.append((gguf, "GGUFReader", reader))
            readers: dict[str, Any] = {}

            def shared(p: Any, *args: Any, **kwargs: Any) -> Any:
                if _real(p) != target or args or kwargs:
                    return reader(p, *args, **kwargs)
                if target not in readers:
                    readers[target] = reader(p)
                return readers[target]

            gguf.GGUFReader = shared
            yield
        finally:
            for module, name, real in reversed(saved):
                setattr(module, name, real)


def keep_fresh(location: str | Path, model: Any) -> None:
    """Keep ``model``, just dequantised into ``location``, for :func:`take_fresh`."""
    with _LOCK:
        _FRESH[str(location)] = model


def take_fresh(location: str | Path) -> Any | None:
    """The model dequantised into ``location`` by this process, once (then forgotten), or
    None."""
    with _LOCK:
        return _FRESH.pop(str(location), None)
