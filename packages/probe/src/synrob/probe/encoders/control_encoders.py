"""Control encoders for probing papers.

* ``random-init``: the architecture of any transformer with freshly initialised weights (seeded),
  tokenizer unchanged - Hewitt & Liang's / Tenney et al.'s random-model control.
* ``fast+pos``: static word vectors concatenated with a transformer's learned absolute position
  embeddings (Hall Maudslay & Cotterell 2021, "Do syntactic probes probe syntax?").
* The embedding layer of any model needs no class: ``--layers 0`` of ``transformer``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from synrob.perturb.errors import ResourceError
from synrob.perturb.models import first_line
from synrob.perturb.params import Param

from .base import EncodedBatch, Encoder, word_offsets
from .transformer import TransformerEncoder

__all__ = ["RandomInitEncoder", "FastPosEncoder"]


class RandomInitEncoder(TransformerEncoder):
    """A transformer's architecture and tokenizer with seeded random weights."""

    name = "random-init"
    summary = "Randomly initialised copy of any transformer (seeded control)"
    paper = "Hewitt & Liang 2019; Tenney et al. 2019"
    params = (*TransformerEncoder.params,
              Param("seed", int, 0, "seed of the weight initialisation"))

    def _load_model(self, dtype: Any) -> Any:
        import torch
        from transformers import AutoModel

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


def position_embeddings(model: Any) -> tuple[np.ndarray, int]:
    """((max_positions, dim) float32 learned absolute position embeddings, first row used).

    The first row is the embedding's ``padding_idx + 1`` for RoBERTa-style models, else 0.
    """
    import torch

    for name, mod in model.named_modules():
        leaf = name.rsplit(".", 1)[-1]
        if isinstance(mod, torch.nn.Embedding) and leaf in ("position_embeddings", "wpe",
                                                            "embed_positions"):
            pad = mod.padding_idx
            return mod.weight.detach().float().cpu().numpy(), (pad + 1 if pad is not None else 0)
    raise ResourceError(
        f"{type(model).__name__} has no learned absolute position embeddings "
        "(rotary/relative positions); fast+pos needs a model such as minilm/BERT/GPT-2"
    )


class FastPosEncoder(Encoder):
    """Static vectors ++ the position embedding of each word's index (one layer, 0)."""

    name = "fast+pos"
    summary = "Static word vectors concatenated with a transformer's position embeddings"
    paper = "Hall Maudslay & Cotterell 2021"
    params = (
        Param("vectors", str, "glove-6b-50d", "static vectors: an alias or a vector file"),
        Param("model", str, "minilm", "transformer whose position embeddings are used"),
        Param("casing", str, "fallback", "casing policy of the static vectors",
              ("fallback", "exact", "lower")),
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
        self.pos: np.ndarray | None = None
        self.first_row = 0

    @property
    def num_layers(self) -> int:
        return 1

    @property
    def dim(self) -> int:
        return self.static.dim + self.trans.dim

    def resource_identity(self) -> dict[str, Any]:
        return {"vectors": self.static.identity(), "model": self.trans.identity()}

    def _load(self) -> None:
        from transformers import AutoModel

        # trust_remote_code as the transformer is configured (False); a model that needs its
        # own code is a one-line ResourceError
        model = self.trans.from_pretrained(AutoModel, "weights")
        self.pos, self.first_row = position_embeddings(model)
        del model
        self.static.load()
        # words take the position of their index after the prefix special tokens ([CLS])
        from transformers import AutoTokenizer

        tok = self.trans.from_pretrained(AutoTokenizer, "tokenizer")
        ids = tok([["a"]], is_split_into_words=True).word_ids(0)
        self.first_row += next(i for i, w in enumerate(ids) if w is not None)

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
