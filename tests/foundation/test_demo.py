"""The README's main job: ``synrob demo`` (Jabberwocky probing on the bundled EWT sample).

The demo preset itself (MiniLM layers 2-4 on the whole sample) takes minutes from a cold cache;
here the preset is narrowed to slices of the sample so the command's behaviour is tested fast.
"""

from __future__ import annotations

import json

import pytest
from synrob.probe.experiments.jabberwocky.experiment import JabberwockyExperiment


def test_demo_preset_is_the_paper_setup_on_the_sample() -> None:
    preset = JabberwockyExperiment.presets["demo"]
    assert preset["train"] == "sample:en_ewt:train" and preset["test"] == "sample:en_ewt:test"
    exp = JabberwockyExperiment.from_preset("demo")
    assert exp.options["model"] == "minilm" and exp.options["vectors"] == "glove-6b-50d"
    assert set(exp.list("baselines")) == {"path", "majority", "layer0", "fast+pos"}
    assert set(exp.list("probes")) == {"structural", "perceptron"}
    assert len(exp.list("layers")) >= 2 and exp.options["draws"] >= 1


@pytest.mark.slow
def test_demo_runs_prints_the_table_and_resumes(cli, tmp_path, monkeypatch, sample_slice) -> None:
    small = {**JabberwockyExperiment.presets["demo"],
             "train": sample_slice("train", 120, tmp_path), "dev": sample_slice("dev", 30, tmp_path),
             "test": sample_slice("test", 40, tmp_path), "layers": "2,3",
             "probes": "structural", "epochs": 2, "rank": 16}
    monkeypatch.setitem(JabberwockyExperiment.presets, "demo", small)
    out = tmp_path / "demo"
    res = cli(["demo", "--out", out, "--json"])
    assert res.exit_code == 0, res.stderr
    summary = json.loads(res.stdout)
    assert summary["executed"] > 0 and summary["best_layers"]["structural"] in (2, 3)
    labels = {e["label"] for e in summary["entries"]}
    assert {"layer 0", "fast+pos", "path", "majority"} <= labels
    assert (out / "report.md").is_file() and (out / "jabberwocky-bars.png").is_file()
    table = cli(["demo", "--out", out])
    assert table.exit_code == 0, table.stderr
    assert "| structural | minilm L" in table.stdout and "lead lost" in table.stdout
    assert "0 runs executed" in table.stderr and "jabberwocky-bars.png" in table.stderr
