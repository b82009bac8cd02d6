"""synrob.perturb.lm.device: the one resolver of auto|cpu|cuda|cuda:N|mps, on any machine.

CUDA and MPS availability are monkeypatched, so these tests check the same decisions on a
CPU-only box, a CUDA box and a Mac.
"""

from __future__ import annotations

import subprocess
import sys

import pytest
import torch
from synrob.perturb.errors import DeviceError, ResourceError, SynrobError
from synrob.perturb.lm.device import check_device, resolve_device


@pytest.fixture
def cuda(monkeypatch):
    """Pretend torch sees ``n`` CUDA devices (0: a CPU-only machine)."""

    def set_count(n: int, built_with: str | None = "12.4") -> None:
        monkeypatch.setattr(torch.cuda, "is_available", lambda: n > 0)
        monkeypatch.setattr(torch.cuda, "device_count", lambda: n)
        monkeypatch.setattr(torch.version, "cuda", built_with)

    return set_count


@pytest.fixture
def mps(monkeypatch):
    def set_mps(available: bool, built: bool = True) -> None:
        monkeypatch.setattr(torch.backends.mps, "is_available", lambda: available)
        monkeypatch.setattr(torch.backends.mps, "is_built", lambda: built)

    return set_mps


def test_cpu_is_always_cpu(cuda) -> None:
    cuda(2)
    assert resolve_device("cpu") == "cpu"
    assert resolve_device(" CPU ") == "cpu"


def test_auto_prefers_cuda_and_never_picks_mps(cuda, mps) -> None:
    cuda(1)
    assert resolve_device("auto") == "cuda"
    assert resolve_device(None) == "cuda"
    cuda(0)
    mps(True)
    assert resolve_device("auto") == "cpu"
    assert resolve_device() == "cpu"


def test_cuda_and_cuda_n_within_the_count(cuda) -> None:
    cuda(2)
    assert resolve_device("cuda") == "cuda"
    assert resolve_device("cuda:0") == "cuda:0"
    assert resolve_device("CUDA:1") == "cuda:1"
    assert resolve_device("cuda:01") == "cuda:1"


def test_cuda_n_beyond_the_count_is_an_error(cuda) -> None:
    cuda(2)
    with pytest.raises(DeviceError) as err:
        resolve_device("cuda:2")
    assert str(err.value) == ("device 'cuda:2' requested but torch sees 2 CUDA devices "
                              "(cuda:0 to cuda:1); use --device cuda or auto")
    cuda(1)
    with pytest.raises(DeviceError, match=r"torch sees 1 CUDA device \(cuda:0\)"):
        resolve_device("cuda:1")


def test_cuda_missing_on_a_cpu_only_build(cuda) -> None:
    cuda(0, built_with=None)
    for spec in ("cuda", "cuda:0", "cuda:3"):
        with pytest.raises(DeviceError) as err:
            resolve_device(spec)
        assert str(err.value) == (
            f"device {spec!r} requested but CUDA is not available "
            f"(torch {torch.__version__}, built without CUDA); use --device cpu or auto"
        )


def test_cuda_missing_on_a_cuda_build_without_a_gpu(cuda) -> None:
    cuda(0, built_with="12.4")
    with pytest.raises(DeviceError) as err:
        resolve_device("cuda")
    assert str(err.value) == (
        "device 'cuda' requested but CUDA is not available "
        f"(torch {torch.__version__} with CUDA 12.4, no GPU found); use --device cpu or auto"
    )


def test_mps(mps) -> None:
    mps(True)
    assert resolve_device("mps") == "mps"
    mps(False, built=True)
    with pytest.raises(DeviceError, match=r"MPS is not available \(.*no Apple GPU found\)"):
        resolve_device("mps")
    mps(False, built=False)
    with pytest.raises(DeviceError, match=r"MPS is not available \(.*not built with MPS\)"):
        resolve_device("mps")


@pytest.mark.parametrize("spec", ["gpu", "cuda:x", "cuda:-1", "cuda:", "cuda:1:2", "cuda0",
                                  "", "quantum", "tpu", 3])
def test_invalid_specs(spec, cuda) -> None:
    cuda(4)  # even with GPUs present, an invalid spec is an error
    with pytest.raises(DeviceError) as err:
        resolve_device(spec)
    assert str(err.value) == f"invalid device {spec!r}: use auto, cpu, cuda, cuda:N or mps"
    with pytest.raises(DeviceError):
        check_device(spec)


def test_device_error_is_a_one_line_user_error(cuda) -> None:
    cuda(0)
    with pytest.raises(SynrobError) as err:
        resolve_device("cuda")
    assert isinstance(err.value, ResourceError) and "\n" not in str(err.value)


def test_check_device_validates_now_and_keeps_auto(cuda) -> None:
    cuda(0)
    assert check_device("auto") == "auto"
    assert check_device(" Auto ") == "auto"
    assert check_device(None) == "auto"
    assert check_device("CPU") == "cpu"
    with pytest.raises(DeviceError, match="CUDA is not available"):
        check_device("cuda")
    cuda(2)
    assert check_device("cuda:1") == "cuda:1"


def test_cpu_auto_and_invalid_specs_never_import_torch() -> None:
    code = (
        "import sys; from synrob.perturb.lm.device import check_device, resolve_device\n"
        "from synrob.perturb.errors import DeviceError\n"
        "assert resolve_device('cpu') == 'cpu' and check_device('auto') == 'auto'\n"
        "try:\n    resolve_device('gpu')\nexcept DeviceError:\n    pass\n"
        "print('torch' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_one_resolver_for_every_layer() -> None:
    """lm loading, probing runs, MDL and the transformer encoder share the one function."""
    import synrob.perturb.lm.loaded as lm
    import synrob.probe.encoders.transformer as transformer
    import synrob.probe.training.loop as training
    import synrob.probe.training.mdl as mdl
    import synrob.probe.training.probing as probing

    assert lm.resolve_device is resolve_device
    assert probing.resolve_device is mdl.resolve_device is resolve_device
    assert not hasattr(training, "resolve_device")  # no re-export: one home
    assert transformer.resolve_device is resolve_device
    assert not hasattr(transformer, "pick_device")


def test_transformer_encoder_refuses_a_missing_device_before_loading(cuda) -> None:
    from synrob.probe.encoders.resolve import resolve_encoder

    cuda(0)
    enc = resolve_encoder("minilm", {"device": "cuda"})
    with pytest.raises(DeviceError, match="CUDA is not available"):
        enc.load()
    assert getattr(enc, "model", None) is None


def test_lm_loading_refuses_a_missing_device_before_loading(cuda) -> None:
    from synrob.perturb.lm.loaded import load_lm

    cuda(0)
    with pytest.raises(DeviceError, match="device 'cuda:1' requested but CUDA is not available"):
        load_lm("smollm2", device="cuda:1")
