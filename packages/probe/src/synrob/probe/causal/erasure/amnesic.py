"""Amnesic probing (Elazar et al. 2021) with LEACE and two random controls.

One run: fit an eraser for a ``tag`` task's labels on the training file's word vectors at one
layer (or take a saved one), then train the task's linear probe four times, on the vectors as
they are (``before``), LEACE-erased (``leace``), erased along a random subspace of the same
rank (``random``, :func:`~.fit.random_control`) and by a random oblique projection of the same
rank whose mean displacement on the training vectors is LEACE's (``random_matched``,
:func:`~.fit.matched_control`), each time on erased train and dev vectors, and score it on
erased test vectors; the same for every other task asked for (``also``: what else the erasure
took away). The mean displacement ``||x - E(x)||`` of each eraser is measured on the labelled
training words (what LEACE was fitted on) and on the labelled test words.

**The probe is fitted to convergence** (``fit="lbfgs"``, :mod:`.softmax`: full-batch
multinomial logistic regression from zero, L2 chosen on dev), the classifier LEACE's guarantee
is about. ``fit="adam"`` trains synrob's ``linear`` probe with its usual regimen instead
(minibatches, random initialisation, early stopping on dev; ``-p lr=...`` apply): its accuracy
after LEACE can sit well above the majority rate, since it stops far from the optimum (see
:mod:`.softmax`), so it is there for comparison only.

**One preprocessing for all four conditions, and it is affine.** The eraser acts on the raw
vectors (as the in-model hook does on token states; an affine map commutes with mean pooling).
What the probe does to its inputs afterwards must keep LEACE's guarantee, equal training class
means: an affine map does (the class means of ``A E(x) + b`` are ``A`` times those of ``E(x)``
plus ``b``), rescaling each vector by its own norm (``normalize=auto`` on a causal LM with massive
activations, ``unit``) does not and can let erased information back in. So the probe's
``normalize`` must be ``standardize`` (the default here: each dimension to mean 0, sd 1 on the
condition's own training vectors, which tames massive activations) or ``none``; anything else is
a :class:`ParameterError`.

Accuracy is over the task's test words (a ``feats`` task's words with the feature);
``majority`` is the test accuracy of the constant predictor a probe can learn: the **training**
words' most frequent label (``majority_label``), scored on the test words. It is what the
converged probe scores after LEACE (it then predicts the training majority for every word),
which is not the test file's own most frequent label's share when the two files' most frequent
labels differ. Differences between conditions are paired bootstrap intervals over test
sentences (the same resamples for every condition): ``drop_leace`` = before - leace,
``drop_random`` = before - random, ``drop_random_matched`` = before - random_matched,
``leace_vs_random`` = random - leace, ``leace_vs_random_matched`` = random_matched - leace,
each with a one-sided p-value of "above 0".

``steps`` per condition: with ``fit="lbfgs"`` the L-BFGS iterations of the fit at the chosen L2
(warm-started from the previous penalty's solution; the penalties tried and rejected are not
counted), with ``l2`` the chosen penalty; with ``fit="adam"`` the epochs up to the best dev
epoch (the weights kept).
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from synrob.perturb.errors import ParameterError, SynrobError
from synrob.perturb.lm.device import resolve_device

from ...metrics.bootstrap import SentenceStats, one_sided_p, percentile_interval, resample_indices
from ...probes.base import Probe
from ...probes.inputs import Features
from ...probes.normalize import AFFINE, fit_norm
from ...runtime.progress import Progress
from ...tasks.base import EXCLUDED, GoldCorpus, Task, load_gold
from ...training.probing import FeatureSource, check_alignment, predict_probe, train_probe
from .eraser import Eraser
from .fit import (
    apply_rows,
    class_mean_gap,
    fit_leace,
    labelled_rows,
    matched_control,
    mean_displacement,
    random_control,
)
from .softmax import fit_softmax

__all__ = ["CONDITIONS", "ERASERS", "FITS", "Condition", "TaskResult", "AmnesicRun",
           "run_amnesic", "check_probe"]

#: The four representations every task is probed on.
CONDITIONS = ("before", "leace", "random", "random_matched")
#: The erased conditions (an eraser each).
ERASERS = CONDITIONS[1:]
_ERASED = "\x00erased"  # the erased task's key among the results (no task name can be it)
#: Bootstrap differences: name -> (minuend, subtrahend).
DIFFERENCES = {"drop_leace": ("before", "leace"), "drop_random": ("before", "random"),
               "drop_random_matched": ("before", "random_matched"),
               "leace_vs_random": ("random", "leace"),
               "leace_vs_random_matched": ("random_matched", "leace")}
#: ``accuracy_*`` key of each condition in a summary.
_ACCURACY = {"before": "accuracy_before", "leace": "accuracy_after",
             "random": "accuracy_random", "random_matched": "accuracy_random_matched"}


@dataclass
class Condition:
    """One probe's test result: accuracy, per test sentence the words right and the task's
    words (n_sentences,) each, the training steps of the fit kept (see the module docstring)
    and, with L-BFGS, the chosen L2 penalty."""

    accuracy: float
    right: np.ndarray
    counted: np.ndarray
    steps: int
    l2: float | None = None


@dataclass
class TaskResult:
    """A task probed on the four conditions, and its majority rate: the test accuracy of the
    training majority label (see the module docstring)."""

    task: Task
    majority: float
    majority_label: str | None
    test_words: int
    conditions: dict[str, Condition] = field(default_factory=dict)

    def summary(self, n_boot: int = 0, seed: int = 0) -> dict[str, Any]:
        """``majority``, ``accuracy_before|after|random|random_matched``, test words, steps
        (and the chosen ``l2`` per condition with L-BFGS) and (with ``n_boot``) the paired
        bootstrap differences (see the module docstring)."""
        c = self.conditions
        out: dict[str, Any] = {
            "task": self.task.name, "task_params": dict(self.task.options),
            "majority": self.majority, "majority_label": self.majority_label,
            **{_ACCURACY[k]: v.accuracy for k, v in c.items()},
            "test_words": self.test_words, "steps": {k: v.steps for k, v in c.items()}}
        if any(v.l2 is not None for v in c.values()):
            out["l2"] = {k: v.l2 for k, v in c.items()}
        if n_boot > 0:
            out.update(self.differences(n_boot, seed))
        return out

    def differences(self, n_boot: int, seed: int) -> dict[str, dict[str, Any]]:
        """Paired bootstrap of the differences between conditions over test sentences."""
        n = next(iter(self.conditions.values())).right.size
        idx = resample_indices(n, n_boot, np.random.default_rng([seed, n, n_boot]))
        boot = {k: SentenceStats("ratio", v.right, v.counted).values(idx)
                for k, v in self.conditions.items()}
        out = {}
        for name, (a, b) in DIFFERENCES.items():
            diff = boot[a] - boot[b]
            out[name] = {"value": self.conditions[a].accuracy - self.conditions[b].accuracy,
                         "ci95": percentile_interval(diff), "p_value": one_sided_p(diff)}
        return out


@dataclass
class AmnesicRun:
    """The eraser, its rank-matched random control (``control``) and its rank- and
    displacement-matched one (``matched``), the erased task's result, the other tasks'
    results, the training class-mean gap (:func:`class_mean_gap`) of each condition, and each
    eraser's mean displacement (:func:`mean_displacement`) on the labelled ``train`` and
    ``test`` words: ``displacement[split][condition]``."""

    eraser: Eraser
    control: Eraser
    matched: Eraser
    erased: TaskResult
    also: dict[str, TaskResult]
    gaps: dict[str, float]
    displacement: dict[str, dict[str, float]]
    seconds: float = 0.0

    def erasers(self) -> dict[str, Eraser]:
        """The eraser of each erased condition (:data:`ERASERS`)."""
        return {"leace": self.eraser, "random": self.control, "random_matched": self.matched}


#: How the probes are fitted (see the module docstring).
FITS = ("lbfgs", "adam")


def check_probe(probe: Probe, fit: str = "lbfgs") -> None:
    """A linear probe whose preprocessing is affine (see the module docstring)."""
    if fit not in FITS:
        raise ParameterError(f"fit must be one of {', '.join(FITS)}, not {fit!r}")
    if probe.name != "linear":
        raise ParameterError(f"amnesic probing retrains a linear probe (LEACE's guarantee is "
                             f"about linear classifiers), not {probe.name!r}")
    if probe.options["normalize"] not in AFFINE:
        raise ParameterError(
            f"normalize={probe.options['normalize']} rescales each word vector by its own norm, "
            f"which can bring erased information back; use {' or '.join(AFFINE)}")


def _flat_targets(task: Task, gold: GoldCorpus) -> np.ndarray:
    """The task's targets of every word of ``gold`` but the excluded ones: (n,) int64."""
    flat = np.concatenate(task.targets(gold)) if len(gold) else np.zeros(0, dtype=np.int64)
    return flat[flat != EXCLUDED]


def _majority(task: Task, train: GoldCorpus, test: GoldCorpus) -> tuple[float, str | None, int]:
    """(test accuracy of the constant predictor of the most frequent training label, that
    label, the task's test words). Ties go to the first label, as the probe's argmax does."""
    y_train = _flat_targets(task, train)
    flat = _flat_targets(task, test)
    y_train = y_train[y_train >= 0]
    if not flat.size or not y_train.size:
        return float("nan"), None, int(flat.size)
    k = int(np.argmax(np.bincount(y_train, minlength=len(task.labels))))
    return float(np.mean(flat == k)), task.labels[k], int(flat.size)


@dataclass
class _State:
    """What the steps of :func:`run_amnesic` share."""

    golds: dict[str, GoldCorpus]
    feats: dict[str, Features] = field(default_factory=dict)
    erasers: dict[str, Eraser] = field(default_factory=dict)
    results: dict[str, TaskResult] = field(default_factory=dict)
    gaps: dict[str, float] = field(default_factory=dict)
    displacement: dict[str, dict[str, float]] = field(default_factory=dict)


def _softmax_predictions(task: Task, probe: Probe, feats: dict[str, Features],
                         golds: dict[str, GoldCorpus], device: str
                         ) -> tuple[list[np.ndarray], int, float]:
    """Test predictions per sentence of a :mod:`.softmax` probe fitted on the labelled
    training words (the probe's ``normalize`` fitted on train), the L-BFGS iterations of the
    fit kept and its L2 penalty."""
    norm = fit_norm(feats["train"], probe.options["normalize"])
    x, y = labelled_rows(norm.apply(feats["train"]).matrix, task.targets(golds["train"]))
    dev = labelled_rows(norm.apply(feats["dev"]).matrix, task.targets(golds["dev"]))
    model = fit_softmax(x, y, len(task.labels), dev, device=device)
    test = norm.apply(feats["test"])
    flat = model.predict(test.matrix)
    preds = [flat[test.offsets[i]:test.offsets[i + 1]] for i in range(test.n_sentences)]
    return preds, model.iterations, model.l2


def _probe_once(task: Task, probe: Probe, feats: dict[str, Features], golds: dict[str, GoldCorpus],
                seed: int, device: str, fit: str) -> Condition:
    """Fit ``task``'s probe on train (``fit``: see the module docstring) and score the test
    file; ``steps``: see the module docstring."""
    l2: float | None = None
    if fit == "lbfgs":
        preds, steps, l2 = _softmax_predictions(task, probe, feats, golds, device)
    else:
        module, log = train_probe(task, probe, (feats["train"], golds["train"]),
                                  (feats["dev"], golds["dev"]), seed=seed, device=device)
        preds = predict_probe(task, probe, module, feats["test"], golds["test"], device)
        steps = log.best_epoch + 1
    targets = task.targets(golds["test"])
    right = np.array([np.sum(np.asarray(p) == t) for p, t in zip(preds, targets, strict=True)],
                     dtype=np.float64)
    counted = np.array([np.sum(t != EXCLUDED) for t in targets], dtype=np.float64)
    acc = float(task.evaluate(golds["test"], preds)["acc"])
    return Condition(acc, right, counted, steps, l2)


def _fit_step(state: _State, task: Task, eraser: Eraser | None, meta: dict[str, Any],
              seed: int) -> None:
    """Fit LEACE on the labelled training words (or check a given eraser's labels), build the
    two random controls, and measure every condition's training class-mean gap and every
    eraser's mean displacement on the labelled training and test words."""
    x, y = labelled_rows(state.feats["train"].matrix, task.targets(state.golds["train"]))
    if eraser is None:
        eraser = fit_leace(x, y, task.labels, meta={**meta, "dim": int(x.shape[1])})
    elif eraser.dim != x.shape[1]:
        raise ParameterError(f"the eraser was fitted on vectors of dimension {eraser.dim}, "
                             f"not dimension {x.shape[1]}")
    elif list(eraser.labels) != list(task.labels):
        raise ParameterError(f"the eraser was fitted on labels {eraser.labels}, the training "
                             f"file gives {task.labels}")
    state.erasers = {"leace": eraser, "random": random_control(eraser, seed),
                     "random_matched": matched_control(eraser, x, seed)}
    n = len(task.labels)
    state.gaps = {"before": class_mean_gap(x, y, n), **{
        k: class_mean_gap(apply_rows(e, x), y, n) for k, e in state.erasers.items()}}
    x_test, _ = labelled_rows(state.feats["test"].matrix, task.targets(state.golds["test"]))
    state.displacement = {split: {k: mean_displacement(e, rows)
                                  for k, e in state.erasers.items()}
                          for split, rows in (("train", x), ("test", x_test))}


def _steps(state: _State, paths: dict[str, str], task: Task, also: Mapping[str, Task], probe: Probe,
           features: FeatureSource, layer: int, eraser: Eraser | None, meta: dict[str, Any],
           seed: int, device: str, fit: str) -> Iterator[str]:
    """The run, one step at a time (each yields its description once done)."""
    for split, path in paths.items():
        state.feats[split] = features(path, layer)
        check_alignment(state.feats[split], state.golds[split])
        yield f"read {split} vectors"
    _fit_step(state, task, eraser, meta, seed)
    yield "fitted the eraser"
    tasks = {_ERASED: task, **also}
    for key, t in tasks.items():
        state.results[key] = TaskResult(t, *_majority(t, state.golds["train"],
                                                      state.golds["test"]))
    for cond, e in (("before", None), *state.erasers.items()):
        feats = state.feats if e is None else {
            s: Features(apply_rows(e, f.matrix), f.offsets) for s, f in state.feats.items()}
        for key, t in tasks.items():
            state.results[key].conditions[cond] = _probe_once(t, probe, feats, state.golds,
                                                              seed, device, fit)
            yield f"{t.name} probe on {cond}"


def run_amnesic(*, task: Task, probe: Probe, features: FeatureSource, layer: int, train: str,
                dev: str, test: str, also: Mapping[str, Task] | None = None, seed: int = 0,
                device: str = "cpu", eraser: Eraser | None = None,
                meta: dict[str, Any] | None = None, fit: str = "lbfgs",
                progress: Progress | None = None) -> AmnesicRun:
    """Amnesic probing of ``task`` at ``layer`` (see the module docstring).

    ``also`` maps a name (reported as given) to each other task. ``task`` and every ``also``
    task are fitted on ``train`` here; ``eraser`` (a saved LEACE
    eraser) replaces the fit, and must have the task's labels. ``meta`` (provenance) goes into
    a fitted eraser. ``progress(steps, description, total)`` wraps the steps (a progress bar).
    """
    check_probe(probe, fit)
    also = dict(also or {})
    if task.kind != "tag" or any(t.kind != "tag" for t in also.values()):
        bad = next(t for t in (task, *also.values()) if t.kind != "tag")
        raise SynrobError(f"task {bad.name!r} is a {bad.kind} task; erasure works on word "
                          "classification tasks (pos, deprel, feats)")
    if eraser is not None and eraser.kind != "leace":
        raise ParameterError(f"the eraser to load is a {eraser.kind} eraser; load a LEACE one "
                             "(its random controls are rebuilt from the seed)")
    t0 = time.perf_counter()
    paths = {"train": train, "dev": dev, "test": test}
    state = _State({s: load_gold(p) for s, p in paths.items()})
    for t in (task, *also.values()):
        t.fit(state.golds["train"])
    steps = _steps(state, paths, task, also, probe, features, layer, eraser, meta or {}, seed,
                   resolve_device(device), fit)
    total = len(paths) + 1 + len(CONDITIONS) * (1 + len(also))
    for _ in progress(steps, "amnesic probing", total) if progress is not None else steps:
        pass
    results = dict(state.results)
    erased = results.pop(_ERASED)
    e = state.erasers
    return AmnesicRun(e["leace"], e["random"], e["random_matched"], erased, results, state.gaps,
                      state.displacement, time.perf_counter() - t0)
