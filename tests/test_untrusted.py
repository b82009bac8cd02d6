"""Untrusted files and names: nothing user-supplied is unpickled (cache entries, saved probes,
gensim vector files), models never run hub code unless asked (``trust_remote_code``), and a
plugin name cannot make ``synrob plugins new`` write outside its folder.

Each crafted pickle holds an object whose unpickling creates a canary file, so "refused" also
means "never unpickled"."""

from __future__ import annotations

import pickle
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from synrob.perturb.errors import ResourceError, SynrobError


class _Canary:
    """Unpickling this calls ``open(path, "w")``: the file appears iff it was unpickled."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def __reduce__(self) -> tuple[Any, ...]:
        return (open, (str(self.path), "w"))


@pytest.fixture
def canary(tmp_path: Path) -> Path:
    return tmp_path / "UNPICKLED"


@pytest.fixture
def own_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("SYNROB_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache"


def _corpus(sample_dev: Path, tmp_path: Path, n: int = 20) -> Path:
    text = sample_dev.read_text(encoding="utf-8").split("\n\n")[:n]
    p = tmp_path / "small.conllu"
    p.write_text("\n\n".join(text) + "\n\n", encoding="utf-8")
    return p


# ---------------------------------------------------------------------- cache entries

def _poison(path: Path, how: str, canary: Path) -> None:
    if how == "object-npy":  # a valid .npy of dtype object: loading it needs pickle
        arr = np.empty(1, dtype=object)
        arr[0] = _Canary(canary)
        with open(path, "wb") as fh:
            np.save(fh, arr, allow_pickle=True)
    else:  # a bare pickle under the .npy name
        path.write_bytes(pickle.dumps([_Canary(canary)]))


@pytest.mark.parametrize("how", ["object-npy", "raw-pickle"])
@pytest.mark.parametrize("name", ["layer_0.npy", "offsets.npy"])
def test_tampered_cache_entry_is_refused_never_unpickled(sample_dev, tmp_path, own_cache,
                                                         canary, cli, name, how):
    from synrob.probe.representations.encoding import RepresentationSet, encode_corpus

    corpus = _corpus(sample_dev, tmp_path)
    rs = encode_corpus("glove-6b-50d", corpus)
    entry = rs.cache_path
    del rs
    _poison(entry / name, how, canary)
    with pytest.raises(SynrobError, match=f"{name}: (unreadable representation cache file|not)"):
        RepresentationSet(entry)
    with pytest.raises(SynrobError, match=name):  # a cache hit opens the entry the same way
        encode_corpus("glove-6b-50d", corpus)
    res = cli(["encode", "--encoder", "glove-6b-50d", corpus])
    assert res.exit_code == 1
    lines = res.stderr.splitlines()
    assert len(lines) == 2 and lines[0].startswith("synrob: encoding")
    assert lines[1].startswith("synrob: error: ") and name in lines[1]
    assert "Traceback" not in res.stderr and res.stdout == ""
    assert not canary.exists()


# ---------------------------------------------------------------------- saved probes

def test_saved_probe_weights_are_never_unpickled(tmp_path, canary):
    from synrob.probe.probes import LinearProbe, load_probe, save_probe
    from synrob.probe.tasks import DistanceTask

    task, probe = DistanceTask(), LinearProbe()
    module = probe.build(8, task.n_classes, task.kind)
    d = save_probe(tmp_path / "probe", probe, module, task, {"dim": 8})
    assert load_probe(d).meta["dim"] == 8
    # a torch.save-style pickle in place of the safetensors file
    (d / "probe.safetensors").write_bytes(pickle.dumps({"0.weight": _Canary(canary)}))
    with pytest.raises(ResourceError, match="weights do not match"):  # one clean error line
        load_probe(d)
    assert not canary.exists()


# ---------------------------------------------------------------------- the code itself

ROOT = Path(__file__).resolve().parents[1]
#: the only deserializers of pickles allowed in the packages, and why (docs/reliability.md)
ALLOWED = {
    ("probe/src/synrob/probe/experiments/backends.py", "cloudpickle.loads("):
        "between the processes of one run",
    ("probe/src/synrob/probe/encoders/static.py", "KeyedVectors.load("):
        "gensim .kv, only with -p allow_pickle=true",
}


def test_no_unpickling_calls_in_the_packages():
    import re

    unsafe = re.compile(r"\b(?:c?pickle\.loads?|cloudpickle\.loads?|joblib\.load|dill\.loads?"
                        r"|marshal\.loads?|shelve\.open|read_pickle"
                        r"|KeyedVectors\.load)\(|allow_pickle\s*=\s*True|weights_only\s*=\s*False")
    # np.load and torch.load are fine with pickles turned off
    needs = {"np.load": "allow_pickle=False", "torch.load": "weights_only=True"}
    call = re.compile(r"\b(np\.load|numpy\.load|torch\.load)\(((?:[^()]|\([^()]*\))*)\)")
    found, np_loads = [], 0
    for py in sorted((ROOT / "packages").rglob("*.py")) + sorted((ROOT / "plugins").rglob("*.py")):
        rel = str(py.relative_to(ROOT / "packages")) if "packages" in py.parts else str(py)
        text = py.read_text(encoding="utf-8")
        for m in unsafe.finditer(text):
            if (rel, m.group(0)) not in ALLOWED:
                found.append(f"{rel}: {m.group(0)}")
        for m in call.finditer(text):
            fn = m.group(1).replace("numpy.", "np.")
            np_loads += fn == "np.load"
            if needs[fn] not in m.group(2):
                found.append(f"{rel}: {fn}({m.group(2)}) without {needs[fn]}")
    assert found == []
    assert np_loads >= 3  # the scan sees the cache's and the static encoder's np.load calls


# ---------------------------------------------------------------------- gensim .kv vectors

def test_gensim_kv_pickle_is_refused_unless_allowed(tmp_path, sample_dev, canary, cli, own_cache):
    from synrob.probe.encoders.static import StaticEncoder

    evil = tmp_path / "vectors.kv"
    evil.write_bytes(pickle.dumps(_Canary(canary)))
    with pytest.raises(ResourceError, match="allow_pickle=true"):
        StaticEncoder(path=str(evil)).load()
    res = cli(["encode", "--encoder", "static", "-p", f"path={evil}", sample_dev])
    assert res.exit_code == 1 and "Traceback" not in res.stderr
    errors = [line for line in res.stderr.splitlines() if line.startswith("synrob: error:")]
    assert len(errors) == 1 and "pickle" in errors[0]
    assert not canary.exists()

    # the explicit opt-in loads a real gensim file
    from gensim.models import KeyedVectors

    kv = KeyedVectors(vector_size=3, count=2)
    kv.add_vectors(["cat", "dog"], np.array([[1, 2, 3], [4, 5, 6]], dtype=np.float32))
    good = tmp_path / "good.kv"
    kv.save(str(good))
    enc = StaticEncoder(path=str(good), allow_pickle="true")
    vecs, oov = enc.lookup(["dog", "emu"])
    assert oov == 1 and vecs[0].tolist() == [4, 5, 6] and vecs[1].tolist() == [0, 0, 0]
    # the opt-in does not change the cache key: it changes nothing in the vectors
    assert enc.identity() == StaticEncoder(path=str(good)).identity()


# ---------------------------------------------------------------------- trust_remote_code

class _Stop(Exception):
    pass


def _fake_transformers(monkeypatch: pytest.MonkeyPatch, *, stop_at: str) -> list[tuple[str, Any]]:
    """Replace transformers' Auto* loaders by recorders of ``trust_remote_code``."""
    import transformers
    from transformers import BertConfig

    calls: list[tuple[str, Any]] = []

    class _Tok:
        is_fast = True
        mask_token_id = 4

    def make(name: str, result: Any) -> type:
        class Fake:
            @staticmethod
            def from_pretrained(*args: Any, **kw: Any) -> Any:
                calls.append((name, kw.get("trust_remote_code", "MISSING")))
                if name == stop_at:
                    raise _Stop(name)
                return result() if callable(result) else result

            @staticmethod
            def from_config(*args: Any, **kw: Any) -> Any:
                calls.append((name + ".from_config", kw.get("trust_remote_code", "MISSING")))
                raise _Stop(name)

        return Fake

    def config() -> Any:
        return BertConfig(hidden_size=8, num_hidden_layers=1, num_attention_heads=2,
                          intermediate_size=8, architectures=["BertForMaskedLM"])

    for attr, result in (("AutoConfig", config), ("AutoTokenizer", _Tok),
                         ("AutoModel", None), ("AutoModelForMaskedLM", None),
                         ("AutoModelForCausalLM", None)):
        monkeypatch.setattr(transformers, attr, make(attr, result))
    return calls


def _model_dir(tmp_path: Path) -> Path:
    d = tmp_path / "model"
    d.mkdir(parents=True)
    (d / "config.json").write_text('{"model_type": "bert"}', encoding="utf-8")
    return d


@pytest.mark.parametrize(("params", "expected"), [({}, False),
                                                   ({"trust_remote_code": "true"}, True)])
def test_transformer_encoder_passes_trust_remote_code(tmp_path, monkeypatch, params, expected):
    from synrob.probe.encoders.transformer import TransformerEncoder

    calls = _fake_transformers(monkeypatch, stop_at="AutoModel")
    enc = TransformerEncoder(model=str(_model_dir(tmp_path)), device="cpu", **params)
    with pytest.raises(_Stop):
        enc.load()
    assert [name for name, _ in calls] == ["AutoConfig", "AutoTokenizer", "AutoModel"]
    assert all(trust is expected for _, trust in calls), calls


def test_random_init_and_fast_pos_default_to_untrusted(tmp_path, monkeypatch):
    from synrob.probe.encoders.control_encoders import FastPosEncoder, RandomInitEncoder

    model = str(_model_dir(tmp_path))
    calls = _fake_transformers(monkeypatch, stop_at="AutoModel")
    with pytest.raises(_Stop):
        RandomInitEncoder(model=model, device="cpu").load()
    with pytest.raises(_Stop):
        FastPosEncoder(model=model, positions="learned").load()
    assert ("AutoModel.from_config", False) in calls and ("AutoModel", False) in calls
    with pytest.raises(_Stop):  # positions=auto builds the architecture (meta device) untrusted
        FastPosEncoder(model=model)
    assert all(trust is False for _, trust in calls), calls


def test_model_that_needs_its_own_code_is_one_clean_error(tmp_path, monkeypatch):
    """transformers refuses a model with custom code when trust_remote_code is False
    (ValueError): each loader turns that into a ResourceError, not an internal error."""
    import transformers
    from synrob.probe.encoders.control_encoders import FastPosEncoder
    from synrob.probe.encoders.transformer import TransformerEncoder

    _fake_transformers(monkeypatch, stop_at="none")

    class NeedsCode:
        @staticmethod
        def from_pretrained(*args: Any, **kw: Any) -> Any:
            assert kw["trust_remote_code"] is False
            raise ValueError("this model contains custom code: pass trust_remote_code=True")

        from_config = from_pretrained

    monkeypatch.setattr(transformers, "AutoModel", NeedsCode)
    model = str(_model_dir(tmp_path))
    for enc in (TransformerEncoder(model=model, device="cpu"),
                FastPosEncoder(model=model, positions="learned")):
        with pytest.raises(ResourceError, match="custom code"):
            enc.load()
    with pytest.raises(ResourceError, match="custom code"):  # positions=auto builds it
        FastPosEncoder(model=model)


def test_load_lm_defaults_to_untrusted(tmp_path, monkeypatch):
    from synrob.perturb.lm import loaded as lm

    calls = _fake_transformers(monkeypatch, stop_at="AutoModelForMaskedLM")
    with pytest.raises(_Stop):
        lm.load_lm(str(_model_dir(tmp_path)), device="cpu")
    assert [name for name, _ in calls] == ["AutoConfig", "AutoTokenizer", "AutoModelForMaskedLM"]
    assert all(trust is False for _, trust in calls), calls
    calls.clear()
    with pytest.raises(_Stop):
        lm.load_lm(str(_model_dir(tmp_path / "again")), device="cpu", trust_remote_code=True)
    assert calls and all(trust is True for _, trust in calls), calls


def test_subword_tokenizer_from_the_hub_is_untrusted(monkeypatch):
    from synrob.perturb.lm import subword

    calls = _fake_transformers(monkeypatch, stop_at="AutoTokenizer")
    with pytest.raises(ResourceError, match="cannot load tokenizer"):  # wraps our _Stop
        subword._load_uncached("someone/custom-tokenizer")
    assert calls == [("AutoTokenizer", False)]


def test_coco_trust_remote_code_is_off_unless_asked(monkeypatch):
    from synrob.perturb.lm import loaded as lm
    from synrob.perturb.perturbers.coco import CoCo

    seen: list[bool] = []

    def fake_load_lm(spec: str, **kw: Any) -> Any:
        seen.append(kw["trust_remote_code"])
        raise _Stop(spec)

    monkeypatch.setattr(lm, "load_lm", fake_load_lm)  # setup() imports it from synrob.perturb.lm.loaded
    for params in ({}, {"trust_remote_code": "true"}):
        with pytest.raises(_Stop):
            CoCo(device="cpu", **params).setup()
    assert seen == [False, True]


# ---------------------------------------------------------------------- plugin scaffold names

@pytest.mark.parametrize("name", ["../x", "/abs/x", "a/b", "a\\b", "", ".", "..", "x/../../y",
                                  "~/x", "../../synrob-evil"])
def test_scaffold_names_that_could_escape_are_refused(cli, tmp_path, monkeypatch, name):
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    res = cli(["plugins", "new", name])
    assert res.exit_code == 1 and res.stdout == ""
    assert res.stderr.splitlines() == [res.stderr.strip()]  # exactly one line
    assert res.stderr.startswith("synrob: error: invalid plugin name")
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["work"]  # nothing written anywhere
    res = cli(["plugins", "new", name, "--dir", str(work / "chosen")])
    assert res.exit_code == 1 and res.stderr.startswith("synrob: error: invalid plugin name")
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["work"]
