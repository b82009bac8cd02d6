"""``synrob plugins new NAME``: write a ready-to-install plugin package from templates.

The templates live in ``synrob/cli/templates/plugin/`` (package data). Every ``*.tmpl`` file is
rendered with :class:`string.Template` (``${name}``, ``${dist}``, ``${module}``, ``${ident}``,
``${cls}``); the path parts ``_module_`` and ``_ident_`` are replaced by the module and the
identifier, and the ``.tmpl`` suffix is dropped.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from importlib import resources
from importlib.abc import Traversable
from pathlib import Path
from string import Template

from synrob.perturb.errors import SynrobError

__all__ = ["ScaffoldError", "plugin_names", "render_plugin", "validate_name", "write_plugin"]

NAME_RE = re.compile(r"[a-z][a-z0-9]*(?:[-_][a-z0-9]+)*")
MAX_NAME = 32
SUFFIX = ".tmpl"


class ScaffoldError(SynrobError):
    """The plugin name is invalid or the target directory is in the way."""


def validate_name(name: str) -> str:
    """``name`` when it can be a perturber, entry-point and distribution name; else raise.

    A valid name has no ``/``, ``\\``, ``.`` or leading ``-``, so the default target
    ``./synrob-NAME`` and the files inside it cannot leave the working directory.
    """
    if not NAME_RE.fullmatch(name) or len(name) > MAX_NAME:
        pathlike = (name in (".", "..") or any(c in name for c in "/\\")
                    or name.startswith((".", "~")))
        raise ScaffoldError(
            f"invalid plugin name {name!r}: use lowercase letters and digits, starting with a "
            f"letter, optionally joined by single '-' or '_' (at most {MAX_NAME} characters), "
            "e.g. 'leet' or 'word-drop'"
            + ("; it is a name, not a path: choose the folder with --dir" if pathlike else "")
        )
    return name


def plugin_names(name: str) -> dict[str, str]:
    """Template variables for plugin ``name``.

    >>> plugin_names("word-drop")["module"], plugin_names("word-drop")["cls"]
    ('synrob_word_drop', 'WordDropPerturber')
    """
    validate_name(name)
    ident = name.replace("-", "_")
    cls = "".join(part.capitalize() for part in ident.split("_")) + "Perturber"
    return {
        "name": name,
        "ident": ident,
        "dist": f"synrob-{name}",
        "module": f"synrob_{ident}",
        "cls": cls,
    }


def _templates(root: Traversable, prefix: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], str]]:
    """``(relative path parts, text)`` of every template file under ``root``."""
    for entry in sorted(root.iterdir(), key=lambda e: e.name):
        if entry.is_dir():
            if entry.name != "__pycache__":
                yield from _templates(entry, (*prefix, entry.name))
        elif entry.name.endswith(SUFFIX):
            yield (*prefix, entry.name), entry.read_text(encoding="utf-8")


def render_plugin(name: str) -> dict[str, str]:
    """Relative path -> file content of the plugin package for ``name`` (nothing written)."""
    names = plugin_names(name)
    root = resources.files("synrob.cli") / "templates" / "plugin"
    files: dict[str, str] = {}
    for parts, text in _templates(root):
        path = "/".join(parts)[: -len(SUFFIX)]
        path = path.replace("_module_", names["module"]).replace("_ident_", names["ident"])
        files[path] = Template(text).substitute(names)
    if not files:
        raise ScaffoldError(f"no plugin templates found in {root}")
    return files


def write_plugin(name: str, directory: Path | str | None = None) -> Path:
    """Write the plugin package for ``name`` into ``directory`` (default ``./synrob-NAME``).

    The directory must not exist, or be empty. Returns its path. The package holds a
    ``pyproject.toml`` with the ``synrob`` entry point, ``src/synrob_NAME/plugin.py`` with one
    perturber and its hook, a README and ``tests/test_NAME.py`` with golden cases.
    """
    files = render_plugin(name)
    target = Path(directory) if directory is not None else Path.cwd() / f"synrob-{name}"
    if target.exists() and (not target.is_dir() or any(target.iterdir())):
        raise ScaffoldError(f"{target} already exists; choose another --dir or remove it")
    root = target.resolve()
    for rel in files:  # defence in depth: a rendered path never leaves the target
        if not (root / rel).resolve().is_relative_to(root):
            raise ScaffoldError(f"template path {rel!r} would leave {target}")
    try:
        for rel, text in files.items():
            path = target / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise ScaffoldError(f"cannot write {target}: {exc.strerror or exc}") from None
    return target
