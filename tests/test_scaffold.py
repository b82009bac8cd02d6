"""``synrob plugins new NAME``: the scaffolded package installs and passes its own tests."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
from collections.abc import Callable
from pathlib import Path

import pytest
from synrob.cli.scaffold import ScaffoldError, plugin_names, render_plugin, write_plugin

BIN = Path(sys.executable).parent


def test_names() -> None:
    assert plugin_names("word-drop") == {
        "name": "word-drop",
        "ident": "word_drop",
        "dist": "synrob-word-drop",
        "module": "synrob_word_drop",
        "cls": "WordDropPerturber",
    }


@pytest.mark.parametrize(
    "name", ["", "Leet", "1leet", "leet!", "leet--x", "leet-", "_leet", "le et", "a" * 33, "héllo"]
)
def test_invalid_names_are_refused(name: str) -> None:
    with pytest.raises(ScaffoldError, match="invalid plugin name"):
        write_plugin(name, Path("/nonexistent/never-written"))


def test_rendered_files() -> None:
    files = render_plugin("word-drop")
    assert sorted(files) == [
        "README.md",
        "pyproject.toml",
        "src/synrob_word_drop/__init__.py",
        "src/synrob_word_drop/plugin.py",
        "tests/test_word_drop.py",
    ]
    assert not any("${" in text for text in files.values())
    meta = tomllib.loads(files["pyproject.toml"])
    assert meta["project"]["name"] == "synrob-word-drop"
    assert meta["project"]["entry-points"]["synrob"] == {"word-drop": "synrob_word_drop.plugin"}
    assert "synrob-perturb" in meta["project"]["dependencies"]
    for rel, text in files.items():
        if rel.endswith(".py"):
            compile(text, rel, "exec")
    assert 'name = "word-drop"' in files["src/synrob_word_drop/plugin.py"]
    assert "class WordDropPerturber(Perturber):" in files["src/synrob_word_drop/plugin.py"]


def test_longest_name_keeps_lines_short() -> None:
    name = "a" * 10 + "-" + "b" * 10 + "_" + "c" * 10
    files = render_plugin(name)
    for rel, text in files.items():
        if rel.endswith((".py", ".toml")):
            assert max(len(line) for line in text.splitlines()) <= 100, rel
    with pytest.raises(ScaffoldError):
        render_plugin(name + "d")


def test_cli_writes_default_dir_and_refuses_existing(
    tmp_path: Path, cli: Callable, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    result = cli(["plugins", "new", "leet"])
    assert result.exit_code == 0, result.stderr
    assert result.stdout.strip() == str(tmp_path / "synrob-leet")
    assert (tmp_path / "synrob-leet" / "src" / "synrob_leet" / "plugin.py").is_file()
    again = cli(["plugins", "new", "leet"])
    assert again.exit_code == 1
    assert again.stderr == (
        f"synrob: error: {tmp_path / 'synrob-leet'} already exists; choose another --dir or "
        "remove it\n"
    )
    bad = cli(["plugins", "new", "Bad Name"])
    assert bad.exit_code == 1 and bad.stderr.count("\n") == 1
    assert bad.stderr.startswith("synrob: error: invalid plugin name 'Bad Name'")
    empty = tmp_path / "empty"
    empty.mkdir()
    assert cli(["plugins", "new", "leet", "--dir", str(empty)]).exit_code == 0  # empty is fine


@pytest.mark.slow
def test_scaffold_installs_and_passes_its_own_test(tmp_path: Path, cli: Callable) -> None:
    pkg = tmp_path / "synrob-scaffold-check"
    assert cli(["plugins", "new", "scaffold-check", "--dir", str(pkg)]).exit_code == 0
    site = tmp_path / "site"
    pip = [sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
           "--no-deps", "--no-build-isolation", "--target", str(site), str(pkg)]
    proc = subprocess.run(pip, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert (site / "synrob_scaffold_check-0.1.0.dist-info" / "entry_points.txt").is_file()

    env = {**os.environ, "PYTHONPATH": str(site), "SYNROB_STRICT_PLUGINS": "1"}
    env.pop("SYNROB_LOAD_PLUGINS", None)
    tests = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"],
        cwd=pkg, env=env, capture_output=True, text=True, timeout=300,
    )
    assert tests.returncode == 0, tests.stdout + tests.stderr
    assert "6 passed" in tests.stdout

    listed = subprocess.run([str(BIN / "synrob"), "plugins", "--json", "--kind", "perturber"],
                            env=env, capture_output=True, text=True, timeout=120)
    assert listed.returncode == 0, listed.stderr
    rows = json.loads(listed.stdout)
    assert {"kind": "perturber", "name": "scaffold-check", "version": "0.1.0",
            "distribution": "synrob-scaffold-check", "plugin": "scaffold-check",
            "languages": ["*"]} in rows

    lint = subprocess.run([str(BIN / "ruff"), "check", "--no-cache", "--select", "E,F,W,B,UP",
                           str(pkg)], capture_output=True, text=True, timeout=120)
    assert lint.returncode == 0, lint.stdout
