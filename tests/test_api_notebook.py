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
    from synrob.perturb.io.atomic import write_text_atomic
    from synrob.probe.causal.erasure import Eraser, save_eraser

    old = os.umask(0o022)
    try:
        u = torch.eye(4)[:, :1]
        eraser = Eraser("random", u, u.T.clone(), torch.zeros(4), torch.zeros(2, 4), ["a", "b"])
        saved = save_eraser(tmp_path / "e.safetensors", eraser)
        text = write_text_atomic(tmp_path / "out.txt", "x\n")
    finally:
        os.umask(old)
    assert _mode(saved) == _mode(text) == 0o644


def test_completion_offers_the_documented_names_only() -> None:
    """dir() of either package is its __all__, also after its internals were imported (as
    any call imports them); IPython's completer (with and without jedi) offers the same."""
    import synrob.perturb as sp
    import synrob.perturb.io.atomic  # noqa: F401 - an internal module, now an attribute
    import synrob.probe as pr
    import synrob.probe.api  # noqa: F401

    for mod in (sp, pr):
        assert dir(mod) == sorted(mod.__all__)
    completer = pytest.importorskip("IPython.core.completer")
    from IPython.core.interactiveshell import InteractiveShell

    shell = InteractiveShell.instance()
    try:
        shell.run_cell("import synrob.perturb as sp, synrob.probe as pr")
        for jedi in (True, False):
            shell.Completer.use_jedi = jedi
            for name, mod in (("sp", sp), ("pr", pr)):
                with completer.provisionalcompleter():
                    offered = {c.text.lstrip(".") for c in
                               shell.Completer.completions(f"{name}.", len(name) + 1)}
                assert offered == {n for n in mod.__all__ if not n.startswith("_")}, jedi
    finally:
        InteractiveShell.clear_instance()


def test_every_package_is_typed_and_its_public_signatures_resolve() -> None:
    import inspect
    import typing

    import synrob
    import synrob.cli
    import synrob.perturb as sp
    import synrob.probe as pr

    for mod in (synrob, synrob.cli, sp, pr):
        assert (Path(mod.__file__).parent / "py.typed").is_file(), mod.__name__
    for mod in (sp, pr):
        for name in mod.__all__:
            obj = getattr(mod, name)
            if inspect.isfunction(obj) or inspect.isclass(obj) and hasattr(obj, "__annotations__"):
                assert typing.get_type_hints(obj) is not None, name
    hints = typing.get_type_hints(pr.encode)
    assert hints["return"] is pr.RepresentationSet
    assert typing.get_type_hints(pr.ProbeResult.best.fget)["return"].__name__ == "LayerResult"
    for cls in (pr.ProbeResult, pr.ExperimentResults, pr.Comparison):  # matplotlib when read
        assert typing.get_type_hints(cls.plot)["return"] is pr.Figure, cls.__name__


def test_import_synrob_gives_its_version_and_every_layer() -> None:
    """``import synrob`` alone: its version, and synrob.perturb/probe/cli imported on first
    use (not before: importing synrob stays light)."""
    code = ("import sys, synrob; from importlib.metadata import version; "
            "light = [m for m in sys.modules if m.startswith('synrob.')]; "
            "print(synrob.__version__ == version('synrob'), light, "
            "synrob.perturb.read_conllu.__name__, synrob.probe.__name__, "
            "[n for n in dir(synrob) if n in ('perturb', 'probe', 'cli', '__version__')])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, cwd=ROOT.parent)
    assert out.stdout.split("\n")[0] == (
        "True [] read_conllu synrob.probe ['__version__', 'cli', 'perturb', 'probe']")


def test_sentences_and_registries_read_well() -> None:
    import json

    import synrob.perturb as sp
    import synrob.probe as pr

    sentence = sp.read_conllu("sample:en_ewt:dev")[0]
    assert repr(sentence) == ("<Sentence weblog-blogspot.com_nominations_20041117172713_ENG_"
                              "20041117_172713-0001 (7 words): 'From the AP comes this story :'>")
    view = sentence._repr_html_()
    assert "From the AP comes this story :" in view and "<td>comes</td>" in view
    for listed, name in ((sp.list_perturbers(), "jabberwocky"),
                         (pr.list_experiments(), "jabberwocky")):
        assert isinstance(listed, list) and json.loads(json.dumps(listed)) == listed[:]
        assert name in {d["name"] for d in listed}  # the dicts of before
        assert f"\n  {name} " in repr(listed) and "<table>" in listed._repr_html_()
        assert len(listed.where(name=name)) == 1
        assert listed.to_pandas().shape[0] == len(listed)


def test_an_encoding_shows_what_it_holds() -> None:
    import synrob.probe as pr

    rep = pr.encode("sample:en_ewt:dev", "glove-6b-50d", progress=False)
    assert isinstance(rep, pr.RepresentationSet) and "RepresentationSet" in pr.__all__
    assert repr(rep).startswith("RepresentationSet('glove-6b-50d', layers=[0], dim=50")
    summary = rep.summary()
    assert (summary["sentences"], summary["words"], summary["dim"]) == (250, 5030, 50)
    assert "<td>glove-6b-50d</td>" in rep._repr_html_()


def test_probe_rows_keep_the_given_spec_name_baselines_as_experiments_do_and_drop_without_a_bootstrap(  # noqa: E501
        tmp_path: Path) -> None:
    import synrob.perturb as sp
    import synrob.probe as pr
    from synrob.perturb.io.data import sample_path
    from synrob.probe.experiments.jabberwocky.stats import BASELINES

    sp.perturb("sample:en_ewt:test", "jabberwocky", seed=0).write_conllu(tmp_path / "jab.conllu")
    runs = [pr.probe(["sample:en_ewt:test", tmp_path / "jab.conllu"], encoder="glove-6b-50d",
                     layer=0, task="distance", train="sample:en_ewt:train",
                     dev="sample:en_ewt:dev", params={"epochs": 1, "rank": 16},
                     bootstrap=n, progress=False) for n in (0, 20)]
    df = runs[0].to_pandas()
    clean = df[(df.test == "sample:en_ewt:test") & (df.metric == "uuas") & (df.role == "model")]
    assert len(clean) == 1 and clean.test_path.iloc[0] == str(sample_path("test"))
    model = {r["test"]: r["value"] for r in runs[0].rows
             if r["role"] == "model" and r["split"] == "test" and r["metric"] == "uuas"}
    drop = [r for r in runs[0].rows if r["role"] == "drop" and r["metric"] == "uuas"]
    assert len(drop) == 1 and drop[0]["reference"] == "sample:en_ewt:test"
    assert drop[0]["pairs"] == 250 and "ci_low" not in drop[0] and "p_value" not in drop[0]
    assert drop[0]["value"] == pytest.approx(model["sample:en_ewt:test"]
                                             - model[str(tmp_path / "jab.conllu")])
    booted = [r for r in runs[1].rows if r["role"] == "drop" and r["metric"] == "uuas"][0]
    assert booted["value"] == drop[0]["value"] and booted["ci_low"] <= booted["value"]
    baselines = {r["role"] for r in runs[0].rows if r["layer"] is None}
    assert baselines == {"path", "majority"} <= {role for role, _ in BASELINES}


def test_the_docs_api_tables_name_the_arguments_the_code_takes() -> None:
    """Every ``name(arg, kw=, **params)`` in docs/python.md's API tables is an exported
    function whose signature has those parameters; every exported name is on the page."""
    import inspect
    import re

    import synrob.perturb as sp
    import synrob.probe as pr

    page = (ROOT / "docs" / "python.md").read_text(encoding="utf-8")
    cells = [line.split("|")[1] for line in page.splitlines()
             if line.startswith("| `") and line.count("|") >= 3]
    calls = re.findall(r"`(\w+)\(([^)`]*)\)", "\n".join(cells))
    assert len(calls) >= 15
    for name, args in calls:
        fn = getattr(sp, name, None) or getattr(pr, name)
        params = inspect.signature(fn).parameters
        for raw in filter(None, (a.strip() for a in args.split(","))):
            arg = raw.lstrip("*").rstrip("=")
            assert arg in params, f"docs/python.md: {name}({raw}): {name} has {list(params)}"
    for mod in (sp, pr):
        missing = [n for n in mod.__all__ if n != "__version__"
                   and not re.search(rf"`[^`\n]*\b{n}\b[^`\n]*`", page)]
        assert not missing, f"undocumented in docs/python.md: {missing}"


def test_score_and_erase_record_the_specs_given_with_their_paths_beside(
        tmp_path: Path, ewt_train: Path) -> None:
    """``score_pairs`` and ``erase`` summaries name the inputs as given (``sample:...``), the
    resolved file beside each (``*_path``), as probe rows do."""
    import synrob.probe as pr

    sys.path.insert(0, str(ROOT / "tests" / "probe"))
    try:
        from tiny_llama import build_llama, ewt_texts
    finally:
        sys.path.pop(0)
    lm = build_llama(tmp_path / "lm", ewt_texts(ewt_train, 200), blocks=2)
    spec = "sample:en_ewt:test"
    score = pr.score_pairs(spec, spec, lm=str(lm), bootstrap=0, limit=3, progress=False)
    assert (score.summary["original"], score.summary["perturbed"]) == (spec, spec)
    assert Path(score.summary["original_path"]).is_file()
    erased = pr.erase("sample:en_ewt:train", "sample:en_ewt:dev", spec,
                      encoder="glove-6b-50d", layer=0, task="pos", bootstrap=0,
                      device="cpu", progress=False)
    assert erased.summary["test"] == spec and erased.summary["train"] == "sample:en_ewt:train"
    assert Path(erased.summary["test_path"]).is_file()
