"""Every input has a language; perturbers declare theirs; copos refuses what it cannot do."""

from __future__ import annotations

from pathlib import Path

import pytest
from synrob.perturb.base import Param, Perturber
from synrob.perturb.errors import ParameterError
from synrob.perturb.io.language import (
    LanguageError,
    check_code,
    infer_language,
    language_of_name,
    language_of_spec,
    supports,
)
from synrob.perturb.plugins import get_registry

DATA = Path(__file__).resolve().parent.parent / "data" / "ud"
TR = DATA / "tr_boun" / "tr_boun-ud-test.conllu"
CS = DATA / "cs_pud" / "cs_pud-ud-test.conllu"


@pytest.mark.parametrize(("name", "code"), [
    ("tr_imst-ud-test.conllu", "tr"),
    ("/x/y/fi_tdt-ud-train.conllu", "fi"),
    ("qtd_sagt-ud-dev.conllu", "qtd"),
    ("tr_imst-ud-test.jabberwocky.ab12cd34ef56.conllu", "tr"),
    ("en_ewt-ud-test.conllu", "en"),
    ("my-file.conllu", None),
    ("tr-ud-test.conllu", None),
])
def test_language_of_a_ud_file_name(name: str, code: str | None) -> None:
    assert language_of_name(name) == code


def test_inference_order_given_then_name_then_comment_then_english(tmp_path: Path) -> None:
    assert infer_language([TR], "DE").code == "de"
    assert infer_language([TR]).code == "tr"
    assert "file name" in infer_language([TR]).source
    commented = tmp_path / "mine.conllu"
    commented.write_text("# synrob.lang = cs\n# text = A\n1\tA\ta\tX\t_\t_\t0\troot\t_\t_\n\n",
                         encoding="utf-8")
    assert infer_language([commented]).code == "cs"
    plain = tmp_path / "plain.conllu"
    plain.write_text("1\tA\ta\tX\t_\t_\t0\troot\t_\t_\n\n", encoding="utf-8")
    lang = infer_language([plain])
    assert (lang.code, lang.source.startswith("assumed")) == ("en", True)


def test_inputs_in_two_languages_are_an_error() -> None:
    with pytest.raises(LanguageError, match="different languages"):
        infer_language([TR, CS])


@pytest.mark.parametrize("bad", ["english", "e", "t1", ""])
def test_a_malformed_code_is_an_error(bad: str) -> None:
    with pytest.raises(LanguageError, match="not a language code"):
        check_code(bad)


def test_language_of_a_spec_needs_no_download() -> None:
    assert language_of_spec("ud:tr_imst:test").code == "tr"
    assert language_of_spec("sample:en_ewt").code == "en"
    assert language_of_spec(str(CS)).code == "cs"
    assert language_of_spec("ud:tr_imst", "fi").code == "fi"


def test_every_builtin_declares_its_languages() -> None:
    reg = get_registry()
    langs = {n: tuple(reg.get("perturber", n).languages) for n in reg.names("perturber")}
    assert langs["copos"] == ("en",)
    for name in ("coco", "shuffle", "flip", "bshift", "somo", "coordinv", "jabberwocky",
                 "agreement"):
        assert langs[name] == ("*",), name
    assert supports(("*",), "tr") and supports(("en",), "en") and not supports(("en",), "tr")


def test_copos_refuses_another_language_naming_what_it_supports() -> None:
    cls = get_registry().get("perturber", "copos")
    with pytest.raises(LanguageError, match=r"supports only en \(English WordNet 3.0.*not tr"):
        cls(lang="tr")
    assert isinstance(LanguageError("x"), ParameterError)


def test_a_plugin_without_a_declaration_supports_any_language() -> None:
    class Upper(Perturber):
        name = "upper-test"

        def perturb(self, sentence, rng):  # pragma: no cover - not called
            raise AssertionError

    assert Upper(lang="tr").lang == "tr"
    assert Upper.describe()["languages"] == ["*"]


def test_jabberwocky_outside_english_needs_its_treebanks() -> None:
    cls = get_registry().get("perturber", "jabberwocky")
    with pytest.raises(ParameterError, match="reference"):
        cls(lang="tr")
    assert cls(lang="tr", reference=str(TR)).lang == "tr"


def test_a_plugin_whose_init_takes_no_lang_still_gets_one() -> None:
    from synrob.perturb.base import create_perturber

    class Old(Perturber):
        name = "old-test"
        languages = ("en", "de")
        params = (Param("rate", float, 0.5, "share"),)

        def __init__(self, rate: float = 0.5) -> None:  # no **params: predates languages
            super().__init__(rate=rate)

        def perturb(self, sentence, rng):  # pragma: no cover - not called
            raise AssertionError

    assert create_perturber(Old, "de").lang == "de"
    with pytest.raises(LanguageError, match="supports only en, de"):
        create_perturber(Old, "tr")
