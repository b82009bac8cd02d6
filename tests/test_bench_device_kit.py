"""bench/device_kit.py: what travels to a lent GPU comes back byte for byte there.

The whole ``build`` needs PyPI and the installed models (it was run by hand, see
docs/experiments.md); these tests check its pieces and a whole ``unpack`` of a small kit."""

from __future__ import annotations

import hashlib
import json
import random
import subprocess
import sys
import zipfile
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from .bench_script import load_bench

ROOT = Path(__file__).resolve().parents[1]
kit = load_bench("device_kit")


@given(st.binary(max_size=300))
def test_shuffle_is_undone_byte_for_byte(data: bytes) -> None:
    shuffled = kit.shuffle(data)
    assert len(shuffled) == len(data) and kit.unshuffle(shuffled) == data


def test_shuffle_puts_each_byte_position_in_its_own_plane() -> None:
    assert kit.shuffle(b"abcdABCD12") == b"aAbBcCdD12"


def test_stripping_a_wheel_drops_only_that_folder(tmp_path: Path) -> None:
    wheel = tmp_path / "pkg-1.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as z:
        z.writestr("pkg/__init__.py", "x = 1\n")
        z.writestr("pkg/test/big.bin", b"0" * 1000)
        z.writestr("pkg-1.0.dist-info/METADATA", "Name: pkg\n")
    kit._strip(wheel, "pkg/test/")
    assert sorted(zipfile.ZipFile(wheel).namelist()) == ["pkg-1.0.dist-info/METADATA",
                                                          "pkg/__init__.py"]


def _small_stage(stage: Path) -> bytes:
    """A kit stage with fake weights, one wheel and one lexicon; return the weights."""
    weights = random.Random(0).randbytes(10_499)  # incompressible: several parts
    model = stage / kit.SAFETENSORS
    model.parent.mkdir(parents=True)
    model.with_suffix(".shuffled").write_bytes(kit.shuffle(weights))
    (stage / "whl").mkdir()
    with zipfile.ZipFile(stage / "whl" / "tiny-1.0-py3-none-any.whl", "w") as z:
        z.writestr("tiny/__init__.py", "VALUE = 7\n")
    lex = stage / "seed" / "pseudowords"
    lex.mkdir(parents=True)
    (lex / "lexicon-g1-s0-n8000-0000000000.json").write_text("{}")
    (stage / "data").mkdir()
    (stage / "manifest.json").write_text(json.dumps(
        {"commit": "abc", "minilm_sha256": hashlib.sha256(weights).hexdigest()}))
    return weights


def test_a_kit_in_parts_unpacks_into_a_working_site(tmp_path: Path) -> None:
    weights = _small_stage(tmp_path / "stage")
    parts = kit._pack(tmp_path / "stage", tmp_path / "kit", 2000)
    assert len(parts) >= 2 and all(p.stat().st_size <= 2000 for p in parts)
    dest = tmp_path / "dest"
    out = subprocess.run([sys.executable, str(ROOT / "bench" / "device_kit.py"), "unpack",
                          "--kit", str(tmp_path / "kit"), "--dest", str(dest)],
                         check=True, capture_output=True, text=True).stdout
    assert f"parts: {len(parts)}" in out
    assert (dest / kit.SAFETENSORS).read_bytes() == weights
    env = dict(line.removeprefix("export ").split("=", 1)
               for line in (dest / "env.sh").read_text().splitlines())
    assert env["PYTHONPATH"] == str(dest / "site") and env["HF_HUB_OFFLINE"] == "1"
    assert (dest / "site" / "tiny" / "__init__.py").is_file()
    from synrob.perturb.lexicon.pseudowords import lexicon_path

    # renamed to the key of the machine that unpacks (here: this one)
    assert [p.name for p in (dest / "seed" / "pseudowords").iterdir()] == [
        lexicon_path(0, 8000).name]


def test_missing_or_damaged_parts_are_refused(tmp_path: Path) -> None:
    _small_stage(tmp_path / "stage")
    parts = kit._pack(tmp_path / "stage", tmp_path / "kit", 2000)
    parts[0].unlink()
    run = [sys.executable, str(ROOT / "bench" / "device_kit.py"), "unpack", "--kit",
           str(tmp_path / "kit"), "--dest", str(tmp_path / "dest")]
    gone = subprocess.run(run, capture_output=True, text=True)
    assert gone.returncode != 0 and "parts missing" in gone.stderr
    _small_stage(tmp_path / "stage2")
    manifest = tmp_path / "stage2" / "manifest.json"
    manifest.write_text(json.dumps({"commit": "abc", "minilm_sha256": "0" * 64}))
    kit._pack(tmp_path / "stage2", tmp_path / "kit", 2000)
    bad = subprocess.run(run, capture_output=True, text=True)
    assert bad.returncode != 0 and "sha256 differs" in bad.stderr


def test_a_destination_over_the_kit_is_refused_and_the_kit_kept(tmp_path: Path) -> None:
    _small_stage(tmp_path / "stage")
    parts = kit._pack(tmp_path / "stage", tmp_path / "kit", 2000)
    for dest in (tmp_path / "kit", tmp_path, tmp_path / "kit" / "part1"):
        run = subprocess.run([sys.executable, str(ROOT / "bench" / "device_kit.py"), "unpack",
                              "--kit", str(tmp_path / "kit"), "--dest", str(dest)],
                             capture_output=True, text=True)
        assert run.returncode != 0 and "would overwrite the kit" in run.stderr
        assert all(p.is_file() for p in parts)
