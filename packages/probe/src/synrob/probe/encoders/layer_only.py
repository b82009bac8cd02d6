"""Layer-only loading: read only the blocks the requested layers need.

Hidden state ``L`` (0 = the embeddings) of a stack of ``N`` blocks depends only on the
embeddings and blocks ``1..L`` (:mod:`.early_exit`). So when every requested layer is below the
last, the encoder loads a model whose config has ``L + 1`` blocks: the checkpoint's weights of
those blocks are read and the others never are, so memory and load time scale with the layers
used. One block more than ``L`` is kept because a model's last hidden state is rewritten by its
final norm (LLaMA's ``norm``, GPT-2's ``ln_f``): in a model of ``L + 1`` blocks, state ``L`` is
block ``L``'s plain output, exactly the full model's ``hidden_states[L]``. A request that
includes the last layer (or the one before) loads the whole model, final norm included.

:func:`truncated_config` makes the shorter config: the block count (whatever the config calls
it: ``num_hidden_layers``, GPT-2's ``n_layer``) and every per-block list of the config
(``layer_types`` of Qwen3, Gemma-2/3, ...) are cut, the rest is unchanged. Encoder-decoder
models load whole (their encoder is one half of a checkpoint with its own count). The
architecture matrix (tests/probe/test_architecture_matrix.py) checks the values against the
full model for every family it covers.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from synrob.perturb.errors import ResourceError

__all__ = ["blocks_needed", "truncated_config", "check_loaded"]

#: A weight of a block or of the embeddings (what the kept hidden states depend on).
_NEEDED = re.compile(r"(^|\.)(layers?|h|blocks?|block|encoder\.layer)\.\d+\.|embed")


def blocks_needed(deepest: int, n_blocks: int) -> int:
    """Blocks to load for hidden states up to ``deepest`` of a model of ``n_blocks``."""
    return n_blocks if deepest + 1 >= n_blocks else deepest + 1


def truncated_config(config: Any, n_blocks: int) -> Any | None:
    """A copy of ``config`` with ``n_blocks`` blocks (see the module docstring), or None when
    the model must load whole: an encoder-decoder, a config without a block count, or
    ``n_blocks`` not fewer than the model has."""
    if getattr(config, "is_encoder_decoder", False):
        return None
    attr = getattr(config, "attribute_map", {}).get("num_hidden_layers", "num_hidden_layers")
    values = config.to_dict()
    total = values.get(attr)
    if not isinstance(total, int) or isinstance(total, bool) or not 0 < n_blocks < total:
        return None
    values[attr] = n_blocks
    for key, value in list(values.items()):
        if isinstance(value, list) and len(value) == total and key != "architectures":
            values[key] = value[:n_blocks]
    return type(config).from_dict(values)


def check_loaded(missing: Iterable[str], model: str) -> None:
    """A :class:`ResourceError` when a truncated load left a block's or the embeddings' weight
    uninitialised (``missing``: transformers' ``missing_keys``): the checkpoint does not hold
    what its config says, and its vectors would be random."""
    lost = sorted(k for k in missing if _NEEDED.search(k))
    if lost:
        raise ResourceError(f"model {model!r}: the checkpoint has no weights for {lost[0]} "
                            f"({len(lost)} missing): cannot load its first blocks alone")
