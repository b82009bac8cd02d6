"""Matrix products that give the same bits on any number of threads.

A run's results must not depend on how many cores it had (``--workers`` shares them out
between an experiment's runs). Two libraries compute torch's products on
the CPU, and both may split a product's sum between threads in some shapes:

* **Intel MKL** (fp32 products of the x86 wheels). On an Intel Xeon it split the weight
  gradients of skinny products, ``(K, 384)^T @ (K, 17 or 128)`` from K of about 780 rows up,
  so a depth probe of rank 128 trained other weights on 2 threads than on 1 (2026-11-27).
  MKL's Conditional Numerical Reproducibility in strict mode (``MKL_CBWR=AUTO,STRICT``) makes
  its products independent of the thread count. MKL reads the variable once, at its first
  product, so :func:`request_strict_gemm` runs when :mod:`synrob.perturb` (which every synrob
  layer imports) is imported; a value the user set is kept.
* **oneDNN** (bf16 products: AMX, AVX-512 BF16) has no such mode. On the same Xeon its bf16
  weight gradients differed between 1 and 2 threads at K = 740 and 760 rows. So a bf16 training
  step computes its products' gradients on one thread (the probe layer's training does it).

:func:`gemm_mode` says which MKL mode the process runs in; each run records it, and an
experiment whose runs ran in MKL's default mode warns once (:func:`default_mode_warning`):
MKL ignores a value of ``MKL_CBWR`` it does not know without a word.
"""

from __future__ import annotations

import functools
import os
import sys

from ..errors import SynrobWarning

__all__ = ["STRICT", "ReproducibilityWarning", "request_strict_gemm", "gemm_mode",
           "default_mode_warning"]

#: MKL's code path for this CPU (AUTO), thread-count-independent results (STRICT)
STRICT = "AUTO,STRICT"
_MKL_STRICT_BIT = 0x10000  # MKL_CBWR_STRICT
#: torch's CPU library, which holds MKL in the x86 wheels, by platform
_TORCH_CPU_LIB = {"win32": "torch_cpu.dll", "darwin": "libtorch_cpu.dylib"}


class ReproducibilityWarning(SynrobWarning):
    """Results may depend on something they should not (here: the thread count)."""


def request_strict_gemm() -> None:
    """Ask MKL for thread-count-independent products (``MKL_CBWR``), unless already set.
    Effective only before the process's first MKL product."""
    os.environ.setdefault("MKL_CBWR", STRICT)


@functools.cache
def gemm_mode() -> str:
    """``strict`` (MKL in strict reproducibility mode: fp32 products give the same bits on any
    number of threads), ``default`` (MKL without it: they may not), ``unknown`` (torch has MKL
    but its setting cannot be read here, e.g. where MKL is linked into torch without exporting
    it) or ``no-mkl`` (torch has no MKL: other libraries, whose thread behaviour synrob does not
    check). Reading fixes MKL's mode for the process, so it is read once."""
    import ctypes

    import torch

    if not torch.backends.mkl.is_available():
        return "no-mkl"
    name = _TORCH_CPU_LIB.get(sys.platform, "libtorch_cpu.so")
    try:
        get = ctypes.CDLL(os.path.join(os.path.dirname(torch.__file__), "lib", name)
                          ).mkl_serv_cbwr_get
    except (OSError, AttributeError):
        return "unknown"
    get.restype, get.argtypes = ctypes.c_int, [ctypes.c_int]
    return "strict" if get(-1) & _MKL_STRICT_BIT else "default"


def default_mode_warning() -> str:
    """What to tell a user whose products ran in MKL's default mode (``gemm_mode() ==
    "default"``)."""
    value = os.environ.get("MKL_CBWR")
    if value is not None:
        why = f"MKL_CBWR={value!r} is not a strict mode MKL knows"
        fix = f"unset MKL_CBWR or set it to {STRICT}"
    else:
        why, fix = "torch multiplied before synrob was imported", "import synrob first"
    return (f"MKL computed the fp32 products in its default mode, since {why}: results may "
            f"depend on the number of threads; {fix}")
