"""Errors for Python users (issue 46, section 5): messages worded for the caller's API (the CLI
keeps its flags), the built-in each error means, one class for layer errors, a typo of an
encoder refused before any hub access."""

from __future__ import annotations

import pickle
import time
from pathlib import Path

import pytest


def test_an_argument_is_spelled_for_python_and_as_a_flag_on_the_cli() -> None:
    from synrob.perturb.errors import ParameterError, arg, param

    exc = ParameterError(f"{arg('batch_size')} must be at least 1; {arg('lang', repr('xx'))} "
                         f"is no code; pass {param('feature=Number')}")
    python = "batch_size= must be at least 1; lang='xx' is no code; pass feature=Number"
    assert str(exc) == python == exc.args[0] == exc.render()
    assert exc.render(cli=True) == ("--batch-size must be at least 1; --lang 'xx' is no code; "
                                    "pass -p feature=Number")
    again = pickle.loads(pickle.dumps(exc))  # errors cross process pools
    assert str(again) == python and again.render(cli=True).startswith("--batch-size")


def test_probe_words_its_arguments_for_python_and_the_cli_for_flags(cli) -> None:
    import synrob.probe as pr
    from synrob.perturb.errors import SynrobError

    with pytest.raises(SynrobError) as info:
        pr.probe("sample:en_ewt:test", encoder="glove-6b-50d", layer=0)
    assert str(info.value) == "training a probe needs train= and dev= (or load= a saved one)"
    with pytest.raises(ValueError, match=r"^seeds= must be comma-separated integers"):
        pr.probe("sample:en_ewt:test", encoder="glove-6b-50d", layer=0, seeds="0,x")
    r = cli(["probe", "--encoder", "glove-6b-50d", "--layer", "0", "--test",
             "sample:en_ewt:test"])
    assert r.exit_code == 1
    assert r.stderr == ("synrob: error: training a probe needs --train and --dev "
                        "(or --load a saved one)\n")


def test_errors_are_the_builtins_they_mean(tmp_path: Path) -> None:
    import synrob.perturb as sp
    import synrob.probe as pr
    from synrob.perturb.errors import SynrobError

    with pytest.raises(FileNotFoundError) as missing:
        sp.read_conllu(tmp_path / "nope.conllu")
    assert isinstance(missing.value, SynrobError)
    with pytest.raises(FileNotFoundError, match="no results.json"):
        pr.load_results(tmp_path / "no-run")
    with pytest.raises(FileNotFoundError, match="no such eraser file"):
        pr.erase("sample:en_ewt:train", "sample:en_ewt:dev", "sample:en_ewt:test",
                 load=tmp_path / "nope.safetensors")
    with pytest.raises(KeyError) as unknown:
        sp.make_perturber("jaberwocky")
    assert isinstance(unknown.value, LookupError)
    # readable, unlike KeyError's own str(), which quotes the message
    assert str(unknown.value).startswith("unknown perturber 'jaberwocky' "
                                         "(did you mean 'jabberwocky'?); available: ")
    with pytest.raises(ValueError, match="rate"):
        sp.make_perturber("jabberwocky", rate="often")


def test_a_spec_of_several_files_names_the_argument(cli) -> None:
    import synrob.probe as pr

    with pytest.raises(ValueError) as info:
        pr.encode("sample:en_ewt", "glove-6b-50d")
    assert str(info.value) == "corpus='sample:en_ewt' must name one CoNLL-U file"
    r = cli(["probe", "--encoder", "glove-6b-50d", "--layer", "0", "--test", "sample:en_ewt"])
    assert r.stderr == "synrob: error: --test 'sample:en_ewt' must name one CoNLL-U file\n"


@pytest.mark.model
def test_layer_errors_are_one_class_from_probe_and_encode() -> None:
    import synrob.probe as pr
    from synrob.perturb.errors import LayerError

    with pytest.raises(LayerError, match="layer= must be a number or 'all'"):
        pr.probe("sample:en_ewt:test", encoder="glove-6b-50d", layer="x")
    with pytest.raises(LayerError, match="out of range"):
        pr.encode("sample:en_ewt:dev", "glove-6b-50d", layers=[5])
    with pytest.raises(LayerError, match="out of range"):
        pr.probe("sample:en_ewt:test", encoder="glove-6b-50d", layer=5,
                 train="sample:en_ewt:train", dev="sample:en_ewt:dev")
    assert issubclass(LayerError, ValueError)


def test_an_encoder_typo_is_refused_with_close_names_before_any_hub_access(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    # the modules that bind models.from_pretrained by name, imported before the patch: a first
    # import under it would keep no_hub for the rest of the session
    import synrob.perturb.lm.loaded  # noqa: F401
    import synrob.probe as pr
    import synrob.probe.encoders.transformer  # noqa: F401
    from synrob.perturb.errors import UnknownComponentError
    from synrob.perturb.lm import models

    def no_hub(*_a: object, **_k: object) -> bool:
        raise AssertionError("the hub was asked")

    monkeypatch.setattr(models, "_hub_reachable", no_hub)
    monkeypatch.setattr(models, "from_pretrained", no_hub)
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    t0 = time.perf_counter()
    with pytest.raises(UnknownComponentError) as info:
        pr.encode("sample:en_ewt:dev", "minlm")
    assert time.perf_counter() - t0 < 2.0
    assert isinstance(info.value, KeyError)
    assert str(info.value).startswith("unknown encoder 'minlm' (did you mean 'minilm'?)")
    with pytest.raises(UnknownComponentError, match="did you mean 'smollm2'"):
        pr.score_pairs("sample:en_ewt:test", "sample:en_ewt:test", lm="smolm2")


def test_hub_names_still_go_to_the_hub(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Owner/name ids, canonical bare ids far from every alias (gpt2) and a cached model
    named like a typo are hub names, as before."""
    from synrob.perturb.lm.models import MODEL_ALIASES, refuse_near_miss, resolve_model
    from synrob.probe.encoders.resolve import spec_target

    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path))
    for spec in ("gpt2", "bert-base-uncased", "sentence-transformers/minlm"):
        assert spec_target(spec) == ("transformer", {"model": spec})
        assert resolve_model(spec).is_local is False
    (tmp_path / "models--minlm").mkdir()
    refuse_near_miss("minlm", MODEL_ALIASES, "model")  # cached: the user has it
    assert spec_target("minlm") == ("transformer", {"model": "minlm"})
