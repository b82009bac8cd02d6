"""Every hook of every layer's hookspecs.py is documented in docs/plugins.md and mentioned by a test.

The documented examples are also run: each is registered as an in-process plugin and must
register a component of the hook's kind.
"""

from __future__ import annotations

import ast
import re
import types
from pathlib import Path

import pytest
from synrob.perturb import hookspecs, plugins
from synrob.probe import hookspecs as probe_hookspecs

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "plugins.md"
HOOKSPECS = (Path(hookspecs.__file__), Path(probe_hookspecs.__file__))


def _hooks() -> dict[str, str]:
    """Hook name -> signature (``name() -> Return``), read from each hookspecs.py's source."""
    out = {}
    for path in HOOKSPECS:
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.FunctionDef) and node.name.startswith("synrob_"):
                marks = [ast.unparse(d) for d in node.decorator_list]
                assert any(m.startswith(("hookspec", "component_hookspec(")) for m in marks), (
                    node.name)
                args = ast.unparse(node.args)
                out[node.name] = f"def {node.name}({args}) -> {ast.unparse(node.returns)}"
    return out


def _component_hooks() -> list[str]:
    return sorted(h for h in _hooks() if h in plugins.kinds().values())


def _sections() -> dict[str, str]:
    """``### `hook``` heading -> the text of its section in docs/plugins.md."""
    text = DOC.read_text(encoding="utf-8")
    parts = re.split(r"^### `([^`]+)`\s*$", text, flags=re.M)
    return {parts[i]: parts[i + 1].split("\n## ")[0] for i in range(1, len(parts), 2)}


def test_hookspecs_found() -> None:
    assert set(_component_hooks()) == set(plugins.kinds().values())  # what the registry calls
    assert set(_hooks()) - set(_component_hooks()) == {"synrob_add_hookspecs"}


@pytest.mark.parametrize("hook", sorted(_hooks()))
def test_hook_documented(hook: str) -> None:
    sections = _sections()
    assert hook in sections, f"docs/plugins.md has no '### `{hook}`' section"
    body = sections[hook]
    assert _hooks()[hook] in body, f"{hook}: signature missing from its section"
    assert "**Returns**" in body, f"{hook}: say what it returns"
    assert "```python" in body and "@hookimpl" in body, f"{hook}: give an example"


def test_no_stale_hook_sections() -> None:
    stale = set(_sections()) - set(_hooks())
    assert not stale, f"docs/plugins.md documents hooks that do not exist: {sorted(stale)}"


@pytest.mark.parametrize("hook", sorted(_hooks()))
def test_hook_mentioned_by_a_test(hook: str) -> None:
    me = Path(__file__).resolve()
    files = [p for p in (ROOT / "tests").rglob("test_*.py") if p.resolve() != me]
    assert any(hook in p.read_text(encoding="utf-8") for p in files), f"no test mentions {hook}"


@pytest.mark.parametrize("hook", _component_hooks())
def test_documented_example_registers(hook: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The example of each component hook's section runs and registers one such component."""
    kind = next(k for k, h in plugins.kinds().items() if h == hook)
    body = _sections()[hook]
    example = next(b for b in re.findall(r"```python\n(.*?)```", body, flags=re.S)
                   if "@hookimpl" in b)
    module = types.ModuleType(f"docs_example_{kind}")
    exec(compile(example, f"docs/plugins.md:{hook}", "exec"), module.__dict__)
    monkeypatch.setattr(plugins, "BUILTIN_COMPONENTS", False)
    monkeypatch.setenv("SYNROB_LOAD_PLUGINS", "")
    try:
        plugins.register_plugin(module, f"docs-{kind}")
        comps = plugins.get_registry().components(kind)
        assert [(c.kind, c.plugin) for c in comps] == [(kind, f"docs-{kind}")]
    finally:
        plugins.unregister_plugin(f"docs-{kind}")
        plugins.reset()


def test_perturber_example_runs() -> None:
    from synrob.perturb.base import sentence_rng
    from synrob.perturb.corpus import sentences_from_string

    body = _sections()["synrob_register_perturbers"]
    example = next(b for b in re.findall(r"```python\n(.*?)```", body, flags=re.S)
                   if "@hookimpl" in b)
    namespace: dict = {}
    exec(compile(example, "docs/plugins.md", "exec"), namespace)
    sentence = sentences_from_string(
        "1\tHello\thello\tINTJ\tUH\t_\t0\troot\t_\t_\n2\tworld\tworld\tNOUN\tNN\t_\t1\tvocative\t_\t_\n\n"
    )[0]
    result = namespace["Shout"](rate=1.0).perturb(sentence, sentence_rng(0, 0))
    assert (result.text, result.changed) == ("HELLO WORLD", (1, 2))
    assert [w.lemma for w in result.sentence.words()] == ["hello", "world"]
