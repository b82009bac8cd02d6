"""bench/quant_fidelity.py's pure parts: the quantization list, the training cut, the pass rule
and the lines it prints (the children replaced by canned ``synrob`` outputs; no model runs)."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from .bench_script import load_bench

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def qf() -> ModuleType:
    return load_bench("quant_fidelity")


def test_quantization_list(qf: ModuleType) -> None:
    assert qf.parse_quantizations("int8,nf4,torchao-int8", True) == (
        ["int8", "nf4", "torchao-int8"], [])
    assert qf.parse_quantizations(" nf4, int8,nf4,,torchao-int8", False) == (
        ["nf4", "int8"], ["torchao-int8"])
    with pytest.raises(ValueError, match="unknown quantization 'int4'"):
        qf.parse_quantizations("int8,int4", True)


def test_training_cut_keeps_whole_sentences(qf: ModuleType, tmp_path: Path) -> None:
    sents = [f"# sent_id = s{i}\n1\tw{i}\tw\tNOUN\tNN\t_\t0\troot\t_\t_" for i in range(5)]
    src = tmp_path / "en_ewt-ud-train.conllu"
    src.write_text("\n\n".join(sents) + "\n\n")
    out, n, total = qf.head_conllu(src, 3, tmp_path)
    assert (n, total) == (3, 5) and out != src
    assert out.read_text() == "\n\n".join(sents[:3]) + "\n\n"
    assert qf.split_sentences(out.read_text()) == sents[:3]
    for cut in (0, 5, 9):  # all of it: the file itself
        assert qf.head_conllu(src, cut, tmp_path) == (src, 5, 5)


FP32 = {"uuas": 0.70, "dspr": 0.80, "pos": 0.95, "agreement": 0.90}


def test_pass_rule(qf: ModuleType) -> None:
    near = {"uuas": 0.695, "dspr": 0.81, "pos": 0.9499, "agreement": 0.8925}
    diffs = qf.signed_diffs(FP32, near)
    assert diffs["uuas"] == pytest.approx(-0.005) and diffs["dspr"] == pytest.approx(0.01)
    assert qf.passes(diffs, 0.01)  # at the limit (as printed) passes, whatever the sign
    assert qf.passes({**diffs, "pos": 0.96 - 0.95}, 0.01)  # 0.010000000000000009
    assert not qf.passes({**diffs, "agreement": -0.0101}, 0.01)
    assert not qf.passes({k: v for k, v in diffs.items() if k != "pos"}, 0.01)  # all four
    assert qf.registry_entry(diffs) == {"uuas": 0.005, "dspr": 0.01, "pos": 0.0001,
                                        "agreement": 0.0075}


def test_result_lines(qf: ModuleType) -> None:
    quant = {"uuas": 0.7123, "dspr": 0.7960, "pos": 0.9500, "agreement": 0.8800}
    secs = {"distance": 12.34, "pos": 5.0, "score": 60.0}
    lines = qf.result_lines("nf4", FP32, quant, secs, 0.01, {"probe": False, "score": True})
    got = dict(line.split(": ", 1) for line in lines)
    assert got["quant_nf4_uuas"] == "0.7123"
    assert got["quant_nf4_uuas_diff"] == "+0.0123" and got["quant_nf4_uuas_delta"] == "0.0123"
    assert got["quant_nf4_dspr_diff"] == "-0.0040" and got["quant_nf4_dspr_delta"] == "0.0040"
    assert got["quant_nf4_agreement_delta"] == "0.0200"
    assert got["quant_nf4_distance_s"] == "12.3"
    assert got["quant_nf4_recorded_probe"] == "0" and got["quant_nf4_recorded_score"] == "1"
    assert lines[-1] == "quant_nf4_passes: 0" and "quant_nf4_registry_entry" not in got
    ok = qf.result_lines("int8", FP32, FP32, secs, 0.01)
    assert ok[-2] == "quant_int8_passes: 1"
    assert json.loads(ok[-1].split(": ", 1)[1]) == {m: 0.0 for m in qf.METRICS}
    failed = qf.result_lines("torchao-int8", FP32, {}, {}, 0.01, error="synrob probe exited 1")
    assert failed == ["quant_torchao-int8_error: synrob probe exited 1",
                      "quant_torchao-int8_passes: 0"]
    assert qf.fp32_lines(FP32, secs)[:2] == ["fp32_uuas: 0.7000", "fp32_dspr: 0.8000"]


def _canned(scores: dict[str, dict[str, float]], fail: str = "") -> tuple[list[list[str]], Any]:
    """A runner answering as ``synrob probe --json`` / ``synrob score --json`` would, with the
    scores of the quantization named in the arguments (``none`` without one)."""
    calls: list[list[str]] = []

    def run(argv: Sequence[str]) -> str:
        calls.append(list(argv))
        quant = next((a.split("=", 1)[1] for a in argv if "quantization=" in a), "none")
        if quant == fail:
            raise sys.modules["quant_fidelity"].ChildError(f"synrob {argv[0]} exited 1: boom")
        s = scores[quant]
        if argv[0] == "score":
            summary = {"pairs": 10, "accuracy": s["agreement"]}
            if quant != "none":
                summary["placement"] = {"quantization": quant}
            return '{"pair": 1}\n' + json.dumps(summary) + "\n"
        task = argv[argv.index("--task") + 1]
        res = ({"uuas": s["uuas"], "dspr": s["dspr"]} if task == "distance"
               else {"acc": s["pos"], "sentences": 3.0})
        if "--seeds" in argv:  # seed k: the value plus k/100
            seeds = [int(x) for x in argv[argv.index("--seeds") + 1].split(",")]
            res = {**{f"{k}_seeds": [v + k2 / 100 for k2 in seeds] for k, v in res.items()}}
        return json.dumps({"encoder": "smollm2", "results": {"test.conllu": res}})

    return calls, run


def test_check_runs_fp32_then_each_quantization(qf: ModuleType) -> None:
    scores = {"none": FP32, "int8": {**FP32, "uuas": 0.705},
              "nf4": {**FP32, "agreement": 0.87}}
    calls, run = _canned(scores, fail="torchao-int8")
    args = argparse.Namespace(model="smollm2", layer=12, device="cpu", seed=0)
    files = {k: Path(f"/d/{k}.conllu") for k in ("train", "dev", "test", "pairs")}
    out: list[str] = []
    verdict = qf.check(args, ["int8", "nf4", "torchao-int8"], files, run, 0.01, out.append)
    assert verdict == {"int8": True, "nf4": False, "torchao-int8": False}
    got = dict(line.split(": ", 1) for line in out)
    assert got["fp32_uuas"] == "0.7000" and got["fp32_agreement"] == "0.9000"
    assert got["quant_int8_uuas_diff"] == "+0.0050" and got["quant_int8_passes"] == "1"
    assert got["quant_nf4_agreement_delta"] == "0.0300" and got["quant_nf4_passes"] == "0"
    assert got["quant_torchao-int8_error"] == "synrob probe exited 1: boom"
    assert got["quant_int8_recorded_score"] == "1"
    # fp32: precision pinned, no quantization; quantized: both, explicitly unchecked
    probe, score = calls[0], calls[2]
    assert probe[:8] == ["probe", "--encoder", "smollm2", "--layer", "12", "--task",
                         "distance", "--train"]
    assert "encoder.precision=float32" in probe and not any("quant" in a for a in probe)
    assert score[:3] == ["score", "--lm", "smollm2"] and "--dtype" in score
    assert score[-2:] == ["/d/test.conllu", "/d/pairs.conllu"]
    int8_probe = calls[3]
    assert "encoder.quantization=int8" in int8_probe
    assert "encoder.quantization_unchecked=true" in int8_probe
    assert calls[5][-4:] == ["-p", "quantization=int8", "-p", "quantization_unchecked=true"]


def test_cpu_model_is_a_name(qf: ModuleType) -> None:
    assert qf.cpu_model() and "\n" not in qf.cpu_model()


def test_noise_seeds(qf: ModuleType) -> None:
    stdout = json.dumps({"results": {"t": {"uuas": 0.5, "uuas_seeds": [0.4, 0.6],
                                           "dspr_seeds": [0.5, 0.7], "sentences": 2.0}}})
    assert qf.probe_seed_scores(stdout) == {"uuas": [0.4, 0.6], "dspr": [0.5, 0.7]}
    pos = json.dumps({"results": {"t": {"acc": 0.9, "acc_seeds": [0.9, 0.9]}}})
    assert qf.probe_seed_scores(pos) == {"pos": [0.9, 0.9]}
    assert qf.noise_lines("fp32", {"uuas": [0.4, 0.6]}, seed0={"uuas": 0.3}) == [
        "fp32_uuas_noise_seeds: 0.4000 0.6000", "fp32_uuas_seed_spread: 0.3000"]
    assert qf.noise_lines("quant_nf4", {"uuas": [0.41, 0.58]}, {"uuas": [0.4, 0.6]}) == [
        "quant_nf4_uuas_noise_seeds: 0.4100 0.5800",
        "quant_nf4_uuas_diff_noise_seeds: +0.0100 -0.0200"]

    scores = {"none": FP32, "nf4": {**FP32, "pos": 0.96}}
    calls, run = _canned(scores)
    args = argparse.Namespace(model="smollm2", layer=12, device="cpu", seed=0,
                              noise_seeds="1,2")
    files = {k: Path(f"/d/{k}.conllu") for k in ("train", "dev", "test", "pairs")}
    out: list[str] = []
    assert qf.check(args, ["nf4"], files, run, 0.01, out.append) == {"nf4": True}
    got = dict(line.split(": ", 1) for line in out)
    assert got["fp32_uuas_noise_seeds"] == "0.7100 0.7200"
    assert got["fp32_uuas_seed_spread"] == "0.0200"  # seeds 0, 1, 2
    assert got["quant_nf4_pos_diff_noise_seeds"] == "+0.0100 +0.0100"
    assert got["quant_nf4_passes"] == "1" and float(got["quant_nf4_noise_s"]) >= 0
    assert sum("--seeds" in c for c in calls) == 4  # two tasks, two configurations
