"""``synrob encode``, ``synrob encoders`` and ``synrob cache list|clear`` through the CLI boundary."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

KEYS = {"encoder", "layers", "sentences", "words", "dim", "oov_rate", "cache_path", "seconds"}


def _corpus(ewt_dev: Path, tmp_path: Path, n: int) -> Path:
    p = tmp_path / f"dev{n}.conllu"
    p.write_text("\n\n".join(ewt_dev.read_text(encoding="utf-8").split("\n\n")[:n]) + "\n\n",
                 encoding="utf-8")
    return p


def test_encode_prints_one_json_per_input_and_reuses_cache(cli, ewt_dev, tmp_path):
    a, b = _corpus(ewt_dev, tmp_path, 30), _corpus(ewt_dev, tmp_path, 50)
    r = cli(["encode", "--encoder", "glove-6b-50d", "--layers", "all", a, b])
    assert r.exit_code == 0, r.stderr
    rows = [json.loads(line) for line in r.stdout.splitlines()]
    assert len(rows) == 2 and all(set(row) == KEYS for row in rows)
    assert [row["sentences"] for row in rows] == [30, 50]
    assert rows[0]["layers"] == [0] and rows[0]["dim"] == 50 and rows[0]["encoder"] == "glove-6b-50d"
    m = np.load(Path(rows[1]["cache_path"]) / "layer_0.npy", mmap_mode="r")
    assert m.shape == (rows[1]["words"], 50) and m.dtype == np.float16
    again = cli(["encode", "-e", "glove-6b-50d", "--dtype", "float16", a])
    assert json.loads(again.stdout)["cache_path"] == rows[0]["cache_path"]

    listed = cli(["cache", "list", "--json"])
    entries = [json.loads(line) for line in listed.stdout.splitlines()]
    assert {e["path"] for e in entries} >= {row["cache_path"] for row in rows}
    cleared = cli(["cache", "clear", "--encoder", "glove-6b-50d"])
    assert cleared.exit_code == 0 and "removed" in cleared.stderr
    assert not Path(rows[0]["cache_path"]).exists()


def test_encoders_lists_registered_and_aliases(cli):
    r = cli(["encoders", "--json"])
    assert r.exit_code == 0
    rows = {row["name"]: row for row in map(json.loads, r.stdout.splitlines())}
    assert {"static", "transformer", "fast+pos", "random-init"} <= set(rows)
    assert rows["minilm"]["kind"] == "alias" and rows["minilm"]["state"] == "installed"


def test_encode_errors_are_one_line(cli, ewt_dev, tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    a = _corpus(ewt_dev, tmp_path, 5)
    r = cli(["encode", "-e", "no-such-org/no-such-model", a])
    assert r.exit_code == 1 and r.stdout == ""
    err = [line for line in r.stderr.splitlines() if line.startswith("synrob: error:")]
    assert len(err) == 1 and "minilm" in err[0]
    r = cli(["encode", "-e", "glove-6b-50d", "--layers", "3", a])
    assert r.exit_code == 1 and "layer 3 out of range" in r.stderr
    r = cli(["encode", "-e", "glove-6b-50d", "-p", "bogus=1", a])
    assert r.exit_code == 1 and "unknown parameter 'bogus'" in r.stderr
