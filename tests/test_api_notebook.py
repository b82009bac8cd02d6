"""What a notebook user trips on (issue 46, section 6): readable reprs, lists as tables, the
specs a user gave, one role vocabulary, point drops, completion, type hints, ``import synrob``,
the docs' API table and file modes."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_eraser_files_get_the_mode_of_every_other_output(tmp_path: Path) -> None:
    """safetensors writes through its own private (0600) temporary file; a published eraser
    has the mode any new file gets (0644 under umask 022), like a CoNLL-U output."""
    torch = pytest.importorskip("torch")
    from synrob.perturb.atomic import write_text_atomic
    from synrob.probe.erasure import Eraser, save_eraser

    old = os.umask(0o022)
    try:
        u = torch.eye(4)[:, :1]
        eraser = Eraser("random", u, u.T.clone(), torch.zeros(4), torch.zeros(2, 4), ["a", "b"])
        saved = save_eraser(tmp_path / "e.safetensors", eraser)
        text = write_text_atomic(tmp_path / "out.txt", "x\n")
    finally:
        os.umask(old)
    assert _mode(saved) == _mode(text) == 0o644
