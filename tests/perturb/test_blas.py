"""synrob asks MKL for products that give the same bits on any number of threads."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from synrob.perturb.lm.blas import STRICT, default_mode_warning, gemm_mode, request_strict_gemm

_MODE = "from synrob.perturb.lm.blas import gemm_mode; print(gemm_mode())"


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


@pytest.mark.parametrize(("platform", "lib"), [("linux", "libtorch_cpu.so"),
                                               ("win32", "torch_cpu.dll"),
                                               ("darwin", "libtorch_cpu.dylib")])
def test_an_mkl_whose_setting_cannot_be_read_is_unknown_not_absent(monkeypatch, platform, lib):
    import ctypes

    import torch

    monkeypatch.setattr(torch.backends.mkl, "is_available", lambda: True)
    monkeypatch.setattr("synrob.perturb.lm.blas.sys.platform", platform)
    opened = []

    def cdll(path):
        opened.append(os.path.basename(path))
        raise OSError("cannot open")

    monkeypatch.setattr(ctypes, "CDLL", cdll)
    assert gemm_mode.__wrapped__() == "unknown"
    assert opened == [lib]
    monkeypatch.setattr(torch.backends.mkl, "is_available", lambda: False)
    assert gemm_mode.__wrapped__() == "no-mkl"


def test_the_default_mode_warning_says_why_and_what_to_do(monkeypatch):
    monkeypatch.setenv("MKL_CBWR", "AUTO,STRIKT")
    text = default_mode_warning()
    assert "MKL_CBWR='AUTO,STRIKT'" in text and STRICT in text
    monkeypatch.delenv("MKL_CBWR")
    assert "torch multiplied before synrob was imported" in default_mode_warning()
    assert "import synrob first" in default_mode_warning()
