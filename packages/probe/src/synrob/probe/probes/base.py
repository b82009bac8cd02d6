"""The probe interface, the training parameters every probe shares, saving and loading.

A probe component builds a small ``torch.nn.Module`` for a task kind, gives its training loss on
a padded batch and turns module outputs into per-sentence predictions. Training itself is
:func:`synrob.probe.training.loop.fit`. A trained probe is stored as ``probe.safetensors`` (weights)
plus ``probe.json`` (probe and task names, parameters, label set, encoder, layer, dims) - never
pickle - and :func:`load_probe` rebuilds it to evaluate other files without retraining.
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

import numpy as np
from synrob.perturb.errors import ResourceError, SynrobError
from synrob.perturb.io.atomic import atomic_path, write_text_atomic
from synrob.perturb.params import Param, describe_params, parse_params

from ..runtime.precision import PRECISION_HELP, PRECISIONS
from .normalize import NORMALIZE, NORMALIZE_HELP

if TYPE_CHECKING:
    import torch

    from .inputs import Batch

__all__ = ["Probe", "TRAIN_PARAMS", "SavedProbe", "SavedTask", "save_probe", "load_probe"]

#: Parameters of the training regimen, accepted by every probe (``-p lr=0.002``).
TRAIN_PARAMS: tuple[Param, ...] = (
    Param("lr", float, 0.001, "Adam learning rate"),
    Param("batch_size", int, 32, "sentences per batch (batches group similar lengths)"),
    Param("epochs", int, 40, "maximum number of epochs"),
    Param("patience", int, 2, "epochs without dev-loss improvement before stopping"),
    Param("lr_decay", float, 0.1, "learning-rate factor applied when the dev loss plateaus"),
    Param("weight_decay", float, 0.0, "Adam weight decay"),
    Param("normalize", str, "auto", NORMALIZE_HELP, NORMALIZE),
    Param("train_precision", str, "auto", PRECISION_HELP, PRECISIONS),
)


class Probe(ABC):
    """Base class: subclasses set ``name``, ``kinds`` and implement build/loss/predict."""

    name: ClassVar[str]
    version: ClassVar[str] = "1.0"
    summary: ClassVar[str] = ""
    paper: ClassVar[str] = ""
    params: ClassVar[tuple[Param, ...]] = TRAIN_PARAMS
    #: task kinds this probe can learn (see :data:`synrob.probe.tasks.base.KINDS`)
    kinds: ClassVar[frozenset[str]] = frozenset()
    #: defaults of the training parameters that differ for this probe
    train_defaults: ClassVar[dict[str, Any]] = {}
    #: task kinds for which :meth:`fused_loss` trains several layers at once
    #: (:func:`synrob.probe.training.loop.fit_layers`)
    fused_kinds: ClassVar[frozenset[str]] = frozenset()
    #: the first use of the word vectors in a training step is a matrix product, which bf16
    #: autocast runs on bf16 copies of its inputs: with ``train_precision=bfloat16`` the batches
    #: can index a bf16 table (made once: half the memory, no cast per step), the steps bit for
    #: bit the same (:func:`synrob.probe.training.precision.table_dtype`)
    bf16_table: ClassVar[bool] = False
    #: training its layers together on the CPU is faster than one after the other (with two
    #: threads or more: :func:`synrob.probe.training.probing.fusion_pays`): its steps are products
    cpu_fusion_pays: ClassVar[bool] = True

    def __init__(self, **params: Any) -> None:
        given = {**self.train_defaults, **params}
        self.options: dict[str, Any] = parse_params(self.params, given, f"probe {self.name!r}")

    def check_kind(self, kind: str, task_name: str) -> None:
        if kind not in self.kinds:
            ok = ", ".join(sorted(self.kinds))
            raise SynrobError(f"probe {self.name!r} cannot learn task {task_name!r} "
                              f"(a {kind} task); it learns: {ok}")

    @abstractmethod
    def build(self, dim: int, n_classes: int, kind: str) -> torch.nn.Module:
        """A fresh module for vectors of size ``dim`` (weights from torch's global seed)."""

    @abstractmethod
    def loss(self, module: torch.nn.Module, x: torch.Tensor, batch: Batch) -> torch.Tensor:
        """Scalar training loss of a batch; ``x`` is (b, L, dim), or (b, dim) for sentences."""

    def can_fuse(self, kind: str) -> bool:
        """Whether the probes of several layers of a ``kind`` task can train as one batch."""
        return kind in self.fused_kinds

    def fused_loss(self, modules: Sequence[torch.nn.Module], x: torch.Tensor,
                   batch: Batch) -> torch.Tensor:
        """The losses of ``modules[l]`` on layer ``l`` of a batch, shape (n,), from one batched
        computation; ``x`` is (n, b, L, dim), or (n, b, dim) for sentences. Each entry and its
        gradient must be what :meth:`loss` gives on that layer alone (``fused_kinds`` only)."""
        raise NotImplementedError(f"probe {self.name!r} does not train layers together")

    @abstractmethod
    def predict(self, module: torch.nn.Module, x: torch.Tensor, batch: Batch) -> list[np.ndarray]:
        """One prediction per sentence of the batch, unpadded."""

    @classmethod
    def describe(cls) -> dict[str, Any]:
        return {"kinds": sorted(cls.kinds), "version": cls.version, "summary": cls.summary,
                "paper": cls.paper, "params": describe_params(cls.params)}


class SavedTask(Protocol):
    """What saving and loading a probe reads of its task
    (:class:`synrob.probe.tasks.base.Task` is one): its registered name, its parameters and the
    state it learned on the training data (label sets)."""

    name: ClassVar[str]
    options: dict[str, Any]
    kind: ClassVar[str]

    @property
    def n_classes(self) -> int: ...

    def state(self) -> dict[str, Any]: ...

    def load_state(self, state: dict[str, Any]) -> None: ...


@dataclass
class SavedProbe:
    """A loaded probe: the component, its trained module, its task and the stored metadata."""

    probe: Probe
    module: torch.nn.Module
    task: SavedTask
    meta: dict[str, Any]


def save_probe(directory: str | Path, probe: Probe, module: torch.nn.Module, task: SavedTask,
               meta: dict[str, Any]) -> Path:
    """Write ``probe.safetensors`` and ``probe.json`` into ``directory``; returns it."""
    from safetensors.torch import save_file

    d = Path(directory)
    d.mkdir(parents=True, exist_ok=True)
    from .normalize import of

    tensors = {k: v.detach().to("cpu").contiguous() for k, v in module.state_dict().items()}
    norm = of(module)
    with atomic_path(d / "probe.safetensors") as tmp:
        save_file(tensors, str(tmp))
    config = {
        "format": "synrob-probe/1",
        "probe": probe.name,
        "probe_version": probe.version,
        "probe_params": probe.options,
        "task": task.name,
        "task_params": task.options,
        "task_state": task.state(),
        **({"word_norm": norm.as_dict()} if norm is not None else {}),
        **meta,
    }
    write_text_atomic(d / "probe.json", json.dumps(config, indent=2, sort_keys=True) + "\n")
    return d


def load_probe(directory: str | Path, device: str = "cpu") -> SavedProbe:
    """Rebuild a probe saved by :func:`save_probe` (looked up by name in the registry)."""
    from safetensors.torch import load_file
    from synrob.perturb.plugins import get_registry

    d = Path(directory)
    cfg_path, weights = d / "probe.json", d / "probe.safetensors"
    if not cfg_path.is_file() or not weights.is_file():
        raise ResourceError(f"{d}: not a saved probe (expected probe.json and probe.safetensors)")
    try:
        cfg = json.loads(cfg_path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ResourceError(f"{cfg_path}: invalid JSON ({exc})") from None
    reg = get_registry()
    task = reg.get("task", cfg["task"])(**cfg["task_params"])
    task.load_state(cfg.get("task_state", {}))
    probe = reg.get("probe", cfg["probe"])(**cfg["probe_params"])
    module = probe.build(int(cfg["dim"]), task.n_classes, task.kind)
    from safetensors import SafetensorError

    try:
        module.load_state_dict(load_file(str(weights), device="cpu"))
    except (RuntimeError, OSError, SafetensorError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ResourceError(f"{weights}: weights do not match {cfg_path} ({first})") from None
    module.to(device).eval()
    if "word_norm" in cfg:
        from .normalize import WordNorm, attach

        attach(module, WordNorm.from_dict(cfg["word_norm"]))
    return SavedProbe(probe, module, task, cfg)
