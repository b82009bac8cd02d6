"""Shared fixtures: real EWT data from ../shared, the bundled sample, a CLI runner."""

from __future__ import annotations

import io
import os
import sys
from contextlib import redirect_stderr, redirect_stdout
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
EWT_DIR = Path(os.environ.get("SYNROB_EWT_DIR", ROOT.parent / "shared" / "data" / "ud" / "en_ewt"))


@pytest.fixture(scope="session")
def ewt_dir() -> Path:
    """The full UD English EWT treebank (../shared/data/ud/en_ewt)."""
    if not (EWT_DIR / "en_ewt-ud-dev.conllu").is_file():
        pytest.fail(f"EWT treebank not found at {EWT_DIR} (../shared must sit beside the repo)")
    return EWT_DIR


@pytest.fixture(scope="session")
def ewt_train(ewt_dir: Path) -> Path:
    return ewt_dir / "en_ewt-ud-train.conllu"


@pytest.fixture(scope="session")
def ewt_dev(ewt_dir: Path) -> Path:
    return ewt_dir / "en_ewt-ud-dev.conllu"


@pytest.fixture(scope="session")
def ewt_test(ewt_dir: Path) -> Path:
    return ewt_dir / "en_ewt-ud-test.conllu"


@pytest.fixture(scope="session")
def ewt_slices(tmp_path_factory, ewt_train: Path, ewt_dev: Path, ewt_test: Path
               ) -> dict[str, Path]:
    """The first 300 train, 100 dev and 80 test sentences of EWT, as files (read only)."""
    from itertools import islice

    from synrob.perturb.corpus import read_conllu, write_conllu

    d = tmp_path_factory.mktemp("ewt-slices")
    out = {}
    for name, src, n in (("train", ewt_train, 300), ("dev", ewt_dev, 100), ("test", ewt_test, 80)):
        out[name] = d / f"{name}.conllu"
        write_conllu(islice(read_conllu(src), n), out[name])
    return out


@pytest.fixture(scope="session")
def sample_dev() -> Path:
    from synrob.perturb.io.data import sample_path

    return sample_path("dev")


@dataclass
class CliResult:
    exit_code: int
    stdout: str
    stderr: str


def _run_cli(args: list[str], stdin: str | None = None) -> CliResult:
    from synrob.cli.app import run

    out, err = io.StringIO(), io.StringIO()
    old_stdin = sys.stdin
    if stdin is not None:
        sys.stdin = io.StringIO(stdin)
    try:
        with redirect_stdout(out), redirect_stderr(err):
            code = run([str(a) for a in args])
    finally:
        sys.stdin = old_stdin
    return CliResult(code, out.getvalue(), err.getvalue())


@pytest.fixture
def cli():
    """Run ``synrob ARGS...`` in-process through the real error boundary."""
    return _run_cli


@pytest.fixture(scope="session", autouse=True)
def _machine_independent_bf16():
    """``SYNROB_NATIVE_BF16=0`` for the whole session unless the runner sets it, so precision
    ``auto`` resolves to float32 on every CPU and no result depends on whether this one has
    native bf16. Session-scoped, so module fixtures that make an encoder see it too. The
    dtype-dependent tests (tests/probe/test_dtype.py, the MiniLM tests of
    tests/probe/test_encoders_real.py) set it themselves and run under both settings."""
    from synrob.perturb.lm.dtype import NATIVE_BF16_ENV

    with pytest.MonkeyPatch.context() as mp:
        if NATIVE_BF16_ENV not in os.environ:
            mp.setenv(NATIVE_BF16_ENV, "0")
        yield


@pytest.fixture(autouse=True)
def _no_shared_models_from_other_tests():
    """Each test starts as a fresh process would: no model another test loaded (and a module
    fixture may keep alive) is offered to its encoders (synrob.perturb.lm.shared_models), so a
    test of what a load reads sees its own load. Sharing within a test is unchanged."""
    from synrob.perturb.lm.shared_models import forget_models

    forget_models()


@pytest.fixture
def model_reads(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> list[str]:
    """The class of every model read from a checkpoint in the test (``from_pretrained`` of a
    model), from a cold start: an empty synrob cache and no LM loaded before it."""
    import transformers
    from synrob.perturb.lm import loaded as lm

    monkeypatch.setenv("SYNROB_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(lm, "_LOADED", {})
    got: list[str] = []
    real = transformers.PreTrainedModel.from_pretrained.__func__

    def counted(cls: Any, *args: Any, **kwargs: Any) -> Any:
        got.append(cls.__name__)
        return real(cls, *args, **kwargs)

    monkeypatch.setattr(transformers.PreTrainedModel, "from_pretrained", classmethod(counted))
    return got


@pytest.fixture(autouse=True)
def _isolated_cache(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch):
    """Each test session gets its own synrob cache unless SYNROB_CACHE is set by the runner."""
    if "SYNROB_CACHE" not in os.environ:
        monkeypatch.setenv("SYNROB_CACHE", str(tmp_path_factory.getbasetemp() / "synrob-cache"))
    if "SYNROB_DATA" not in os.environ and (EWT_DIR.parent.parent).is_dir():
        monkeypatch.setenv("SYNROB_DATA", str(EWT_DIR.parent.parent))  # ud:en_ewt:SPLIT


def _write_sample_slice(split: str, n: int, dest: Path) -> str:
    """The first ``n`` sentences of the bundled sample's ``split`` as a CoNLL-U file in ``dest``."""
    from synrob.perturb.io.data import resolve_input

    text = Path(resolve_input(f"sample:en_ewt:{split}")[0]).read_text(encoding="utf-8")
    blocks = [b for b in text.split("\n\n") if b.strip()][:n]
    path = dest / f"{split}-{n}.conllu"
    path.write_text("\n\n".join(blocks) + "\n\n", encoding="utf-8")
    return str(path)


@pytest.fixture(scope="session")
def sample_slice():
    """``sample_slice(split, n, dest) -> path``: a small slice of the bundled EWT sample."""
    return _write_sample_slice


TINY_WORDS = ["the", "cat", "sat", "on", "mat", "a", "dog", "ran", "."]
TINY_SPECIAL = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "<s>"]


def _tiny_word_tokenizer(with_template: bool):
    """A whitespace word-level tokenizer over TINY_WORDS: every word is exactly one token."""
    from tokenizers import Tokenizer, models, pre_tokenizers, processors
    from transformers import PreTrainedTokenizerFast

    vocab = {w: i for i, w in enumerate(TINY_SPECIAL + TINY_WORDS)}
    tok = Tokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    if with_template:
        tok.post_processor = processors.TemplateProcessing(
            single="[CLS] $A [SEP]", special_tokens=[("[CLS]", 2), ("[SEP]", 3)])
        return PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="[UNK]",
                                       pad_token="[PAD]", cls_token="[CLS]",
                                       sep_token="[SEP]", mask_token="[MASK]")
    return PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="[UNK]", bos_token="<s>",
                                   eos_token="<s>")


@pytest.fixture(scope="session")
def tiny_lms(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A tiny GPT-2 (causal) and a tiny BERT (masked), random weights, saved to a temp dir."""
    import torch
    from transformers import BertConfig, BertForMaskedLM, GPT2Config, GPT2LMHeadModel

    root = tmp_path_factory.mktemp("scoring")
    torch.manual_seed(0)
    n = len(TINY_SPECIAL) + len(TINY_WORDS)
    gpt = GPT2LMHeadModel(GPT2Config(vocab_size=n, n_embd=16, n_layer=2, n_head=2,
                                     n_positions=64))
    gpt.save_pretrained(root / "causal")
    _tiny_word_tokenizer(False).save_pretrained(root / "causal")
    bert = BertForMaskedLM(BertConfig(vocab_size=n, hidden_size=16, num_hidden_layers=2,
                                      num_attention_heads=2, intermediate_size=32,
                                      max_position_embeddings=64))
    bert.save_pretrained(root / "masked")
    _tiny_word_tokenizer(True).save_pretrained(root / "masked")
    return {"causal": root / "causal", "masked": root / "masked"}


def _ewt_texts(path: Path, n: int) -> list[str]:
    import itertools

    from synrob.perturb.corpus import read_conllu

    return [s.text for s in itertools.islice(read_conllu(path), n)]


def _build_causal(dest: Path, texts: list[str], n_layer: int = 2) -> Path:
    """A GPT-2 (2 layers unless said) with a byte-level BPE tokenizer trained on EWT text."""
    import torch
    from tokenizers import ByteLevelBPETokenizer
    from transformers import GPT2Config, GPT2LMHeadModel, PreTrainedTokenizerFast

    bpe = ByteLevelBPETokenizer()
    bpe.train_from_iterator(texts, vocab_size=1500, min_frequency=2,
                            special_tokens=["<|endoftext|>"])
    tok = PreTrainedTokenizerFast(tokenizer_object=bpe, bos_token="<|endoftext|>",
                                  eos_token="<|endoftext|>")
    torch.manual_seed(0)
    model = GPT2LMHeadModel(GPT2Config(vocab_size=len(tok), n_embd=32, n_layer=n_layer, n_head=2,
                                       n_positions=256, bos_token_id=0, eos_token_id=0))
    model.save_pretrained(dest)
    tok.save_pretrained(dest)
    return dest


def _build_masked(dest: Path, texts: list[str], n_layers: int = 2) -> Path:
    """A BERT masked LM (2 layers unless said) with a WordPiece tokenizer trained on EWT text."""
    import torch
    from tokenizers import BertWordPieceTokenizer
    from transformers import BertConfig, BertForMaskedLM, PreTrainedTokenizerFast

    wp = BertWordPieceTokenizer(lowercase=True)
    wp.train_from_iterator(texts, vocab_size=1500, min_frequency=2)
    tok = PreTrainedTokenizerFast(tokenizer_object=wp, unk_token="[UNK]", pad_token="[PAD]",
                                  cls_token="[CLS]", sep_token="[SEP]", mask_token="[MASK]")
    torch.manual_seed(0)
    model = BertForMaskedLM(BertConfig(vocab_size=len(tok), hidden_size=32,
                                       num_hidden_layers=n_layers,
                                       num_attention_heads=2, intermediate_size=64,
                                       max_position_embeddings=256))
    model.save_pretrained(dest)
    tok.save_pretrained(dest)
    return dest


@pytest.fixture(scope="session")
def tiny_ewt_lms(tmp_path_factory: pytest.TempPathFactory, ewt_train: Path) -> dict[str, str]:
    """A tiny causal (GPT-2) and masked (BERT) LM, random weights, tokenizers trained on EWT
    train text; saved with ``save_pretrained``: ``{"causal": dir, "masked": dir}``."""
    texts = _ewt_texts(ewt_train, 3000)
    root = tmp_path_factory.mktemp("tiny_lms")
    return {
        "causal": str(_build_causal(root / "gpt2", texts)),
        "masked": str(_build_masked(root / "bert", texts)),
    }


@pytest.fixture(scope="session")
def tiny_deep_models(tmp_path_factory: pytest.TempPathFactory, ewt_train: Path) -> dict[str, Path]:
    """4-block BERT, GPT-2 and LLaMA (random weights) with tokenizers trained on EWT train
    text, saved with ``save_pretrained``: ``{"bert": dir, "gpt2": dir, "llama": dir}``."""
    import torch
    from transformers import AutoTokenizer, LlamaConfig, LlamaModel

    texts = _ewt_texts(ewt_train, 2000)
    root = tmp_path_factory.mktemp("deep")
    out = {"bert": _build_masked(root / "bert", texts, n_layers=4),
           "gpt2": _build_causal(root / "gpt2", texts, n_layer=4)}
    tok = AutoTokenizer.from_pretrained(out["gpt2"])
    torch.manual_seed(0)
    LlamaModel(LlamaConfig(vocab_size=len(tok), hidden_size=32, num_hidden_layers=4,
                           num_attention_heads=2, num_key_value_heads=2, intermediate_size=64,
                           max_position_embeddings=256)).save_pretrained(root / "llama")
    tok.save_pretrained(root / "llama")
    out["llama"] = root / "llama"
    return out
