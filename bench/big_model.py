"""Memory of an 8B model: layer-only loading, offload and a streaming cache (``name: value``).

The bench of issue 44 §4. It builds once, under ``$SYNROB_CACHE/big_model/``, a random-weight
checkpoint with **Llama-3-8B's shapes** (:data:`LLAMA3_8B`: hidden 4096, 32 blocks, FFN 14336,
32 query heads with 8 KV heads, vocabulary 128,256, rope theta 500,000, bf16, untied
``lm_head``), saved as a ``LlamaForCausalLM`` checkpoint in sharded safetensors (one shard for
the embeddings, one per block, one for the final norm and the head, and
``model.safetensors.index.json``): about 16 GB on disk.

**Building** (:func:`build_checkpoint`) never holds the model: each tensor is generated in
row chunks of at most 64 MiB (normal, std 0.02, each chunk from a ``torch.Generator`` seeded by
the build seed, the tensor's name and the chunk's index; norm weights are 1), written straight
into its shard by a streaming safetensors writer and freed, block by block. The seeds depend on
names only, so a checkpoint built with fewer layers (the 8-block *slice* of the offload check)
holds exactly the first blocks, embeddings, norm and head of the big one. While the blocks are
written, one probe sentence runs through each of them (transformers' own
``LlamaDecoderLayer``): the build fails unless every hidden state and the logits are finite,
and ``build.json`` records their largest magnitudes. The checkpoint is written in a temporary
directory and published by one ``rename``; a finished directory is reused, never rebuilt.

**The tokenizer** (:func:`build_tokenizer`, shared by every checkpoint of one vocabulary size) is
a byte-level BPE (``tokenizers``) trained on the ``# text`` lines of EWT train plus the
``wordfreq`` English word list (``large``, about 320,000 words; skipped when wordfreq is not
installed) up to ``vocab - 256`` tokens, then filled to exactly the vocabulary size with
added special tokens, Llama-3's way: ``<|begin_of_text|>`` (BOS, prepended by the
post-processor), ``<|end_of_text|>`` and ``<|reserved_special_token_N|>``. Where the training text
gives fewer merges than asked (the small shapes' sample), more reserved tokens fill the gap;
``build.json`` says how many tokens came from BPE. Saved as ``tokenizer.json`` +
``tokenizer_config.json``; ``AutoTokenizer.from_pretrained`` loads it as a fast tokenizer.

**Lines** (every peak RSS is that of one child process, ``ru_maxrss`` from ``os.wait4`` in a
small launcher that forks it, so that it does not start from this bench's own RSS; the ratios of
one invocation come from one run; logs go to stderr):

* ``cpu``, ``native_bf16``, ``device``, ``checkpoint``, ``checkpoint_gb``, ``build_s`` and
  ``build_peak_rss_gb`` (only when this run built it);
* ``layer_only_rss_ratio`` (target <= 1.3): peak RSS of ``synrob encode --layers 4 -p
  precision=bfloat16`` of the first ``--sentences`` (500) EWT dev sentences over the bytes of
  the embeddings plus 5 blocks (layer 4 of a model with a final norm runs one block more; the
  bytes are read from the shards' headers);
* ``layer_only_equal``: 1 when that run's layer-4 vectors (its cache entry, float16) equal
  those of :func:`reference_vectors`, a child process that runs the model block by block
  (embeddings, then each block's weights read from the shards with ``safetensors.safe_open``
  one at a time, through transformers' ``LlamaDecoderLayer`` and rotary embedding, on the very
  batches synrob builds, mean-pooled as synrob pools), else 0; ``layer_only_max_abs_diff``
  and ``reference_peak_rss_gb`` beside it;
* ``full_load_rss_ratio``: peak RSS of a plain ``AutoModel.from_pretrained(dir,
  dtype=torch.bfloat16)`` and one forward pass of 4 tokens over the same bytes
  (``full_load_only_peak_rss_gb``: the high-water mark before that pass; transformers 5 maps
  the checkpoint lazily, so the load alone reads next to nothing: see :meth:`Bench.full_load`);
* ``offload_rss_ratio`` (target <= 1.5): peak RSS of ``synrob score`` on 50 agreement pairs
  (``synrob perturb --kind agreement`` on EWT dev) with ``-p device_map=auto -p
  max_memory=6GiB -p offload=DIR``, over 6 GiB; ``offload_logprob_max_diff`` (target <=
  1e-3): the largest |log-prob difference| of those pairs' sentences on the 8-block slice,
  offloaded (``max_memory`` ``--slice-max-memory``, 2 GiB, so that part of the slice's 5.6 GB
  does go to disk) against the same run without offload, both one sentence a pass (the same
  passes: a device-mapped LM caps a pass's tokens, and in bf16 a pass's shape alone moves a
  log-prob). Printed as ``skipped (reason)``
  while ``synrob score --help`` lists no ``-p``/``--param``;
* ``rss_growth_4x_corpus`` (target <= 1.1): peak RSS of ``synrob encode --encoder minilm
  --layers 3`` of 2,000 EWT dev sentences over that of 500, each in a fresh process and cache;
* ``layer_only_load_seconds`` and ``full_load_seconds`` (with ``--device cuda``, or ``--only
  load_times``): wall seconds of ``synrob encode`` of one sentence at ``--layers 4`` and at
  the last layer (which needs every block), fresh caches, with their peak RSS
  (``load_times_*_peak_rss_gb``); on CUDA every measured child also gives ``*_cuda_peak_gb``
  (``torch.cuda.max_memory_allocated``).

Usage: ``python bench/big_model.py [--small] [--device cpu|cuda] [--only layer_only,equal,
full_load,offload,rss_growth,load_times] [--sentences 500] [--workdir DIR]``;
``--build-only`` builds (or finds) the checkpoint and stops. ``--small`` runs the same code on
small shapes (:data:`SMALL`, seconds). Outputs (corpus slices, child logs, fresh caches, offload
folders) go under ``--workdir`` (default: a new temporary directory).
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import hashlib
import inspect
import json
import math
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
EWT = Path(os.environ.get("SYNROB_EWT_DIR", ROOT.parent / "shared" / "data" / "ud" / "en_ewt"))
#: Version of the checkpoint layout and of the weight generator: part of the directory name.
FORMAT = 1
#: Largest chunk of a tensor generated (and held) at once; part of the generator (FORMAT).
CHUNK_BYTES = 64 << 20
N_SPECIAL = 256
BOS, EOS = "<|begin_of_text|>", "<|end_of_text|>"
GIB = 1 << 30
MEASUREMENTS = ("layer_only", "equal", "full_load", "offload", "rss_growth", "load_times")
PROBE_TEXT = "The probe reads the syntax of this sentence , and the model must not blow up ."


def log(msg: str) -> None:
    """A progress line on stderr."""
    print(f"[big_model {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def emit(name: str, value: Any) -> None:
    """One ``name: value`` line on stdout, at once."""
    print(f"{name}: {value}", flush=True)


# ---------------------------------------------------------------------------- shapes
@dataclass(frozen=True)
class Shapes:
    """A LLaMA checkpoint's shapes and generator settings."""

    hidden: int
    layers: int
    ffn: int
    heads: int
    kv_heads: int
    vocab: int
    max_positions: int = 8192
    rope_theta: float = 500000.0
    std: float = 0.02
    seed: int = 0

    @property
    def name(self) -> str:
        """The checkpoint's directory name: every field that changes its bytes."""
        return (f"llama-{self.hidden}h-{self.layers}l-{self.ffn}f-{self.heads}a{self.kv_heads}kv-"
                f"{self.vocab}v-std{self.std:g}-seed{self.seed}-v{FORMAT}")

    def config(self) -> Any:
        """The ``LlamaConfig`` (bf16, untied head, BOS/EOS the tokenizer's first two specials)."""
        from transformers import LlamaConfig

        bos = self.vocab - N_SPECIAL
        return LlamaConfig(
            vocab_size=self.vocab, hidden_size=self.hidden, intermediate_size=self.ffn,
            num_hidden_layers=self.layers, num_attention_heads=self.heads,
            num_key_value_heads=self.kv_heads, max_position_embeddings=self.max_positions,
            rope_theta=self.rope_theta, rms_norm_eps=1e-5, bos_token_id=bos,
            eos_token_id=bos + 1, tie_word_embeddings=False, dtype="bfloat16",
            architectures=["LlamaForCausalLM"])


#: Llama-3-8B's shapes.
LLAMA3_8B = Shapes(hidden=4096, layers=32, ffn=14336, heads=32, kv_heads=8, vocab=128256)
#: The same code on small shapes (``--small``, the unit test): about 13 MB.
SMALL = Shapes(hidden=256, layers=8, ffn=896, heads=8, kv_heads=2, vocab=8192)


def root_dir(cache: Path | None = None) -> Path:
    """Where the checkpoints live: ``$SYNROB_CACHE/big_model`` (synrob's cache root)."""
    from synrob.perturb.io.data import cache_dir

    return (cache or cache_dir()) / "big_model"


# ---------------------------------------------------------------------------- tokenizer
def default_texts(train: Path = EWT / "en_ewt-ud-train.conllu") -> Iterator[str]:
    """The tokenizer's training text: EWT train's ``# text`` lines (when the file is there),
    then the wordfreq English ``large`` list, 1,000 words a line with a leading space (when
    wordfreq is installed)."""
    if train.exists():
        with open(train, encoding="utf-8") as f:
            for line in f:
                if line.startswith("# text = "):
                    yield line[9:].rstrip("\n")
    else:
        log(f"tokenizer: {train} not found; training on the word list only")
    try:
        import wordfreq
    except ImportError:
        log("tokenizer: wordfreq not installed; the vocabulary is filled with reserved tokens")
        return
    words = wordfreq.top_n_list("en", 10**7, wordlist="large")
    for i in range(0, len(words), 1000):
        yield " " + " ".join(words[i:i + 1000])


def build_tokenizer(vocab: int, texts: Iterable[str]) -> tuple[Any, int]:
    """A byte-level BPE fast tokenizer of exactly ``vocab`` tokens and how many of them BPE
    training gave (the rest are added special tokens: BOS, EOS, reserved)."""
    from tokenizers import (
        AddedToken,
        Tokenizer,
        decoders,
        models,
        pre_tokenizers,
        processors,
        trainers,
    )
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=vocab - N_SPECIAL, min_frequency=0,
                                  show_progress=False, special_tokens=[],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tok.train_from_iterator(texts, trainer)
    n_bpe = tok.get_vocab_size()
    specials = [BOS, EOS] + [f"<|reserved_special_token_{i}|>" for i in range(vocab - n_bpe - 2)]
    tok.add_special_tokens([AddedToken(s, special=True, normalized=False) for s in specials])
    bos_id = tok.token_to_id(BOS)
    tok.post_processor = processors.Sequence([
        processors.ByteLevel(trim_offsets=False),
        processors.TemplateProcessing(single=f"{BOS} $A", pair=f"{BOS} $A {BOS} $B",
                                      special_tokens=[(BOS, bos_id)]),
    ])
    if tok.get_vocab_size() != vocab:
        raise RuntimeError(f"tokenizer has {tok.get_vocab_size()} tokens, not {vocab}")
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, bos_token=BOS, eos_token=EOS,
                                   model_max_length=LLAMA3_8B.max_positions)
    return fast, n_bpe


def tokenizer_dir(vocab: int, root: Path, texts: Iterable[str] | None = None) -> Path:
    """The tokenizer of ``vocab`` tokens under ``root`` (built once, published by rename)."""
    dest = root / f"tokenizer-{vocab}v-v{FORMAT}"
    if (dest / "tokenizer.json").exists():
        return dest
    root.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{dest.name}.", dir=root))
    t = time.perf_counter()
    tok, n_bpe = build_tokenizer(vocab, default_texts() if texts is None else texts)
    tok.save_pretrained(tmp)
    (tmp / "tokenizer_info.json").write_text(json.dumps(
        {"vocab": vocab, "bpe_tokens": n_bpe, "added_tokens": vocab - n_bpe,
         "seconds": round(time.perf_counter() - t, 1)}), encoding="utf-8")
    _publish(tmp, dest)
    log(f"tokenizer: {n_bpe} BPE tokens + {vocab - n_bpe} added, {time.perf_counter() - t:.1f} s")
    return dest


def _publish(tmp: Path, dest: Path) -> None:
    """Move the finished ``tmp`` to ``dest`` by one rename; if another builder won, drop ours."""
    os.chmod(tmp, 0o755)  # mkdtemp's 0700 is not the cache's
    try:
        os.rename(tmp, dest)
    except OSError:
        if not dest.exists():
            raise
        shutil.rmtree(tmp, ignore_errors=True)


# ---------------------------------------------------------------------------- weights
@dataclass(frozen=True)
class TensorSpec:
    """One bf16 tensor of the checkpoint; ``ones`` for norm weights."""

    name: str
    shape: tuple[int, ...]

    @property
    def ones(self) -> bool:
        return self.name.endswith("norm.weight")

    @property
    def nbytes(self) -> int:
        return 2 * math.prod(self.shape)


def tensor_specs(config: Any) -> list[TensorSpec]:
    """Every tensor of a ``LlamaForCausalLM`` of ``config``, from the model built on torch's
    meta device (no memory): the names transformers itself loads."""
    import torch
    from transformers import LlamaForCausalLM

    with torch.device("meta"):
        model = LlamaForCausalLM(config)
    return [TensorSpec(k, tuple(v.shape)) for k, v in model.state_dict().items()]


def shard_plan(specs: Sequence[TensorSpec], n_layers: int) -> list[list[TensorSpec]]:
    """The shards: the embeddings, one per block (in order), then the final norm and head."""
    blocks: list[list[TensorSpec]] = [[] for _ in range(n_layers)]
    head: list[TensorSpec] = []
    embed: list[TensorSpec] = []
    for s in specs:
        m = re.match(r"model\.layers\.(\d+)\.", s.name)
        if m:
            blocks[int(m.group(1))].append(s)
        elif s.name.startswith("model.embed_tokens."):
            embed.append(s)
        else:
            head.append(s)
    return [embed, *blocks, head]


def chunk_seed(seed: int, name: str, chunk: int) -> int:
    """The generator seed of chunk ``chunk`` of tensor ``name``: the same in any checkpoint."""
    digest = hashlib.sha256(f"{seed}:{name}:{chunk}".encode()).digest()
    return int.from_bytes(digest[:8], "little") >> 1


def tensor_chunks(spec: TensorSpec, seed: int, std: float) -> Iterator[Any]:
    """``spec``'s values as row chunks of at most :data:`CHUNK_BYTES` (bf16): ones for norm
    weights, else normal(0, ``std``) from a generator seeded per chunk (:func:`chunk_seed`)."""
    import torch

    if spec.ones:
        yield torch.ones(spec.shape, dtype=torch.bfloat16)
        return
    rows, row_bytes = spec.shape[0], spec.nbytes // spec.shape[0]
    step = max(1, CHUNK_BYTES // row_bytes)
    for k, a in enumerate(range(0, rows, step)):
        g = torch.Generator().manual_seed(chunk_seed(seed, spec.name, k))
        t = torch.empty((min(step, rows - a), *spec.shape[1:]), dtype=torch.bfloat16)
        yield t.normal_(0.0, std, generator=g)


def write_shard(path: Path, specs: Sequence[TensorSpec], seed: int, std: float) -> int:
    """Write a safetensors file of ``specs`` chunk by chunk (never a whole tensor in memory
    beyond one chunk); returns its tensor bytes."""
    import torch

    header: dict[str, Any] = {"__metadata__": {"format": "pt"}}
    offset = 0
    for s in specs:
        header[s.name] = {"dtype": "BF16", "shape": list(s.shape),
                          "data_offsets": [offset, offset + s.nbytes]}
        offset += s.nbytes
    raw = json.dumps(header, separators=(",", ":")).encode()
    raw += b" " * (-len(raw) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(raw)))
        f.write(raw)
        for s in specs:
            for chunk in tensor_chunks(s, seed, std):
                f.write(chunk.contiguous().view(torch.uint8).numpy())
    return offset


def read_header(path: Path) -> dict[str, Any]:
    """A safetensors file's header (its tensors' dtypes, shapes, offsets), without its data."""
    with open(path, "rb") as f:
        (n,) = struct.unpack("<Q", f.read(8))
        header = json.loads(f.read(n))
    header.pop("__metadata__", None)
    return header


def read_tensor(path: Path, name: str, rows: tuple[int, int] | None = None) -> Any:
    """Tensor ``name`` of a bf16 safetensors file (rows ``[a, b)`` of it when given), read
    with plain file reads into a fresh buffer: no memory map, so nothing stays resident."""
    import torch

    with open(path, "rb") as f:
        (n,) = struct.unpack("<Q", f.read(8))
        info = json.loads(f.read(n))[name]
        if info["dtype"] != "BF16":
            raise ValueError(f"{path}: {name} is {info['dtype']}, not BF16")
        start, end = info["data_offsets"]
        shape = info["shape"]
        row = (end - start) // shape[0]
        a, b = rows or (0, shape[0])
        f.seek(8 + n + start + a * row)
        buf = bytearray((b - a) * row)
        f.readinto(buf)
    return torch.frombuffer(buf, dtype=torch.bfloat16).view(b - a, *shape[1:])


def tensor_bytes(ckpt: Path) -> dict[str, int]:
    """Bytes of every tensor of a sharded checkpoint, from its shards' headers."""
    index = json.loads((ckpt / "model.safetensors.index.json").read_text(encoding="utf-8"))
    out: dict[str, int] = {}
    for shard in sorted(set(index["weight_map"].values())):
        for name, info in read_header(ckpt / shard).items():
            a, b = info["data_offsets"]
            out[name] = b - a
    return out


def layer_bytes(ckpt: Path, n_blocks: int) -> int:
    """Bytes of the embeddings plus the first ``n_blocks`` blocks: what a layer needs."""
    keep = re.compile(r"model\.embed_tokens\.|model\.layers\.(\d+)\.")
    total = 0
    for name, n in tensor_bytes(ckpt).items():
        m = keep.match(name)
        if m and (m.group(1) is None or int(m.group(1)) < n_blocks):
            total += n
    return total


# ---------------------------------------------------------------------------- running blocks
class Shards:
    """Tensors of a sharded checkpoint by name, through ``safetensors.safe_open`` (one file
    open at a time; a tensor is read when asked for)."""

    def __init__(self, ckpt: Path) -> None:
        self.ckpt = ckpt
        index = json.loads((ckpt / "model.safetensors.index.json").read_text(encoding="utf-8"))
        self.weight_map: dict[str, str] = index["weight_map"]

    def get(self, names: Sequence[str], device: str = "cpu") -> dict[str, Any]:
        """The tensors ``names`` (read from their shards) on ``device``."""
        from safetensors import safe_open

        by_file: dict[str, list[str]] = {}
        for n in names:
            by_file.setdefault(self.weight_map[n], []).append(n)
        out = {}
        for shard, keys in by_file.items():
            with safe_open(str(self.ckpt / shard), framework="pt", device=device) as f:
                for k in keys:
                    out[k] = f.get_tensor(k)
        return out

    def prefixed(self, prefix: str) -> list[str]:
        return [n for n in self.weight_map if n.startswith(prefix)]


def load_block(shards: Shards, config: Any, i: int, device: str, dtype: Any) -> Any:
    """Block ``i`` as transformers' ``LlamaDecoderLayer`` with its checkpoint weights (built on
    the meta device, weights assigned: no random init, no second copy)."""
    import torch
    from transformers.models.llama.modeling_llama import LlamaDecoderLayer

    prefix = f"model.layers.{i}."
    state = {k[len(prefix):]: v.to(dtype)
             for k, v in shards.get(shards.prefixed(prefix), device).items()}
    with torch.device("meta"):
        block = LlamaDecoderLayer(config, layer_idx=i)
    block.load_state_dict(state, assign=True, strict=True)
    return block.eval()


def block_config(ckpt_or_config: Any, attention: str) -> Any:
    """The checkpoint's config with transformers' attention kernel ``attention`` set."""
    from transformers import AutoConfig

    config = (AutoConfig.from_pretrained(ckpt_or_config) if isinstance(ckpt_or_config, Path)
              else ckpt_or_config)
    config._attn_implementation = attention
    return config


class BlockRunner:
    """Runs padded batches through a LLaMA stack one block at a time, as ``LlamaModel.forward``
    does: embeddings, the causal mask of transformers' ``create_causal_mask``, the rotary
    embedding of positions ``0..T-1``, each block (a ``LlamaDecoderLayer``), and the final
    norm only when the last block's state is asked for."""

    def __init__(self, config: Any, device: str) -> None:
        from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding

        self.config = config
        self.device = device
        self.rotary = LlamaRotaryEmbedding(config=config).to(device)

    def inputs(self, hidden: Any, mask: Any) -> tuple[Any, Any, Any]:
        """``(causal mask, position ids, (cos, sin))`` of one batch of states (B, T, D)."""
        import torch
        from transformers.masking_utils import create_causal_mask

        pos = torch.arange(hidden.shape[1], device=hidden.device).unsqueeze(0)
        kwargs: dict[str, Any] = {"config": self.config, "attention_mask": mask,
                                  "position_ids": pos}
        params = inspect.signature(create_causal_mask).parameters
        kwargs["inputs_embeds" if "inputs_embeds" in params else "input_embeds"] = hidden
        kwargs["cache" if "cache" in params else "past_key_values"] = None  # renamed in 5.2x
        if "cache_position" in params:  # older transformers 5 releases
            kwargs["cache_position"] = pos[0]
        causal = create_causal_mask(**kwargs)
        return causal, pos, self.rotary(hidden, position_ids=pos)

    def step(self, block: Any, hidden: Any, mask: Any) -> Any:
        """One block over one batch."""
        import torch

        causal, pos, rope = self.inputs(hidden, mask)
        with torch.inference_mode():
            return block(hidden, attention_mask=causal, position_ids=pos,
                         position_embeddings=rope, use_cache=False)


def run_blocks(ckpt: Path, batches: Sequence[tuple[Any, Any]], layer: int, *, device: str,
               dtype: Any, attention: str) -> list[Any]:
    """Hidden state ``layer`` (0 = embeddings) of each ``(input_ids, attention_mask)`` batch,
    computed block by block: the embeddings are read and freed, then each block's weights are
    read from the shards, run over every batch and freed. Memory: the embeddings or one block,
    plus every batch's states."""
    import torch

    config = block_config(ckpt, attention)
    shards = Shards(ckpt)
    runner = BlockRunner(config, device)
    emb = shards.get(["model.embed_tokens.weight"], device)["model.embed_tokens.weight"].to(dtype)
    with torch.inference_mode():
        hidden = [torch.nn.functional.embedding(ids.to(device), emb) for ids, _ in batches]
    del emb
    masks = [m.to(device) for _, m in batches]
    n_layers = int(config.num_hidden_layers)
    for i in range(min(layer, n_layers)):
        block = load_block(shards, config, i, device, dtype)
        hidden = [runner.step(block, h, m) for h, m in zip(hidden, masks, strict=True)]
        del block
        log(f"reference: block {i + 1}/{layer} done")
    if layer == n_layers:  # the last state is the final norm's output, as in LlamaModel
        from transformers.models.llama.modeling_llama import LlamaRMSNorm

        norm = LlamaRMSNorm(config.hidden_size, eps=config.rms_norm_eps).to(device, dtype)
        norm.weight.data = shards.get(["model.norm.weight"], device)["model.norm.weight"].to(dtype)
        with torch.inference_mode():
            hidden = [norm(h) for h in hidden]
    return hidden


def synrob_batches(ckpt: Path, sents: Sequence[Sequence[str]], *, device: str,
                   precision: str) -> tuple[list[Any], list[Any], int]:
    """The forward batches ``synrob encode`` runs for ``sents`` with this checkpoint, without
    loading its weights: per chunk of the corpus (``CHUNK_WORDS``), the tokenizer's words
    with the causal LM's start token (``word_tokens``), packed by the encoder's own
    ``batches``. Returns the batches, each batch's rows' global word ids (B, T; -1: no word)
    and the word count. Sentences longer than the window are not supported (EWT has none)."""
    import numpy as np
    import torch
    from synrob.probe.encoders.resolve import resolve_encoder
    from synrob.probe.encoders.transformer import Sequence_, word_tokens
    from synrob.probe.representations import encoding as reps
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(ckpt)
    enc = resolve_encoder(str(ckpt), {"device": device, "precision": precision})
    enc.device = device  # batches() reads the device and the pad id, nothing loaded
    enc.pad_id = tok.pad_token_id if tok.pad_token_id is not None else 0
    offsets = np.cumsum([0] + [len(s) for s in sents])
    bounds = reps._chunks(offsets, reps.CHUNK_WORDS)
    batches, targets = [], []
    for a, c in zip(bounds[:-1], bounds[1:], strict=True):
        seqs = []
        for i, (ids, wid) in enumerate(word_tokens(tok, sents[a:c], causal=True)):
            if len(ids) > min(int(enc.config.max_position_embeddings), tok.model_max_length):
                raise ValueError(f"sentence {a + i} is longer than the window")
            seqs.append(Sequence_(ids, np.where(wid >= 0, wid + offsets[a + i], -1), i))
        for b in enc.batches(seqs):
            target = torch.full(b.input_ids.shape, -1, dtype=torch.long)
            for r, s in enumerate(b.seqs):
                target[r, :len(s.target)] = torch.from_numpy(s.target)
            batches.append((b.input_ids, b.attention_mask))
            targets.append(target)
    return batches, targets, int(offsets[-1])


def pool_words(hidden: Sequence[Any], targets: Sequence[Any], n_words: int) -> Any:
    """Mean of each word's subword states, as synrob pools: float32 states times 1 / the
    word's token count, summed in token order (``index_add_``), cast to float16 once."""
    import torch

    counts = torch.zeros(n_words, dtype=torch.long)
    for t in targets:
        counts += torch.bincount(t[t >= 0], minlength=n_words)
    inv = 1.0 / counts.clamp(min=1).float()
    out = torch.zeros((n_words, hidden[0].shape[-1]), dtype=torch.float32)
    for h, t in zip(hidden, targets, strict=True):
        sel = (t >= 0).reshape(-1)
        rows = t.reshape(-1)[sel]
        vecs = h.reshape(-1, h.shape[-1])[sel.to(h.device)].float().cpu() * inv[rows][:, None]
        out.index_add_(0, rows, vecs)
    return out.to(torch.float16).numpy()


def reference_vectors(ckpt: Path, corpus: Path, layer: int, *, device: str = "cpu",
                      precision: str = "bfloat16") -> Any:
    """Layer ``layer``'s float16 word vectors of ``corpus`` (n_words, D), block by block
    (:func:`run_blocks`) on synrob's batches (:func:`synrob_batches`), in ``precision`` with
    the attention kernel synrob picks for it on ``device``."""
    import torch
    from synrob.probe.encoders.transformer import resolve_attention
    from synrob.probe.representations import encoding as reps

    attention = resolve_attention(precision, device)
    attention = "sdpa" if attention == "default" else attention
    sents = reps.read_words(corpus)
    batches, targets, n_words = synrob_batches(ckpt, sents, device=device, precision=precision)
    hidden = run_blocks(ckpt, batches, layer, device=device, dtype=getattr(torch, precision),
                        attention=attention)
    return pool_words(hidden, targets, n_words)


# ---------------------------------------------------------------------------- building
def _probe_ids(ckpt_tok: Path) -> Any:
    """The probe sentence's token ids (with BOS): (1, T) int64."""
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(ckpt_tok)
    return tok(PROBE_TEXT, return_tensors="pt")["input_ids"]


def build_checkpoint(shapes: Shapes, root: Path | None = None,
                     texts: Iterable[str] | None = None) -> tuple[Path, bool]:
    """The checkpoint of ``shapes`` under ``root`` (default :func:`root_dir`), built unless
    it is there; returns it and whether this call built it. See the module docstring."""
    import torch

    root = root or root_dir()
    dest = root / shapes.name
    if (dest / "build.json").exists():
        return dest, False
    t0 = time.perf_counter()
    tok_dir = tokenizer_dir(shapes.vocab, root, texts)
    tmp = Path(tempfile.mkdtemp(prefix=f".{shapes.name}.", dir=root))
    try:
        config = shapes.config()
        config.save_pretrained(tmp)
        for f in tok_dir.iterdir():
            shutil.copy2(f, tmp / f.name)
        shards = shard_plan(tensor_specs(config), shapes.layers)
        n = len(shards)
        names = [f"model-{k + 1:05d}-of-{n:05d}.safetensors" for k in range(n)]
        check = _FiniteCheck(tmp, block_config(config, "eager"))
        weight_map, total = {}, 0
        for k, (specs, fname) in enumerate(zip(shards, names, strict=True)):
            total += write_shard(tmp / fname, specs, shapes.seed, shapes.std)
            weight_map.update({s.name: fname for s in specs})
            check.after_shard(k, fname, n)
            log(f"build: shard {k + 1}/{n} written ({total / GIB:.2f} GiB so far)")
        (tmp / "model.safetensors.index.json").write_text(json.dumps(
            {"metadata": {"total_size": total}, "weight_map": weight_map}, indent=2),
            encoding="utf-8")
        info = json.loads((tok_dir / "tokenizer_info.json").read_text(encoding="utf-8"))
        (tmp / "build.json").write_text(json.dumps({
            "shapes": dataclasses.asdict(shapes), "format": FORMAT, "chunk_bytes": CHUNK_BYTES,
            "total_bytes": total, "seconds": round(time.perf_counter() - t0, 1),
            "tokenizer": info, "probe": check.record(), "torch": torch.__version__,
        }, indent=2), encoding="utf-8")
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    _publish(tmp, dest)
    return dest, True


class _FiniteCheck:
    """Runs the probe sentence through each block as its shard is written (bf16, eager
    attention); raises unless every state and the logits are finite."""

    def __init__(self, ckpt: Path, config: Any) -> None:
        self.ckpt, self.config = ckpt, config
        self.ids = _probe_ids(ckpt)
        self.hidden: Any = None
        self.mask: Any = None
        self.max_abs: list[float] = []
        self.logits: dict[str, float] = {}
        self.runner = BlockRunner(config, "cpu")

    def after_shard(self, k: int, fname: str, n_shards: int) -> None:
        """Advance the probe through shard ``k`` (embeddings, block ``k - 1``, or the head),
        read with plain file reads (:func:`read_tensor`: no memory map to stay resident)."""
        import torch

        path = self.ckpt / fname
        if k == 0:
            self.hidden = torch.cat([read_tensor(path, "model.embed_tokens.weight", (i, i + 1))
                                     for i in self.ids[0].tolist()])[None]
            self.mask = torch.ones_like(self.ids)
        elif k < n_shards - 1:
            from transformers.models.llama.modeling_llama import LlamaDecoderLayer

            prefix = f"model.layers.{k - 1}."
            state = {n[len(prefix):]: read_tensor(path, n) for n in read_header(path)}
            with torch.device("meta"):
                block = LlamaDecoderLayer(self.config, layer_idx=k - 1)
            block.load_state_dict(state, assign=True, strict=True)
            self.hidden = self.runner.step(block.eval(), self.hidden, self.mask)
            del block, state
        else:
            self._head(path)
            return
        peak = float(self.hidden.float().abs().max())
        self.max_abs.append(peak)
        if not math.isfinite(peak):
            raise RuntimeError(f"hidden state {k} of the probe sentence is not finite")

    def _head(self, path: Path) -> None:
        """The final norm and the logits, the head read in chunks of rows."""
        import torch
        from transformers.models.llama.modeling_llama import LlamaRMSNorm

        norm = LlamaRMSNorm(self.config.hidden_size, eps=self.config.rms_norm_eps)
        norm.weight.data = read_tensor(path, "model.norm.weight")
        rows, dim = read_header(path)["lm_head.weight"]["shape"]
        step = max(1, CHUNK_BYTES // (2 * dim))
        peak, total, sq, n = 0.0, 0.0, 0.0, 0
        with torch.inference_mode():
            h = norm(self.hidden)
            for a in range(0, rows, step):
                logits = (h @ read_tensor(path, "lm_head.weight", (a, min(rows, a + step))).T)
                logits = logits.float()
                if not torch.isfinite(logits).all():
                    raise RuntimeError("the probe sentence's logits are not finite")
                peak = max(peak, float(logits.abs().max()))
                total += float(logits.sum())
                sq += float(logits.pow(2).sum())
                n += logits.numel()
        mean = total / n
        self.logits = {"max_abs": round(peak, 4), "std": round(math.sqrt(sq / n - mean**2), 4)}

    def record(self) -> dict[str, Any]:
        return {"text": PROBE_TEXT, "tokens": int(self.ids.shape[1]),
                "hidden_max_abs": [round(x, 3) for x in self.max_abs], "logits": self.logits}


# ---------------------------------------------------------------------------- children
@dataclass
class ChildRun:
    """A measured child process: its peak RSS (bytes, ``os.wait4``'s ``ru_maxrss``), wall
    seconds, exit status, stdout, and on CUDA its peak of allocated GPU memory."""

    rss_bytes: int
    seconds: float
    returncode: int
    stdout: str
    stderr_tail: str
    cuda_peak_bytes: int | None = None

    @property
    def ok(self) -> bool:
        return self.returncode == 0


#: Runs ``python -m MODULE ARGS`` (or ``-c CODE ARGS``) and, at exit, writes its CUDA peak.
_WRAP = r"""
import atexit, json, runpy, sys
report = sys.argv[1]
def _cuda():
    torch = sys.modules.get("torch")
    rec = {}
    if torch is not None and torch.cuda.is_available() and torch.cuda.is_initialized():
        rec["cuda_peak_bytes"] = max(torch.cuda.max_memory_allocated(i)
                                     for i in range(torch.cuda.device_count()))
    with open(report, "w") as f:
        json.dump(rec, f)
atexit.register(_cuda)
if sys.argv[2] == "-c":
    code = sys.argv[3]
    sys.argv = ["-c", *sys.argv[4:]]
    exec(compile(code, "<child>", "exec"), {"__name__": "__main__"})
else:
    sys.argv = [sys.argv[2], *sys.argv[3:]]
    runpy.run_module(sys.argv[0], run_name="__main__", alter_sys=True)
"""


#: The launcher of a measured child: a small process that forks it, waits for it with
#: ``os.wait4`` and writes ``ru_maxrss exit_status`` to the file ``argv[1]``. On Linux a child
#: keeps, across ``exec``, the high-water RSS of the memory it was forked with (all of a large
#: parent's, or with vfork the parent's own peak), so a child forked straight from this bench
#: would report at least the bench's RSS; forked from this launcher, it starts near zero.
_LAUNCH = r"""
import os, sys
pid = os.fork()
if pid == 0:
    try:
        os.execvp(sys.argv[2], sys.argv[2:])
    finally:
        os._exit(127)
_, status, usage = os.wait4(pid, 0)
code = os.waitstatus_to_exitcode(status)
with open(sys.argv[1], "w") as f:
    f.write(f"{usage.ru_maxrss} {code}")
sys.exit(code if 0 <= code < 256 else 1)
"""


#: The full-load child: ``AutoModel.from_pretrained(argv[1], dtype=bf16)`` on ``argv[2]``,
#: prints its high-water RSS (KiB, ``VmHWM``) and seconds after the load, then runs one
#: forward pass (BOS and three tokens, every hidden state).
_FULL_LOAD = r"""
import sys, time, torch
from transformers import AutoModel
t = time.perf_counter()
dev = sys.argv[2]
m = AutoModel.from_pretrained(sys.argv[1], dtype=torch.bfloat16,
                              device_map=None if dev == "cpu" else dev)
hwm = next(line.split()[1] for line in open("/proc/self/status") if line.startswith("VmHWM:"))
print(hwm, time.perf_counter() - t, flush=True)
ids = torch.tensor([[m.config.bos_token_id, 1000, 2000, 3000]], device=m.device)
with torch.inference_mode():
    out = m(input_ids=ids, output_hidden_states=True)
assert len(out.hidden_states) == m.config.num_hidden_layers + 1
"""


def run_measured(cmd: Sequence[str], *, env: dict[str, str] | None = None,
                 logs: Path | None = None) -> ChildRun:
    """Run ``cmd`` in its own process and return its peak RSS (``ru_maxrss`` from
    ``os.wait4``, taken by the small launcher :data:`_LAUNCH` that forks it, KiB on Linux),
    wall time, exit status and stdout; stdout and stderr go to ``logs`` (default: a
    temporary directory, removed)."""
    tmp = Path(tempfile.mkdtemp(prefix="synrob-child-")) if logs is None else None
    where = logs if logs is not None else tmp
    assert where is not None
    where.mkdir(parents=True, exist_ok=True)
    out_path, err_path, report = where / "stdout.txt", where / "stderr.txt", where / "rusage.txt"
    report.unlink(missing_ok=True)
    try:
        with open(out_path, "wb") as out, open(err_path, "wb") as err:
            t0 = time.perf_counter()
            subprocess.run([sys.executable, "-S", "-c", _LAUNCH, str(report), *cmd],
                           stdout=out, stderr=err, env=env, check=False)
            seconds = time.perf_counter() - t0
        maxrss_kb, code = (int(x) for x in report.read_text().split())
        stdout = out_path.read_text(encoding="utf-8", errors="replace")
        tail = err_path.read_text(encoding="utf-8", errors="replace").strip().splitlines()[-5:]
        return ChildRun(maxrss_kb * 1024, seconds, code, stdout, "\n".join(tail))
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)


def run_python(args: Sequence[str], *, env: dict[str, str] | None = None,
               logs: Path | None = None) -> ChildRun:
    """:func:`run_measured` of ``python ARGS`` (``-m MODULE ...`` or ``-c CODE ...``) under a
    wrapper that also reports the child's CUDA peak (None where it used no GPU)."""
    where = logs or Path(tempfile.mkdtemp(prefix="synrob-child-"))
    report = where / "cuda.json"
    where.mkdir(parents=True, exist_ok=True)
    mode = list(args)
    if mode[0] == "-m":
        mode = mode[1:]
    run = run_measured([sys.executable, "-c", _WRAP, str(report), *mode], env=env, logs=where)
    with contextlib.suppress(OSError, ValueError):  # no report: the child died early
        run.cuda_peak_bytes = json.loads(report.read_text()).get("cuda_peak_bytes")
    if logs is None:
        shutil.rmtree(where, ignore_errors=True)
    return run


def child_env(cache: Path) -> dict[str, str]:
    """The environment of a measured child: this one, with ``SYNROB_CACHE=cache`` (fresh)."""
    cache.mkdir(parents=True, exist_ok=True)
    return dict(os.environ, SYNROB_CACHE=str(cache), PYTHONUNBUFFERED="1")


def first_sentences(src: Path, n: int, dest: Path) -> Path:
    """The first ``n`` sentences of CoNLL-U ``src`` (comments kept) written to ``dest``."""
    if dest.exists():
        return dest
    blocks: list[str] = []
    cur: list[str] = []
    with open(src, encoding="utf-8") as f:
        for line in f:
            if line.strip():
                cur.append(line)
            elif cur:
                blocks.append("".join(cur))
                cur = []
                if len(blocks) == n:
                    break
    if cur and len(blocks) < n:
        blocks.append("".join(cur))
    if len(blocks) < n:
        raise ValueError(f"{src} has {len(blocks)} sentences, fewer than {n}")
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = dest.with_suffix(".tmp")
    tmp.write_text("\n".join(blocks) + "\n", encoding="utf-8")
    os.replace(tmp, dest)
    return dest


def mem_available() -> int:
    """``MemAvailable`` of ``/proc/meminfo`` in bytes (0 where unknown)."""
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def warn_memory(what: str, need: int) -> None:
    """A stderr warning when the machine has less memory available than ``need`` bytes."""
    avail = mem_available()
    if avail and avail < need:
        log(f"warning: {what} may need ~{need / GIB:.1f} GiB; MemAvailable {avail / GIB:.1f} GiB")


def cpu_model() -> str:
    """The CPU's model name (``/proc/cpuinfo``), else the platform's machine type."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    import platform

    return platform.machine()


def score_has_params(env: dict[str, str] | None = None) -> bool:
    """Whether ``synrob score --help`` lists ``-p``/``--param``."""
    out = subprocess.run([sys.executable, "-m", "synrob.cli", "score", "--help"],
                         capture_output=True, text=True, env=env, check=False).stdout
    return bool(re.search(r"(^|\s)(-p,|--param\b)", out))


def gb(n: float) -> str:
    return f"{n / 1e9:.2f}"


# ---------------------------------------------------------------------------- measurements
@dataclass
class Bench:
    """One invocation's settings and what its measurements share."""

    args: argparse.Namespace
    workdir: Path
    ckpt: Path
    shapes: Shapes
    dev_n: Path
    encode_cache: Path | None = None

    @property
    def device(self) -> str:
        return str(self.args.device)

    @property
    def cuda(self) -> bool:
        return self.device.startswith("cuda")

    def synrob(self, *argv: str) -> list[str]:
        return ["-m", "synrob.cli", *argv]

    def report_child(self, name: str, run: ChildRun, tag: str | None = None) -> bool:
        """Print ``name: failed (...)`` for a failed child, else its CUDA peak when it has one
        (``TAG_cuda_peak_gb``; ``tag`` defaults to ``name`` without ``_ratio``)."""
        if not run.ok:
            last = (run.stderr_tail.splitlines() or ["no stderr"])[-1]
            emit(name, f"failed (exit {run.returncode}: {last})")
            return False
        if run.cuda_peak_bytes is not None:
            emit(f"{tag or name.removesuffix('_ratio')}_cuda_peak_gb", gb(run.cuda_peak_bytes))
        return True

    def layer_only(self, equal: bool) -> None:
        """``layer_only_rss_ratio`` and, with ``equal``, ``layer_only_equal``."""
        layer = self.args.layer
        denom = layer_bytes(self.ckpt, layer + 1)
        emit("layer_only_denominator_gb", gb(denom))
        warn_memory("synrob encode (whole model until layer-only loading lands)",
                    sum(tensor_bytes(self.ckpt).values()))
        cache = self.workdir / "cache-layer-only"
        shutil.rmtree(cache, ignore_errors=True)
        log(f"layer_only: synrob encode --layers {layer} of {self.args.sentences} sentences")
        run = run_python(self.synrob(
            "encode", "--encoder", str(self.ckpt), "--layers", str(layer), "--device",
            self.device, "-p", f"precision={self.args.precision}", str(self.dev_n)),
            env=child_env(cache), logs=self.workdir / "logs-layer-only")
        if not self.report_child("layer_only_rss_ratio", run):
            return
        emit("layer_only_peak_rss_gb", gb(run.rss_bytes))
        emit("layer_only_encode_s", f"{run.seconds:.1f}")
        emit("layer_only_rss_ratio", f"{run.rss_bytes / denom:.3f}")
        entry = json.loads(run.stdout.strip().splitlines()[-1])["cache_path"]
        if equal:
            self.equal(Path(entry))

    def equal(self, entry: Path) -> None:
        """``layer_only_equal``: the cache entry's vectors against :func:`reference_vectors`
        (run in a child, its peak RSS printed)."""
        import numpy as np
        from synrob.probe.representations.encoding import RepresentationSet

        out = self.workdir / "reference.npy"
        log("equal: the block-by-block reference")
        code = ("import sys, numpy as np; sys.path.insert(0, sys.argv[1]); import big_model as b; "
                "np.save(sys.argv[2], b.reference_vectors(b.Path(sys.argv[3]), b.Path(sys.argv[4])"
                ", int(sys.argv[5]), device=sys.argv[6], precision=sys.argv[7]))")
        run = run_python(["-c", code, str(Path(__file__).parent), str(out), str(self.ckpt),
                          str(self.dev_n), str(self.args.layer), self.device,
                          self.args.precision],
                         env=child_env(self.workdir / "cache-reference"),
                         logs=self.workdir / "logs-reference")
        if not self.report_child("layer_only_equal", run, "reference"):
            return
        emit("reference_peak_rss_gb", gb(run.rss_bytes))
        ref = np.load(out)
        got = np.asarray(RepresentationSet(entry).layer_matrix(self.args.layer)[0])
        if got.shape != ref.shape or got.dtype != ref.dtype:
            emit("layer_only_equal", f"0 (cache {got.dtype}{got.shape}, reference "
                                     f"{ref.dtype}{ref.shape})")
            return
        diff = float(np.max(np.abs(got.astype(np.float32) - ref.astype(np.float32))))
        emit("layer_only_max_abs_diff", f"{diff:.6g}")
        emit("layer_only_equal", int(np.array_equal(got, ref)))

    def full_load(self) -> None:
        """``full_load_rss_ratio``: a plain ``AutoModel.from_pretrained`` of the checkpoint and
        one forward pass of a 4-token input. transformers 5 maps a bf16 safetensors checkpoint
        lazily on a CPU (the parameters are views of the memory-mapped files), so the load
        alone reads next to nothing (``full_load_only_peak_rss_gb``, the child's high-water
        mark before the pass); the pass touches every weight, as any use of the model does."""
        denom = layer_bytes(self.ckpt, self.args.layer + 1)
        warn_memory("AutoModel.from_pretrained", sum(tensor_bytes(self.ckpt).values()))
        log("full_load: AutoModel.from_pretrained and one forward pass")
        run = run_python(["-c", _FULL_LOAD, str(self.ckpt), self.device],
                         env=child_env(self.workdir / "cache-full-load"),
                         logs=self.workdir / "logs-full-load")
        if not self.report_child("full_load_rss_ratio", run):
            return
        load_kb, load_s = run.stdout.split()[:2]
        emit("full_load_only_peak_rss_gb", gb(int(load_kb) * 1024))
        emit("full_load_only_s", f"{float(load_s):.1f}")
        emit("full_load_peak_rss_gb", gb(run.rss_bytes))
        emit("full_load_s", f"{run.seconds:.1f}")
        emit("full_load_rss_ratio", f"{run.rss_bytes / denom:.3f}")

    def rss_growth(self) -> None:
        """``rss_growth_4x_corpus``: MiniLM ``--layers 3`` on 4x the sentences."""
        peaks = {}
        for n in (self.args.sentences, 4 * self.args.sentences):
            corpus = first_sentences(EWT / "en_ewt-ud-dev.conllu", n,
                                     self.workdir / f"ewt-dev-{n}.conllu")
            cache = self.workdir / f"cache-growth-{n}"
            shutil.rmtree(cache, ignore_errors=True)
            log(f"rss_growth: minilm --layers 3 on {n} sentences")
            run = run_python(self.synrob("encode", "--encoder", "minilm", "--layers", "3",
                                         "--device", self.device, str(corpus)),
                             env=child_env(cache), logs=self.workdir / f"logs-growth-{n}")
            if not self.report_child("rss_growth_4x_corpus", run, f"rss_growth_{n}"):
                return
            peaks[n] = run.rss_bytes
            emit(f"rss_growth_peak_rss_gb_{n}", gb(run.rss_bytes))
        small, big = sorted(peaks)
        emit("rss_growth_4x_corpus", f"{peaks[big] / peaks[small]:.3f}")

    def load_times(self) -> None:
        """``layer_only_load_seconds`` / ``full_load_seconds``: ``synrob encode`` of one
        sentence at ``--layers 4`` and at the last layer, fresh caches."""
        one = first_sentences(EWT / "en_ewt-ud-dev.conllu", 1, self.workdir / "ewt-dev-1.conllu")
        for name, layer in (("layer_only", self.args.layer), ("full", self.shapes.layers)):
            cache = self.workdir / f"cache-load-{name}"
            shutil.rmtree(cache, ignore_errors=True)
            log(f"load_times: synrob encode --layers {layer} of one sentence")
            run = run_python(self.synrob(
                "encode", "--encoder", str(self.ckpt), "--layers", str(layer), "--device",
                self.device, "-p", f"precision={self.args.precision}", str(one)),
                env=child_env(cache), logs=self.workdir / f"logs-load-{name}")
            if self.report_child(f"load_times_{name}", run):
                emit(f"{name}_load_seconds", f"{run.seconds:.1f}")
                emit(f"load_times_{name}_peak_rss_gb", gb(run.rss_bytes))

    def offload(self) -> None:
        """``offload_rss_ratio`` and ``offload_logprob_max_diff`` (see the module docstring);
        skipped while ``synrob score`` has no ``-p``."""
        if not score_has_params():
            reason = "synrob score has no -p/--param option yet (issue 44 §3)"
            emit("offload_rss_ratio", f"skipped ({reason})")
            emit("offload_logprob_max_diff", f"skipped ({reason})")
            return
        dev = EWT / "en_ewt-ud-dev.conllu"
        pairs = self.workdir / "agreement.conllu"
        if not pairs.exists():
            log("offload: synrob perturb --kind agreement")
            with (open(pairs.with_suffix(".tmp"), "w", encoding="utf-8") as f,
                  open(self.workdir / "perturb.err", "w", encoding="utf-8") as err):
                subprocess.run([sys.executable, "-m", "synrob.cli", "perturb", "--kind",
                                "agreement", str(dev)], stdout=f, stderr=err, check=True,
                               env=child_env(self.workdir / "cache-perturb"))
            os.replace(pairs.with_suffix(".tmp"), pairs)
        budget = parse_bytes(self.args.max_memory)
        run = self.score(self.ckpt, dev, pairs, "big", self.args.max_memory)
        if not self.report_child("offload_rss_ratio", run):
            return
        emit("offload_peak_rss_gb", gb(run.rss_bytes))
        emit("offload_score_s", f"{run.seconds:.1f}")
        emit("offload_rss_ratio", f"{run.rss_bytes / budget:.3f}")
        sliced = dataclasses.replace(self.shapes, layers=min(8, self.shapes.layers))
        slice_dir = build_in_child(sliced, self.workdir, "offload_slice_")
        # one sentence per pass in both runs: a device-mapped LM caps the tokens of a pass
        # (LOGITS_BUDGET), so default batches differ, and in bf16 a pass's shape alone moves a
        # sentence's log-prob by up to 0.15 nats; the same passes leave the offload's effect
        plain = self.score(slice_dir, dev, pairs, "slice-plain", None, batch_size=1)
        offl = self.score(slice_dir, dev, pairs, "slice-offload", self.args.slice_max_memory,
                          batch_size=1)
        if not (self.report_child("offload_logprob_max_diff", plain, "offload_slice_plain")
                and self.report_child("offload_logprob_max_diff", offl, "offload_slice")):
            return
        a, b = _logprobs(plain.stdout), _logprobs(offl.stdout)
        if a.keys() != b.keys() or not a:
            emit("offload_logprob_max_diff", f"failed ({len(a)} vs {len(b)} pairs scored)")
            return
        emit("offload_slice_pairs", len(a))
        emit("offload_logprob_max_diff",
             f"{max(abs(x - y) for k in a for x, y in zip(a[k], b[k], strict=True)):.3g}")

    def score(self, ckpt: Path, original: Path, pairs: Path, tag: str,
              max_memory: str | None, batch_size: int | None = None) -> ChildRun:
        """``synrob score`` of the first ``--pairs`` pairs (JSON lines), offloaded to disk
        under ``max_memory`` when given, ``batch_size`` sentences a pass when given."""
        argv = ["score", "--lm", str(ckpt), str(original), str(pairs), "--json",
                "--bootstrap", "0", "--limit", str(self.args.pairs), "--dtype",
                self.args.precision, "--device", self.device]
        if batch_size is not None:
            argv += ["--batch-size", str(batch_size)]
        if max_memory is not None:
            folder = self.workdir / f"offload-{tag}"
            shutil.rmtree(folder, ignore_errors=True)
            argv += ["-p", "device_map=auto", "-p", f"max_memory={max_memory}",
                     "-p", f"offload={folder}"]
        log(f"offload: synrob score ({tag})")
        return run_python(self.synrob(*argv), env=child_env(self.workdir / f"cache-{tag}"),
                          logs=self.workdir / f"logs-score-{tag}")


def _logprobs(stdout: str) -> dict[str, tuple[float, float]]:
    """``(log-prob original, log-prob perturbed)`` per scored pair of ``synrob score --json``."""
    out = {}
    for line in stdout.splitlines():
        rec = json.loads(line)
        if "logprob_original" in rec and "sentence" in rec:
            out[str(rec["sentence"])] = (float(rec["logprob_original"]),
                                         float(rec["logprob_perturbed"]))
    return out


def parse_bytes(text: str) -> int:
    """``6GiB``, ``500MiB``, ``2GB``... in bytes."""
    m = re.fullmatch(r"\s*([\d.]+)\s*([KMGT]?)(i?)B?\s*", text, re.IGNORECASE)
    if not m:
        raise ValueError(f"not a size: {text!r}")
    base = 1024 if m.group(3) or not m.group(2) else 1000
    return int(float(m.group(1)) * base ** " KMGT".index(m.group(2).upper() or " "))


def build_in_child(shapes: Shapes, workdir: Path, prefix: str = "") -> Path:
    """Find the checkpoint of ``shapes``, or build it in a measured child process (printing
    ``{prefix}build_s`` and ``{prefix}build_peak_rss_gb``)."""
    dest = root_dir() / shapes.name
    if (dest / "build.json").exists():
        return dest
    log(f"building {dest} (once)")
    code = ("import json, sys; sys.path.insert(0, sys.argv[1]); import big_model as b; "
            "print(b.build_checkpoint(b.Shapes(**json.loads(sys.argv[2])))[0])")
    run = run_measured([sys.executable, "-c", code, str(Path(__file__).parent),
                        json.dumps(dataclasses.asdict(shapes))], env=dict(os.environ),
                       logs=workdir / f"logs-{prefix}build")
    if not run.ok:
        raise SystemExit(f"big_model: build failed (exit {run.returncode}): {run.stderr_tail}")
    emit(f"{prefix}build_s", f"{run.seconds:.1f}")
    emit(f"{prefix}build_peak_rss_gb", gb(run.rss_bytes))
    return dest


def main(argv: Sequence[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--small", action="store_true", help="small shapes (seconds)")
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--only", default="",
                    help=f"comma list of {','.join(MEASUREMENTS)} (default: all; load_times only "
                         "with --device cuda)")
    ap.add_argument("--sentences", type=int, default=500)
    ap.add_argument("--pairs", type=int, default=50)
    ap.add_argument("--layer", type=int, default=4)
    ap.add_argument("--precision", default="bfloat16")
    ap.add_argument("--max-memory", default="6GiB")
    ap.add_argument("--slice-max-memory", default="2GiB")
    ap.add_argument("--workdir", default="")
    ap.add_argument("--build-only", action="store_true")
    args = ap.parse_args(argv)
    only = set(filter(None, args.only.split(","))) or (
        set(MEASUREMENTS) - (set() if args.device.startswith("cuda") else {"load_times"}))
    if only - set(MEASUREMENTS):
        ap.error(f"unknown --only {sorted(only - set(MEASUREMENTS))}")
    workdir = Path(args.workdir or tempfile.mkdtemp(prefix="synrob-bench-big-")).resolve()
    workdir.mkdir(parents=True, exist_ok=True)
    log(f"workdir {workdir}")

    from synrob.perturb.lm.device import resolve_device
    from synrob.perturb.lm.dtype import native_bf16

    dev = resolve_device(args.device)
    emit("cpu", cpu_model())
    emit("device", dev)
    emit("native_bf16", str(native_bf16(dev)).lower())
    shapes = SMALL if args.small else LLAMA3_8B
    ckpt = build_in_child(shapes, workdir)
    emit("checkpoint", ckpt)
    emit("checkpoint_gb", gb(sum(tensor_bytes(ckpt).values())))
    if args.build_only:
        return
    dev_n = first_sentences(EWT / "en_ewt-ud-dev.conllu", args.sentences,
                            workdir / f"ewt-dev-{args.sentences}.conllu")
    bench = Bench(args, workdir, ckpt, shapes, dev_n)
    if only & {"layer_only", "equal"}:
        bench.layer_only(equal="equal" in only)
    if "full_load" in only:
        bench.full_load()
    if "offload" in only:
        bench.offload()
    if "rss_growth" in only:
        bench.rss_growth()
    if "load_times" in only:
        bench.load_times()


if __name__ == "__main__":
    main()
