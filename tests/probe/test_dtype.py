"""Compute dtypes: ``auto`` needs native bf16 and a checked model; bf16 and fp32 never mix."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from synrob.perturb.errors import ParameterError
from synrob.perturb.lm import dtype as dt


@pytest.fixture
def detect(monkeypatch: pytest.MonkeyPatch) -> None:
    """``SYNROB_NATIVE_BF16`` unset: native bf16 is read from the hardware (tests/conftest.py
    sets it to 0 for the rest of the suite)."""
    monkeypatch.delenv(dt.NATIVE_BF16_ENV, raising=False)


@pytest.fixture
def no_bf16(monkeypatch: pytest.MonkeyPatch, detect: None) -> None:
    monkeypatch.setattr(dt, "_cpu_flags", lambda: frozenset({"avx2"}))


@pytest.fixture
def with_bf16(monkeypatch: pytest.MonkeyPatch, detect: None) -> None:
    monkeypatch.setattr(dt, "_cpu_flags", lambda: frozenset({"avx2", "avx512_bf16"}))
    monkeypatch.setattr(dt, "BF16_CHECKED", frozenset({"checked-model"}))


def test_explicit_dtypes_are_kept_and_bad_ones_refused() -> None:
    for name in ("float32", "bfloat16", "float16"):
        assert dt.resolve_dtype(name.upper(), "cpu", "m") == name
    with pytest.raises(ParameterError, match="invalid dtype 'fp8'"):
        dt.check_dtype("fp8")


def test_auto_is_float32_without_native_bf16(no_bf16: None) -> None:
    assert not dt.native_bf16("cpu")
    assert dt.resolve_dtype("auto", "cpu", "minilm") == "float32"


def test_auto_is_bf16_only_for_a_checked_model_on_bf16_hardware(with_bf16: None) -> None:
    assert dt.native_bf16("cpu")
    assert dt.resolve_dtype("auto", "cpu", "checked-model") == "bfloat16"
    assert dt.resolve_dtype("auto", "cpu", "/x/checked-model/model") == "bfloat16"
    assert dt.resolve_dtype("auto", "cpu", "other-model") == "float32"
    assert dt.resolve_dtype("auto", "mps", "checked-model") == "float32"


def test_this_machines_flags_are_read_not_guessed(detect: None) -> None:
    flags = dt._cpu_flags()
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.is_file():
        text = cpuinfo.read_text(encoding="utf-8", errors="replace")
        assert ("avx512_bf16" in flags) == ("avx512_bf16" in text)
        assert dt.native_bf16("cpu") == any(f in text.split() for f in
                                            ("avx512_bf16", "amx_bf16", "bf16"))


@pytest.mark.parametrize("flags", [{"avx2"}, {"avx2", "avx512_bf16"}], ids=["avx2", "bf16-cpu"])
@pytest.mark.parametrize(("value", "native"), [
    ("0", False), ("off", False), (" No ", False), ("false", False),
    ("1", True), ("ON", True), ("yes", True), (" true ", True)])
def test_synrob_native_bf16_overrides_what_the_hardware_says(
        monkeypatch: pytest.MonkeyPatch, flags: set[str], value: str, native: bool) -> None:
    """``SYNROB_NATIVE_BF16`` decides native bf16 whatever the CPU flags say, on every
    device; the model check still applies."""
    monkeypatch.setattr(dt, "_cpu_flags", lambda: frozenset(flags))
    monkeypatch.setattr(dt, "BF16_CHECKED", frozenset({"checked-model"}))
    monkeypatch.setenv(dt.NATIVE_BF16_ENV, value)
    assert dt.native_bf16_override() is native
    assert dt.native_bf16("cpu") is native and dt.native_bf16("mps") is native
    assert dt.native_bf16("cuda") is native  # the variable answers: torch is not asked
    auto = "bfloat16" if native else "float32"
    assert dt.resolve_dtype("auto", "cpu", "checked-model") == auto
    assert dt.resolve_dtype_for("auto", "cpu", "checked-model") == auto
    assert dt.resolve_dtype("auto", "cpu", "other-model") == "float32"
    assert dt.resolve_dtype("float32", "cpu", "checked-model") == "float32"


@pytest.mark.parametrize("value", ["", "  "])
def test_an_empty_synrob_native_bf16_means_detect(monkeypatch: pytest.MonkeyPatch,
                                                  value: str) -> None:
    monkeypatch.setenv(dt.NATIVE_BF16_ENV, value)
    assert dt.native_bf16_override() is None
    for flags in ({"avx2"}, {"avx512_bf16"}, {"amx_bf16"}, {"bf16"}):
        monkeypatch.setattr(dt, "_cpu_flags", lambda f=flags: frozenset(f))
        assert dt.native_bf16("cpu") == (flags != {"avx2"})


@pytest.mark.parametrize("value", ["2", "auto", "bf16", "y"])
def test_an_invalid_synrob_native_bf16_is_a_parameter_error(monkeypatch: pytest.MonkeyPatch,
                                                            value: str) -> None:
    """Refused wherever ``auto`` is resolved, with or without a device or a checked model."""
    monkeypatch.setenv(dt.NATIVE_BF16_ENV, value)
    msg = f"invalid SYNROB_NATIVE_BF16={value!r}: use 1 .* 0 .* unset to detect it"
    for call in (lambda: dt.native_bf16("cpu"), lambda: dt.resolve_dtype("auto", "cpu", "m"),
                 lambda: dt.resolve_dtype_for("auto", "cuda:7", "minilm")):
        with pytest.raises(ParameterError, match=msg):
            call()
    assert dt.resolve_dtype_for("bfloat16", "cpu", "m") == "bfloat16"  # not read: no auto


def test_an_invalid_synrob_native_bf16_is_one_error_line_in_the_cli(
        cli, monkeypatch: pytest.MonkeyPatch, sample_dev: Path) -> None:
    monkeypatch.setenv(dt.NATIVE_BF16_ENV, "maybe")
    r = cli(["encode", "--encoder", "minilm", "--layers", "0", sample_dev])
    assert r.exit_code == 1 and r.stdout == "" and "Traceback" not in r.stderr
    assert r.stderr.splitlines()[-1] == (
        "synrob: error: invalid SYNROB_NATIVE_BF16='maybe': use 1 (native bf16), 0 (none) or "
        "leave it unset to detect it")


@pytest.mark.parametrize("value", ["0", "1"])
def test_the_encoder_resolves_auto_by_the_variable_and_keys_the_cache_with_it(
        tiny_lms, monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    from synrob.probe.encoders.transformer import TransformerEncoder

    monkeypatch.setattr(dt, "BF16_CHECKED", frozenset({"masked"}))  # tiny_lms["masked"]
    monkeypatch.setenv(dt.NATIVE_BF16_ENV, value)
    enc = TransformerEncoder(model=str(tiny_lms["masked"]))
    want = {"0": "float32", "1": "bfloat16"}[value]
    assert enc.options["precision"] == want
    assert enc.identity() == TransformerEncoder(model=str(tiny_lms["masked"]),
                                                precision=want).identity()


def test_bf16_and_fp32_representations_never_share_a_cache_entry(tiny_lms, sample_dev,
                                                                 no_bf16: None) -> None:
    from synrob.probe.encoders.transformer import TransformerEncoder
    from synrob.probe.representations.encoding import encode_corpus

    model = str(tiny_lms["masked"])
    auto = TransformerEncoder(model=model)
    fp32 = TransformerEncoder(model=model, precision="float32")
    bf16 = TransformerEncoder(model=model, precision="bfloat16")
    assert auto.options["precision"] == "float32"  # resolved when made: the key holds it
    assert auto.identity() == fp32.identity() != bf16.identity()
    a = encode_corpus(fp32, sample_dev, layers=[1], dtype="float32")
    b = encode_corpus(bf16, sample_dev, layers=[1], dtype="float32")
    c = encode_corpus(auto, sample_dev, layers=[1], dtype="float32")
    assert a.cache_path != b.cache_path and c.cache_path == a.cache_path
    va, vb = a.layer_matrix(1)[0], b.layer_matrix(1)[0]
    assert va.shape == vb.shape and not np.array_equal(va, vb)
    assert np.allclose(va, vb, atol=0.1)  # the same model, rounded to bf16


def test_auto_attention_is_eager_for_bf16_on_a_cpu_and_keys_the_cache(tiny_lms, sample_dev
                                                                       ) -> None:
    """``attention=auto``: eager for bf16 on a CPU, the model's default otherwise; the resolved
    kernel is in the identity, and eager and SDPA agree to fp32 rounding."""
    from synrob.probe.encoders.transformer import TransformerEncoder, resolve_attention
    from synrob.probe.representations.encoding import encode_corpus

    assert resolve_attention("bfloat16", "cpu") == "eager"
    assert resolve_attention("float32", "cpu") == resolve_attention("float16", "cpu") == "default"
    assert resolve_attention("bfloat16", "cuda") == "default"  # a GPU, or none: never eager
    model = str(tiny_lms["masked"])
    bf16 = TransformerEncoder(model=model, precision="bfloat16")
    bf16_sdpa = TransformerEncoder(model=model, precision="bfloat16", attention="sdpa")
    assert bf16.options["attention"] == "eager" and bf16.identity() != bf16_sdpa.identity()
    encs = {a: TransformerEncoder(model=model, precision="float32", attention=a)
            for a in ("auto", "sdpa", "eager")}
    assert encs["auto"].options["attention"] == "default"
    reps = {a: encode_corpus(e, sample_dev, layers=[2], dtype="float32") for a, e in encs.items()}
    assert encs["eager"].model.config._attn_implementation == "eager"
    assert encs["sdpa"].model.config._attn_implementation == "sdpa"
    assert len({r.cache_path for r in reps.values()}) == 3
    va, vb = reps["sdpa"].layer_matrix(2)[0], reps["eager"].layer_matrix(2)[0]
    assert np.allclose(va, vb, atol=1e-5)


def test_coco_and_lms_record_the_resolved_dtype(tiny_lms, no_bf16: None) -> None:
    from synrob.perturb.lm.loaded import load_lm
    from synrob.perturb.perturbers.coco import CoCo

    assert CoCo(model=str(tiny_lms["causal"])).options["dtype"] == "float32"
    assert CoCo(model=str(tiny_lms["causal"]), dtype="bfloat16").options["dtype"] == "bfloat16"
    lm = load_lm(str(tiny_lms["causal"]), device="cpu", dtype="bfloat16")
    assert lm.dtype == "bfloat16" and next(lm.model.parameters()).dtype.is_floating_point
    assert str(next(lm.model.parameters()).dtype) == "torch.bfloat16"
    assert load_lm(str(tiny_lms["causal"]), device="cpu").dtype == "float32"


def test_minilm_passed_the_bf16_check_so_auto_may_pick_bf16_for_it(
        monkeypatch: pytest.MonkeyPatch, detect: None) -> None:
    from synrob.probe.encoders.resolve import resolve_encoder

    model = resolve_encoder("minilm", {"precision": "float32"}).options["model"]
    monkeypatch.setattr(dt, "_cpu_flags", lambda: frozenset({"avx512_bf16"}))
    assert dt.resolve_dtype("auto", "cpu", model) == "bfloat16"
    assert dt.resolve_dtype("auto", "cpu", "smollm2") == "float32"  # never checked
    monkeypatch.setattr(dt, "_cpu_flags", lambda: frozenset({"avx2"}))
    assert dt.resolve_dtype("auto", "cpu", model) == "float32"
