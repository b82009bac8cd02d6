"""The one place that turns a device spec into a torch device name.

Every ``--device`` option (``synrob encode``, ``probe``, ``run``, ``demo``, ``perturb``), the
``device`` parameter of the transformer encoders and of the ``coco`` perturber, probe training
and language-model loading all go through :func:`resolve_device`, so a spec means the same thing
everywhere and a missing device is the same one-line :class:`DeviceError` everywhere.

Specs (case-insensitive, surrounding blanks ignored):

* ``auto`` -- ``cuda`` when torch sees a CUDA device, else ``cpu`` (``mps`` is never chosen
  automatically: some operations still lack an MPS kernel, so it has to be asked for);
* ``cpu``;
* ``cuda`` -- the current CUDA device; ``cuda:N`` -- CUDA device ``N`` (``0 <= N < count``);
* ``mps`` -- Apple's Metal backend.

Anything else (``gpu``, ``cuda:x``, ``cuda:-1``) is an invalid spec. torch is imported inside
the functions, and only for specs that need it: ``cpu`` and invalid specs never import it, and
:func:`check_device` leaves ``auto`` (which cannot fail) unresolved without importing it.
"""

from __future__ import annotations

import re

from ..errors import DeviceError

__all__ = ["DEVICE_HELP", "DeviceError", "check_device", "resolve_device"]

DEVICE_HELP = "auto (CUDA when present, else CPU), cpu, cuda, cuda:N or mps"

_CHOICES = "auto, cpu, cuda, cuda:N or mps"
_HINT = "use --device cpu or auto"
_CUDA = re.compile(r"cuda(?::(\d+))?")


def _normalise(spec: object) -> str:
    if spec is None:
        return "auto"
    if not isinstance(spec, str):
        raise DeviceError(f"invalid device {spec!r}: use {_CHOICES}")
    return spec.strip().lower()


def _torch_state(torch: object) -> str:
    """``torch 2.x+cpu, built without CUDA`` or ``torch 2.x with CUDA 12.4, no GPU found``."""
    version = getattr(torch, "__version__", "?")
    cuda = getattr(getattr(torch, "version", None), "cuda", None)
    if cuda is None:
        return f"torch {version}, built without CUDA"
    return f"torch {version} with CUDA {cuda}, no GPU found"


def resolve_device(spec: str | None = "auto") -> str:
    """The torch device name for ``spec``: ``cpu``, ``cuda``, ``cuda:N`` or ``mps``.

    ``None`` means ``auto``. Raises :class:`DeviceError` (one line, no traceback in the CLI) for
    an invalid spec, for ``cuda``/``cuda:N``/``mps`` when that backend is not available, and for
    ``cuda:N`` with ``N`` not below the number of CUDA devices.
    """
    s = _normalise(spec)
    if s == "cpu":
        return "cpu"
    match = _CUDA.fullmatch(s)
    if s not in ("auto", "mps") and match is None:
        raise DeviceError(f"invalid device {spec!r}: use {_CHOICES}")

    import torch

    if s == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if s == "mps":
        mps = getattr(torch.backends, "mps", None)
        if mps is None or not mps.is_available():
            why = "not built with MPS" if mps is None or not mps.is_built() else "no Apple GPU found"
            raise DeviceError(
                f"device {spec!r} requested but MPS is not available "
                f"(torch {torch.__version__}, {why}); {_HINT}"
            )
        return "mps"
    if not torch.cuda.is_available():
        raise DeviceError(
            f"device {spec!r} requested but CUDA is not available ({_torch_state(torch)}); {_HINT}"
        )
    assert match is not None
    if match.group(1) is None:
        return "cuda"
    index, count = int(match.group(1)), torch.cuda.device_count()
    if index >= count:
        have = f"cuda:0 to cuda:{count - 1}" if count > 1 else "cuda:0"
        raise DeviceError(
            f"device {spec!r} requested but torch sees {count} CUDA "
            f"device{'s' if count != 1 else ''} ({have}); use --device cuda or auto"
        )
    return f"cuda:{index}"


def check_device(spec: str | None = "auto") -> str:
    """Check ``spec`` now, before any slow work, and return it normalised.

    ``auto`` is returned as ``auto`` without importing torch (it always resolves); every other
    spec is resolved by :func:`resolve_device`, so an invalid or unavailable device is an
    error at once. Commands call this on their ``--device`` value and pass the result on.
    """
    s = _normalise(spec)
    return s if s == "auto" else resolve_device(s)
