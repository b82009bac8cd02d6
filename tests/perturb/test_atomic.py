"""synrob.perturb.io.atomic: whole new file or the old one, never a partial write."""

from __future__ import annotations

import pytest
from synrob.perturb.io.atomic import atomic_open, write_text_atomic


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


def test_binary_writes_and_writer_paths(tmp_path) -> None:
    from synrob.perturb.io.atomic import atomic_path, write_bytes_atomic

    path = tmp_path / "blob.bin"
    write_bytes_atomic(path, b"\x00\xff")
    assert path.read_bytes() == b"\x00\xff"
    with atomic_path(tmp_path / "saved.json") as tmp:
        assert tmp.parent == tmp_path and tmp.name.startswith(".saved.json.")
        tmp.write_text("{}")  # a writer that takes a file name (tokenizer.save, save_file, ...)
        assert not (tmp_path / "saved.json").exists()  # not visible before the block ends
    assert (tmp_path / "saved.json").read_text() == "{}"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["blob.bin", "saved.json"]


def test_interrupted_write_keeps_the_old_file(tmp_path) -> None:
    path = tmp_path / "out.conllu"
    path.write_text("complete\n")
    with pytest.raises(KeyboardInterrupt), atomic_open(path) as fh:
        fh.write("partial")
        raise KeyboardInterrupt
    assert path.read_text() == "complete\n"
    assert [p.name for p in tmp_path.iterdir()] == ["out.conllu"]


def test_concurrent_writers_use_distinct_temporaries(tmp_path) -> None:
    import threading

    path = tmp_path / "shared.txt"
    errors: list[BaseException] = []

    def write(i: int) -> None:
        try:
            for _ in range(20):
                write_text_atomic(path, f"writer {i}\n" * 100)
        except BaseException as exc:  # noqa: BLE001 - collected for the assertion
            errors.append(exc)

    threads = [threading.Thread(target=write, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    lines = set(path.read_text().splitlines())
    assert len(lines) == 1 and lines.pop().startswith("writer ")  # one whole file, never mixed
    assert [p.name for p in tmp_path.iterdir()] == ["shared.txt"]


def test_refuse_overwriting_inputs(tmp_path) -> None:
    from synrob.perturb.errors import ParameterError
    from synrob.perturb.io.atomic import refuse_overwriting_inputs

    src = tmp_path / "in.conllu"
    src.write_text("x")
    (tmp_path / "sub").mkdir()
    link = tmp_path / "link.conllu"
    link.symlink_to(src)
    for same in (src, tmp_path / "sub" / ".." / "in.conllu", link):
        with pytest.raises(ParameterError, match="refusing to overwrite an input"):
            refuse_overwriting_inputs(same, [str(src)])
    refuse_overwriting_inputs(tmp_path / "other.conllu", [str(src), "-"])
    refuse_overwriting_inputs(None, [str(src)])


def test_no_os_replace_outside_the_atomic_module() -> None:
    """Every output goes through synrob.perturb.io.atomic (issue 12): no hand-rolled renames."""
    import re
    from pathlib import Path

    root = Path(__file__).resolve().parents[2] / "packages"
    offenders = []
    for py in root.rglob("*.py"):
        if py.name == "atomic.py" and py.parent.name == "io":
            continue
        text = py.read_text(encoding="utf-8")
        if re.search(r"\bos\.replace\(|\bos\.rename\(|\.replace\(\s*(?:target|dest|path)\b", text):
            offenders.append(str(py.relative_to(root)))
    assert offenders == []


def test_write_conllu_to_a_path_is_atomic(tmp_path) -> None:
    from synrob.perturb.corpus import sentences_from_string, write_conllu

    (s,) = sentences_from_string("# text = a\n1\ta\ta\tX\tX\t_\t0\troot\t_\t_\n\n")
    path = tmp_path / "out.conllu"
    path.write_text("old\n")

    def failing():
        yield s
        raise RuntimeError("disk full")

    with pytest.raises(RuntimeError):
        write_conllu(failing(), path)
    assert path.read_text() == "old\n"
    assert write_conllu([s, s], path) == 2
    assert path.read_text().count("# text = a") == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.conllu"]
