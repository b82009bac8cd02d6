"""The layer curve of ``synrob probe --layer all``: rows from the JSON, the Markdown table, the
plot, and ``--plot`` end to end on MiniLM (real model, EWT excerpt)."""

from __future__ import annotations

import json
from itertools import islice

import pytest
from synrob.perturb.corpus import read_conllu, write_conllu
from synrob.probe.metrics.layer_curve import curve_rows, markdown_curve, plot_layer_curve

LAYERS = {
    "1": {"results": {"t.conllu": {
        "acc": 0.9, "acc_ci95": [0.88, 0.92],
        "control": {"acc": 0.6, "acc_ci95": [0.55, 0.65]},
        "selectivity": {"acc": 0.3, "acc_ci95": [0.25, 0.35]},
        "mdl": {"compression": 12.5}, "control_mdl": {"compression": 2.0}}}},
    "0": {"results": {"t.conllu": {"acc": 0.8}}},
}


def test_rows_are_sorted_by_layer_and_missing_parts_are_none() -> None:
    rows = curve_rows(LAYERS, "acc")
    assert [r["layer"] for r in rows] == [0, 1]
    assert rows[0] == {"layer": 0, "value": 0.8, "ci": None, "control": None,
                       "control_ci": None, "selectivity": None, "selectivity_ci": None,
                       "compression": None, "control_compression": None}
    assert rows[1]["selectivity"] == 0.3 and rows[1]["control_ci"] == [0.55, 0.65]
    assert rows[1]["compression"] == 12.5 and rows[1]["control_compression"] == 2.0


def test_markdown_table_shows_intervals_and_dashes() -> None:
    table = markdown_curve(curve_rows(LAYERS, "acc"), "acc").splitlines()
    assert table[0].startswith("| layer | acc | control acc | selectivity |")
    assert table[2] == "| 0 | 0.800 | — | — | — | — |"
    assert table[3] == ("| 1 | 0.900 [0.880, 0.920] | 0.600 [0.550, 0.650] | "
                        "0.300 [0.250, 0.350] | 12.50 | 2.00 |")


def test_plot_writes_a_png(tmp_path) -> None:
    out = plot_layer_curve(curve_rows(LAYERS, "acc"), tmp_path / "c.png", metric="acc")
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and out.stat().st_size > 10_000


def test_plot_needs_every_layer(cli, tmp_path) -> None:
    r = cli(["probe", "--encoder", "glove-6b-50d", "--layer", "0", "--task", "pos",
             "--train", "sample:en_ewt:train", "--test", "sample:en_ewt:test",
             "--plot", str(tmp_path / "c.png")])
    assert r.exit_code != 0 and "--plot draws the layer curve" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and not (tmp_path / "c.png").exists()


@pytest.mark.slow
@pytest.mark.model
def test_minilm_layer_curve_with_control_and_mdl(cli, tmp_path, ewt_train, ewt_dev,
                                                  ewt_test) -> None:
    files = {}
    for name, src, n in (("train", ewt_train, 200), ("dev", ewt_dev, 60), ("test", ewt_test, 60)):
        files[name] = tmp_path / f"{name}.conllu"
        write_conllu(islice(read_conllu(src), n), files[name])
    png = tmp_path / "curve.png"
    r = cli(["probe", "--encoder", "minilm", "--layer", "all", "--task", "pos",
             "--train", files["train"], "--dev", files["dev"], "--test", files["test"],
             "-p", "epochs=2", "--control", "--mdl", "--bootstrap", "50", "--device", "cpu",
             "--json", "--plot", str(png)])
    assert r.exit_code == 0, r.stderr
    rows = curve_rows(json.loads(r.stdout)["layers"], "acc")
    assert [x["layer"] for x in rows] == list(range(7))
    for x in rows:
        assert x["selectivity"] == pytest.approx(x["value"] - x["control"])
        assert x["ci"][0] <= x["value"] <= x["ci"][1]
        assert x["compression"] > 0 and x["control_compression"] > 0
    assert png.stat().st_size > 10_000 and f"wrote {png}" in r.stderr
