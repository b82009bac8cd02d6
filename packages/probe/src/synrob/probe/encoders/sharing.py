"""A transformer encoder's share of the models loaded in this process
(:mod:`synrob.perturb.lm.shared_models`): the key its blocks are found and offered under, and the
causal LM a process will load anyway, loaded first so that the encoder reads no weights."""

from __future__ import annotations

from typing import Any, Protocol

from synrob.perturb.lm.shared_models import ModelKey

__all__ = ["SharedEncoder", "model_key", "load_lm_first"]


class SharedEncoder(Protocol):
    """What sharing reads of a transformer encoder
    (:class:`~synrob.probe.encoders.transformer.TransformerEncoder` is one): where its files lie,
    its placement, config, device and options (``precision``, ``attention``,
    ``trust_remote_code``)."""

    @property
    def files(self) -> Any: ...

    @property
    def placement(self) -> Any: ...

    @property
    def config(self) -> Any: ...

    @property
    def device(self) -> str: ...

    @property
    def options(self) -> dict[str, Any]: ...


def model_key(enc: SharedEncoder) -> ModelKey | None:
    """The key ``enc``'s model is shared under, or None when it is not shared: placed over
    devices, offloaded or quantized, or an encoder-decoder (the encoder is one half)."""
    if not enc.placement.plain or getattr(enc.config, "is_encoder_decoder", False):
        return None
    return ModelKey(enc.files.location, str(enc.options["precision"]), enc.device,
                    str(enc.options["attention"]), bool(enc.options["trust_remote_code"]))


def load_lm_first(enc: SharedEncoder, spec: str, device: str) -> None:
    """Load the causal LM ``spec`` (:func:`synrob.perturb.lm.loaded.load_lm` on ``device``, as the
    process's runs will: default dtype and kind, no remote code) when it reads ``enc``'s files
    in ``enc``'s dtype: it then offers its blocks, and ``enc`` reads none. Nothing when it is
    another model or dtype (the LM would only sit in memory beside the encoder's own)."""
    from synrob.perturb.lm.dtype import resolve_dtype
    from synrob.perturb.lm.loaded import lm_source, load_lm

    if enc.options["trust_remote_code"]:  # the runs load LMs without it: not the same load
        return
    if lm_source(spec).location != enc.files.location:
        return
    if resolve_dtype("auto", enc.device, spec) != enc.options["precision"]:
        return
    load_lm(spec, device=device)
