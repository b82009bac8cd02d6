"""``synrob score --erase FILE [--counterfactual]``: the JSON contract (the damage as the NLL
increase, positive = worse), the random controls' sources (rank-matched: given, beside or
built; displacement-matched: given or beside, else left out with a warning), the identity
eraser, and one-line errors; on a tiny GPT-2 and the hand-written agreement pairs of
tests/data/agreement/."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

torch = pytest.importorskip("torch")

AGREEMENT = Path(__file__).resolve().parents[1] / "data" / "agreement"
ORIG, PAIRS = str(AGREEMENT / "original.conllu"), str(AGREEMENT / "pairs.conllu")
LAYER = 1


def _eraser(spec: str, *, identity: bool = False, kind: str = "leace", layer: int = LAYER,
            seed: int = 0) -> Any:
    """An eraser for the tiny LM with the metadata ``synrob erase`` records."""
    from synrob.probe.causal.erasure import Eraser
    from synrob.probe.encoders.resolve import resolve_encoder

    g = torch.Generator().manual_seed(seed)
    left = torch.randn(32, 2, generator=g)
    right = torch.linalg.pinv(left)
    if identity:
        left, right = torch.zeros(32, 2), torch.zeros(2, 32)
    meta = {"encoder": spec, "encoder_identity": resolve_encoder(spec).identity(),
            "layer": layer, "task": "feats", "task_params": {"feature": "Number"}}
    return Eraser(kind, left, right, torch.randn(32, generator=g),
                  3 * torch.randn(2, 32, generator=g), ["Plur", "Sing"], meta)


@pytest.fixture(scope="module")
def lm_dir(tiny_ewt_lms: dict[str, str]) -> str:
    return tiny_ewt_lms["causal"]


def _save(path: Path, eraser: Any) -> str:
    from synrob.probe.causal.erasure.store import save_eraser

    save_eraser(path, eraser)
    return str(path)


def _lines(stdout: str) -> list[dict[str, Any]]:
    return [json.loads(x) for x in stdout.splitlines()]


def test_erase_json_contract(cli, lm_dir: str, tmp_path: Path) -> None:
    path = _save(tmp_path / "e.safetensors", _eraser(lm_dir))
    res = cli(["score", "--lm", lm_dir, ORIG, PAIRS, "--erase", path, "--json", "--seed", "3",
               "--bootstrap", "200"])
    assert res.exit_code == 0, res.stderr
    *pairs, summary = _lines(res.stdout)
    assert len(pairs) == summary["pairs"] == 5 and summary["skipped"] == 1
    assert {"erased", "random", "logprob_original", "prefers_original"} <= set(pairs[0])
    assert summary["layer"] == LAYER and summary["seed"] == 3
    assert summary["random_control"] == {"built": "random subspace of the eraser's rank",
                                         "seed": 3, "rank": 2}
    # no displacement-matched control without its file (it needs the training vectors)
    assert summary["random_matched_control"] is None and "random_matched" not in summary
    assert "synrob: warning: no displacement-matched random control" in res.stderr
    for name in ("erased", "random"):
        for key in ("accuracy_change", "nll_increase"):
            assert set(summary[name][key]) == {"value", "ci95", "p_value"}
        assert summary[name]["nll_per_token"] > 0
    assert set(summary["erased_vs_random"]) == {"accuracy_change", "nll_increase"}
    increase = summary["erased"]["nll_increase"]["value"]
    assert increase == pytest.approx(summary["erased"]["nll_per_token"]
                                     - summary["clean"]["nll_per_token"])
    assert increase != 0 and "loglik_change" not in summary["erased"]
    assert summary["eraser"]["kind"] == "leace" and summary["eraser"]["rank"] == 2
    again = cli(["score", "--lm", lm_dir, ORIG, PAIRS, "--erase", path, "--json", "--seed", "3",
                 "--bootstrap", "200"])
    assert again.stdout == res.stdout
    text = cli(["score", "--lm", lm_dir, ORIG, PAIRS, "--erase", path])
    assert text.exit_code == 0, text.stderr
    assert "erased - random" in text.stdout and "NLL increase" in text.stdout
    assert "log-lik" not in text.stdout
    matched_row = next(x for x in text.stdout.splitlines() if x.startswith("random matched "))
    assert matched_row.endswith("not scored (no file)")


def test_identity_eraser_changes_nothing(cli, lm_dir: str, tmp_path: Path) -> None:
    path = _save(tmp_path / "id.safetensors", _eraser(lm_dir, identity=True))
    res = cli(["score", "--lm", lm_dir, ORIG, PAIRS, "--erase", path, "--json"])
    assert res.exit_code == 0, res.stderr
    *pairs, summary = _lines(res.stdout)
    for p in pairs:
        assert p["erased"]["logprob_original"] == p["logprob_original"]
        assert p["erased"]["logprob_perturbed"] == p["logprob_perturbed"]
    assert summary["erased"]["accuracy_change"]["value"] == 0
    assert summary["erased"]["nll_increase"]["value"] == 0


def test_erase_scores_a_pairs_file_as_its_conllu_pairs(cli, lm_dir: str, tmp_path: Path
                                                       ) -> None:
    """``--erase`` needs only the texts: the same pairs as a BLiMP file (``--pairs``) give the
    same clean, erased and random scores as the CoNLL-U files."""
    from synrob.probe.causal.behaviour import pair_sentences

    pairs, _ = pair_sentences(ORIG, PAIRS)
    blimp = tmp_path / "pairs.jsonl"
    blimp.write_text("".join(json.dumps({"sentence_good": p.original, "sentence_bad": p.perturbed,
                                         "synrob": {"id": p.sentence, "source": p.source}}) + "\n"
                             for p in pairs), encoding="utf-8")
    path = _save(tmp_path / "e.safetensors", _eraser(lm_dir))
    runs = [cli(["score", "--lm", lm_dir, *inputs, "--erase", path, "--json", "--seed", "3",
                 "--bootstrap", "200"]) for inputs in ([ORIG, PAIRS], ["--pairs", str(blimp)])]
    assert all(r.exit_code == 0 for r in runs), runs[1].stderr
    conllu, from_file = (_lines(r.stdout) for r in runs)
    assert from_file[-1].pop("aligned_by") == "pairs file" and conllu[-1].pop("aligned_by")
    assert from_file == conllu


def test_random_control_beside_the_eraser_or_given(cli, lm_dir: str, tmp_path: Path) -> None:
    path = _save(tmp_path / "e.safetensors", _eraser(lm_dir))
    beside = _save(tmp_path / "e.random.safetensors", _eraser(lm_dir, kind="random", seed=4))
    res = cli(["score", "--lm", lm_dir, ORIG, PAIRS, "--erase", path, "--json"])
    assert res.exit_code == 0, res.stderr
    assert _lines(res.stdout)[-1]["random_control"]["file"] == beside
    other = _save(tmp_path / "r.safetensors", _eraser(lm_dir, kind="random", seed=5))
    res = cli(["score", "--lm", lm_dir, ORIG, PAIRS, "--erase", path, "--json",
               "--erase-random", other])
    assert _lines(res.stdout)[-1]["random_control"]["file"] == other
    res = cli(["score", "--lm", lm_dir, ORIG, PAIRS, "--erase", path, "--erase-random", path])
    assert res.exit_code == 1
    assert res.stderr.strip().splitlines() == [
        f"synrob: error: eraser in {path} is a leace eraser, not a random one"]


def test_matched_control_beside_the_eraser_or_given(cli, lm_dir: str, tmp_path: Path) -> None:
    """Four conditions: clean, erased and both random controls, each against clean, and the
    eraser against each control."""
    path = _save(tmp_path / "e.safetensors", _eraser(lm_dir))
    beside = _save(tmp_path / "e.random_matched.safetensors",
                   _eraser(lm_dir, kind="random_matched", seed=6))
    res = cli(["score", "--lm", lm_dir, ORIG, PAIRS, "--erase", path, "--json",
               "--bootstrap", "100"])
    assert res.exit_code == 0, res.stderr
    assert "warning" not in res.stderr
    *pairs, summary = _lines(res.stdout)
    assert summary["random_matched_control"]["file"] == beside
    assert summary["random_matched_control"]["kind"] == "random_matched"
    assert {"erased", "random", "random_matched"} <= set(pairs[0])
    for name in ("random_matched", "erased_vs_random_matched"):
        assert set(summary[name]) >= {"accuracy_change", "nll_increase"}
    assert summary["erased_vs_random_matched"]["nll_increase"]["value"] == pytest.approx(
        summary["erased"]["nll_per_token"] - summary["random_matched"]["nll_per_token"])
    text = cli(["score", "--lm", lm_dir, ORIG, PAIRS, "--erase", path, "--bootstrap", "100"])
    assert "erased - random matched" in text.stdout
    other = _save(tmp_path / "m.safetensors", _eraser(lm_dir, kind="random_matched", seed=7))
    res = cli(["score", "--lm", lm_dir, ORIG, PAIRS, "--erase", path, "--json",
               "--erase-random-matched", other, "--bootstrap", "0"])
    assert _lines(res.stdout)[-1]["random_matched_control"]["file"] == other
    wrong = _save(tmp_path / "r.safetensors", _eraser(lm_dir, kind="random", seed=5))
    res = cli(["score", "--lm", lm_dir, ORIG, PAIRS, "--erase", path,
               "--erase-random-matched", wrong])
    assert res.exit_code == 1
    assert res.stderr.strip().splitlines() == [
        f"synrob: error: eraser in {wrong} is a random eraser, not a random_matched one"]


def test_counterfactual_json_contract(cli, lm_dir: str, tmp_path: Path) -> None:
    path = _save(tmp_path / "e.safetensors", _eraser(lm_dir))
    res = cli(["score", "--lm", lm_dir, ORIG, PAIRS, "--erase", path, "--counterfactual",
               "--json", "--bootstrap", "100"])
    assert res.exit_code == 0, res.stderr
    *pairs, summary = _lines(res.stdout)
    assert len(pairs) == summary["pairs"] == 4
    assert summary["subject_after_target"] == 1 and summary["without_pair"] == 1
    assert {"clean", "counterfactual", "random", "subject", "target", "to"} <= set(pairs[0])
    for name in ("counterfactual", "random"):
        assert {"accuracy", "flip_rate", "flip_rate_ci95", "shift", "shift_ci95"} <= \
            set(summary[name])
    text = cli(["score", "--lm", lm_dir, ORIG, PAIRS, "--erase", path, "--counterfactual"])
    assert text.exit_code == 0, text.stderr
    assert "flips" in text.stdout


@pytest.mark.parametrize(("extra", "message"), [
    (["--layer", "1"], "--erase-random, --erase-random-matched, --layer and --counterfactual "
                       "need --erase FILE"),
    (["--counterfactual"], "--layer and --counterfactual need --erase FILE"),
    (["--erase-random-matched", "ERASER"], "--layer and --counterfactual need --erase FILE"),
    (["--erase", "ERASER", "--layer", "2"], "was fitted on layer 1, not layer 2"),
    (["--erase", "ERASER", "--counterfactual", "--erase-random", "ERASER"],
     "--erase-random and --erase-random-matched do not apply to --counterfactual"),
    (["--erase", "ERASER", "--counterfactual", "--erase-random-matched", "ERASER"],
     "--erase-random and --erase-random-matched do not apply to --counterfactual"),
    (["--erase", "missing.safetensors"], "missing.safetensors: no such eraser file"),
])
def test_erase_errors_are_one_line(cli, lm_dir: str, tmp_path: Path, extra: list[str],
                                   message: str) -> None:
    path = _save(tmp_path / "e.safetensors", _eraser(lm_dir))
    args = [path if a == "ERASER" else a for a in extra]
    res = cli(["score", "--lm", lm_dir, ORIG, PAIRS, *args])
    assert res.exit_code == 1
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], res.stderr


def test_erase_refuses_a_masked_lm_and_pairs_without_agreement(cli, tiny_ewt_lms, lm_dir,
                                                               tmp_path: Path) -> None:
    path = _save(tmp_path / "e.safetensors", _eraser(lm_dir))
    res = cli(["score", "--lm", tiny_ewt_lms["masked"], ORIG, PAIRS, "--erase", path])
    assert res.exit_code == 1 and "needs a causal LM" in res.stderr
    res = cli(["score", "--lm", lm_dir, ORIG, ORIG, "--erase", path, "--counterfactual"])
    assert res.exit_code == 1 and "no synrob.agreement pair" in res.stderr


@pytest.mark.slow
@pytest.mark.model
def test_smollm2_end_to_end_on_ewt_agreement_pairs(cli, ewt_train: Path, ewt_test: Path,
                                                   tmp_path: Path) -> None:
    """The real path: agreement pairs from EWT test, a Number eraser fitted by
    ``synrob erase`` on SmolLM2's layer 6 (a slice of EWT train), scored inside SmolLM2."""
    def head(path: Path, n: int) -> str:
        blocks = [b for b in path.read_text(encoding="utf-8").split("\n\n") if b.strip()][:n]
        out = tmp_path / f"{path.stem}-{n}.conllu"
        out.write_text("\n\n".join(blocks) + "\n\n", encoding="utf-8")
        return str(out)

    test = head(ewt_test, 120)
    pairs = str(tmp_path / "agr.conllu")
    res = cli(["perturb", "--kind", "agreement", test, "-o", pairs])
    assert res.exit_code == 0, res.stderr
    eraser = str(tmp_path / "number.safetensors")
    res = cli(["erase", "--encoder", "smollm2", "--layer", "6", "--task", "feats",
               "-p", "feature=Number", "--train", head(ewt_train, 150), "--dev", test,
               "--test", test, "--bootstrap", "0", "--device", "cpu", "-o", eraser])
    assert res.exit_code == 0, res.stderr
    res = cli(["score", test, pairs, "--lm", "smollm2", "--erase", eraser, "--limit", "8",
               "--json", "--bootstrap", "100", "--device", "cpu"])
    assert res.exit_code == 0, res.stderr
    *rows, summary = _lines(res.stdout)
    assert summary["layer"] == 6 and summary["pairs"] == len(rows) > 0
    assert summary["random_control"]["file"].endswith("number.random.safetensors")
    assert summary["random_matched_control"]["file"].endswith(
        "number.random_matched.safetensors")
    assert summary["erased_vs_random_matched"]["nll_increase"]["value"] == pytest.approx(
        summary["erased"]["nll_per_token"] - summary["random_matched"]["nll_per_token"])
    assert any(r["erased"]["logprob_original"] != r["logprob_original"] for r in rows)
    res = cli(["score", test, pairs, "--lm", "smollm2", "--erase", eraser, "--limit", "8",
               "--counterfactual", "--json", "--bootstrap", "100", "--device", "cpu"])
    assert res.exit_code == 0, res.stderr
    *rows, summary = _lines(res.stdout)
    assert summary["pairs"] == len(rows) > 0
    assert 0 <= summary["counterfactual"]["accuracy"] <= 1
    res = cli(["score", test, pairs, "--lm", "smollm2", "--erase", eraser, "--layer", "5"])
    assert res.exit_code == 1
    assert res.stderr.strip() == f"synrob: error: eraser in {eraser} was fitted on layer 6, " \
                                 "not layer 5"
