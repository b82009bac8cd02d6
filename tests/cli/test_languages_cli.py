"""``--lang`` and language inference from the command line, on real Turkish and Czech UD data."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

DATA = Path(__file__).resolve().parent.parent / "data" / "ud"
TR = DATA / "tr_boun" / "tr_boun-ud-test.conllu"
CS = DATA / "cs_pud" / "cs_pud-ud-test.conllu"


def _head(path: Path, n: int, dest: Path) -> Path:
    """The first ``n`` sentences of ``path`` in ``dest`` (same file name: same language)."""
    blocks = path.read_text(encoding="utf-8").strip().split("\n\n")[:n]
    dest.mkdir(parents=True, exist_ok=True)
    out = dest / path.name
    out.write_text("\n\n".join(blocks) + "\n\n", encoding="utf-8")
    return out


@pytest.mark.parametrize("path", [TR, CS], ids=["tr", "cs"])
def test_copos_on_another_language_is_one_error_line(cli, path: Path) -> None:
    res = cli(["perturb", "--kind", "copos", path])
    assert res.exit_code != 0 and res.stdout == ""
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1, res.stderr
    lang = path.name[:2]
    assert lines[0].startswith("synrob: error: perturber 'copos' supports only en")
    assert f"not {lang}" in lines[0] and f"file name {path.name}" in lines[0]


@pytest.mark.parametrize("kind", ["shuffle", "flip", "bshift", "somo", "coordinv",
                                  "jabberwocky"])
def test_every_other_builtin_runs_on_turkish(cli, kind: str, tmp_path: Path) -> None:
    res = cli(["perturb", "--kind", kind, "--seed", "1", TR])
    assert res.exit_code == 0, res.stderr
    assert res.stdout.count("# synrob.lang = tr\n") == 300
    assert "perturbed" in res.stderr


def test_coco_runs_on_czech_with_a_model_of_any_language(cli, tiny_lms, tmp_path: Path) -> None:
    small = _head(CS, 3, tmp_path)
    res = cli(["perturb", "--kind", "coco", "-p", f"model={tiny_lms['masked']}", small])
    assert res.exit_code == 0, res.stderr
    assert res.stdout.count("# synrob.lang = cs\n") == 3


def test_lang_overrides_the_file_name_and_is_recorded(cli) -> None:
    res = cli(["perturb", "--kind", "copos", "--lang", "en", TR])
    assert res.exit_code == 0, res.stderr  # the user says it is English: copos runs
    assert "# synrob.lang = en" in res.stdout
    res = cli(["perturb", "--kind", "shuffle", "--lang", "TR", "--format", "jsonl", TR])
    assert json.loads(res.stdout.splitlines()[0])["lang"] == "tr"


def test_a_bad_lang_is_one_error_line(cli) -> None:
    res = cli(["perturb", "--kind", "shuffle", "--lang", "turkish", TR])
    assert res.exit_code != 0
    assert res.stderr.strip().splitlines() == [
        "synrob: error: --lang 'turkish' is not a language code: give the ISO 639 code UD "
        "uses (2 or 3 letters, e.g. en, tr, de, qtd)"]


def test_the_language_travels_through_stdin_by_its_comment(cli, tmp_path: Path) -> None:
    first = cli(["perturb", "--kind", "shuffle", "--seed", "2", _head(TR, 5, tmp_path)])
    assert first.exit_code == 0
    res = cli(["perturb", "--kind", "copos"], stdin=first.stdout)
    assert res.exit_code != 0
    assert "not tr (from '# synrob.lang' on stdin)" in res.stderr
    res = cli(["perturb", "--kind", "flip"], stdin=first.stdout)
    assert res.exit_code == 0 and res.stdout.count("# synrob.lang = tr\n") == 5


def test_a_comment_in_a_renamed_file_gives_its_language(cli, tmp_path: Path) -> None:
    first = cli(["perturb", "--kind", "shuffle", _head(CS, 4, tmp_path)])
    renamed = tmp_path / "mine.conllu"
    renamed.write_text(first.stdout, encoding="utf-8")
    res = cli(["perturb", "--kind", "copos", renamed])
    assert "not cs (from '# synrob.lang' in mine.conllu)" in res.stderr


def test_raw_text_must_be_english(cli, tmp_path: Path) -> None:
    text = tmp_path / "t.txt"
    text.write_text("Bu bir cümle.\n", encoding="utf-8")
    res = cli(["perturb", "--kind", "shuffle", "--lang", "tr", text])
    assert res.exit_code != 0
    assert "spaCy's English model" in res.stderr and len(res.stderr.strip().splitlines()) == 1


def test_describe_and_plugins_show_the_languages(cli) -> None:
    res = cli(["perturb", "--describe", "copos"])
    assert "languages: en (English WordNet 3.0" in res.stdout
    res = cli(["perturb", "--describe", "jabberwocky", "--json"])
    assert json.loads(res.stdout)["languages"] == ["*"]
    res = cli(["plugins", "--json", "--kind", "perturber"])
    langs = {r["name"]: r["languages"] for r in json.loads(res.stdout)}
    assert langs["copos"] == ["en"] and langs["shuffle"] == ["*"]
    assert "LANGUAGES" in cli(["plugins"]).stdout


def test_robustness_skips_copos_outside_english_and_says_so(tmp_path: Path) -> None:
    from synrob.perturb.errors import ParameterError
    from synrob.probe.experiments.robustness.experiment import RobustnessExperiment as Robustness

    exp = Robustness(test=str(TR), perturbations="copos,coco")
    assert exp.language().code == "tr"
    assert exp.unsupported("tr") == ["copos"] and exp.unsupported("en") == []
    assert {k for k, _, _ in exp._conditions("tr")} == {"coco"}
    with pytest.warns(UserWarning, match="copos supports only en .* not tr: skipped"):
        exp._warn_unsupported("tr")
    with pytest.raises(ParameterError, match="no perturbation supports tr"):
        Robustness(test=str(TR), perturbations="copos")._conditions("tr")


def test_a_treebank_sets_the_three_splits(tmp_path: Path) -> None:
    from synrob.perturb.errors import ParameterError, ResourceError
    from synrob.perturb.io.data import split_specs
    from synrob.probe.experiments.jabberwocky.experiment import JabberwockyExperiment

    assert split_specs("ud:tr_boun") == {s: f"ud:tr_boun:{s}" for s in ("train", "dev", "test")}
    for split in ("train", "dev", "test"):
        (tmp_path / f"tr_boun-ud-{split}.conllu").write_text(TR.read_text(encoding="utf-8"),
                                                            encoding="utf-8")
    exp = JabberwockyExperiment.from_preset("sample", treebank=str(tmp_path))
    assert exp.options["dev"] == str(tmp_path / "tr_boun-ud-dev.conllu")
    assert exp.language().code == "tr"
    with pytest.raises(ParameterError, match="not both"):
        JabberwockyExperiment(treebank=str(tmp_path), test=str(TR))
    with pytest.raises(ResourceError, match="not a split"):
        split_specs("ud:tr_boun:test")
    with pytest.raises(ResourceError, match="expected one"):
        split_specs(str(DATA / "tr_boun"))
