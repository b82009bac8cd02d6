"""Every --device goes through synrob.perturb.lm.device: the same one-line error, exit 1.

CUDA is monkeypatched away (in-process runs through the real error boundary), so these tests
check a CPU-only machine's behaviour also on a machine that has a GPU.
"""

from __future__ import annotations

import pytest
import torch


@pytest.fixture
def no_cuda(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 0)


def _missing(spec: str) -> str:
    state = (f"torch {torch.__version__}, built without CUDA" if torch.version.cuda is None
             else f"torch {torch.__version__} with CUDA {torch.version.cuda}, no GPU found")
    return (f"synrob: error: device {spec!r} requested but CUDA is not available ({state}); "
            "use --device cpu or auto\n")


def _commands(tmp_path, device: str) -> dict[str, list[str]]:
    return {
        "encode": ["encode", "--encoder", "minilm", "--device", device, "sample:en_ewt:dev"],
        "probe": ["probe", "--encoder", "minilm", "--layer", "3", "--device", device,
                  "--train", "sample:en_ewt:train", "--dev", "sample:en_ewt:dev",
                  "--test", "sample:en_ewt:test"],
        "perturb --device": ["perturb", "--kind", "coco", "--device", device,
                             "sample:en_ewt:dev"],
        "perturb -p device=": ["perturb", "--kind", "coco", "-p", f"device={device}",
                               "sample:en_ewt:dev"],
        "run": ["run", "jabberwocky", "--preset", "demo", "--device", device,
                "-o", str(tmp_path / "run")],
        "demo": ["demo", "--device", device, "-o", str(tmp_path / "demo")],
    }


@pytest.mark.parametrize("command", ["encode", "probe", "perturb --device",
                                     "perturb -p device=", "run", "demo"])
def test_missing_cuda_is_the_same_one_line_error(cli, no_cuda, tmp_path, command) -> None:
    res = cli(_commands(tmp_path, "cuda")[command])
    assert res.exit_code == 1
    assert res.stderr == _missing("cuda")
    assert "Traceback" not in res.stderr and res.stdout == ""
    assert not (tmp_path / "run").exists() and not (tmp_path / "demo").exists()


@pytest.mark.parametrize("spec", ["gpu", "cuda:x"])
@pytest.mark.parametrize("command", ["encode", "probe", "perturb --device", "run", "demo"])
def test_invalid_device_is_one_line(cli, tmp_path, command, spec) -> None:
    res = cli(_commands(tmp_path, spec)[command])
    assert res.exit_code == 1
    assert res.stderr == f"synrob: error: invalid device {spec!r}: use auto, cpu, cuda, cuda:N or mps\n"


def test_cuda_index_beyond_the_device_count(cli, monkeypatch, tmp_path) -> None:
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 1)
    res = cli(_commands(tmp_path, "cuda:1")["encode"])
    assert res.exit_code == 1
    assert res.stderr == ("synrob: error: device 'cuda:1' requested but torch sees 1 CUDA device "
                          "(cuda:0); use --device cuda or auto\n")


def test_perturb_device_only_for_perturbers_with_a_device(cli) -> None:
    res = cli(["perturb", "--kind", "shuffle", "--device", "cpu", "sample:en_ewt:dev"])
    assert res.exit_code == 1 and res.stderr.count("\n") == 1
    assert "perturber 'shuffle' runs no model" in res.stderr and "coco" in res.stderr
    res = cli(["perturb", "--kind", "coco", "--device", "cpu", "-p", "device=cuda",
               "sample:en_ewt:dev"])
    assert res.exit_code == 1
    assert res.stderr == "synrob: error: --device cpu conflicts with -p device=cuda; give one\n"
