"""synrob compare / synrob.probe.compare: joining results directories of one experiment."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest
import synrob.probe as pr
from synrob.perturb.errors import ParameterError, ResourceError
from synrob.probe.experiments.runner import run_experiment

from .test_experiments_framework import ChangeRate, TrainsHalf


class Layered(ChangeRate):
    """A toy layer curve: one run per layer, rows with layer, split and role like the papers'."""

    name = "test-layered"

    def plan(self, ctx):
        from synrob.probe.experiments.base import RunSpec

        return [RunSpec({"layer": layer, "tests": {"clean": {"sha256": "a" * 64}}}, f"L{layer}")
                for layer in (1, 2, 3)]

    def execute(self, spec, ctx):
        layer = spec.key["layer"]
        value = 0.5 + 0.1 * layer - 0.01 * ctx.seed
        return [{"layer": layer, "role": "model", "split": "test", "probe": "structural",
                 "metric": "uuas", "value": value, "ci_low": value - 0.02,
                 "ci_high": value + 0.02},
                {"layer": layer, "role": "model", "split": "test", "probe": "structural",
                 "metric": "sentences", "value": 80.0}]

    def report(self, rows, ctx):
        from synrob.probe.experiments.report import write_markdown

        return [write_markdown(ctx.outdir / "report.md", "# layered", ["a toy layer curve"])]


def _fake_content_keys(out: Path, sha: str) -> None:
    """Give every run of ``out`` a clean test file with content ``sha`` (as real runs have)."""
    data = json.loads((out / "results.json").read_text())
    for run in data["runs"]:
        run["content_key"]["tests"] = {"clean": {"sha256": sha}}
    (out / "results.json").write_text(json.dumps(data))


def seed_dirs(experiment: Any, tmp_path: Path, prefix: str = "seed",
              seeds: Iterable[int] = (0, 1)) -> list[Path]:
    """``experiment`` run at each seed into ``tmp_path/{prefix}{seed}``, every run's clean
    test file given one content (as real runs of one test file have)."""
    dirs = []
    for seed in seeds:
        out = tmp_path / f"{prefix}{seed}"
        run_experiment(experiment, out, seed=seed)
        _fake_content_keys(out, "a" * 64)
        dirs.append(out)
    return dirs


@pytest.fixture
def two_seeds(tmp_path: Path) -> list[Path]:
    return seed_dirs(Layered(), tmp_path)


def test_compare_joins_rows_and_draws_one_figure_per_metric(two_seeds, tmp_path: Path) -> None:
    cmp = pr.compare(two_seeds)
    a, b = (pr.load_results(d) for d in two_seeds)
    assert len(cmp.rows) == len(a.rows) + len(b.rows) == 12
    assert {r["source"] for r in cmp.rows} == {"en seed 0", "en seed 1"}
    assert cmp.metrics() == ["uuas"]  # counts are not plotted
    files = pr.write_comparison(cmp, tmp_path / "cmp")
    names = sorted(f.name for f in files)
    assert names == ["compare-uuas.png", "report.html", "results.csv", "results.json"]
    page = (tmp_path / "cmp" / "report.html").read_text(encoding="utf-8")
    assert "data:image/png;base64," in page and "http://" not in page and "https://" not in page
    joined = json.loads((tmp_path / "cmp" / "results.json").read_text())
    assert [s["seed"] for s in joined["sources"]] == [0, 1] and len(joined["rows"]) == 12
    df = pytest.importorskip("pandas") and cmp.to_pandas()
    assert set(df["source"]) == {"en seed 0", "en seed 1"}


def test_compare_refuses_other_experiments_and_other_test_data(two_seeds, tmp_path) -> None:
    other = tmp_path / "other"
    run_experiment(TrainsHalf(), other)
    with pytest.raises(ParameterError, match="different experiments"):
        pr.compare([two_seeds[0], other])
    changed = tmp_path / "changed"
    shutil.copytree(two_seeds[1], changed)
    _fake_content_keys(changed, "b" * 64)
    with pytest.raises(ParameterError, match="different en data"):
        pr.compare([two_seeds[0], changed])
    with pytest.raises(ResourceError, match="no results.json"):
        pr.compare([two_seeds[0], tmp_path / "missing"])
    with pytest.raises(ParameterError, match="at least two"):
        pr.compare([two_seeds[0]])


def test_cli_compare(cli, two_seeds, tmp_path: Path) -> None:
    out = tmp_path / "cmp"
    r = cli(["compare", *map(str, two_seeds), "-o", str(out)])
    assert r.exit_code == 0, r.stderr
    assert r.stdout.strip() == str(out / "report.html")
    assert "compared 2 test-layered runs: 12 rows, 1 metrics plotted" in r.stderr
    r = cli(["compare", str(two_seeds[0]), str(tmp_path / "missing"), "-o", str(out)])
    assert r.exit_code == 1 and r.stderr.count("\n") == 1 and "no results.json" in r.stderr
