"""The public Python API (docs/python.md): pinned names, light imports, one path with the CLI,
results as tables."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

PERTURB_API = ["__version__", "read_conllu", "write_conllu", "list_perturbers", "make_perturber",
               "perturb", "PerturbResult", "Sentence", "Perturber", "PerturbRecord", "chrf2",
               "levenshtein", "compression_rates", "SynrobError", "ResultTable"]
PROBE_API = ["__version__", "encode", "probe", "erase", "EraseResult", "score_pairs", "run_experiment",
             "RepresentationSet", "list_experiments", "make_experiment", "ProbeResult", "ScoreResult", "load_results",
             "ExperimentResults", "compare", "Comparison", "write_comparison", "Progress",
             "ProgressOption", "StageCallback", "RunCallback", "Figure", "card", "Card",
             "load_card", "board", "Board"]


def test_exported_names_are_pinned() -> None:
    """The public API is exactly these names; each resolves; anything else is private."""
    import synrob.perturb as sp
    import synrob.probe as pr

    assert sp.__all__ == PERTURB_API
    assert pr.__all__ == PROBE_API
    for mod, names in ((sp, PERTURB_API), (pr, PROBE_API)):
        for name in names:
            assert getattr(mod, name) is not None, name
            assert name in dir(mod)
    with pytest.raises(AttributeError):
        sp.no_such_name  # noqa: B018
    assert callable(pr.compare) and not isinstance(pr.compare, type(sys))  # not the module


@pytest.mark.parametrize("module", ["synrob.perturb", "synrob.probe"])
def test_import_is_light(module: str) -> None:
    """Importing either package (and touching a lazy name's module) imports no torch."""
    code = (f"import sys, {module} as m; m.__all__; "
            "print(sorted(k for k in ('torch', 'transformers', 'pandas', 'matplotlib') "
            "if k in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "[]"


def test_perturb_matches_the_cli_byte_for_byte(cli, tmp_path: Path) -> None:
    """api.perturb + write_conllu == synrob perturb (same seed), for a perturber whose
    reference defaults to the input (somo) and one without (jabberwocky)."""
    import synrob.perturb as sp

    for kind in ("jabberwocky", "somo"):
        r = cli(["perturb", "--kind", kind, "--seed", "3", "sample:en_ewt:dev"])
        assert r.exit_code == 0, r.stderr
        res = sp.perturb("sample:en_ewt:dev", kind, seed=3)
        res.write_conllu(tmp_path / f"{kind}.conllu")
        assert (tmp_path / f"{kind}.conllu").read_text(encoding="utf-8") == r.stdout
        assert len(res) == len(res.rows) == len(sp.read_conllu("sample:en_ewt:dev"))
        assert {"source", "chrf2", "lev", "original", "perturbed", "seed"} <= set(res.columns)


def test_perturb_from_sentences_and_a_built_perturber() -> None:
    import synrob.perturb as sp

    sents = sp.read_conllu("sample:en_ewt:dev")[:20]
    a = sp.perturb(sents, "bshift", seed=1)
    b = sp.perturb(sents, sp.make_perturber("bshift"), seed=1)
    assert [x.perturbed for x in a.records] == [x.perturbed for x in b.records]
    with pytest.raises(sp.SynrobError):
        sp.perturb(sents, sp.make_perturber("bshift"), rate=0.5)
    with pytest.raises(sp.SynrobError, match="no_such"):
        sp.make_perturber("no_such")
    kinds = {d["kind"] for d in sp.list_perturbers()}
    assert {"jabberwocky", "copos", "agreement", "bshift"} <= kinds


def test_tables_to_pandas_and_html(monkeypatch: pytest.MonkeyPatch) -> None:
    import synrob.perturb as sp
    from synrob.perturb.io.table import ResultTable

    t = ResultTable()
    t.rows = [{"metric": "uuas", "value": 0.5, "note": "<script>x</script>"},
              {"metric": "dspr", "value": 0.25, "ci_low": 0.2}]
    assert t.columns == ["metric", "value", "note", "ci_low"]
    html = t._repr_html_()
    assert "<script>" not in html and "&lt;script&gt;" in html and "<table>" in html
    pd = pytest.importorskip("pandas")
    df = t.to_pandas()
    assert list(df.columns) == t.columns and df["value"].tolist() == [0.5, 0.25]
    assert isinstance(df, pd.DataFrame)
    monkeypatch.setitem(sys.modules, "pandas", None)
    with pytest.raises(sp.SynrobError, match="pip install"):
        t.to_pandas()


@pytest.fixture(scope="module")
def slices(ewt_slices):
    return ewt_slices


@pytest.mark.slow
@pytest.mark.model
def test_probe_api_is_the_cli(cli, slices) -> None:
    """api.probe(...).as_json() == synrob probe --json with the same options, and its rows
    hold every number with intervals (model, control, selectivity, baselines)."""
    import synrob.probe as pr

    opts = ["-p", "rank=32", "-p", "epochs=3"]
    r = cli(["probe", "--encoder", "minilm", "--layer", "3", "--task", "distance", "--train",
             str(slices["train"]), "--dev", str(slices["dev"]), "--test", str(slices["test"]),
             *opts, "--control", "--bootstrap", "50", "--device", "cpu", "--json"])
    assert r.exit_code == 0, r.stderr
    res = pr.probe(str(slices["test"]), encoder="minilm", layer=3, task="distance",
                   train=str(slices["train"]), dev=str(slices["dev"]),
                   params={"rank": "32", "epochs": "3"}, control=True, bootstrap=50,
                   device="cpu")
    cli_json = json.loads(r.stdout)
    api_json = json.loads(json.dumps(res.as_json()))
    cli_json.pop("train_seconds"), api_json.pop("train_seconds")
    assert api_json == cli_json
    test = str(slices["test"])
    model = [x for x in res.rows if x["role"] == "model" and x["split"] == "test"
             and x["metric"] == "uuas"]
    assert len(model) == 1 and model[0]["value"] == cli_json["results"][test]["uuas"]
    assert [model[0]["ci_low"], model[0]["ci_high"]] == cli_json["results"][test]["uuas_ci95"]
    roles = {x["role"] for x in res.rows}
    assert {"model", "control", "selectivity", "path", "majority"} <= roles
    base = [x for x in res.rows if x["role"] == "path" and x["encoder"] == "path"
            and x["metric"] == "uuas"]
    assert base[0]["value"] == cli_json["baselines"]["path"][test]["uuas"]
    assert all(isinstance(x["value"], float) for x in res.rows)
