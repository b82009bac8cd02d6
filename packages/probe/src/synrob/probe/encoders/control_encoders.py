"""Control encoders for probing papers.

* ``random-init``: the architecture of any transformer with freshly initialised weights (seeded),
  tokenizer unchanged - Hewitt & Liang's / Tenney et al.'s random-model control.
* ``fast+pos``: static word vectors concatenated with a transformer's learned absolute position
  embeddings (Hall Maudslay & Cotterell 2021, "Do syntactic probes probe syntax?"). A model
  with rotary or relative positions (SmolLM2, LLaMA-style causal LMs) has none: ``positions=auto``
  then takes the sinusoidal encodings of Vaswani et al. (2017) of the model's hidden size, at
  the same token positions, and says so in one warning line.
* The embedding layer of any model needs no class: ``--layers 0`` of ``transformer``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from synrob.perturb.errors import ParameterError, ResourceError
from synrob.perturb.lm.models import first_line
from synrob.perturb.params import Param

from .base import EncodedBatch, Encoder, word_offsets
from .transformer import TransformerEncoder

__all__ = ["RandomInitEncoder", "FastPosEncoder", "has_learned_positions", "sinusoidal_positions",
           "position_embeddings"]


class RandomInitEncoder(TransformerEncoder):
    """A transformer's architecture and tokenizer with seeded random weights."""

    name = "random-init"
    summary = "Randomly initialised copy of any transformer (seeded control)"
    paper = "Hewitt & Liang 2019; Tenney et al. 2019"
    params = (*TransformerEncoder.params,
              Param("seed", int, 0, "seed of the weight initialisation"))

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        if not self.placement.plain:
            raise ParameterError("random-init: device_map and quantization apply to a "
                                 "checkpoint's weights; a random copy has none")

    def _load_model(self, dtype: Any) -> Any:
        import torch
        from transformers import AutoModel

        self.blocks_loaded = self.num_layers - 1  # the whole random model (same draws as ever)

        state = torch.random.get_rng_state()
        try:
            torch.manual_seed(self.options["seed"])
            model = AutoModel.from_config(
                self.config, trust_remote_code=self.options["trust_remote_code"],
                **self.attention_kwargs,
            )
        except (OSError, ValueError) as exc:
            raise self._not_found(self.source, "weights", first_line(exc), False) from None
        finally:
            torch.random.set_rng_state(state)
        return model.to(dtype)


_POSITION_NAMES = ("position_embeddings", "wpe", "embed_positions")


def _position_module(model: Any) -> Any:
    """The model's learned absolute position embedding (``torch.nn.Embedding``), or None."""
    import torch

    for name, mod in model.named_modules():
        if isinstance(mod, torch.nn.Embedding) and name.rsplit(".", 1)[-1] in _POSITION_NAMES:
            return mod
    return None


def has_learned_positions(config: Any, trust_remote_code: bool = False) -> bool:
    """Whether the architecture of ``config`` has learned absolute position embeddings; built
    on the meta device, so no weights are read or allocated. A model transformers cannot build
    (custom code not trusted) is a one-line :class:`ResourceError`."""
    import torch
    from transformers import AutoModel

    try:
        with torch.device("meta"):
            model = AutoModel.from_config(config, trust_remote_code=trust_remote_code)
    except (OSError, ValueError) as exc:
        raise ResourceError(f"fast+pos: cannot build the model's architecture: "
                            f"{first_line(exc)}") from None
    return _position_module(model) is not None


def sinusoidal_positions(n_positions: int, dim: int) -> np.ndarray:
    """Vaswani et al. (2017) encodings: (n_positions, dim) float32, ``PE[p, 2i] =
    sin(p / 10000^(2i/dim))``, ``PE[p, 2i+1] = cos(p / 10000^(2i/dim))``."""
    pos = np.arange(n_positions, dtype=np.float64)[:, None]
    rate = 10000.0 ** (-np.arange(0, dim, 2, dtype=np.float64) / dim)
    out = np.zeros((n_positions, dim), dtype=np.float64)
    out[:, 0::2] = np.sin(pos * rate)
    out[:, 1::2] = np.cos(pos * rate)[:, : dim // 2]
    return out.astype(np.float32)


def position_embeddings(model: Any) -> tuple[np.ndarray, int]:
    """((max_positions, dim) float32 learned absolute position embeddings, first row used).

    The first row is the embedding's ``padding_idx + 1`` for RoBERTa-style models, else 0.
    """
    mod = _position_module(model)
    if mod is None:
        raise ResourceError(
            f"{type(model).__name__} has no learned absolute position embeddings "
            "(rotary/relative positions); use fast+pos with -p positions=sinusoidal or auto")
    pad = mod.padding_idx
    return mod.weight.detach().float().cpu().numpy(), (pad + 1 if pad is not None else 0)


class FastPosEncoder(Encoder):
    """Static vectors ++ the position embedding of each word's index (one layer, 0)."""

    name = "fast+pos"
    summary = "Static word vectors concatenated with a transformer's position embeddings"
    #: 1.1: positions (auto: sinusoidal for a model without learned ones); the words' positions
    #: are those the transformer encoder gives them (after a causal LM's start token)
    version = "1.1"
    paper = "Hall Maudslay & Cotterell 2021"
    params = (
        Param("vectors", str, "glove-6b-50d", "static vectors: an alias or a vector file"),
        Param("model", str, "minilm", "transformer whose position embeddings are used"),
        Param("casing", str, "fallback", "casing policy of the static vectors",
              ("fallback", "exact", "lower")),
        Param("positions", str, "auto", "position vectors: learned (the model's absolute "
              "position embeddings), sinusoidal (Vaswani et al. 2017, of the model's size) or "
              "auto (learned when the model has them, else sinusoidal with a warning); resolved "
              "when the encoder is made", ("auto", "learned", "sinusoidal")),
        Param("pooling", str, "mean", "unused; accepted for uniformity"),
        Param("device", str, "auto", "unused; accepted for uniformity"),
    )
    runtime_params = frozenset({"pooling", "device"})

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        from .resolve import resolve_encoder

        static = resolve_encoder(self.options["vectors"], {"casing": self.options["casing"]})
        trans = resolve_encoder(self.options["model"], {})
        if not isinstance(trans, TransformerEncoder):
            raise ResourceError(f"fast+pos: {self.options['model']!r} is not a transformer")
        if not hasattr(static, "lookup"):
            raise ResourceError(f"fast+pos: {self.options['vectors']!r} is not a static encoder")
        self.static, self.trans = static, trans
        if self.options["positions"] == "auto":  # the cache key holds the real choice
            self.options["positions"] = self._auto_positions()
        self.pos: np.ndarray | None = None
        self.first_row = 0

    def _auto_positions(self) -> str:
        """``learned`` when the model has learned absolute positions, else ``sinusoidal`` and
        one warning line."""
        if has_learned_positions(self.trans.config, self.trans.options["trust_remote_code"]):
            return "learned"
        import warnings

        from synrob.perturb.errors import SynrobWarning

        warnings.warn(f"fast+pos: {self.options['model']} has no learned absolute position "
                      f"embeddings (rotary or relative positions); its sinusoidal position "
                      f"encodings (Vaswani et al. 2017) of size {self.trans.dim} are used "
                      "instead (-p positions=sinusoidal)", SynrobWarning, stacklevel=2)
        return "sinusoidal"

    @property
    def num_layers(self) -> int:
        return 1

    @property
    def dim(self) -> int:
        return self.static.dim + self.trans.dim

    def resource_identity(self) -> dict[str, Any]:
        return {"vectors": self.static.identity(), "model": self.trans.identity()}

    def share_lm(self, spec: str, device: str) -> None:
        self.trans.share_lm(spec, device)

    def _load(self) -> None:
        # the transformer encoder's own loading (trust_remote_code as it is configured; a
        # model that needs its own code is a one-line ResourceError): learned positions read
        # the embeddings, so only the first block is loaded (layer-only loading; none when a
        # model of the same files is loaded in this process); sinusoidal ones need only the
        # tokenizer (its start token, the window) and the config (the size)
        if self.options["positions"] == "learned":
            self.trans.for_layers([0])
            self.trans.load()
            self.pos, self.first_row = position_embeddings(self.trans.model)
            self.trans.model = None  # only its positions were needed
        else:
            self.trans.load_tokenizer()
            self.pos, self.first_row = sinusoidal_positions(self.trans.max_tokens,
                                                            self.trans.dim), 0
        self.static.load()
        # words take the position of their index after the prefix tokens ([CLS], a BOS)
        self.first_row += self.trans._n_prefix

    def encode_flat(self, batch: Sequence[Sequence[str]], layers: Sequence[int]) -> EncodedBatch:
        """(len(layers), total_words, static_dim + pos_dim); word ``i`` -> position row ``i``."""
        self.load()
        assert self.pos is not None
        offsets = word_offsets(batch)
        flat = [w for s in batch for w in s]
        vecs, oov = self.static.lookup(flat)
        idx = np.arange(len(flat)) - np.repeat(offsets[:-1], np.diff(offsets))
        rows = np.minimum(idx + self.first_row, len(self.pos) - 1)
        both = np.concatenate([vecs, self.pos[rows]], axis=1)
        words = np.ascontiguousarray(np.broadcast_to(both, (len(layers), *both.shape)))
        return EncodedBatch(words=words, offsets=offsets, oov=oov)
