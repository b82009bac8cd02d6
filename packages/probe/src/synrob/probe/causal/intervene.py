"""Interventions inside a Hugging Face model's forward pass: change the hidden states of one layer.

:func:`intervene` is a context manager: while it is open, every forward pass of ``model`` sends
the hidden states of layer ``L`` through a function (an :class:`~synrob.probe.causal.erasure.Eraser`,
its counterfactual, a recorder) before the rest of the model reads them.

**Layer numbering** is the encoders' (``--layer``, :class:`~synrob.probe.encoders.transformer.
TransformerEncoder`): layer ``L`` is ``output_hidden_states``' entry ``L`` of a model of ``N``
blocks, so

* layer 0 is the embeddings' output (the input of block 0; GPT-2 adds its position embeddings
  inline, so no embeddings *module* gives it);
* layer ``L`` for ``1 <= L < N`` is block ``L - 1``'s output, which is block ``L``'s input;
* layer ``N`` is the last block's output, rewritten by the model's final norm where it has one
  (GPT-2's ``ln_f``, LLaMA's ``norm``, T5's ``final_layer_norm``, OPT's ``final_layer_norm``):
  the state the LM head reads.

So the hook (:func:`layer_site`) is a forward *pre*-hook on block ``L`` for ``L < N``, which
reads the hidden states whether the model passes them by position or by keyword, and a forward
hook on the final norm (or, without one, on the last block) for ``L = N``, which handles a block
that returns a tensor and one that returns a tuple (transformers versions differ). The blocks
are the model's one ``ModuleList`` of ``num_hidden_layers`` modules
(:func:`synrob.probe.encoders.early_exit.find_blocks`); the final norm is the one child of the
blocks' parent registered after them whose class is a norm (or, without one, a norm child
named ``final...`` registered before them, as OPT's). tests/probe/test_intervene.py checks, for
BERT, RoBERTa, GPT-2, LLaMA and the real MiniLM and SmolLM2, that the state each layer's hook
sees equals ``output_hidden_states[L]`` and that the identity leaves the logits bit for bit
unchanged; tests/probe/test_architecture_matrix.py checks the same for the 19 causal families of
the architecture matrix.

**Positions.** ``positions`` says which token states change: None (every one), an ``int`` ``k``
(positions ``k, k+1, ...`` of every row: ``1`` leaves out the start token that
:func:`synrob.perturb.lm.loaded.start_token_id` puts before a causal LM's text, whose state is the
attention sink and was never part of a word an eraser was fitted on), or a boolean tensor
(batch, seq). ``fn`` receives the selected states as one (n, d) tensor, rows in row-major order
of the positions (row 0's first selected token first), and returns an (n, d) tensor; the other
states pass through untouched (the same tensor when every position is selected). Whether
``output_hidden_states`` reports a layer's state before or after the change is the model's
business (transformers records block outputs by hooks of its own); the rest of the forward pass
always reads the changed states. torch is imported inside the functions.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from synrob.perturb.errors import ParameterError, ResourceError

__all__ = ["LayerSite", "Positions", "intervene", "layer_site", "model_layers"]

#: Which token states an intervention changes (see the module docstring).
Positions = Any  # None | int | torch.Tensor (batch, seq) bool


@dataclass(frozen=True)
class LayerSite:
    """Where layer ``layer``'s hidden states are hooked: ``module`` (dotted ``name``), on its
    ``input`` (a forward pre-hook: block ``layer``) or its ``output`` (a forward hook: the final
    norm or the last block, for the last layer)."""

    layer: int
    module: Any
    name: str
    where: str  # "input" | "output"


def model_layers(model: Any) -> int:
    """How many layers ``model`` has in the encoders' numbering: its blocks plus the
    embeddings (``num_hidden_layers + 1``)."""
    return int(model.config.num_hidden_layers) + 1


def _blocks(model: Any) -> tuple[Any, str, Any]:
    """``(parent, attribute, ModuleList)`` of the model's blocks, or one ResourceError line."""
    from ..encoders.early_exit import find_blocks

    n = int(model.config.num_hidden_layers)
    where = find_blocks(model, n)
    if where is None:
        raise ResourceError(f"cannot intervene in a {type(model).__name__}: it has no single "
                            f"list of its {n} blocks")
    return where


def _final_norm(parent: Any, attr: str) -> tuple[str, Any] | None:
    """The child of the blocks' parent registered after the blocks whose class is a norm
    (``LayerNorm``, ``...RMSNorm``), else, when none is, a norm child named ``final...``
    registered before them (OPT's ``final_layer_norm`` precedes its ``layers``):
    ``(attribute, module)``; None when there is none."""
    names = [name for name, _ in parent.named_children()]
    after = names[names.index(attr) + 1:]
    before = [n for n in names[:names.index(attr)] if n.lower().startswith("final")]
    norms: list[tuple[str, Any]] = []
    for candidates in (after, before):
        norms = [(n, getattr(parent, n)) for n in candidates
                 if "norm" in type(getattr(parent, n)).__name__.lower()]
        if norms:
            break
    if len(norms) > 1:
        raise ResourceError(f"cannot intervene in a {type(parent).__name__}: more than one "
                            f"final norm ({', '.join(n for n, _ in norms)})")
    return norms[0] if norms else None


def _module_name(model: Any, module: Any) -> str:
    return next((name for name, m in model.named_modules() if m is module), "?")


def layer_site(model: Any, layer: int) -> LayerSite:
    """Where :func:`intervene` hooks layer ``layer`` of ``model`` (see the module docstring).
    Raises :class:`ParameterError` for a layer outside ``0..N``, :class:`ResourceError` when
    the model's blocks cannot be found."""
    n_layers = model_layers(model)
    if not 0 <= layer < n_layers:
        raise ParameterError(f"layer {layer} is out of range: the model has layers "
                             f"0..{n_layers - 1}")
    parent, attr, blocks = _blocks(model)
    if layer < len(blocks):
        module, where = blocks[layer], "input"
    else:
        norm = _final_norm(parent, attr)
        module, where = (blocks[-1] if norm is None else norm[1]), "output"
    return LayerSite(layer, module, _module_name(model, module), where)


def _mask(positions: Positions, shape: tuple[int, int], device: Any) -> Any:
    """``positions`` as a (batch, seq) bool tensor on ``device``, or None for every position."""
    import torch

    if positions is None:
        return None
    if isinstance(positions, int):
        mask = torch.zeros(shape, dtype=torch.bool, device=device)
        mask[:, positions:] = True
        return mask
    mask = torch.as_tensor(positions, device=device)
    if mask.dtype != torch.bool or tuple(mask.shape) != tuple(shape):
        raise ParameterError(f"intervention positions must be a bool mask of shape "
                             f"{tuple(shape)} (batch, seq), not {mask.dtype} "
                             f"{tuple(mask.shape)}")
    return mask


def _apply(x: Any, fn: Callable[[Any], Any], positions: Positions) -> Any:
    """``x`` (batch, seq, d) with the selected states replaced by ``fn`` of them."""
    if x.dim() != 3:
        raise ResourceError(f"hooked hidden states have shape {tuple(x.shape)}, "
                            "not (batch, seq, dim)")
    mask = _mask(positions, (x.shape[0], x.shape[1]), x.device)
    rows = x.reshape(-1, x.shape[-1]) if mask is None else x[mask]
    new = fn(rows)
    if tuple(new.shape) != tuple(rows.shape):
        raise ParameterError(f"an intervention returned shape {tuple(new.shape)} for states "
                             f"of shape {tuple(rows.shape)}")
    if mask is None:
        return new.to(x.dtype).reshape(x.shape)
    out = x.clone()
    out[mask] = new.to(x.dtype)
    return out


@contextmanager
def intervene(model: Any, layer: int, fn: Callable[[Any], Any], positions: Positions = None
              ) -> Iterator[LayerSite]:
    """Within the block, every forward pass of ``model`` replaces the states of layer ``layer``
    at ``positions`` by ``fn(states)`` ((n, d) -> (n, d), see the module docstring); yields the
    :class:`LayerSite`. The hook is removed on exit, also after an error."""
    site = layer_site(model, layer)
    if site.where == "input":
        def pre_hook(module: Any, args: tuple, kwargs: dict) -> Any:
            if args:
                return (_apply(args[0], fn, positions), *args[1:]), kwargs
            if "hidden_states" not in kwargs:
                raise ResourceError(f"{site.name} got no hidden states to intervene on")
            return args, {**kwargs, "hidden_states": _apply(kwargs["hidden_states"], fn,
                                                            positions)}

        handle = site.module.register_forward_pre_hook(pre_hook, with_kwargs=True)
    else:
        def hook(module: Any, args: tuple, output: Any) -> Any:
            if isinstance(output, tuple):
                return (_apply(output[0], fn, positions), *output[1:])
            return _apply(output, fn, positions)

        handle = site.module.register_forward_hook(hook)
    try:
        yield site
    finally:
        handle.remove()
