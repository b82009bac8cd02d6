"""torch's intra-op threads for one block of work (an experiment run, a SentEval classifier's
training), restored after it."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

__all__ = ["torch_threads"]


@contextlib.contextmanager
def torch_threads(n: int) -> Iterator[None]:
    """Run the block with ``n`` torch intra-op threads (``n <= 0``: unchanged), then restore."""
    if n <= 0:
        yield
        return
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(before)
