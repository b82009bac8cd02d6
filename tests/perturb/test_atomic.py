"""synrob.perturb.atomic: whole new file or the old one, never a partial write."""

from __future__ import annotations

import pytest
from synrob.perturb.atomic import atomic_open, write_text_atomic


def test_write_text_atomic_replaces_and_creates_parents(tmp_path) -> None:
    path = tmp_path / "a" / "b.json"
    assert write_text_atomic(path, "one\n") == path and path.read_text() == "one\n"
    write_text_atomic(path, "two\n")
    assert path.read_text() == "two\n"
    assert [p.name for p in path.parent.iterdir()] == ["b.json"]  # no temporary left


def test_failed_write_keeps_the_old_file_and_no_temporary(tmp_path) -> None:
    path = tmp_path / "tasks.txt"
    path.write_text("old\n")
    with pytest.raises(ValueError), atomic_open(path) as fh:
        fh.write("half of the new")
        raise ValueError("not writable")
    assert path.read_text() == "old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["tasks.txt"]
