"""The precision a probe trains in: the ``train_precision`` parameter of every probe.

* ``float32``: every product in fp32 (synrob's behaviour before this parameter existed);
* ``bfloat16``: the training steps and the dev losses of early stopping run under
  ``torch.autocast`` with bf16 (so the probe's matrix products take bf16 inputs and give bf16
  outputs), while the weights, Adam's moments, the losses and their sums stay fp32 (the
  *master weights*: autocast casts the fp32 parameters for each product, and their gradients
  come back in fp32). The structural probe's pairwise distances are computed in fp32 from the
  bf16 projection, since the Gram trick ``|t_i|^2 + |t_j|^2 - 2 t_i.t_j`` cancels
  catastrophically in bf16. Predictions and every reported score are always computed in fp32;
* ``tfloat32`` (NVIDIA GPUs of compute capability 8.0 or newer only: Ampere and later): the
  training steps' and dev losses' fp32 matrix products run on the tensor cores in TF32 (inputs
  rounded to a 10-bit mantissa, fp32 accumulation), forward and backward; everything is stored
  in fp32. The structural probe's forward distances stay full fp32 (:func:`fp32_region`), for
  the same cancellation; predictions and scores are full fp32. It is never what ``auto``
  resolves to: unlike bf16 it has not been checked on EWT against the tolerance (no GPU was
  lent when it was written; ``python bench/train_precision.py --precision tfloat32`` on one is
  the check). Anywhere else it is a :class:`ParameterError`, never fp32 under its name;
* ``auto`` (default): ``bfloat16`` when both hold, else ``float32``: the device computes bf16
  natively (:func:`synrob.perturb.lm.dtype.native_bf16`, with its ``SYNROB_NATIVE_BF16``
  override, so the test suite trains in fp32 on every CPU) and the (model, probe) pair is in
  :data:`TRAIN_BF16_CHECKED`: its bf16-trained probes were measured on EWT to give UUAS, DSpr
  and POS accuracy within :data:`synrob.perturb.lm.dtype.BF16_TOLERANCE` of fp32 training
  (docs/experiments.md, "Probe training in bf16"; ``python bench/train_precision.py``).
  Every other pair stays fp32 until it is checked.

``auto`` is resolved where the model is known (:func:`resolve_probe_precision`, called by
``synrob probe`` and by the experiments when they plan their runs), so the run key and the
outputs hold the precision really used; a probe trained with ``auto`` still unresolved (a
library caller who never named a model) trains in fp32, as ``auto`` means for an unchecked
model.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from synrob.perturb.errors import ParameterError
from synrob.perturb.lm.dtype import BF16_CHECKED, names_model, native_bf16

from ..runtime.precision import (
    PRECISIONS,
    cuda_matmul,
    device_type,
    gpu_matmul,
    require_tf32,
)

if TYPE_CHECKING:
    import torch

    from ..probes.base import Probe

__all__ = ["TRAIN_BF16_CHECKED", "resolve_train_precision", "resolve_probe_precision",
           "autocast", "backward", "checked", "table_dtype"]

#: probe name -> the models (as named to synrob) with which its bf16 training passed the check
#: (``python bench/train_precision.py``: MiniLM layer 3, all of EWT, fp32 representations;
#: 2026-11-26, AMD EPYC with avx512_bf16): |bf16 - fp32| test UUAS 0.0001 and DSpr 0.0013
#: (structural), POS accuracy 0.0004 (linear), UUAS 0.0004 (perceptron).
TRAIN_BF16_CHECKED: dict[str, frozenset[str]] = {
    "structural": BF16_CHECKED,
    "linear": BF16_CHECKED,
    "perceptron": BF16_CHECKED,
}


def checked(model: str | None, probe: str) -> bool:
    """Whether bf16 training of ``probe`` on ``model`` (an alias, hub name or path) passed."""
    return names_model(model, TRAIN_BF16_CHECKED.get(probe, frozenset()))


def resolve_train_precision(spec: str, device: str, model: str | None, probe: str) -> str:
    """``float32`` or ``bfloat16``: what ``spec`` means for ``probe`` on ``model``'s vectors on
    ``device`` (a resolved torch device name)."""
    low = str(spec).strip().lower()
    if low not in PRECISIONS:
        raise ParameterError(f"invalid probe precision {spec!r}: use {', '.join(PRECISIONS)}")
    if low == "tfloat32":
        require_tf32(device)
    if low != "auto":
        return low
    return "bfloat16" if native_bf16(device) and checked(model, probe) else "float32"


def resolve_probe_precision(probe: Probe, device: str, model: str | None) -> str:
    """Resolve ``probe.options["train_precision"]`` in place (``auto`` -> what it means here) and
    return it, so keys, logs and saved probes hold the precision of the training."""
    resolved = resolve_train_precision(probe.options["train_precision"], device, model,
                                       probe.name)
    probe.options["train_precision"] = resolved
    return resolved


def table_dtype(probe: Probe) -> Any:
    """The torch dtype of the word-vector table ``probe`` trains from: bf16 when it trains in
    bf16 and its first product would cast the vectors to bf16 anyway (``Probe.bf16_table``),
    else fp32. Rounding the table once is what autocast does to each batch (round to nearest
    even), so the steps are the same (tests/probe/test_train_precision.py)."""
    import torch

    bf16 = probe.options["train_precision"] == "bfloat16" and probe.bf16_table
    return torch.bfloat16 if bf16 else torch.float32


@contextlib.contextmanager
def autocast(precision: str, device: Any) -> Iterator[None]:
    """The context of a training step's forward pass: bf16 autocast for ``bfloat16``, TF32
    products for ``tfloat32`` (a :class:`ParameterError` on a device without TF32), fp32
    otherwise (``auto`` not resolved: fp32). On a GPU, fp32 means IEEE fp32, whatever torch's
    TF32 flags say outside, so that ``float32`` in a run's key is what ran. ``device`` is a
    torch device or its name."""
    if precision == "tfloat32":
        require_tf32(device)
        with cuda_matmul("tf32"):
            yield
        return
    if precision != "bfloat16":
        with gpu_matmul(device, "ieee"):
            yield
        return
    import torch

    with torch.autocast(device_type(device), dtype=torch.bfloat16):
        yield


#: autograd's nodes of matrix products: their backward is a product too (a weight gradient)
_PRODUCT_NODES = frozenset({"MmBackward0", "BmmBackward0", "AddmmBackward0", "BaddbmmBackward0",
                            "AddbmmBackward0", "AddmvBackward0", "MvBackward0"})


def backward(loss: torch.Tensor, precision: str, device: Any) -> None:
    """``loss.backward()`` of a training step. For a bf16 step on the CPU, each bf16 matrix
    product's gradient node runs on one thread (the rest of the pass on the run's threads):
    oneDNN's bf16 weight gradients round differently on other thread counts in some shapes, so
    the weights would depend on the run's share of the cores (:mod:`synrob.perturb.lm.blas`).
    fp32 products need no such rule: MKL's strict mode gives the same bits on any count.
    On a GPU the pass's fp32 products run in TF32 for ``tfloat32``, else in IEEE fp32, as in
    :func:`autocast`."""
    if precision == "tfloat32":
        require_tf32(device)
    if precision != "bfloat16" or device_type(device) != "cpu":
        with gpu_matmul(device, "tf32" if precision == "tfloat32" else "ieee"):
            loss.backward()
        return
    import torch

    before = torch.get_num_threads()
    one = _OneThread(before)
    for node in _bf16_product_nodes(loss.grad_fn):
        node.register_prehook(one.enter)
        node.register_hook(one.leave)
    try:
        loss.backward()
    finally:
        torch.set_num_threads(before)


class _OneThread:
    """Node hooks: one torch thread while a node computes, ``threads`` after it."""

    def __init__(self, threads: int) -> None:
        self.threads = threads

    def enter(self, grad_outputs: Any) -> None:
        import torch

        torch.set_num_threads(1)

    def leave(self, grad_inputs: Any, grad_outputs: Any) -> None:
        import torch

        torch.set_num_threads(self.threads)


def _bf16_product_nodes(root: Any) -> list[Any]:
    """The matrix-product nodes of the autograd graph below ``root`` that saved a bf16 input."""
    import torch

    out, seen, todo = [], set(), [root]
    while todo:
        node = todo.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        if node.name() in _PRODUCT_NODES and any(
                isinstance(v, torch.Tensor) and v.dtype == torch.bfloat16
                for v in (getattr(node, a, None) for a in ("_saved_self", "_saved_mat1",
                                                           "_saved_mat2", "_saved_vec"))):
            out.append(node)
        todo.extend(child for child, _ in node.next_functions)
    return out


