"""Any Hugging Face transformer as a word encoder (encoder-only, decoder-only, T5-style encoder).

Pipeline for a batch of sentences (lists of syntactic words):

1. The fast tokenizer splits pre-split words (``is_split_into_words=True``); ``word_ids()`` maps
   every subword to its word. Byte-level BPE (GPT-2, RoBERTa, LLaMA-3-style) gets the prefix
   space on every word, as ``add_prefix_space=True`` would give.
2. A sentence longer than the window is cut, at word boundaries, into overlapping windows; each
   word takes its vector from the window where it has the most context (``min(left, right)``
   words of context; for causal models the earliest window, which has the most left context).
3. Sequences are sorted by length and packed into batches under a padded-token budget; one
   forward pass per batch with ``output_hidden_states=True`` under ``torch.inference_mode``.
4. Subwords are pooled into words (``mean``, ``first``, ``last``) with one gather, one
   ``index_add_`` and one cast over all layers of the whole batch, then ``index_copy_``-ed
   straight into the output arrays (float16 cache memmaps in :func:`encode_corpus`) - no
   per-word or per-sentence Python loop. The gather runs on the model's device; on CUDA the
   gathered states come back by a non-blocking copy into pinned memory, and the host's share
   (mean, cast, writes) of one batch runs while the GPU computes the next.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from contextlib import nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from synrob.perturb.errors import DeviceError, ParameterError, ResourceError
from synrob.perturb.lm.device import DEVICE_HELP, resolve_device
from synrob.perturb.lm.dtype import DTYPE_HELP, DTYPES, resolve_dtype_for
from synrob.perturb.lm.models import (
    ModelSource,
    dequantised_copy,
    from_pretrained,
    load_config,
    resolve_model,
)
from synrob.perturb.lm.placement import PLACEMENT_PARAMS, Placement, input_device
from synrob.perturb.lm.shared_models import offer_model, shared_model
from synrob.perturb.params import Param

from .base import EncodedBatch, Encoder, file_fingerprint, tree_fingerprint, word_offsets
from .early_exit import EarlyExit
from .early_exit import plan as plan_early_exit
from .layer_only import blocks_needed, check_loaded, truncated_config
from .sharing import load_lm_first, model_key

__all__ = ["TransformerEncoder", "Sequence_", "Batch", "encode_words", "start_token",
           "with_start", "word_tokens", "is_byte_level", "needs_prefix_space"]

_PRECISIONS = DTYPES
_ATTENTION = ("auto", "default", "sdpa", "eager")
#: Largest share of a batch's longest sequence that a shorter one may be padded by.
_MAX_PAD = 0.1
_WEIGHT_PATTERNS = ("config.json", "*.safetensors", "*.bin", "tokenizer.json", "*.model",
                    "vocab.txt", "vocab.json", "merges.txt")


@dataclass
class Sequence_:
    """One model input: a sentence or one window of it.

    ``ids``: (n_tokens,) int64; ``target``: (n_tokens,) int64 row of the word each token pools
    into (in the chunk's word order), -1 for special tokens and words owned by another window;
    ``sent``: sentence index in the chunk; ``is_first``/``is_last``: whether this window holds
    the sentence's first/last token; ``span``: the window's words ``[a, b)`` (None when the
    sequence is the whole sentence).
    """

    ids: np.ndarray
    target: np.ndarray
    sent: int
    is_first: bool = True
    is_last: bool = True
    span: tuple[int, int] | None = None


@dataclass
class Batch:
    """Padded model input. ``input_ids``/``attention_mask``: (batch, max_len) int64."""

    input_ids: Any
    attention_mask: Any
    seqs: list[Sequence_]

    @property
    def n_tokens(self) -> int:
        return int(sum(len(s.ids) for s in self.seqs))


class TransformerEncoder(Encoder):
    """Hidden states of a Hugging Face model, aligned to syntactic words."""

    name = "transformer"
    summary = "Any Hugging Face model (name, directory or .gguf): all hidden states, word-pooled"
    paper = "Hewitt & Manning 2019; Tenney et al. 2019"
    params = (
        Param("model", str, "", "Hugging Face model name, local directory, or .gguf file"),
        Param("revision", str, "main", "hub revision (ignored for local paths)"),
        Param("pooling", str, "mean", "how subwords pool into a word", ("mean", "first", "last")),
        Param("device", str, "auto", DEVICE_HELP),
        Param("precision", str, "auto", "model weights/compute dtype: " + DTYPE_HELP
              + "; resolved when the encoder is made, so the cache key holds the real one",
              _PRECISIONS),
        Param("attention", str, "auto",
              "attention kernel (transformers' attn_implementation): auto (eager for bfloat16 "
              "on a CPU, where torch's SDPA kernel was measured slower than eager; else the "
              "model's default), default, sdpa or eager; resolved when the encoder is made",
              _ATTENTION),
        Param("token_budget", int, 0,
              "max padded tokens per forward batch (0 = auto: 1024 on CPU, where small "
              "batches stay in cache and run ~1.4x faster than 8192; 16384 on CUDA)"),
        Param("window", int, 0, "max tokens per window incl. specials (0 = model maximum)"),
        Param("trust_remote_code", bool, False, "allow custom model code from the hub"),
        Param("bos", str, "auto",
              "start token of a causal LM: auto (prepend BOS, else EOS, when the tokenizer adds "
              "no special token before the words: never pooled into a word) or no", ("auto", "no")),
        *PLACEMENT_PARAMS,
        Param("layer_only", bool, True,
              "load only the blocks the requested layers need (exact: the vectors are the "
              "full model's; false loads the whole model)"),
    )
    runtime_params = frozenset({"device", "token_budget", "layer_only"})
    #: On CUDA, overlap each batch's host work (pooling, cache writes) with the next batch's
    #: forward pass; False runs the serial loop (same values; tests/test_cuda.py compares).
    overlap_host_work = True
    #: Run only as many blocks as the deepest layer asked for needs (:mod:`.early_exit`; same
    #: values); False always runs the whole model (tests and bench/encode.py compare).
    early_exit = True

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        if not self.options["model"]:
            raise ResourceError("transformer encoder: pass the model with -p model=NAME_OR_PATH")
        if self.options["token_budget"] < 0:
            raise ParameterError("transformer encoder: token_budget must be positive (0 = auto)")
        if self.options["precision"] == "auto":  # the cache key holds the dtype really used
            self.options["precision"] = resolve_dtype_for("auto", self.options["device"],
                                                          self.options["model"])
        if self.options["attention"] == "auto":  # and the attention kernel
            self.options["attention"] = resolve_attention(self.options["precision"],
                                                          self.options["device"])
        self.placement = Placement.from_options(self.options)
        self.placement.check(self.options["model"])
        self._config: Any = None
        self._files: ModelSource | None = None
        #: Deepest layer the encoder was asked for (None: not said, load the whole model) and
        #: how many blocks the loaded model has.
        self._deepest: int | None = None
        self.blocks_loaded = 0
        self.model: Any = None
        self.tokenizer: Any = None
        self.device = "cpu"
        self._prefix_space = False
        self._exit_plan: EarlyExit | None = None
        self._bos_id: int | None = None
        #: ``(spec, device)`` of a causal LM this process loads anyway (:meth:`share_lm`).
        self._lm_first: tuple[str, str] | None = None

    # ------------------------------------------------------------------ source
    @property
    def source(self) -> ModelSource:
        """Where the model's files are (:func:`synrob.perturb.lm.models.resolve_model`)."""
        return resolve_model(self.options["model"], revision=self.options["revision"])

    def _not_found(self, source: ModelSource, what: str, reason: str, offline: bool
                   ) -> ResourceError:
        """The encoder's wording of a failed load (a :data:`~synrob.perturb.lm.models.LoadError`)."""
        from .aliases import ALIASES

        raw = self.options["model"]
        if source.is_local:
            return ResourceError(f"cannot load model from {raw}: {reason}")
        return ResourceError(
            f"cannot load model {raw!r}: not a local path and not available from the Hugging "
            f"Face cache or hub ({reason}); pass a model directory or .gguf file, or an offline "
            f"alias ({', '.join(sorted(ALIASES))})"
        )

    def from_pretrained(self, factory: Any, what: str, **kwargs: Any) -> Any:
        """``factory.from_pretrained`` of this encoder's model through the one model loader
        (offline first, ``trust_remote_code`` as configured, the encoder's one-line errors)."""
        return from_pretrained(factory, self.files, what, error=self._not_found,
                               trust_remote_code=self.options["trust_remote_code"], **kwargs)

    @property
    def files(self) -> ModelSource:
        """Where config, tokenizer and weights are read from: :attr:`source`, or for a GGUF model
        its float32 dequantised copy (:func:`~synrob.perturb.lm.models.dequantised_copy`, made once
        and shared with the language-model loader), so that the GGUF file is parsed once per
        machine, not per process, and its blocks can be loaded alone."""
        if self._files is None:
            src = self.source
            if src.gguf_file is not None and src.cache_dir is not None:
                from synrob.perturb.lm.loaded import head_factory

                src = dequantised_copy(src, self.options["trust_remote_code"], head_factory)
            self._files = src
        return self._files

    def identity(self) -> dict[str, Any]:
        """The base identity, with the placement options only where they are not the default
        (:meth:`Placement.identity`): a plain load keeps the cache key it always had, and a
        device-mapped, offloaded or quantized one is keyed and recorded apart."""
        out = super().identity()
        defaults = {p.name for p in PLACEMENT_PARAMS} - set(self.placement.identity())
        out["options"] = {k: v for k, v in out["options"].items() if k not in defaults}
        return out

    def resource_identity(self) -> dict[str, Any]:
        src = self.source
        if not src.is_local:
            return {"hub": src.location, "revision": self.options["revision"]}
        if src.gguf_file is not None:
            f = Path(src.location) / src.gguf_file
            return {"files": {f.name: file_fingerprint(f)}}
        return {"files": tree_fingerprint(Path(src.location), _WEIGHT_PATTERNS)}

    @property
    def config(self) -> Any:
        if self._config is None:  # one parse per process for every user of these files
            self._config = load_config(self.files, error=self._not_found,
                                       trust_remote_code=self.options["trust_remote_code"])
        return self._config

    @property
    def num_layers(self) -> int:
        """Hidden states of one forward pass: embeddings (0) plus one per layer."""
        plain = self._plain_config_int("num_hidden_layers")
        return (plain if plain is not None else int(self.config.num_hidden_layers)) + 1

    def _plain_config_int(self, name: str) -> int | None:
        """``name`` as a local model's ``config.json`` writes it (an int at the top level), read
        without importing transformers (1.5 s a process that only reads cached representations;
        a GGUF model's from its dequantised copy, never from the GGUF file); None where the file
        does not say it so (hub names, a GGUF model not yet copied, ``n_layer``-style configs:
        then :attr:`config` answers)."""
        if self._config is not None:
            return None
        src = self.source
        if not src.is_local or (src.gguf_file is not None and src.cache_dir is None):
            return None
        folder = Path(src.location) if src.gguf_file is None else src.cache_dir
        assert folder is not None
        value = _config_json(folder / "config.json")
        got = value.get(name) if isinstance(value, dict) else None
        return got if isinstance(got, int) and not isinstance(got, bool) else None

    @property
    def dim(self) -> int:
        return int(self.config.hidden_size)

    @property
    def max_tokens(self) -> int:
        """Window size in tokens, specials included."""
        if self.options["window"]:
            return int(self.options["window"])
        limits = []
        for attr in ("max_position_embeddings", "n_positions"):
            v = getattr(self.config, attr, None)
            if isinstance(v, int) and v > 0:
                limits.append(v)
                break
        tl = getattr(self.tokenizer, "model_max_length", None)
        if isinstance(tl, int) and 0 < tl < 1_000_000:
            limits.append(tl)
        return min(limits) if limits else 512

    # ------------------------------------------------------------------ loading
    def for_layers(self, layers: Sequence[int]) -> None:
        """The layers the next encodings ask for: with ``layer_only`` (default), a model is
        loaded with only the blocks the deepest one needs (:mod:`.layer_only`); a loaded model
        with too few blocks is dropped, to be loaded again deeper."""
        deepest = max(layers, default=0)
        if self._deepest is not None and deepest <= self._deepest:
            return
        self._deepest = deepest
        if self.model is not None and self.blocks_loaded < self._blocks_wanted():
            self.model, self._loaded = None, False

    def _blocks_wanted(self) -> int:
        """Blocks the next load reads: all, unless layer-only loading applies."""
        n = self.num_layers - 1
        if not self.options["layer_only"] or self._deepest is None:
            return n
        return blocks_needed(self._deepest, n)

    def share_lm(self, spec: str, device: str) -> None:
        """Say that this process loads the causal LM ``spec`` on ``device`` anyway (its runs
        score with it): when it is this encoder's model in its dtype, the first load loads the
        LM and uses its blocks, so the checkpoint is read once (:mod:`.sharing`)."""
        self._lm_first = (spec, device)

    def _load_model(self, dtype: Any) -> Any:
        """The model, with the blocks :meth:`_blocks_wanted` says, placed as
        :attr:`placement` says: a model of the same files already loaded in this process
        when there is one (:mod:`synrob.perturb.lm.shared_models`), else read and offered."""
        wanted = self._blocks_wanted()
        key = model_key(self)
        if key is not None and self._lm_first is not None:
            load_lm_first(self, *self._lm_first)
        shared = shared_model(key, wanted) if key is not None else None
        if shared is not None:
            model, self.blocks_loaded = shared
            return model
        model = self._read_model(dtype, wanted)
        if key is not None:
            offer_model(key, model, self.blocks_loaded)
        return model

    def _read_model(self, dtype: Any, wanted: int) -> Any:
        """The model read from its files with ``wanted`` blocks (all: the whole model)."""
        from transformers import AutoModel

        kwargs = {**self.attention_kwargs,
                  **self.placement.from_pretrained_kwargs(self.device, dtype)}
        short = truncated_config(self.config, wanted) if wanted < self.num_layers - 1 else None
        if short is None:
            self.blocks_loaded = self.num_layers - 1
            return self.from_pretrained(AutoModel, "weights", dtype=dtype, config=self.config,
                                        **kwargs)
        model, info = self.from_pretrained(AutoModel, "weights", dtype=dtype, config=short,
                                           output_loading_info=True, **kwargs)
        check_loaded(info.get("missing_keys", ()), self.options["model"])
        self.blocks_loaded = wanted
        return model

    @property
    def attention_kwargs(self) -> dict[str, str]:
        """``attn_implementation`` for transformers, unless the model's default is asked for."""
        attn = self.options["attention"]
        return {} if attn == "default" else {"attn_implementation": attn}

    def _load(self) -> None:
        import torch

        self.device = resolve_device(self.options["device"])
        self._read_tokenizer()
        model = self._load_model(getattr(torch, self.options["precision"]))
        if getattr(self.config, "is_encoder_decoder", False):
            model = model.get_encoder()
        if self.placement.plain:
            model = model.to(self.device)
        else:  # accelerate placed it: inputs go where its first module is
            self.device = input_device(model, self.device)
        self.model = model.eval()
        self._tokenizer_facts()
        self._exit_plan = self._plan_early_exit()

    def load_tokenizer(self) -> None:
        """The tokenizer and what it says, without the weights (what :attr:`max_tokens` and
        the words' first token positions need): the start token, the special tokens around
        the words, padding. Idempotent; :meth:`load` does it too."""
        self._read_tokenizer()
        self._tokenizer_facts()

    def _read_tokenizer(self) -> None:
        """:attr:`tokenizer`, read once (a fast one: word alignment needs ``word_ids()``)."""
        if self.tokenizer is not None:
            return
        from transformers import AutoTokenizer
        from transformers.utils import logging as hf_logging

        hf_logging.set_verbosity_error()
        hf_logging.disable_progress_bar()
        tok = self.from_pretrained(AutoTokenizer, "tokenizer", config=self.config)
        if not getattr(tok, "is_fast", False):
            raise ResourceError(
                f"model {self.options['model']!r} has no fast tokenizer (tokenizer.json); "
                "word alignment needs word_ids()"
            )
        self.tokenizer = tok

    def _tokenizer_facts(self) -> None:
        """What the tokenizer says of the model's inputs: prefix space, start token, the
        special tokens before and after the words, padding and unknown ids."""
        tok = self.tokenizer
        self._prefix_space = needs_prefix_space(tok)
        self.causal = _is_causal(self.config)
        self._bos_id = self._start_token()
        probe = self._tokenize([["a"]])[0][1]
        self._n_prefix = int(np.argmax(probe >= 0))
        self._n_suffix = len(probe) - 1 - int(np.nonzero(probe >= 0)[0].max())
        self.pad_id = tok.pad_token_id if tok.pad_token_id is not None else 0
        self.unk_id = tok.unk_token_id
        if self.max_tokens < self._n_prefix + self._n_suffix + 2:
            raise ParameterError(f"window {self.max_tokens} is too small for this tokenizer")

    def _start_token(self) -> int | None:
        """The token prepended to every sequence (:func:`start_token`), or None."""
        return start_token(self.tokenizer, causal=self.causal, bos=self.options["bos"],
                           prefix_space=self._prefix_space, model=self.options["model"])

    def _plan_early_exit(self) -> EarlyExit | None:
        """The model's early-exit plan (:func:`.early_exit.plan`), checked on one short
        sentence: None when it must always run in full."""
        import torch

        ids = self.tokenizer("The probe reads the syntax of this sentence .",
                             return_tensors="pt")["input_ids"].to(self.device)
        mask = torch.ones_like(ids)

        def run(model: Any) -> Any:
            with torch.inference_mode():
                return model(input_ids=ids, attention_mask=mask, output_hidden_states=True,
                             return_dict=True).hidden_states

        return plan_early_exit(self.model, int(self.model.config.num_hidden_layers), run)

    @property
    def _active_exit(self) -> EarlyExit | None:
        """The early-exit plan forward passes use: None when they run the whole model."""
        return self._exit_plan if self.early_exit else None

    def blocks_run(self, layers: Sequence[int]) -> int:
        """How many of the model's blocks a forward pass for ``layers`` runs."""
        self.for_layers(layers)
        self.load()
        plan = self._active_exit
        return self.blocks_loaded if plan is None else plan.depth(layers)

    # ------------------------------------------------------------------ tokenization
    def _tokenize(self, sents: Sequence[Sequence[str]]) -> list[tuple[np.ndarray, np.ndarray]]:
        """``(input ids, word id per token, -1 for special tokens)`` per pre-split sentence,
        with the causal LM's start token first when :meth:`_start_token` gives one.

        Calls the fast tokenizer's Rust backend directly (``encode_batch`` on pre-tokenized
        input, exactly what ``tokenizer(..., is_split_into_words=True)`` calls) with
        truncation and padding off: that skips transformers' per-sentence Python conversion,
        which cost as much as the tokenization itself.
        """
        return with_start(self._encode_words(sents), self._bos_id)

    def _encode_words(self, sents: Sequence[Sequence[str]]
                      ) -> list[tuple[np.ndarray, np.ndarray]]:
        """The tokenizer's own ``(ids, word ids)`` of each sentence (:func:`encode_words`)."""
        return encode_words(self.tokenizer, sents, prefix_space=self._prefix_space)

    def sequences(self, batch: Sequence[Sequence[str]]) -> list[Sequence_]:
        """Model inputs for ``batch``: one per sentence, or overlapping windows when too long."""
        self.load()
        offsets = word_offsets(batch)
        limit = self.max_tokens
        out: list[Sequence_] = []
        for i, (ids, wid) in enumerate(self._tokenize(batch)):
            if len(ids) <= limit:
                target = np.where(wid >= 0, wid + offsets[i], -1)
                out.append(Sequence_(ids, target, i))
            else:
                out.extend(self._windows(batch[i], wid, i, int(offsets[i])))
        return out

    def _windows(self, words: Sequence[str], wid: np.ndarray, sent: int, base: int
                 ) -> list[Sequence_]:
        """Overlapping word-boundary windows of one long sentence (see module docstring)."""
        n = len(words)
        counts = np.bincount(wid[wid >= 0], minlength=n)
        room = max(1, self.max_tokens - self._n_prefix - self._n_suffix)
        spans: list[tuple[int, int]] = []
        start = 0
        while True:
            end, used = start, 0
            while end < n and (used + counts[end] <= room or end == start):
                used += int(counts[end])
                end += 1
            spans.append((start, end))
            if end >= n:
                break
            # next window starts about half a window later, always moving forward
            nxt, acc = start, 0
            while nxt < end - 1 and acc < room // 2:
                acc += int(counts[nxt])
                nxt += 1
            start = max(nxt, start + 1)
        # owner window of each word: most context (causal: earliest window holding it)
        best = np.full(n, -1, dtype=np.int64)
        score = np.full(n, -1, dtype=np.int64)
        pos = np.arange(n)
        for k, (a, b) in enumerate(spans):
            inside = (pos >= a) & (pos < b)
            if self.causal:  # earliest window = most left context
                better = inside & (best < 0)
                ctx = np.zeros(n, dtype=np.int64)
            else:
                ctx = np.minimum(pos - a, b - 1 - pos)
                better = inside & (ctx > score)
            best[better] = k
            score[better] = ctx[better]
        encs = self._tokenize([list(words[a:b]) for a, b in spans])
        out = []
        for k, (a, _b) in enumerate(spans):
            ids, w = encs[k]
            w = np.where(w >= 0, w + a, -1)
            if len(ids) > self.max_tokens:  # one word longer than a window: keep its head
                keep = np.r_[np.arange(self.max_tokens - self._n_suffix),
                             np.arange(len(ids) - self._n_suffix, len(ids))]
                ids, w = ids[keep], w[keep]
            own = (w >= 0) & (best[np.clip(w, 0, n - 1)] == k)
            target = np.where(own, w + base, -1)
            out.append(Sequence_(ids, target, sent, is_first=k == 0, is_last=k == len(spans) - 1,
                                 span=spans[k]))
        return out

    def batches(self, seqs: list[Sequence_]) -> list[Batch]:
        """Length-sorted batches whose padded size stays within ``token_budget``; a batch also
        ends before a sequence more than :data:`_MAX_PAD` shorter than its longest one, so that
        padding stays a small share of the positions run (``padding_share`` in
        bench/encode.py)."""
        import torch

        budget = self.options["token_budget"] or (
            16384 if str(self.device).startswith("cuda") else 1024
        )
        order = sorted(range(len(seqs)), key=lambda j: -len(seqs[j].ids))
        groups: list[list[int]] = []
        cur: list[int] = []
        for j in order:
            width = len(seqs[cur[0]].ids) if cur else len(seqs[j].ids)
            short = len(seqs[j].ids) < (1 - _MAX_PAD) * width
            if cur and (width * (len(cur) + 1) > budget or short):
                groups.append(cur)
                cur = []
            cur.append(j)
        if cur:
            groups.append(cur)
        out = []
        for g in groups:
            width = len(seqs[g[0]].ids)
            ids = np.full((len(g), width), self.pad_id, dtype=np.int64)
            mask = np.zeros((len(g), width), dtype=np.int64)
            for r, j in enumerate(g):
                n = len(seqs[j].ids)
                ids[r, :n] = seqs[j].ids
                mask[r, :n] = 1
            out.append(Batch(torch.from_numpy(ids), torch.from_numpy(mask), [seqs[j] for j in g]))
        return out

    def hidden(self, batch: Batch, layers: Sequence[int]) -> list[Any]:
        """Hidden states of the requested layers, each a (batch, max_len, dim) tensor; the
        model runs only the blocks they need (:meth:`blocks_run`)."""
        import torch

        plan = self._active_exit
        with torch.inference_mode(), nullcontext() if plan is None else plan.cut(layers):
            out = self.model(
                input_ids=batch.input_ids.to(self.device),
                attention_mask=batch.attention_mask.to(self.device),
                output_hidden_states=True,
                return_dict=True,
            )
            return [out.hidden_states[i] for i in layers]

    def forward(self, batch: Batch, layers: Sequence[int]) -> Any:
        """Hidden states of the requested layers: (n_layers, batch, max_len, dim) tensor."""
        import torch

        return torch.stack(self.hidden(batch, layers))

    # ------------------------------------------------------------------ encoding
    def encode_flat(self, batch: Sequence[Sequence[str]], layers: Sequence[int]) -> EncodedBatch:
        """Encode ``batch``; see :class:`EncodedBatch` for shapes."""
        self.for_layers(layers)
        self.load()
        offsets = word_offsets(batch)
        n_layers, n_words, n_sent = len(layers), int(offsets[-1]), len(batch)
        words = np.zeros((n_layers, n_words, self.dim), dtype=np.float32)
        first = np.zeros((n_layers, n_sent, self.dim), dtype=np.float32)
        last = np.zeros((n_layers, n_sent, self.dim), dtype=np.float32)
        oov = self.encode_into(batch, layers, list(words), list(first), list(last))
        return EncodedBatch(words=words, offsets=offsets, first=first, last=last, oov=oov)

    def encode_into(
        self,
        batch: Sequence[Sequence[str]],
        layers: Sequence[int],
        words: Sequence[np.ndarray],
        first: Sequence[np.ndarray] | None = None,
        last: Sequence[np.ndarray] | None = None,
    ) -> int:
        """Encode ``batch`` into ``words[li]`` (total_words, dim) and ``first``/``last[li]``
        (n_sentences, dim) arrays of any float dtype (see :meth:`Encoder.encode_into`).

        Per forward batch, the selected token states of every layer are gathered into one
        (n_layers, n_tokens, dim) float32 tensor, weighted and ``index_add_``-ed into a
        batch-local (n_layers, n_batch_words, dim) buffer, cast once to the output dtype and
        ``index_copy_``-ed into the outputs: no per-sentence or per-word Python loop, and no
        corpus-sized float32 intermediate.
        """
        import torch

        self.for_layers(layers)
        self.load()
        layers = list(layers)
        offsets = word_offsets(batch)
        n_words = int(offsets[-1])
        pooling = self.options["pooling"]
        seqs = self.sequences(batch)
        # tokens per word (over owning windows) -> weights for the mean
        all_t = np.concatenate([s.target for s in seqs]) if seqs else np.zeros(0, np.int64)
        owned = all_t >= 0
        counts = np.bincount(all_t[owned], minlength=n_words)
        unk = 0
        if self.unk_id is not None and seqs:
            all_ids = np.concatenate([s.ids for s in seqs])
            is_unk = np.bincount(all_t[owned], weights=(all_ids[owned] == self.unk_id),
                                 minlength=n_words)
            unk = int(np.sum((counts > 0) & (is_unk == counts)))
        empty = np.flatnonzero(counts == 0)
        inv_count = (1.0 / np.maximum(counts, 1)).astype(np.float32)
        dst_w = [torch.from_numpy(w) for w in words]
        dst_f = [torch.from_numpy(f) for f in first] if first is not None else None
        dst_l = [torch.from_numpy(x) for x in last] if last is not None else None
        if len(empty):  # words without tokens get a zero vector
            for w in words:
                w[empty] = 0
        # The thread count is left alone: dropping to one thread for the pooling ops and back
        # for each forward pass was measured 0.6 s slower (median of 5) on EWT dev, 2 cores.
        out = _Outputs(inv_count, dst_w, dst_f, dst_l)
        if self.overlap_host_work and str(self.device).startswith("cuda"):
            self._encode_overlapped(self.batches(seqs), layers, pooling, out,
                                    _cuda_marker(self.device), pin=True)
        else:
            for b in self.batches(seqs):
                staged = self._gather(b, self.hidden(b, layers), pooling, out.sentence_states)
                _write_pooled(staged, staged.gathered.float().cpu(), out)
        return unk + len(empty)

    def _encode_overlapped(self, batches: list[Batch], layers: list[int], pooling: str,
                           out: _Outputs, mark: Any, pin: bool) -> None:
        """The CUDA loop: batch ``i``'s forward pass, gather and device-to-host copy (into
        pinned memory when ``pin``, non-blocking) are queued before batch ``i - 1``'s host
        work (mean, cast, cache writes) runs, so that the host work overlaps the GPU's instead
        of following it; ``mark()`` records a marker (:func:`_cuda_marker`) whose
        ``synchronize`` waits for the work queued so far. The values are those of the serial
        loop: the same gathered states, and the same float32 mean on the host."""
        import torch

        pending: tuple[_Staged, Any, Any] | None = None
        for b in batches:
            staged = self._gather(b, self.hidden(b, layers), pooling, out.sentence_states)
            host = torch.empty(staged.gathered.shape, dtype=staged.gathered.dtype,
                               pin_memory=pin)
            host.copy_(staged.gathered, non_blocking=pin)
            done = mark()
            staged.gathered = None  # the device copy is the stream's to free
            if pending is not None:
                _finish(*pending, out)
            pending = (staged, host, done)
        if pending is not None:
            _finish(*pending, out)

    def _gather(self, b: Batch, hidden: list[Any], pooling: str, sentence_states: bool
                ) -> _Staged:
        """Select the states that pool into words (and, with ``sentence_states``, each
        sentence's first and last token) from one forward batch's ``hidden`` (n_layers x (B, T,
        D)) into one (n_layers, n_positions, D) tensor on the model's device."""
        import torch

        n_layers, dim = len(hidden), self.dim
        B, T = b.input_ids.shape
        target = np.full((B, T), -1, dtype=np.int64)
        for r, s in enumerate(b.seqs):
            target[r, : len(s.target)] = s.target
        flat_t = target.reshape(-1)
        if pooling == "mean":
            sel = np.flatnonzero(flat_t >= 0)
        else:
            sel = _edge_tokens(target, first=pooling == "first")
        tok_rows = flat_t[sel]
        # a word's tokens are one contiguous run (it lives in one window): run -> slot
        starts = np.ones(len(tok_rows), dtype=bool)
        starts[1:] = tok_rows[1:] != tok_rows[:-1]
        staged = _Staged(tok_rows, starts, pooling == "mean")
        pos = [sel]
        if sentence_states:
            lengths = b.attention_mask.sum(1).numpy()
            rows = np.arange(B)
            staged.fmask = np.array([s.is_first for s in b.seqs])
            staged.lmask = np.array([s.is_last for s in b.seqs])
            staged.sents = np.array([s.sent for s in b.seqs], dtype=np.int64)
            pos += [rows[staged.fmask] * T,
                    rows[staged.lmask] * T + lengths[staged.lmask] - 1]
        h0 = hidden[0]
        pos_t = torch.from_numpy(np.concatenate(pos)).to(h0.device)
        gathered = torch.empty((n_layers, len(pos_t), dim), dtype=h0.dtype, device=h0.device)
        for li, h in enumerate(hidden):
            torch.index_select(h.reshape(B * T, dim), 0, pos_t, out=gathered[li])
        staged.gathered = gathered
        return staged


@dataclass
class _Outputs:
    """Where :meth:`TransformerEncoder.encode_into` writes: per layer, ``words`` (n_words, D)
    and, when both are given, ``first``/``last`` (n_sentences, D) tensors (views of the
    caller's arrays); ``inv_count`` (n_words,) float32 is 1 / tokens per word."""

    inv_count: np.ndarray
    words: list[Any]
    first: list[Any] | None
    last: list[Any] | None

    @property
    def sentence_states(self) -> bool:
        return self.first is not None and self.last is not None


@dataclass
class _Staged:
    """One forward batch's gathered states and how they pool: ``tok_rows`` (n_sel,) the word
    row of each selected token, ``starts`` (n_sel,) where each word's run begins; ``gathered``
    (n_layers, n_sel [+ n_first + n_last], D) on the device, then None once copied out."""

    tok_rows: np.ndarray
    starts: np.ndarray
    mean: bool
    gathered: Any = None
    fmask: np.ndarray | None = None
    lmask: np.ndarray | None = None
    sents: np.ndarray | None = None


def _cuda_marker(device: Any) -> Any:
    """A function recording a ``torch.cuda.Event`` on ``device``'s current stream (the stream
    the model's work is queued on, whichever device is current)."""
    import torch

    stream = torch.cuda.current_stream(torch.device(device))

    def mark() -> Any:
        event = torch.cuda.Event()
        event.record(stream)
        return event

    return mark


def _finish(staged: _Staged, host: Any, done: Any, out: _Outputs) -> None:
    """Wait for ``host``'s non-blocking copy (event ``done``), then write it into ``out``."""
    done.synchronize()
    _write_pooled(staged, host.float(), out)


def _write_pooled(staged: _Staged, gathered: Any, out: _Outputs) -> None:
    """Mean-pool (or take) the word states of ``gathered`` (n_layers, n_positions, D), a float32
    CPU tensor, cast them once per output dtype and ``index_copy_`` them into ``out``, with the
    first/last token states of the sentences."""
    import torch

    rows_t = torch.from_numpy(staged.tok_rows[staged.starts])
    n_layers, dim, n_sel = gathered.shape[0], gathered.shape[2], len(staged.tok_rows)
    vecs = gathered[:, :n_sel]
    if staged.mean:
        slot = torch.from_numpy(np.cumsum(staged.starts) - 1)
        vecs = vecs.mul_(torch.from_numpy(out.inv_count[staged.tok_rows])[None, :, None])
        pooled = vecs.new_zeros((n_layers, len(rows_t), dim)).index_add_(1, slot, vecs)
    else:  # one token per word
        pooled = vecs
    cast = {}
    for li, dst in enumerate(out.words):
        if dst.dtype not in cast:
            cast[dst.dtype] = pooled.to(dst.dtype)
        dst.index_copy_(0, rows_t, cast[dst.dtype][li])
    if out.first is not None and out.last is not None:
        assert staged.fmask is not None and staged.lmask is not None and staged.sents is not None
        nf = int(staged.fmask.sum())
        states = gathered[:, n_sel:]
        f_sent = torch.from_numpy(staged.sents[staged.fmask])
        l_sent = torch.from_numpy(staged.sents[staged.lmask])
        for li in range(n_layers):
            out.first[li].index_copy_(0, f_sent, states[li, :nf].to(out.first[li].dtype))
            out.last[li].index_copy_(0, l_sent, states[li, nf:].to(out.last[li].dtype))


_CONFIG_JSON: dict[tuple[str, int], Any] = {}


def _config_json(path: Path) -> Any:
    """``path`` (a ``config.json``) parsed, once per process and version of the file; None
    when it cannot be read."""
    try:
        stamp = (str(path), path.stat().st_mtime_ns)
    except OSError:
        return None
    if stamp not in _CONFIG_JSON:
        try:
            _CONFIG_JSON[stamp] = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
    return _CONFIG_JSON[stamp]


def resolve_attention(precision: str, device: str) -> str:
    """``auto``'s attention kernel: ``eager`` for bfloat16 on a CPU, ``default`` otherwise.

    On a CPU with native bf16 (Intel Xeon with AMX, torch 2.11), torch's scaled-dot-product
    kernel made bf16 attention slower than fp32 (docs/encoders.md); the eager product runs on
    the matrix units. An unavailable device resolves to ``default`` here and fails where used.
    """
    if precision != "bfloat16":
        return "default"
    try:
        return "eager" if resolve_device(device) == "cpu" else "default"
    except DeviceError:
        return "default"


def _edge_tokens(target: np.ndarray, first: bool) -> np.ndarray:
    """Flat positions of the first (or last) token of each word run in ``target`` (B, T)."""
    B, T = target.shape
    pad = np.full((B, 1), -2, dtype=np.int64)
    if first:
        prev = np.concatenate([pad, target[:, :-1]], axis=1)
        edge = (target >= 0) & (target != prev)
    else:
        nxt = np.concatenate([target[:, 1:], pad], axis=1)
        edge = (target >= 0) & (target != nxt)
    return np.nonzero(edge.reshape(-1))[0]


def encode_words(tokenizer: Any, sents: Sequence[Sequence[str]], *, prefix_space: bool
                 ) -> list[tuple[np.ndarray, np.ndarray]]:
    """The word alignment every transformer encoder uses: per pre-split sentence, the fast
    tokenizer's ``(input ids (n,) int64, word id per token (n,) int64, -1 for a special
    token)``, with the prefix space on every word when ``prefix_space`` (byte-level BPE,
    :func:`is_byte_level`). Calls the Rust backend's ``encode_batch`` on pre-tokenized input
    (what ``tokenizer(..., is_split_into_words=True)`` calls) with truncation and padding off."""
    if prefix_space:
        sents = [[" " + w for w in s] for s in sents]
    batch = [list(s) for s in sents]
    backend = getattr(tokenizer, "_tokenizer", None)
    if backend is not None and hasattr(backend, "encode_batch"):
        if backend.truncation is not None:
            backend.no_truncation()
        if backend.padding is not None:
            backend.no_padding()
        encs = backend.encode_batch(batch, add_special_tokens=True, is_pretokenized=True)
        return [(np.asarray(e.ids, dtype=np.int64),
                 np.asarray([-1 if w is None else w for w in e.word_ids], dtype=np.int64))
                for e in encs]
    enc = tokenizer(batch, is_split_into_words=True, add_special_tokens=True)
    return [(np.asarray(enc["input_ids"][i], dtype=np.int64),
             np.asarray([-1 if w is None else w for w in enc.word_ids(i)], dtype=np.int64))
            for i in range(len(batch))]


def start_token(tokenizer: Any, *, causal: bool, bos: str = "auto", prefix_space: bool = False,
                model: str = "") -> int | None:
    """The token prepended to every sequence: a causal LM's BOS (else EOS,
    :func:`synrob.perturb.lm.loaded.start_token_id`) when the tokenizer itself adds no special token
    before the words and ``bos`` is ``auto``; else None. Without it the first word is the
    attention sink, whose states carry massive activations (Sun et al. 2024)."""
    if bos == "no" or not causal:
        return None
    if encode_words(tokenizer, [["a"]], prefix_space=prefix_space)[0][1][0] < 0:
        return None  # the tokenizer adds one itself
    from synrob.perturb.lm.loaded import start_token_id

    start = start_token_id(tokenizer)
    if start is None:
        raise ResourceError(f"model {model!r}: a causal LM's tokenizer has neither BOS nor EOS "
                            "token; pass -p bos=no")
    return start


def with_start(pairs: list[tuple[np.ndarray, np.ndarray]], start: int | None
               ) -> list[tuple[np.ndarray, np.ndarray]]:
    """``pairs`` of :func:`encode_words` with ``start`` (word id -1) first, when not None."""
    if start is None:
        return pairs
    return [(np.r_[np.int64(start), ids], np.r_[np.int64(-1), wid]) for ids, wid in pairs]


def word_tokens(tokenizer: Any, sents: Sequence[Sequence[str]], *, causal: bool,
                bos: str = "auto", model: str = "") -> list[tuple[np.ndarray, np.ndarray]]:
    """What a transformer encoder with ``tokenizer`` feeds its model for whole sentences:
    :func:`encode_words` with its :func:`start_token` (``(ids, word ids)`` per sentence; the
    windows of an over-long sentence are the encoder's business)."""
    prefix = needs_prefix_space(tokenizer)
    start = start_token(tokenizer, causal=causal, bos=bos, prefix_space=prefix, model=model)
    return with_start(encode_words(tokenizer, sents, prefix_space=prefix), start)


def needs_prefix_space(tok: Any) -> bool:
    """Whether each pre-split word must be given its preceding space to be tokenized as in
    running text: byte-level BPE (:func:`is_byte_level`), and SentencePiece tokenizers that add
    no dummy prefix to a word (Gemma: ``dog`` alone is ``d o g``, in text ``▁dog``). Decided by
    the tokenizer itself: the second word of ``the dog`` split into words, without and with the
    space, against the tokens of the text."""
    if is_byte_level(tok):
        return True
    backend = getattr(tok, "_tokenizer", None)
    if backend is None:
        return False
    text = backend.encode("the dog", add_special_tokens=False)
    in_text = [i for i, (a, _b) in zip(text.ids, text.offsets, strict=True) if a >= 3]

    def second(words: list[str]) -> list[int]:
        enc = backend.encode(words, is_pretokenized=True, add_special_tokens=False)
        return [i for i, w in zip(enc.ids, enc.word_ids, strict=True) if w == 1]

    return second(["the", "dog"]) != in_text and second([" the", " dog"]) == in_text


def is_byte_level(tok: Any) -> bool:
    """Whether the backend pre-tokenizer is byte-level BPE (needs the prefix space)."""
    try:
        state = tok.backend_tokenizer.pre_tokenizer.__getstate__()
    except Exception:  # noqa: BLE001 - tokenizers without a python-visible pre-tokenizer
        return False
    text = state.decode() if isinstance(state, bytes) else str(state)
    return '"ByteLevel"' in text


def _is_causal(config: Any) -> bool:
    """Decoder-only models: causal-LM architecture without a masked-LM one."""
    from transformers.models.auto.modeling_auto import (
        MODEL_FOR_CAUSAL_LM_MAPPING_NAMES,
        MODEL_FOR_MASKED_LM_MAPPING_NAMES,
    )

    mt = getattr(config, "model_type", "")
    if getattr(config, "is_encoder_decoder", False):
        return False
    return mt in MODEL_FOR_CAUSAL_LM_MAPPING_NAMES and mt not in MODEL_FOR_MASKED_LM_MAPPING_NAMES

