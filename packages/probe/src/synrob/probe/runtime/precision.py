"""Numeric contexts of torch computations: fp32 regions inside autocast, cuBLAS's TF32 flag.

The precision names a probe may train in (:data:`PRECISIONS`), whether a device computes fp32
products in TF32 (:func:`tf32_capable`), and the contexts that pin a region to full fp32
(:func:`fp32_region`) or to TF32 (:func:`cuda_matmul`), restoring the caller's settings after.
The policy that chooses a probe's precision and runs its steps in it is
:mod:`synrob.probe.training.precision`.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from synrob.perturb.errors import ParameterError

__all__ = ["PRECISIONS", "PRECISION_HELP", "tf32_capable", "require_tf32", "cuda_matmul",
           "gpu_matmul", "fp32_region", "device_type"]

PRECISIONS = ("auto", "float32", "bfloat16", "tfloat32")
PRECISION_HELP = ("training precision: auto (bf16 autocast, fp32 master weights, on hardware "
                  "with native bf16 for a checked model and probe; else float32), float32, "
                  "bfloat16 or tfloat32 (TF32 products; NVIDIA Ampere or newer only)")


def tf32_capable(device: Any) -> bool:
    """Whether ``device`` (a torch device or its name) computes fp32 products in TF32: an
    NVIDIA GPU of compute capability 8.0 or newer (Ampere and later)."""
    if device_type(device) != "cuda":
        return False
    import torch

    if not torch.cuda.is_available() or torch.version.cuda is None:  # ROCm has no TF32 here
        return False
    return tuple(torch.cuda.get_device_capability(device)) >= (8, 0)


def require_tf32(device: Any) -> None:
    """A :class:`ParameterError` unless ``device`` has TF32 (:func:`tf32_capable`)."""
    if not tf32_capable(device):
        raise ParameterError(
            f"train_precision=tfloat32 needs an NVIDIA GPU of compute capability 8.0 or newer "
            f"(Ampere and later), and the probe trains on {device}: use float32, bfloat16 or "
            "auto there")


@contextlib.contextmanager
def cuda_matmul(mode: str) -> Iterator[None]:
    """cuBLAS's fp32 products in ``mode`` (``tf32`` or ``ieee``) inside, the caller's setting
    again after (torch's ``torch.backends.cuda.matmul.fp32_precision``, a process-wide flag)."""
    import torch

    flags = torch.backends.cuda.matmul
    before = flags.fp32_precision
    flags.fp32_precision = mode
    try:
        yield
    finally:
        flags.fp32_precision = before


def gpu_matmul(device: Any, mode: str) -> contextlib.AbstractContextManager[Any]:
    """:func:`cuda_matmul` on a GPU (``device`` a torch device or its name), nothing elsewhere
    (the CPU's products know no TF32 flag)."""
    return cuda_matmul(mode) if device_type(device) == "cuda" else contextlib.nullcontext()


@contextlib.contextmanager
def fp32_region(device: Any) -> Iterator[None]:
    """A region of full fp32 products (inside a bf16 or TF32 step, or around predictions):
    autocast off, and on a GPU cuBLAS's fp32 products in IEEE fp32 (the caller's TF32 setting
    again after)."""
    import torch

    with torch.autocast(device_type(device), enabled=False), gpu_matmul(device, "ieee"):
        yield


def device_type(device: Any) -> str:
    """``cpu``, ``cuda``...: the type of a torch device or device name."""
    return device.type if hasattr(device, "type") else str(device).split(":")[0]
