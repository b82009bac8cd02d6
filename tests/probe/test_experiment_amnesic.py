"""The ``amnesic`` experiment (issue 28): parameters, the report's tables, and a real CLI run
of the sample preset (SmolLM2 on the bundled EWT sample) checked end to end: LEACE's guarantee
on the erased property, both random controls (rank-matched; rank- and displacement-matched)
beside it everywhere, the damage as an NLL increase (positive = worse), and intervals on every
figure."""

from __future__ import annotations

import json
import math

import pytest
from synrob.perturb.errors import ParameterError
from synrob.probe.experiments.amnesic.experiment import AmnesicExperiment
from synrob.probe.experiments.amnesic.report import (
    behaviour_table,
    damage_table,
    displacement_table,
    layers_figure,
    plot_layers,
    probe_table,
)


def test_parameters_and_presets() -> None:
    exp = AmnesicExperiment.from_preset("sample")
    assert exp.layers() == [12] and exp.options["task"] == "feats"
    assert AmnesicExperiment().layers() == [3, 6, 9, 12, 15, 18, 21, 24, 27]
    assert "erasure" in AmnesicExperiment.summary
    with pytest.raises(ParameterError):
        AmnesicExperiment(layers="a,b").layers()
    with pytest.raises(ParameterError):
        AmnesicExperiment(layers="").plan(None)  # type: ignore[arg-type]


def _rows() -> list[dict]:
    base = {"model": "m", "layer": 3, "contrast": "", "ci_low": 0.1, "ci_high": 0.9}
    rows = [{**base, "section": "probe", "metric": "majority", "condition": "majority",
             "task": "feats:Number", "erased_task": True, "value": 0.7,
             "majority_label": "Sing"}]
    for cond, v in (("before", 0.95), ("leace", 0.7), ("random", 0.94),
                    ("random_matched", 0.93)):
        rows.append({**base, "section": "probe", "metric": "accuracy", "condition": cond,
                     "task": "feats:Number", "erased_task": True, "value": v})
    rows.append({**base, "section": "probe", "metric": "accuracy", "condition": "",
                 "contrast": "drop_leace", "task": "feats:Number", "erased_task": True,
                 "value": 0.25, "p_value": 0.0})
    for cond, v in (("clean", 0.9), ("erased", 0.6), ("random", 0.89),
                    ("random_matched", 0.85)):
        rows.append({**base, "section": "behaviour", "metric": "agreement_accuracy",
                     "condition": cond, "value": v, "pairs": 40})
    rows.append({**base, "section": "behaviour", "metric": "agreement_accuracy",
                 "condition": "", "contrast": "erased-clean", "value": -0.3, "p_value": 0.001})
    rows.append({**base, "section": "damage", "metric": "nll_per_token", "condition": "clean",
                 "value": 3.2})
    for contrast, v in (("erased-clean", 0.066), ("random-clean", 0.004),
                        ("random_matched-clean", 0.021), ("erased-random_matched", 0.045)):
        rows.append({**base, "section": "damage", "metric": "nll_per_token", "condition": "",
                     "contrast": contrast, "value": v, "p_value": 0.001})
    for split, values in (("train", (5.2, 2.0, 5.2)), ("test", (5.1, 2.1, 5.0))):
        for cond, v in zip(("leace", "random", "random_matched"), values, strict=True):
            rows.append({**base, "section": "probe", "metric": "displacement",
                         "condition": cond, "split": split, "task": "feats:Number", "value": v})
    return rows


def test_tables_hold_the_rows_numbers() -> None:
    table = probe_table(_rows())
    assert "majority (train label)" in table and "random matched" in table
    assert "| 3 | feats:Number | 0.700 (Sing) | 0.950 | 0.700 | 0.940 | 0.930 |" in table
    assert "0.250 [0.100, 0.900] p <0.001" in table
    beh = behaviour_table(_rows())
    assert "| 3 | 40 | 0.900 [0.100, 0.900] | 0.600 [0.100, 0.900] |" in beh
    assert "0.850 [0.100, 0.900] |" in beh and "random matched inside" in beh
    assert "-0.300 [0.100, 0.900] p 0.001" in beh
    damage = damage_table(_rows())
    assert "NLL increase LEACE (nats/token)" in damage and "damage" not in damage.lower()
    assert "| 3 | 3.200 | 0.066 [0.100, 0.900] p 0.001 |" in damage
    assert "0.045 [0.100, 0.900] p 0.001 |" in damage  # LEACE - random matched
    disp = displacement_table(_rows())
    assert "| 3 | train | 5.200 | 2.000 | 5.200 |" in disp
    assert "| 3 | test | 5.100 | 2.100 | 5.000 |" in disp


def test_figure_has_the_damage_panel(tmp_path) -> None:
    fig = layers_figure(_rows(), "m")
    titles = [ax.get_title() for ax in fig.axes]
    labels = [t.get_text() for ax in fig.axes if ax.get_legend()
              for t in ax.get_legend().get_texts()]
    assert "NLL increase over clean (nats/token; > 0: worse)" in titles
    assert {"random matched", "random matched inside"} <= set(labels)
    assert "majority (train label) (= LEACE at every layer)" in labels  # both 0.7
    path = plot_layers(_rows(), tmp_path / "a.png", "m")
    assert path.stat().st_size > 10_000


def test_figure_ticks_are_the_layers_and_equal_lines_stay_visible() -> None:
    """Integer ticks at the layers (the docs' figure had 7.5, 12.5, ...), and LEACE, equal to
    the majority line at every layer, drawn beside it with another marker, not hidden."""
    rows = [{**r, "layer": layer} for layer in (6, 12, 18, 24) for r in _rows()]
    fig = layers_figure(rows, "m")
    for ax in fig.axes:
        assert list(ax.get_xticks()) == [6, 12, 18, 24]
        assert [t.get_text() for t in ax.get_xticklabels()] == ["6", "12", "18", "24"]
    probe = fig.axes[0]
    leace = next(c for c in probe.containers if c.get_label() == "LEACE")[0]
    majority = next(c for c in probe.containers
                    if c.get_label().startswith("majority"))[0]
    assert list(leace.get_ydata()) == list(majority.get_ydata()) == [0.7] * 4
    assert leace.get_marker() != majority.get_marker()
    assert all(a != b for a, b in zip(leace.get_xdata(), majority.get_xdata(), strict=True))


@pytest.mark.slow
def test_cli_sample_preset_end_to_end(cli, tmp_path) -> None:
    out = tmp_path / "amnesic"
    res = cli(["run", "amnesic", "--preset", "sample", "-o", out, "--json"])
    assert res.exit_code == 0, res.stderr
    rows = json.loads(res.stdout)["rows"]

    def one(**where):
        hits = [r for r in rows if all(r.get(k) == v for k, v in where.items())]
        assert len(hits) == 1, (where, len(hits))
        return hits[0]

    conditions = ("before", "leace", "random", "random_matched")
    acc = {c: one(section="probe", metric="accuracy", erased_task=True, condition=c,
                  contrast="")["value"] for c in conditions}
    majority = one(section="probe", metric="majority", erased_task=True)
    assert majority["majority_label"] == "Sing"
    majority = majority["value"]
    # LEACE's guarantee end to end: a linear probe retrained on erased vectors is at the
    # majority rate; the random erasures of the same rank leave the property readable
    assert acc["leace"] == pytest.approx(majority, abs=0.01)
    assert acc["before"] > majority + 0.1 and acc["random"] > majority + 0.1
    assert acc["random_matched"] > majority + 0.1
    disp = {c: one(section="probe", metric="displacement", split="train", condition=c)["value"]
            for c in ("leace", "random", "random_matched")}
    assert abs(disp["random_matched"] - disp["leace"]) <= 0.05 * disp["leace"]
    pos = {c: one(section="probe", metric="accuracy", task="pos", condition=c,
                  contrast="")["value"] for c in conditions}
    assert pos["before"] > 0.8 and pos["leace"] > 0.5  # other properties mostly survive
    # inside the model: clean, LEACE and both random controls, each with an interval
    beh = {c: one(section="behaviour", metric="agreement_accuracy", condition=c, contrast="")
           for c in ("clean", "erased", "random", "random_matched")}
    for r in beh.values():
        assert r["pairs"] == 60 and r["ci_low"] <= r["value"] <= r["ci_high"]
    assert beh["clean"]["value"] > 0.7
    change = one(section="behaviour", metric="agreement_accuracy", contrast="erased-clean")
    assert change["value"] == pytest.approx(beh["erased"]["value"] - beh["clean"]["value"])
    assert 0.0 <= change["p_value"] <= 1.0
    nll = {c: one(section="damage", metric="nll_per_token", condition=c, contrast="")["value"]
           for c in ("clean", "erased", "random", "random_matched")}
    for c in ("erased", "random", "random_matched"):
        damage = one(section="damage", metric="nll_per_token", contrast=f"{c}-clean")
        assert damage["value"] == pytest.approx(nll[c] - nll["clean"])
        assert math.isfinite(damage["value"]) and damage["ci_low"] <= damage["ci_high"]
    assert one(section="damage", metric="nll_per_token", contrast="erased-clean")["value"] > 0
    assert not [r for r in rows if "loglik" in str(r.get("metric"))]
    lead = one(section="damage", metric="nll_per_token", contrast="erased-random_matched")
    assert lead["value"] == pytest.approx(nll["erased"] - nll["random_matched"])
    # the counterfactual against a random direction of the same size, with the paired lead
    flips = {c: one(section="counterfactual", metric="flip_rate", condition=c)
             for c in ("counterfactual", "random")}
    assert all(0.0 <= f["value"] <= 1.0 for f in flips.values())
    lead = one(section="counterfactual", metric="flip_rate", contrast="counterfactual-random")
    assert lead["value"] == pytest.approx(flips["counterfactual"]["value"]
                                          - flips["random"]["value"])
    report = (out / "report.md").read_text(encoding="utf-8")
    assert "## Amnesic probing" in report and "| 12 | feats:Number |" in report
    assert "## Damage: NLL increase" in report and "## How far each eraser" in report
    assert "## Counterfactual intervention" in report
    assert (out / "amnesic-layers.png").stat().st_size > 10_000
    # resumed: nothing runs again
    again = cli(["run", "amnesic", "--preset", "sample", "-o", out, "--json"])
    assert again.exit_code == 0 and json.loads(again.stdout)["executed"] == 0
