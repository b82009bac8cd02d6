"""One probing experiment: train a probe on one layer (or every layer), early-stop on dev,
evaluate test files and the baselines. Library code only: returns results, prints nothing.

Representations come from a *feature source* ``(path, layer) -> Features``; the default one
(:func:`encoder_features`) reads them from the representation cache of
:func:`synrob.probe.representations.encode_corpus`, so tests and benchmarks can pass arrays.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from synrob.perturb.errors import SynrobError

from .baselines import BASELINES, baseline_predictions
from .probes.base import Probe, SavedProbe, load_probe, save_probe
from .tasks.base import GoldCorpus, Task, load_gold
from .training import Features, TrainLog, fit, make_batches, predict, resolve_device

__all__ = ["FeatureSource", "LayerResult", "ProbeRun", "encoder_features", "check_alignment",
           "train_probe", "evaluate_probe", "run_probe", "evaluate_baselines"]

#: ``(conllu path, layer) -> Features`` for that file's syntactic words.
FeatureSource = Callable[[str, int], Features]


@dataclass
class LayerResult:
    """Results of the probe trained on one layer."""

    layer: int
    results: dict[str, dict[str, float]]        # test file -> metric -> value
    dev: dict[str, float]
    log: TrainLog | None
    predictions: dict[str, list[np.ndarray]] = field(default_factory=dict)


@dataclass
class ProbeRun:
    """A whole experiment: one :class:`LayerResult` per layer, baselines, the best layer."""

    encoder: str
    task: Task
    probe: Probe
    seed: int
    layers: list[LayerResult]
    baselines: dict[str, dict[str, dict[str, float]]]  # baseline -> test file -> metrics
    golds: dict[str, GoldCorpus]
    seconds: float = 0.0

    @property
    def best(self) -> LayerResult:
        """The layer with the best dev value of the task's primary metric."""
        key = self.task.primary_metric
        return max(self.layers, key=lambda r: (np.nan_to_num(r.dev.get(key, np.nan), nan=-np.inf),
                                               -r.layer))


def check_alignment(features: Features, gold: GoldCorpus) -> None:
    """Raise unless ``features`` has one vector per syntactic word of every gold sentence."""
    if features.n_sentences != len(gold) or not np.array_equal(features.lengths, gold.lengths):
        raise SynrobError(
            f"{gold.path}: representations ({features.n_sentences} sentences, "
            f"{int(features.lengths.sum())} words) do not match the treebank ({len(gold)} "
            f"sentences, {int(gold.lengths.sum())} words)")


def encoder_features(encoder: str, *, params: dict[str, Any] | None = None, device: str = "auto",
                     dtype: str = "float16", layers: str | Sequence[int] = "all",
                     progress: Callable[..., Any] | None = None) -> FeatureSource:
    """Feature source backed by the representation cache (each file encoded once).

    The returned callable also has ``.layers(path) -> list[int]``: the layers encoded.
    """
    from .representations import encode_corpus

    sets: dict[str, Any] = {}

    def representation(path: str) -> Any:
        if path not in sets:
            sets[path] = encode_corpus(encoder, path, layers=layers, device=device, dtype=dtype,
                                       params=params, progress=progress)
        return sets[path]

    def source(path: str, layer: int) -> Features:
        rep = representation(path)
        if layer not in rep.layers:
            raise SynrobError(f"encoder {encoder!r} has no layer {layer}; layers: {rep.layers}")
        matrix, offsets = rep.layer_matrix(layer)
        return Features(np.asarray(matrix, dtype=np.float32), np.asarray(offsets, dtype=np.int64))

    source.layers = lambda path: list(representation(path).layers)  # type: ignore[attr-defined]
    return source


def _data(task: Task, feats: Features, gold: GoldCorpus, batch_size: int, device: str,
          with_targets: bool = True):
    check_alignment(feats, gold)
    targets = task.targets(gold) if with_targets else None
    pooling = task.options.get("pooling", "mean")
    return make_batches(feats, task.kind, targets, batch_size=batch_size, heads=gold.heads,
                        pooling=pooling, device=device)


def train_probe(task: Task, probe: Probe, train: tuple[Features, GoldCorpus],
                dev: tuple[Features, GoldCorpus], *, seed: int = 0, device: str = "cpu"
                ) -> tuple[Any, TrainLog]:
    """Train a fresh module for ``task`` on ``train``, early-stopping on ``dev``."""
    import torch

    probe.check_kind(task.kind, task.name)
    device = resolve_device(device)
    bs = probe.options["batch_size"]
    train_set = _data(task, *train, bs, device)
    dev_set = _data(task, *dev, bs, device)
    torch.manual_seed(seed)
    module = probe.build(train[0].dim, task.n_classes, task.kind).to(device)
    log = fit(probe, module, train_set, dev_set, seed=seed)
    return module, log


def evaluate_probe(task: Task, probe: Probe, module: Any, feats: Features, gold: GoldCorpus,
                   device: str = "cpu") -> tuple[dict[str, float], list[np.ndarray]]:
    """Metrics and per-sentence predictions of a trained module on one file."""
    data = _data(task, feats, gold, 64, resolve_device(device), with_targets=False)
    preds = predict(probe, module, data)
    return task.evaluate(gold, preds), preds


def evaluate_baselines(task: Task, train: GoldCorpus, tests: dict[str, GoldCorpus]
                       ) -> dict[str, dict[str, dict[str, float]]]:
    """baseline -> test file -> metrics, for the baselines that apply to the task."""
    out: dict[str, dict[str, dict[str, float]]] = {}
    for name in BASELINES:
        per_file = {}
        for label, gold in tests.items():
            preds = baseline_predictions(name, task, train, gold)
            if preds is None:
                break
            per_file[label] = task.evaluate(gold, preds)
        if per_file:
            out[name] = per_file
    return out


def run_probe(*, encoder: str, task: Task, probe: Probe, layers: Sequence[int],
              tests: Sequence[str], features: FeatureSource, train: str | None = None,
              dev: str | None = None, seed: int = 0, device: str = "cpu",
              save: str | Path | None = None, load: str | Path | None = None,
              keep_predictions: bool = False, baselines: bool = True,
              on_layer: Callable[[LayerResult], None] | None = None) -> ProbeRun:
    """Train (or load) a probe for each layer and evaluate every test file and the baselines.

    With ``load``, the saved probe(s) are evaluated as they are (``DIR`` holds ``probe.json`` or
    ``layer-L/probe.json`` per layer) and ``train`` is only needed for the baselines. With
    ``save``, one layer is written to ``DIR``, several to ``DIR/layer-L``.
    """
    t0 = time.perf_counter()
    golds = {t: load_gold(t) for t in tests}
    train_gold = load_gold(train) if train else None
    dev_gold = load_gold(dev) if dev else None
    if load is None:
        if train_gold is None or dev_gold is None:
            raise SynrobError("training a probe needs --train and --dev (or --load a saved one)")
        task.fit(train_gold)
    results: list[LayerResult] = []
    for layer in layers:
        log = None
        if load is not None:
            saved = _load_for_layer(Path(load), layer, len(layers) > 1, device)
            task, probe, module = saved.task, saved.probe, saved.module
            dev_metrics = dict(saved.meta.get("dev", {}))
        else:
            assert train_gold is not None and dev_gold is not None and train and dev
            train_feats = features(train, layer)
            dim = train_feats.dim
            module, log = train_probe(task, probe, (train_feats, train_gold),
                                      (features(dev, layer), dev_gold), seed=seed, device=device)
            dev_metrics, _ = evaluate_probe(task, probe, module, features(dev, layer), dev_gold,
                                            device)
        res = LayerResult(layer, {}, dev_metrics, log)
        for t in tests:
            metrics, preds = evaluate_probe(task, probe, module, features(t, layer), golds[t],
                                            device)
            res.results[t] = metrics
            if keep_predictions:
                res.predictions[t] = preds
        if save is not None and load is None:
            target = Path(save) / f"layer-{layer}" if len(layers) > 1 else Path(save)
            save_probe(target, probe, module, task, {
                "encoder": encoder, "layer": layer, "seed": seed, "dim": dim, "dev": dev_metrics,
                "train": str(train), "dev_file": str(dev),
                "log": log.as_dict() if log else None})
        results.append(res)
        if on_layer is not None:
            on_layer(res)
    base = evaluate_baselines(task, train_gold, golds) if baselines and train_gold else {}
    return ProbeRun(encoder, task, probe, seed, results, base, golds, time.perf_counter() - t0)


def _load_for_layer(root: Path, layer: int, many: bool, device: str) -> SavedProbe:
    path = root / f"layer-{layer}" if (root / f"layer-{layer}").is_dir() else root
    saved = load_probe(path, device=resolve_device(device))
    if saved.meta.get("layer") != layer and many:
        raise SynrobError(f"{path}: saved probe is for layer {saved.meta.get('layer')}, not {layer}")
    return saved
