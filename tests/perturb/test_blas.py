"""synrob asks MKL for products that give the same bits on any number of threads."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from synrob.perturb.blas import STRICT, request_strict_gemm

_MODE = "from synrob.perturb.blas import gemm_mode; print(gemm_mode())"


def _mode(env_value: str | None, code: str = "import synrob.perturb; " + _MODE) -> str:
    env = {k: v for k, v in os.environ.items() if k != "MKL_CBWR"}
    if env_value is not None:
        env["MKL_CBWR"] = env_value
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         check=True)
    return out.stdout.strip()


def test_request_keeps_a_value_the_user_set(monkeypatch):
    monkeypatch.setenv("MKL_CBWR", "COMPATIBLE")
    request_strict_gemm()
    assert os.environ["MKL_CBWR"] == "COMPATIBLE"
    monkeypatch.delenv("MKL_CBWR")
    request_strict_gemm()
    assert os.environ["MKL_CBWR"] == STRICT


def test_importing_synrob_puts_mkl_in_strict_mode():
    mode = _mode(None)
    if mode == "no-mkl":
        pytest.skip("this torch has no MKL")
    assert mode == "strict"
    assert _mode("AUTO") == "default"  # the user's own setting wins
    # too late: MKL read its settings at the first product, before synrob was imported
    late = "import torch; torch.ones(8, 8) @ torch.ones(8, 8); import synrob.perturb; " + _MODE
    assert _mode(None, late) == "default"


@pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="needs two cores")
def test_skinny_weight_gradients_are_the_same_on_one_and_two_threads():
    """The product MKL split between threads on an Intel Xeon (``(K, 384)^T @ (K, 128)``, K from
    about 780 rows up) gives the same bits on 1 and 2 threads in this (strict) process."""
    import torch

    before = torch.get_num_threads()
    gen = torch.Generator().manual_seed(0)
    try:
        for rows in (500, 800, 1000, 1500, 2300):
            x, g = torch.randn(rows, 384, generator=gen), torch.randn(rows, 128, generator=gen)
            out = []
            for threads in (1, 2):
                torch.set_num_threads(threads)
                out.append(x.T @ g)
            assert torch.equal(*out), rows
    finally:
        torch.set_num_threads(before)
