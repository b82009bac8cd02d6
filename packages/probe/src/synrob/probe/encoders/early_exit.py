"""Early exit: run a Hugging Face model only as deep as the hidden states asked for.

Hidden state ``i`` (0 = the embeddings) of a stack of ``N`` blocks depends only on blocks
``1..i``, so a pass that wants states up to ``k < N`` can stop after block ``k``: a probe of
MiniLM's layer 3 runs 3 of its 6 blocks. The blocks are the model's one ``torch.nn.ModuleList``
of ``num_hidden_layers`` modules; for a pass they are swapped for a shorter list of the same
modules, so the model's own code still collects the states. Where a model rewrites its last
state (a final norm: GPT-2's ``ln_f``, LLaMA's ``norm``, T5's ``final_layer_norm``), one more
block runs, so that state ``k`` is never the rewritten last one.

:func:`plan` decides this once per model, on a short input: the cut model must give the full
model's states bit for bit, and whether its last state differs says whether one more block is
needed. A model that fails the check, or has no such list (ALBERT shares one layer across the
stack), always runs in full. Early exit never changes a value, only how much is computed.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

__all__ = ["EarlyExit", "plan", "find_blocks"]

#: ``run(model)``: the hidden states of one fixed short input, a tuple of (1, T, D) tensors.
Run = Callable[[Any], Sequence[Any]]


@dataclass
class EarlyExit:
    """Where a model's blocks are (``parent.attr``: the full list) and how deep a pass must go:
    ``extra`` is 1 where the model rewrites its last hidden state, else 0."""

    parent: Any = field(repr=False)
    attr: str
    blocks: Any = field(repr=False)
    extra: int
    _cuts: dict[int, Any] = field(default_factory=dict, repr=False)

    def depth(self, layers: Sequence[int]) -> int:
        """Blocks to run for hidden states ``layers`` (at least 1, at most all)."""
        return min(len(self.blocks), max(1, max(layers) + self.extra))

    @contextmanager
    def cut(self, layers: Sequence[int]) -> Iterator[int]:
        """Within the block, the model runs :meth:`depth` blocks; yields that depth."""
        n = self.depth(layers)
        if n >= len(self.blocks):
            yield n
            return
        with self._swapped(n):
            yield n

    @contextmanager
    def _swapped(self, n: int) -> Iterator[None]:
        import torch

        if n not in self._cuts:
            self._cuts[n] = torch.nn.ModuleList(list(self.blocks)[:n])
        setattr(self.parent, self.attr, self._cuts[n])
        try:
            yield
        finally:
            setattr(self.parent, self.attr, self.blocks)


def find_blocks(model: Any, n_blocks: int) -> tuple[Any, str, Any] | None:
    """``(parent module, attribute, ModuleList)`` of the model's one list of ``n_blocks``
    modules, or None when there is no such list or more than one."""
    import torch

    found = [name for name, m in model.named_modules()
             if isinstance(m, torch.nn.ModuleList) and len(m) == n_blocks]
    if len(found) != 1:
        return None
    parent_name, _, attr = found[0].rpartition(".")
    parent = model.get_submodule(parent_name) if parent_name else model
    return parent, attr, getattr(parent, attr)


def plan(model: Any, n_blocks: int, run: Run) -> EarlyExit | None:
    """The model's :class:`EarlyExit`, or None when it must always run in full (see the
    module's docstring). ``run`` gives the hidden states of one fixed short input."""
    import torch

    where = find_blocks(model, n_blocks) if n_blocks >= 2 else None
    if where is None:
        return None
    exit_ = EarlyExit(*where, extra=0)
    try:
        full = run(model)
    except Exception:  # the model cannot give hidden states: encoding will say so, not this
        return None
    same_last = []
    for keep in sorted({1, n_blocks - 1}):
        try:
            with exit_._swapped(keep):
                cut = run(model)
        except Exception:  # the model cannot run cut (it indexes blocks by number): run in full
            return None
        if len(cut) != keep + 1 or not all(
                torch.equal(a, b) for a, b in zip(cut[:keep], full[:keep], strict=True)):
            return None
        same_last.append(torch.equal(cut[keep], full[keep]))
    exit_.extra = 0 if all(same_last) else 1
    return exit_
