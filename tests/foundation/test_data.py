"""Bundled sample and the ud:/sample: resolver."""

from __future__ import annotations

import pytest
from synrob.perturb.corpus import read_conllu
from synrob.perturb.errors import ResourceError
from synrob.perturb.io import data


@pytest.mark.parametrize(("split", "n"), [("train", 1000), ("dev", 250), ("test", 250)])
def test_bundled_sample_is_valid_ewt(split: str, n: int) -> None:
    path = data.sample_path(split)
    sents = list(read_conllu(path))
    assert len(sents) == n
    assert sents[0].sent_id.startswith(("weblog-", "email-", "answers-", "newsgroup-", "reviews-"))
    assert (path.parent / "README.md").read_text().count("CC BY-SA 4.0") >= 1


def test_resolve_sample_and_paths(tmp_path) -> None:
    assert data.resolve_input("sample:en_ewt:dev") == [data.sample_path("dev")]
    assert len(data.resolve_input("sample:en_ewt")) == 3
    f = tmp_path / "x.conllu"
    f.write_text("")
    assert data.resolve_input(str(f)) == [f]
    with pytest.raises(ResourceError, match="no such file"):
        data.resolve_input(str(tmp_path / "missing.conllu"))


def test_ud_resolves_from_synrob_data(monkeypatch, ewt_dir) -> None:
    monkeypatch.setenv("SYNROB_DATA", str(ewt_dir.parent.parent))  # .../data containing ud/en_ewt
    assert data.resolve_input("ud:en_ewt:dev") == [ewt_dir / "en_ewt-ud-dev.conllu"]


def test_ud_download_failure_is_one_clear_line(monkeypatch, tmp_path) -> None:
    monkeypatch.setenv("SYNROB_DATA", str(tmp_path))
    monkeypatch.setenv("SYNROB_CACHE", str(tmp_path / "cache"))

    def offline(*args, **kwargs):
        import urllib.error

        raise urllib.error.URLError("network is unreachable")

    monkeypatch.setattr(data.urllib.request, "urlopen", offline)
    with pytest.raises(ResourceError) as info:
        data.resolve_input("ud:en_gum:dev")
    msg = str(info.value)
    assert "\n" not in msg and "en_gum-ud-dev.conllu" in msg and "SYNROB_DATA" in msg
    assert not list((tmp_path / "cache").rglob("*.part"))


def test_unknown_treebank(monkeypatch, tmp_path) -> None:
    monkeypatch.setenv("SYNROB_DATA", str(tmp_path))
    with pytest.raises(ResourceError, match="not found locally"):
        data.resolve_input("ud:xx_nothing:dev")
