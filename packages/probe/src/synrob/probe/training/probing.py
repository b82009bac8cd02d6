"""One probing experiment: train a probe on one layer (or every layer), early-stop on dev,
evaluate test files and the baselines. Library code only: returns results, prints nothing.

Representations come from a *feature source* ``(path, layer) -> Features``; the default one
(:func:`encoder_features`) reads them from the representation cache of
:func:`synrob.probe.representations.encoding.encode_corpus`, so tests and benchmarks can pass arrays.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from synrob.perturb.errors import (
    LayerError,
    MissingFileError,
    ParameterError,
    ResourceError,
    SynrobError,
    arg,
)
from synrob.perturb.lm.device import resolve_device

from ..probes import normalize
from ..probes.base import Probe, SavedProbe, load_probe, save_probe
from ..probes.inputs import Features
from ..runtime.progress import Progress
from ..tasks.base import GoldCorpus, Task, load_gold
from ..tasks.baselines import BASELINES, baseline_predictions
from ..tasks.scores import score
from .batches import make_batches, make_layer_batches
from .loop import TrainLog, fit, fit_layers, predict
from .precision import resolve_probe_precision, table_dtype

__all__ = ["FeatureSource", "LayerResult", "ProbeRun", "encoder_features", "encode_files",
           "check_alignment",
           "first_difference",
           "train_probe", "train_probes", "train_layers", "fuse_groups", "FUSE_MAX_BYTES",
           "fusion_pays", "fusing", "float32_rows",
           "predict_probe", "evaluate_probe",
           "run_probe", "evaluate_baselines",
           "SavedSetup", "read_saved", "check_saved"]

#: ``(conllu path, layer) -> Features`` for that file's syntactic words.
FeatureSource = Callable[[str, int], Features]

#: ``run_probe(fuse=True)`` trains at most this many bytes of stacked train + dev vectors at
#: once (float32): more layers train in several groups (MiniLM on all of EWT: 7 x 352 MB).
FUSE_MAX_BYTES = 3 * 2**30


@dataclass
class LayerResult:
    """Results of the probe trained on one layer."""

    layer: int
    results: dict[str, dict[str, float]]        # test file -> metric -> value
    dev: dict[str, float]
    log: TrainLog | None
    predictions: dict[str, list[np.ndarray]] = field(default_factory=dict)
    #: test file -> metric -> per-sentence statistics (:func:`synrob.probe.tasks.scores.score`), kept
    #: with ``keep_stats`` for the bootstrap
    stats: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: added by :mod:`synrob.probe.training.analysis` (``deltas``, per-seed results); empty otherwise
    extras: dict[str, Any] = field(default_factory=dict)


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
    #: baseline -> test file -> metric -> per-sentence statistics (``keep_stats``)
    baseline_stats: dict[str, dict[str, dict[str, Any]]] = field(default_factory=dict)

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
                     progress: Progress | None = None) -> FeatureSource:
    """Feature source backed by the representation cache (each file encoded once).

    ``layers`` other than ``"all"`` encode only those layers (with layer-only loading, only
    the blocks they need), unless the cache already holds every layer of a file
    (:func:`encode_corpus`'s ``any_superset``). The returned callable also has
    ``.layers(path) -> list[int]``: the layers encoded, and
    ``.encode(path, encoders=None)``: the file's cache entry, made now if absent (a
    :class:`~synrob.probe.representations.encoding.LoadedEncoders` shared by a loop of files loads the
    encoder once); its optional third argument ``sentences`` reads only a file's first
    sentences (a training cut).
    """
    from ..representations.encoding import encode_corpus

    sets: dict[str, Any] = {}

    def representation(path: str, encoders: Any = None) -> Any:
        if path not in sets:
            sets[path] = encode_corpus(encoder, path, layers=layers, device=device, dtype=dtype,
                                       params=params, progress=progress, encoders=encoders,
                                       any_superset=layers != "all")
        return sets[path]

    def source(path: str, layer: int, sentences: int | None = None) -> Features:
        """Layer ``layer`` of ``path`` as float32 (its first ``sentences`` only, when given:
        only those are read and converted)."""
        rep = representation(path)
        if layer not in rep.layers:
            raise LayerError(f"encoder {encoder!r} has no layer {layer}; layers: {rep.layers}")
        matrix, offsets = rep.layer_matrix(layer)
        if sentences is not None and sentences < len(offsets) - 1:
            offsets = offsets[: sentences + 1]
            matrix = matrix[: int(offsets[-1])]
        return Features(float32_rows(matrix), np.asarray(offsets, dtype=np.int64))

    source.layers = lambda path: list(representation(path).layers)  # type: ignore[attr-defined]
    source.encode = representation  # type: ignore[attr-defined]
    return source


def encode_files(features: FeatureSource, paths: Sequence[str | None]) -> None:
    """Make every file's cache entry (``features.encode``) with one encoder instance, so that
    the model's weights are read once for all of them, not once per file; it is released
    when they are done. ``None`` paths are skipped."""
    from ..representations.encoding import LoadedEncoders

    held = LoadedEncoders()
    for path in dict.fromkeys(p for p in paths if p):
        features.encode(path, held)  # type: ignore[attr-defined]


def float32_rows(matrix: np.ndarray) -> np.ndarray:
    """``np.asarray(matrix, dtype=np.float32)``: the same values (every float16 is a float32),
    converted on torch's threads when ``matrix`` is float16, the cache's storage type. One
    layer of MiniLM's EWT train vectors (204,577 x 384) took 0.09-0.10 s instead of
    0.17-0.90 s (2 threads, 2026-11-27). Shape: as ``matrix``."""
    if np.asarray(matrix).dtype != np.float16:
        return np.asarray(matrix, dtype=np.float32)
    import warnings

    import torch

    with warnings.catch_warnings():  # a read-only memmap: torch only reads it here
        warnings.simplefilter("ignore", UserWarning)
        return torch.from_numpy(np.asarray(matrix)).float().numpy()


def _data(task: Task, feats: Features, gold: GoldCorpus, batch_size: int, device: str,
          with_targets: bool = True, dtype: Any = None):
    check_alignment(feats, gold)
    targets = task.targets(gold) if with_targets else None
    pooling = task.options.get("pooling", "mean")
    return make_batches(feats, task.kind, targets, batch_size=batch_size, heads=gold.heads,
                        pooling=pooling, device=device, dtype=dtype)


def train_probe(task: Task, probe: Probe, train: tuple[Features, GoldCorpus],
                dev: tuple[Features, GoldCorpus], *, seed: int = 0, device: str = "cpu"
                ) -> tuple[Any, TrainLog]:
    """Train a fresh module for ``task`` on ``train``, early-stopping on ``dev``.

    The word vectors are first normalised as the probe's ``normalize`` parameter chooses on
    ``train`` (:mod:`synrob.probe.probes.normalize`); the fitted normalisation is attached to the
    returned module, and :func:`predict_probe` applies it to any file it reads.
    """
    import torch

    probe.check_kind(task.kind, task.name)
    device = resolve_device(device)
    bs = probe.options["batch_size"]
    norm = normalize.fit_norm(train[0], probe.options["normalize"])
    dtype = table_dtype(probe)
    train_set = _data(task, norm.apply(train[0]), train[1], bs, device, dtype=dtype)
    dev_set = _data(task, norm.apply(dev[0]), dev[1], bs, device, dtype=dtype)
    torch.manual_seed(seed)
    module = probe.build(train[0].dim, task.n_classes, task.kind).to(device)
    log = fit(probe, module, train_set, dev_set, seed=seed)
    return normalize.attach(module, norm), log


def train_probes(task: Task, probe: Probe, train: tuple[Sequence[Features], GoldCorpus],
                 dev: tuple[Sequence[Features], GoldCorpus], *, seed: int = 0,
                 device: str = "cpu") -> list[tuple[Any, TrainLog]]:
    """:func:`train_probe` on each layer of ``train`` and ``dev`` (one Features per layer, the
    same sentences), all layers trained together by :func:`synrob.probe.training.loop.fit_layers`:
    each layer's module, normalisation and log are those :func:`train_probe` gives on that
    layer alone. ``probe.can_fuse(task.kind)`` must hold. The sequences may be lazy (each
    layer's vectors are read, normalised and stacked one after the other)."""
    import torch

    probe.check_kind(task.kind, task.name)
    if not probe.can_fuse(task.kind):
        raise SynrobError(f"probe {probe.name!r} cannot train the layers of a {task.kind} "
                          f"task together")
    device = resolve_device(device)
    bs = probe.options["batch_size"]
    n = len(train[0])
    norms: list[normalize.WordNorm] = []
    dims: list[int] = []

    def normalised_train() -> Any:
        for feats in train[0]:
            check_alignment(feats, train[1])
            norms.append(normalize.fit_norm(feats, probe.options["normalize"]))
            dims.append(feats.dim)
            yield norms[-1].apply(feats)

    def normalised_dev() -> Any:
        for feats, norm in zip(dev[0], norms, strict=True):
            check_alignment(feats, dev[1])
            yield norm.apply(feats)

    pooling = task.options.get("pooling", "mean")
    train_set = make_layer_batches(normalised_train(), task.kind, task.targets(train[1]),
                                   batch_size=bs, heads=train[1].heads, pooling=pooling,
                                   device=device, n_layers=n, dtype=table_dtype(probe))
    dev_set = make_layer_batches(normalised_dev(), task.kind, task.targets(dev[1]),
                                 batch_size=bs, heads=dev[1].heads, pooling=pooling,
                                 device=device, n_layers=n, dtype=table_dtype(probe))
    modules = []
    for dim in dims:  # each layer's initial weights: train_probe's draw with this seed
        torch.manual_seed(seed)
        modules.append(probe.build(dim, task.n_classes, task.kind).to(device))
    logs = fit_layers(probe, modules, train_set, dev_set, seed=seed)
    return [(normalize.attach(m, norm), log) for m, norm, log in zip(modules, norms, logs,
                                                                     strict=True)]


def predict_probe(task: Task, probe: Probe, module: Any, feats: Features, gold: GoldCorpus,
                  device: str = "cpu") -> list[np.ndarray]:
    """Per-sentence predictions of a trained module on one file (its word normalisation
    applied: :func:`synrob.probe.probes.normalize.inputs_for`)."""
    feats = normalize.inputs_for(module, feats)
    data = _data(task, feats, gold, 64, resolve_device(device), with_targets=False)
    return predict(probe, module, data)


def evaluate_probe(task: Task, probe: Probe, module: Any, feats: Features, gold: GoldCorpus,
                   device: str = "cpu") -> tuple[dict[str, float], list[np.ndarray]]:
    """Metrics and per-sentence predictions of a trained module on one file."""
    preds = predict_probe(task, probe, module, feats, gold, device)
    return task.evaluate(gold, preds), preds


def evaluate_baselines(task: Task, train: GoldCorpus, tests: dict[str, GoldCorpus],
                       stats: dict[str, dict[str, Any]] | None = None
                       ) -> dict[str, dict[str, dict[str, float]]]:
    """baseline -> test file -> metrics, for the baselines that apply to the task; with
    ``stats``, each one's per-sentence statistics go into ``stats[baseline][file]`` (one
    scoring pass, :func:`synrob.probe.tasks.scores.score`)."""
    out: dict[str, dict[str, dict[str, float]]] = {}
    for name in BASELINES:
        per_file = {}
        for label, gold in tests.items():
            preds = baseline_predictions(name, task, train, gold)
            if preds is None:
                break
            if stats is None:
                per_file[label] = task.evaluate(gold, preds)
            else:
                per_file[label], stats.setdefault(name, {})[label] = score(task, gold, preds)
        if per_file:
            out[name] = per_file
    return out


def _score_tests(res: LayerResult, task: Task, probe: Probe, module: Any,
                 features: FeatureSource, golds: dict[str, Any], device: str,
                 keep_stats: bool, keep_predictions: bool) -> None:
    """Fill ``res`` with each test file's metrics (and statistics, predictions if kept)."""
    for t, gold in golds.items():
        preds = predict_probe(task, probe, module, features(t, res.layer), gold, device)
        if keep_stats:  # metrics and bootstrap statistics from one scoring pass
            res.results[t], res.stats[t] = score(task, gold, preds)
        else:
            res.results[t] = task.evaluate(gold, preds)
        if keep_predictions:
            res.predictions[t] = preds


def run_probe(*, encoder: str, task: Task, probe: Probe, layers: Sequence[int],
              tests: Sequence[str], features: FeatureSource, train: str | None = None,
              dev: str | None = None, seed: int = 0, device: str = "cpu",
              save: str | Path | None = None, load: str | Path | None = None,
              keep_predictions: bool = False, keep_stats: bool = False,
              baselines: bool = True,
              encoder_params: dict[str, Any] | None = None,
              encoder_identity: dict[str, Any] | None = None,
              on_layer: Callable[[LayerResult], None] | None = None,
              fuse: bool | None = None, progress: Progress | None = None) -> ProbeRun:
    """Train (or load) a probe for each layer and evaluate every test file and the baselines.

    With ``load``, the saved probe(s) are evaluated as they are (``DIR`` holds ``probe.json`` or
    ``layer-L/probe.json`` per layer) and ``train`` is only needed for the baselines; a layer
    the probe was not trained on, or representations of another dimension, are a
    :class:`ParameterError` (see also :func:`check_saved`). With ``save``, one layer is written
    to ``DIR``, several to ``DIR/layer-L``, with ``encoder_params`` and ``encoder_identity``
    (what :func:`check_saved` compares on load). With ``keep_stats``, each test file's
    per-sentence statistics are kept in :attr:`LayerResult.stats` (for the bootstrap).
    With ``fuse``, several layers of a probe that can (``probe.can_fuse``) train together
    (:func:`train_probes`, in groups of at most :data:`FUSE_MAX_BYTES` of vectors); each
    layer's results are those of training it alone, which ``fuse=False`` does; ``None`` (the
    default) fuses where it is faster (:func:`fusion_pays`). ``progress`` shows the layers
    (:class:`~synrob.probe.runtime.progress.Progress`).
    """
    t0 = time.perf_counter()
    golds = {t: load_gold(t) for t in tests}
    train_gold = load_gold(train) if train else None
    dev_gold = load_gold(dev) if dev else None
    if load is None:
        if train_gold is None or dev_gold is None:
            raise SynrobError(f"training a probe needs {arg('train')} and {arg('dev')} (or "
                              f"{arg('load')} a saved one)")
        task.fit(train_gold)
        resolve_probe_precision(probe, resolve_device(device), encoder)  # auto -> what it is
    results: list[LayerResult] = []
    trained: dict[int, tuple[Any, TrainLog, int]] = {}
    fused = load is None and fusing(fuse, probe, task.kind, device, len(layers))
    shown = layers if progress is None else progress(
        layers, f"{task.name} probe on {encoder}, seed {seed}: layers", len(layers))
    for layer in shown:
        log = None
        if load is not None:
            dim = features(tests[0], layer).dim
            saved = _load_for_layer(Path(load), layer, dim, device)
            task, probe, module = saved.task, saved.probe, saved.module
            dev_metrics = dict(saved.meta.get("dev", {}))
        else:
            assert train_gold is not None and dev_gold is not None and train and dev
            if layer not in trained:  # this layer and, fused, the layers after it
                todo = layers[layers.index(layer):] if fused else [layer]  # else scored as it ends
                trained = train_layers(task, probe, features, todo, train, dev, train_gold,
                                       dev_gold, seed=seed, device=device, fuse=fused)
            module, log, dim = trained.pop(layer)
            _warn_massive(encoder, layer, normalize.of(module))
            dev_metrics, _ = evaluate_probe(task, probe, module, features(dev, layer), dev_gold,
                                            device)
        res = LayerResult(layer, {}, dev_metrics, log)
        _score_tests(res, task, probe, module, features, golds, device,
                     keep_stats, keep_predictions)
        if save is not None and load is None:
            target = Path(save) / f"layer-{layer}" if len(layers) > 1 else Path(save)
            save_probe(target, probe, module, task, {
                "encoder": encoder, "encoder_params": dict(encoder_params or {}),
                **({"encoder_identity": encoder_identity} if encoder_identity else {}),
                "layer": layer, "seed": seed, "dim": dim, "dev": dev_metrics,
                "train": str(train), "dev_file": str(dev),
                "log": log.as_dict() if log else None})
        results.append(res)
        if on_layer is not None:
            on_layer(res)
    base_stats: dict[str, dict[str, Any]] = {}
    base = (evaluate_baselines(task, train_gold, golds, base_stats if keep_stats else None)
            if baselines and train_gold else {})
    return ProbeRun(encoder, task, probe, seed, results, base, golds, time.perf_counter() - t0,
                    base_stats)


def train_layers(task: Task, probe: Probe, features: FeatureSource, layers: Sequence[int],
                 train: str, dev: str, train_gold: GoldCorpus, dev_gold: GoldCorpus, *,
                 seed: int = 0, device: str = "cpu", fuse: bool | None = None
                 ) -> dict[int, tuple[Any, TrainLog, int]]:
    """A probe trained on each of ``layers`` of ``train`` (early stopping on ``dev``):
    layer -> (module, log, dim). Where :func:`fusing` says so, the layers train together
    (:func:`train_probes`, in the groups of :func:`fuse_groups`), else one after the other
    (:func:`train_probe`); each layer's module and log are the same either way. ``task`` must
    be fitted on ``train_gold``."""
    groups = (fuse_groups(features, layers, train, train_gold, dev_gold)
              if fusing(fuse, probe, task.kind, device, len(layers))
              else [[layer] for layer in layers])
    out: dict[int, tuple[Any, TrainLog, int]] = {}
    for group in groups:
        dim = features(train, group[0]).dim
        if len(group) == 1:
            trained = [train_probe(task, probe, (features(train, group[0]), train_gold),
                                   (features(dev, group[0]), dev_gold), seed=seed,
                                   device=device)]
        else:
            trained = train_probes(task, probe,
                                   (_LayerFeatures(features, train, group), train_gold),
                                   (_LayerFeatures(features, dev, group), dev_gold), seed=seed,
                                   device=device)
        out.update({layer: (module, log, dim)
                    for layer, (module, log) in zip(group, trained, strict=True)})
    return out


def fusion_pays(probe: Probe, device: str, threads: int) -> bool:
    """Whether training several layers of ``probe`` together is faster than one after the
    other on ``device`` with ``threads`` torch threads, as measured (docs/experiments.md,
    "Probe training: all layers in one pass"): off the CPU, yes (structural and linear probes
    1.35-1.61x on an H100); on the CPU only with two threads or more and a probe whose steps
    are its products (``Probe.cpu_fusion_pays``): the structural probe's 7 MiniLM layers ran
    1.12-1.31x faster on 2 threads but 0.99x on one thread (0.81x on synthetic vectors, where
    the stacked batch no longer stays in the cache), and the perceptron's 1.02x."""
    if not str(device).startswith("cpu"):
        return True
    return threads >= 2 and probe.cpu_fusion_pays


def fusing(fuse: bool | None, probe: Probe, kind: str, device: str, n_layers: int,
           threads: int | None = None) -> bool:
    """Whether ``n_layers`` layers of ``probe`` on a ``kind`` task train together: never for
    one layer or a probe that cannot (``probe.can_fuse``); else ``fuse``, or where it is
    faster when ``fuse`` is None (:func:`fusion_pays` with ``threads``, torch's when None)."""
    if n_layers < 2 or not probe.can_fuse(kind):
        return False
    if fuse is not None:
        return fuse
    if threads is None:
        import torch

        threads = torch.get_num_threads()
    return fusion_pays(probe, resolve_device(device), threads)


class _LayerFeatures(Sequence[Features]):
    """The Features of ``layers`` of one file, read from ``source`` when indexed."""

    def __init__(self, source: FeatureSource, path: str, layers: Sequence[int]) -> None:
        self.source, self.path, self.layers = source, path, list(layers)

    def __len__(self) -> int:
        return len(self.layers)

    def __getitem__(self, i: Any) -> Any:
        return self.source(self.path, self.layers[i])


def fuse_groups(features: FeatureSource, layers: Sequence[int], train: str,
                train_gold: GoldCorpus, dev_gold: GoldCorpus) -> list[list[int]]:
    """``layers`` in groups of near-equal size, in order, whose stacked train + dev vectors
    (float32, the first layer's dim) take at most :data:`FUSE_MAX_BYTES` per group."""
    layers = list(layers)
    if not layers:
        return []
    dim = features(train, layers[0]).dim
    per_layer = 4 * dim * (int(train_gold.lengths.sum()) + int(dev_gold.lengths.sum()) + 2)
    n_groups = -(-len(layers) // max(1, FUSE_MAX_BYTES // max(per_layer, 1)))
    size = -(-len(layers) // n_groups)
    return [layers[i:i + size] for i in range(0, len(layers), size)]


def _warn_massive(encoder: str, layer: int, norm: normalize.WordNorm | None) -> None:
    """One ``synrob: warning:`` line when a layer's training vectors have massive activations."""
    if norm is not None and norm.massive:
        import warnings

        from synrob.perturb.errors import SynrobWarning

        warnings.warn(f"{encoder} layer {layer}: {norm.describe()}", SynrobWarning, stacklevel=3)


def _load_for_layer(root: Path, layer: int, dim: int, device: str) -> SavedProbe:
    setup = read_saved(root)
    if layer not in setup.layers:
        raise ParameterError(f"probe in {root} was trained on {_layers_text(setup.layers)}, "
                             f"not layer {layer}")
    path = setup.layer_dir(layer)
    meta = setup.metas[layer]
    if int(meta.get("dim", dim)) != dim:
        raise ParameterError(f"probe in {root} was trained on representations of dimension "
                             f"{meta['dim']}, not dimension {dim}")
    return load_probe(path, device=resolve_device(device))


# ---------------------------------------------------------------------- saved probes
@dataclass
class SavedSetup:
    """What a saved probe directory was trained on: ``probe.json`` of each saved layer."""

    directory: Path
    metas: dict[int, dict[str, Any]]   # layer -> probe.json
    many: bool                         # DIR/layer-L/ per layer (else DIR/probe.json)

    @property
    def layers(self) -> list[int]:
        return sorted(self.metas)

    @property
    def meta(self) -> dict[str, Any]:
        """``probe.json`` of the first layer (encoder, task and probe are the same for all)."""
        return self.metas[self.layers[0]]

    def layer_dir(self, layer: int) -> Path:
        return self.directory / f"layer-{layer}" if self.many else self.directory


def read_saved(directory: str | Path) -> SavedSetup:
    """The ``probe.json`` files of a directory written by ``run_probe(save=...)``."""
    import json

    d = Path(directory)
    files = [d / "probe.json"] if (d / "probe.json").is_file() else sorted(
        d.glob("layer-*/probe.json"))
    if not files:
        raise MissingFileError(f"{d}: not a saved probe (no probe.json)")
    metas: dict[int, dict[str, Any]] = {}
    for f in files:
        try:
            meta = json.loads(f.read_text(encoding="utf-8"))
            layer = int(meta["layer"])
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise ResourceError(f"{f}: not a valid probe.json ({exc})") from None
        metas[layer] = meta
    return SavedSetup(d, metas, files[0].parent != d)


def _layers_text(layers: Sequence[int]) -> str:
    return f"layer {layers[0]}" if len(layers) == 1 else "layers " + ", ".join(map(str, layers))


def first_difference(a: Any, b: Any, path: tuple[str, ...] = ()
                      ) -> tuple[tuple[str, ...], Any, Any] | None:
    """The first (path, a value, b value) where two JSON values differ, or None."""
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b)):
            diff = first_difference(a.get(k), b.get(k), (*path, str(k)))
            if diff is not None:
                return diff
        return None
    return None if a == b else (path, a, b)


def check_saved(setup: SavedSetup, *, encoder: str, identity: dict[str, Any] | None,
                layers: Sequence[int], task: str, task_params: dict[str, Any],
                probe: str, probe_params: dict[str, Any]) -> None:
    """Raise :class:`ParameterError` unless a saved probe was trained on this setup.

    Compares the task and its parameters, the probe and its parameters, the layers, and the
    encoder: its identity (name, version, options such as pooling, model revision or file
    fingerprints) when ``probe.json`` has one, else its name. Given parameters are compared
    after conversion by the components' declared types. Each message names both values.
    """
    import json

    meta, where = setup.meta, setup.directory

    def fail(saved: str, given: str) -> None:
        raise ParameterError(f"probe in {where} was trained on {saved}, not {given}")

    if meta.get("task") != task:
        fail(f"task {meta.get('task')!r}", f"task {task!r}")
    if meta.get("probe") != probe:
        fail(f"probe {meta.get('probe')!r}", f"probe {probe!r}")
    for what, saved_params, given in (("task", meta.get("task_params", {}), task_params),
                                      ("probe", meta.get("probe_params", {}), probe_params)):
        for k, v in given.items():
            if saved_params.get(k) != v:
                fail(f"{what} parameter {k}={saved_params.get(k)!r}", f"{k}={v!r}")
    for layer in layers:
        if layer not in setup.metas:
            fail(_layers_text(setup.layers), f"layer {layer}")
    saved_spec = meta.get("encoder")
    saved_id = meta.get("encoder_identity")
    if saved_id is None or identity is None:  # saved by an older synrob: the name only
        if saved_spec != encoder:
            fail(f"encoder {saved_spec!r}", f"encoder {encoder!r}")
        return
    diff = first_difference(saved_id, json.loads(json.dumps(identity, default=str)))
    if diff is None:
        return
    path, a, b = diff
    if saved_spec != encoder or path[0] == "encoder":
        fail(f"encoder {saved_spec!r}", f"encoder {encoder!r}")
    if path == ("version",):
        fail(f"encoder {saved_spec!r} version {a}", f"version {b}")
    if path == ("options", "pooling"):
        fail(f"representations pooled by {a!r}", f"pooled by {b!r}")
    name = ".".join(path[1:]) if path[0] == "options" else ".".join(path)
    fail(f"encoder {saved_spec!r} with {name}={a!r}", f"{name}={b!r}")
