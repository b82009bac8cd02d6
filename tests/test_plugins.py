"""The plugin system: hooks, registry, entry points, broken/duplicate/misspelled plugins.

Most tests run with the built-in default plugins switched off (``no_builtins``) so they exercise
the mechanism alone; third-party plugins are throwaway distributions (a ``*.dist-info`` with an
``entry_points.txt`` in a tmp dir on ``sys.path``), found through ``importlib.metadata`` exactly
as an installed one is. The last section checks the real installation: built-ins plus the
example plugin ``synrob-typo``, found only through its entry point.
"""

from __future__ import annotations

import importlib
import inspect
import json
import os
import subprocess
import sys
import warnings
from collections.abc import Callable, Iterator
from importlib.metadata import entry_points
from pathlib import Path

import pytest
from synrob.perturb import hookspecs, plugins
from synrob.perturb.errors import PluginError, UnknownComponentError
from synrob.perturb.hookspecs import hookimpl
from synrob.perturb.plugins import (
    DuplicateComponentError,
    PluginWarning,
    get_registry,
    register_plugin,
    unregister_plugin,
)

SYNROB = Path(sys.executable).with_name("synrob")
ROOT = Path(__file__).resolve().parents[1]

#: Component kind -> hook, with every layer installed (synrob-perturb and synrob-probe).
KINDS = {
    "perturber": "synrob_register_perturbers",
    "encoder": "synrob_register_encoders",
    "task": "synrob_register_tasks",
    "probe": "synrob_register_probes",
    "experiment": "synrob_register_experiments",
}


# --------------------------------------------------------------------------- fixtures


@pytest.fixture(autouse=True)
def _clean_plugin_state(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """No plugin env vars from the runner (CI runs strict); a fresh registry before and after."""
    monkeypatch.delenv("SYNROB_STRICT_PLUGINS", raising=False)
    monkeypatch.delenv("SYNROB_LOAD_PLUGINS", raising=False)
    plugins.reset()
    yield
    plugins.reset()


@pytest.fixture
def no_builtins(monkeypatch: pytest.MonkeyPatch) -> None:
    """Only third-party and in-process components: the mechanism without the built-in ones
    (the built-in plugins still add their hook specs, so every kind exists)."""
    monkeypatch.setattr(plugins, "BUILTIN_COMPONENTS", False)


@pytest.fixture
def in_process() -> Iterator[Callable[[object, str], None]]:
    """``add(plugin, name)`` registers an in-process plugin, unregistered at teardown."""
    names: list[str] = []

    def add(plugin: object, name: str) -> None:
        register_plugin(plugin, name)
        names.append(name)

    try:
        yield add
    finally:
        for name in names:
            unregister_plugin(name)


@pytest.fixture
def fake_dist(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Callable[..., Path]:
    """``fake_dist(dist, {ep_name: module}, {module: source})``: an installed distribution.

    Writes ``<dist>-0.1.dist-info/{METADATA,entry_points.txt}`` and the modules into a tmp dir
    put on ``sys.path``; the modules are dropped from ``sys.modules`` at teardown.
    """
    site = tmp_path / "site"
    site.mkdir()
    monkeypatch.syspath_prepend(str(site))
    modules: list[str] = []

    def make(dist: str, eps: dict[str, str], sources: dict[str, str]) -> Path:
        info = site / f"{dist.replace('-', '_')}-0.1.dist-info"
        info.mkdir()
        info.joinpath("METADATA").write_text(
            f"Metadata-Version: 2.1\nName: {dist}\nVersion: 0.1\n", encoding="utf-8"
        )
        lines = ["[synrob]", *(f"{k} = {v}" for k, v in eps.items())]
        info.joinpath("entry_points.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
        for module, source in sources.items():
            site.joinpath(f"{module}.py").write_text(inspect.cleandoc(source) + "\n", "utf-8")
            modules.append(module)
            monkeypatch.delitem(sys.modules, module, raising=False)
        importlib.invalidate_caches()
        return site

    yield make
    for module in modules:
        sys.modules.pop(module, None)


GOOD = '''
from synrob.perturb.hookspecs import hookimpl

class Good:
    name = "good-fake"
    version = "2.0"

@hookimpl
def synrob_register_perturbers():
    return [Good]
'''

BROKEN = '''
raise RuntimeError("boom")
'''

MISSPELLED = '''
from synrob.perturb.hookspecs import hookimpl

class Fake:
    name = "never-registered"

@hookimpl
def synrob_register_perturbrs():
    return [Fake]
'''


def _dummy(name: str) -> type:
    return type(f"Dummy_{name.replace('-', '_')}", (), {"name": name, "version": "9.9"})


def _plugin_with(hook: str, classes: list[type]) -> type:
    """A class usable as a plugin object: one hook implementation returning ``classes``."""
    return type("Plugin", (), {hook: staticmethod(hookimpl(lambda: list(classes)))})


def _build_recording() -> tuple[plugins.Registry, list[warnings.WarningMessage]]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        _, registry = plugins.build()
    return registry, [w for w in caught if issubclass(w.category, PluginWarning)]


# --------------------------------------------------------------------------- hooks, one by one


def _component_hooks(module: object) -> dict[str, str]:
    return {getattr(f, hookspecs.KIND_ATTRIBUTE): n for n, f in vars(module).items()
            if n.startswith("synrob_") and hasattr(f, hookspecs.KIND_ATTRIBUTE)}


def test_kinds_cover_every_hookspec() -> None:
    from synrob.probe import hookspecs as probe_hookspecs

    assert _component_hooks(hookspecs) == {"perturber": "synrob_register_perturbers"}
    assert {**_component_hooks(hookspecs), **_component_hooks(probe_hookspecs)} == KINDS
    assert plugins.kinds() == KINDS  # in declaration order: perturb's, then probe's
    assert list(plugins.kinds()) == list(KINDS)


# --------------------------------------------------------------------------- layering


def test_perturb_never_names_the_layers_above() -> None:
    """No module of the base layer names synrob.probe or synrob.cli (code, strings, docs)."""
    offenders = []
    for path in sorted((ROOT / "packages" / "perturb" / "src").rglob("*.py")):
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if any(name in line for name in ("synrob.probe", "synrob.cli", "synrob/probe",
                                             "synrob/cli")):
                offenders.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    assert offenders == []


def test_probe_registers_through_its_own_entry_point() -> None:
    (ep,) = [e for e in entry_points(group=plugins.ENTRY_POINT_GROUP)
             if e.dist is not None and e.dist.name == "synrob-probe"]
    assert ep.value == "synrob.probe.builtins"
    assert "synrob.probe" not in repr(plugins.DEFAULT_PLUGINS)
    info = get_registry().info("encoder", "transformer")
    assert (info.distribution, info.plugin) == ("synrob-probe", ep.name)


#: Run in a fresh interpreter as if only synrob-perturb were installed: synrob.probe and
#: synrob.cli cannot be imported and their distributions' entry points are gone.
ONLY_PERTURB = """
import importlib.abc, importlib.metadata as md, json, sys

class Absent(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.startswith(("synrob.probe", "synrob.cli")):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None

sys.meta_path.insert(0, Absent())
real = md.entry_points
def entry_points(**kw):
    eps = real(**kw)
    return md.EntryPoints(e for e in eps
                          if e.dist is None or e.dist.name not in ("synrob-probe", "synrob"))

from synrob.perturb import plugins
plugins.entry_points = entry_points
registry = plugins.get_registry()
print(json.dumps({"kinds": plugins.kinds(), "perturbers": registry.names("perturber"),
                  "modules": sorted(m for m in sys.modules if m.startswith("synrob."))}))
"""


def test_plugin_manager_with_only_synrob_perturb() -> None:
    env = {**os.environ, "SYNROB_STRICT_PLUGINS": "1"}
    env.pop("SYNROB_LOAD_PLUGINS", None)
    proc = subprocess.run([sys.executable, "-c", ONLY_PERTURB], env=env, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["kinds"] == {"perturber": "synrob_register_perturbers"}  # no probe kinds
    assert {"bshift", "coco", "copos", "flip", "jabberwocky", "shuffle", "somo"} <= set(
        out["perturbers"])
    assert "typo" in out["perturbers"]  # third-party perturber plugins still load
    assert not [m for m in out["modules"] if m.startswith(("synrob.probe", "synrob.cli"))]


def test_a_layer_adds_its_own_kind(no_builtins: None, in_process: Callable) -> None:
    """A plugin bringing a new component kind adds its hook specs, as synrob.probe does."""
    specs = type("Specs", (), {})

    @hookspecs.component_hookspec("widget")
    def synrob_register_widgets() -> list[type]:
        """Return widget classes."""

    specs.synrob_register_widgets = staticmethod(synrob_register_widgets)
    widget = _dummy("spanner")
    layer = type("Layer", (), {
        "synrob_add_hookspecs": staticmethod(
            hookimpl(lambda pluginmanager: pluginmanager.add_hookspecs(specs))),
        "synrob_register_widgets": staticmethod(hookimpl(lambda: [widget])),
    })
    in_process(layer, "widgets")
    assert get_registry().get("widget", "spanner") is widget
    assert list(plugins.kinds())[-1] == "widget"


#: Every hook, spelled out (tests/test_docs_hooks.py checks each hook is named by a test).
HOOK_CASES = [
    ("perturber", "synrob_register_perturbers"),
    ("encoder", "synrob_register_encoders"),
    ("task", "synrob_register_tasks"),
    ("probe", "synrob_register_probes"),
    ("experiment", "synrob_register_experiments"),
]


def test_hook_cases_are_all_kinds() -> None:
    assert dict(HOOK_CASES) == KINDS == plugins.kinds()


@pytest.mark.parametrize(("kind", "hook"), HOOK_CASES)
def test_each_hook_registers_its_kind(
    kind: str, hook: str, no_builtins: None, in_process: Callable
) -> None:
    """Each hook puts its classes under its own kind, by ``name``."""
    cls = _dummy(f"dummy-{kind}")
    in_process(_plugin_with(hook, [cls]), f"test-{kind}")
    registry = get_registry()
    assert registry.get(kind, f"dummy-{kind}") is cls
    info = registry.info(kind, f"dummy-{kind}")
    assert (info.kind, info.version, info.distribution, info.plugin) == (
        kind, "9.9", "local", f"test-{kind}")
    for other in KINDS:
        if other != kind:
            assert f"dummy-{kind}" not in registry.names(other)
    unregister_plugin(f"test-{kind}")
    assert f"dummy-{kind}" not in get_registry().names(kind)


def test_unmarked_hook_functions_count(no_builtins: None, in_process: Callable) -> None:
    cls = _dummy("unmarked")
    plugin = type("P", (), {"synrob_register_perturbers": staticmethod(lambda: [cls])})
    in_process(plugin, "unmarked")
    assert get_registry().get("perturber", "unmarked") is cls


def test_hook_returning_nothing_is_fine(no_builtins: None, in_process: Callable) -> None:
    plugin = type("P", (), {"synrob_register_tasks": staticmethod(hookimpl(lambda: None))})
    in_process(plugin, "empty")
    assert get_registry().names("task") == []


@pytest.mark.parametrize(
    ("returned", "message"),
    [
        (lambda: _dummy("bare"), "expected a list of classes"),
        (lambda: 42, "expected a list of classes"),
        (lambda: ["not a class"], "expected a class with a non-empty string attribute 'name'"),
        (lambda: [type("NoName", (), {})], "expected a class with a non-empty string"),
    ],
)
def test_bad_hook_results_are_errors(returned: Callable, message: str, no_builtins: None) -> None:
    plugin = type("P", (), {"synrob_register_perturbers": staticmethod(hookimpl(returned))})
    with pytest.raises(PluginError, match=message):
        register_plugin(plugin, "bad")
    assert all(n != "bad" for _, n in plugins._EXTRA)  # a failed registration leaves no trace
    assert "bare" not in get_registry().names("perturber")


# --------------------------------------------------------------------------- registry


def test_unknown_component_lists_what_exists(no_builtins: None, in_process: Callable) -> None:
    in_process(_plugin_with(KINDS["perturber"], [_dummy("alpha"), _dummy("beta")]), "ab")
    with pytest.raises(UnknownComponentError, match=r"unknown perturber 'gamma'.*alpha, beta"):
        plugins.get_component("perturber", "gamma")
    with pytest.raises(UnknownComponentError, match="unknown component kind 'widget'"):
        get_registry().get("widget", "alpha")


def test_register_plugin_twice_under_one_name(no_builtins: None, in_process: Callable) -> None:
    in_process(_plugin_with(KINDS["task"], [_dummy("t1")]), "twice")
    with pytest.raises(PluginError, match="'twice' is already registered"):
        register_plugin(_plugin_with(KINDS["task"], [_dummy("t2")]), "twice")


# --------------------------------------------------------------------------- duplicates


def test_duplicate_in_process_names_both(no_builtins: None, in_process: Callable) -> None:
    in_process(_plugin_with(KINDS["probe"], [_dummy("same")]), "first")
    with pytest.raises(DuplicateComponentError) as err:
        register_plugin(_plugin_with(KINDS["probe"], [_dummy("same")]), "second")
    assert str(err.value) == (
        "duplicate probe name 'same': registered by plugin 'first' (local) "
        "and by plugin 'second' (local)"
    )


def test_same_name_in_two_kinds_is_fine(no_builtins: None, in_process: Callable) -> None:
    in_process(_plugin_with(KINDS["encoder"], [_dummy("shared")]), "enc")
    in_process(_plugin_with(KINDS["probe"], [_dummy("shared")]), "prb")
    assert get_registry().get("encoder", "shared") is not get_registry().get("probe", "shared")


def test_duplicate_entry_points_name_both_distributions(
    no_builtins: None, fake_dist: Callable, cli: Callable
) -> None:
    fake_dist("synrob-good", {"good": "fake_good"}, {"fake_good": GOOD})
    fake_dist("synrob-copycat", {"copycat": "fake_copycat"}, {"fake_copycat": GOOD})
    message = ("duplicate perturber name 'good-fake': registered by plugin 'copycat' "
               "(synrob-copycat) and by plugin 'good' (synrob-good)")
    with pytest.raises(DuplicateComponentError) as err:
        plugins.build(strict=False)  # an error even when broken plugins only warn
    assert str(err.value) == message
    result = cli(["plugins"])
    assert result.exit_code == 1
    assert result.stderr == f"synrob: error: {message}\n"


# --------------------------------------------------------------------------- broken plugins


def test_broken_plugin_is_one_warning(no_builtins: None, fake_dist: Callable) -> None:
    fake_dist("synrob-broken", {"broken": "fake_broken"}, {"fake_broken": BROKEN})
    fake_dist("synrob-good", {"good": "fake_good"}, {"fake_good": GOOD})
    registry, caught = _build_recording()
    assert [str(w.message) for w in caught] == [
        "plugin 'broken' (synrob-broken) failed to load: RuntimeError: boom"]
    info = registry.info("perturber", "good-fake")  # the rest still loads
    assert (info.distribution, info.plugin, info.version) == ("synrob-good", "good", "2.0")


def test_broken_plugin_cli_keeps_working(no_builtins: None, fake_dist: Callable, cli) -> None:
    fake_dist("synrob-broken", {"broken": "fake_broken"}, {"fake_broken": BROKEN})
    fake_dist("synrob-good", {"good": "fake_good"}, {"fake_good": GOOD})
    with warnings.catch_warnings():
        warnings.simplefilter("always")
        result = cli(["plugins"])
    assert result.exit_code == 0
    assert result.stderr == (
        "synrob: warning: plugin 'broken' (synrob-broken) failed to load: RuntimeError: boom\n")
    assert any(line.split()[:2] == ["perturber", "good-fake"]
               and line.split()[3:] == ["synrob-good", "*"]
               for line in result.stdout.splitlines())


def test_broken_plugin_strict_is_an_error(
    no_builtins: None, fake_dist: Callable, cli: Callable, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake_dist("synrob-broken", {"broken": "fake_broken"}, {"fake_broken": BROKEN})
    monkeypatch.setenv("SYNROB_STRICT_PLUGINS", "1")
    with pytest.raises(PluginError, match=r"plugin 'broken' \(synrob-broken\) failed to load"):
        plugins.build()
    result = cli(["plugins"])
    assert result.exit_code == 1
    assert result.stderr == (
        "synrob: error: plugin 'broken' (synrob-broken) failed to load: RuntimeError: boom\n")
    assert result.stdout == ""


def test_missing_module_and_missing_hooks(no_builtins: None, fake_dist: Callable) -> None:
    fake_dist("synrob-ghost", {"ghost": "fake_ghost_missing"}, {})
    fake_dist("synrob-hookless", {"hookless": "fake_hookless"}, {"fake_hookless": "X = 1"})
    _, caught = _build_recording()
    assert sorted(str(w.message) for w in caught) == [
        "plugin 'ghost' (synrob-ghost) failed to load: ModuleNotFoundError: "
        "No module named 'fake_ghost_missing'",
        "plugin 'hookless' (synrob-hookless) implements no synrob hook",
    ]


def test_strict_mode_subprocess(fake_dist: Callable, tmp_path: Path) -> None:
    """The real console script, with the real built-ins: one line on stderr, exit code 1."""
    site = fake_dist("synrob-broken", {"broken": "fake_broken"}, {"fake_broken": BROKEN})
    env = {**os.environ, "PYTHONPATH": str(site), "SYNROB_STRICT_PLUGINS": "1"}
    env.pop("SYNROB_LOAD_PLUGINS", None)
    proc = subprocess.run([str(SYNROB), "plugins"], env=env, capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 1
    assert proc.stderr.splitlines() == [
        "synrob: error: plugin 'broken' (synrob-broken) failed to load: RuntimeError: boom"]
    env["SYNROB_STRICT_PLUGINS"] = "0"
    proc = subprocess.run([str(SYNROB), "plugins"], env=env, capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.splitlines() == [
        "synrob: warning: plugin 'broken' (synrob-broken) failed to load: RuntimeError: boom"]
    assert "typo" in proc.stdout


# --------------------------------------------------------------------------- misspelled hooks


@pytest.mark.parametrize("marked", [True, False])
def test_misspelled_hook_in_process(marked: bool, no_builtins: None) -> None:
    def synrob_register_perturbrs() -> list[type]:
        return [_dummy("never")]

    func = hookimpl(synrob_register_perturbrs) if marked else synrob_register_perturbrs
    plugin = type("P", (), {"synrob_register_perturbrs": staticmethod(func)})
    with pytest.raises(PluginError) as err:
        register_plugin(plugin, "typo-hook")
    assert str(err.value).startswith(
        "plugin 'typo-hook' (local) implements unknown hook 'synrob_register_perturbrs' "
        "(did you mean 'synrob_register_perturbers'?)"
    )
    assert "never" not in get_registry().names("perturber")


def test_misspelled_hook_entry_point(
    no_builtins: None, fake_dist: Callable, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake_dist("synrob-misspelt", {"misspelt": "fake_misspelt"}, {"fake_misspelt": MISSPELLED})
    registry, caught = _build_recording()
    assert len(caught) == 1
    message = str(caught[0].message)
    assert message.startswith("plugin 'misspelt' (synrob-misspelt) implements unknown hook "
                              "'synrob_register_perturbrs' (did you mean "
                              "'synrob_register_perturbers'?)")
    assert "never-registered" not in registry.names("perturber")
    monkeypatch.setenv("SYNROB_STRICT_PLUGINS", "1")
    with pytest.raises(PluginError, match="unknown hook 'synrob_register_perturbrs'"):
        plugins.build()


# --------------------------------------------------------------------------- SYNROB_LOAD_PLUGINS


def _third_party(registry: plugins.Registry) -> set[str]:
    return {c.distribution for c in registry.components()}


def test_load_plugins_restricts(
    no_builtins: None, fake_dist: Callable, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake_dist("synrob-broken", {"broken": "fake_broken"}, {"fake_broken": BROKEN})
    fake_dist("synrob-good", {"good": "fake_good"}, {"fake_good": GOOD})

    monkeypatch.setenv("SYNROB_LOAD_PLUGINS", "good")  # by entry-point name
    registry, caught = _build_recording()
    assert caught == [] and _third_party(registry) == {"synrob-good"}

    monkeypatch.setenv("SYNROB_LOAD_PLUGINS", " Synrob_Good , typo")  # distribution names too
    registry, caught = _build_recording()
    assert caught == [] and _third_party(registry) == {"synrob-good", "synrob-typo"}

    monkeypatch.setenv("SYNROB_LOAD_PLUGINS", "")  # empty: no entry point at all
    registry, caught = _build_recording()
    assert caught == [] and registry.components() == []

    monkeypatch.setenv("SYNROB_LOAD_PLUGINS", "good,nope")
    registry, caught = _build_recording()
    assert _third_party(registry) == {"synrob-good"}
    assert [str(w.message) for w in caught] == [
        "SYNROB_LOAD_PLUGINS names 'nope', but no installed plugin has that entry-point or "
        "distribution name"]


def test_load_plugins_never_skips_in_process(
    no_builtins: None, in_process: Callable, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SYNROB_LOAD_PLUGINS", "")
    in_process(_plugin_with(KINDS["perturber"], [_dummy("local-one")]), "local")
    assert get_registry().names("perturber") == ["local-one"]


# --------------------------------------------------------------------------- the real installation


def test_typo_entry_point_is_installed() -> None:
    (ep,) = entry_points(group=plugins.ENTRY_POINT_GROUP, name="typo")
    assert ep.value == "synrob_typo.plugin"
    assert ep.dist is not None and ep.dist.name == "synrob-typo"


def test_typo_found_through_its_entry_point() -> None:
    from synrob_typo.perturber import Typo

    info = get_registry().info("perturber", "typo")
    assert (info.cls, info.distribution, info.plugin) == (Typo, "synrob-typo", "typo")
    assert plugins.get_plugin_manager().get_plugin("typo") is importlib.import_module(
        "synrob_typo.plugin")


def test_typo_absent_without_its_entry_point(monkeypatch: pytest.MonkeyPatch) -> None:
    import synrob_typo.plugin  # noqa: F401 - importing the module alone registers nothing

    monkeypatch.setenv("SYNROB_LOAD_PLUGINS", "")
    registry = get_registry()
    assert "typo" not in registry.names("perturber")
    assert "bshift" in registry.names("perturber")  # built-ins always load
    with pytest.raises(UnknownComponentError, match="unknown perturber 'typo'"):
        plugins.get_component("perturber", "typo")


def test_synrob_plugins_lists_builtins_and_typo(cli: Callable) -> None:
    result = cli(["plugins"])
    assert result.exit_code == 0, result.stderr
    rows = [line.split() for line in result.stdout.splitlines()]
    assert rows[0] == ["KIND", "NAME", "VERSION", "DISTRIBUTION", "LANGUAGES"]
    assert ["perturber", "typo", "0.1.0", "synrob-typo", "*"] in rows
    bshift = next(r for r in rows if r[1] == "bshift")
    assert (bshift[0], bshift[3], bshift[4]) == ("perturber", "synrob-perturb", "*")
    assert next(r for r in rows if r[1] == "copos")[4] == "en"
    assert next(r for r in rows if r[0] == "encoder")[4] == "-"

    result = cli(["plugins", "--json", "--kind", "perturber"])
    assert result.exit_code == 0
    listed = json.loads(result.stdout)
    assert {"kind": "perturber", "name": "typo", "version": "0.1.0",
            "distribution": "synrob-typo", "plugin": "typo",
            "languages": ["*"]} in listed
    assert {r["kind"] for r in listed} == {"perturber"}


def test_typo_through_synrob_perturb(cli: Callable, sample_dev: Path) -> None:
    """The example plugin is used exactly like a built-in perturber."""
    from synrob.perturb.corpus import read_conllu

    args = ["perturb", "-k", "typo", "-p", "rate=0.5", "--seed", "3", "--format", "text",
            str(sample_dev)]
    first, second = cli(args), cli(args)
    assert first.exit_code == 0, first.stderr
    assert first.stdout == second.stdout  # seeded
    original = [s.text for s in read_conllu(sample_dev)]
    noisy = first.stdout.splitlines()
    assert len(noisy) == len(original)
    assert sum(a != b for a, b in zip(original, noisy, strict=True)) > len(original) // 2
