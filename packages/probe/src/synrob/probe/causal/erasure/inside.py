"""An eraser inside a causal LM: minimal-pair preference and damage, clean / erased / random
controls.

``synrob score ORIGINAL PERTURBED --erase FILE`` scores every pair with
:func:`synrob.probe.causal.behaviour.score_pairs`: as it is (``clean``), with the eraser applied to
layer ``L``'s hidden states during the forward pass (``erased``; :func:`erasing`, through
:func:`synrob.probe.causal.intervene.intervene`), with the random control of the same rank
(``random``) and with the one of the same rank and mean displacement (``random_matched``,
:func:`synrob.probe.causal.erasure.fit.matched_control`). The eraser changes **every token's state but the start token's**: the start token
that :func:`synrob.perturb.lm.loaded.start_token_id` puts before the text is the attention sink, whose
state was never part of a word the eraser was fitted on (``positions=1``); the text's tokens
are all erased, as erasure on representations erases every word (an affine eraser commutes with
the mean over a word's subwords). Only causal LMs: a masked LM's pseudo-log-likelihood would
erase its ``[MASK]`` and special tokens too, which no eraser was fitted on.

:func:`erasure_summary` reports, per condition, :func:`~synrob.probe.causal.behaviour.
preference_summary` (accuracy and its interval) and ``nll_per_token``, and for every other
condition its change against ``clean`` (and ``erased`` against each random control), each with
a **paired** bootstrap: the same resamples of the source sentences (each with all its pairs,
the cluster bootstrap of ``synrob score``; ``numpy.random.default_rng(seed)``) score every
condition. Two quantities:

* ``accuracy_change``: preference accuracy of the condition minus clean's, with the one-sided
  bootstrap p of "the change is below 0";
* ``nll_increase`` (the **damage**, as Belrose et al. 2023 report it): the increase of the
  mean per-token negative log-likelihood (nats per token) of the clean text, the original
  sentences (one per source), under the condition over clean's: **positive when the eraser
  made the LM worse** at the text itself. ``nll_per_token`` is a ratio of sums (total negative
  log-probability over tokens), resampled by source; the p-value is the one-sided bootstrap p
  of "the increase is above 0".

Each change comes as ``{"value", "ci95", "p_value"}`` (:func:`synrob.probe.metrics.bootstrap.one_sided_p`).

:func:`check_lm_eraser` refuses an eraser made for another model, layer or dimension (one
:class:`ParameterError` line, as ``synrob probe --load``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
from synrob.perturb.errors import ParameterError, arg

from ...metrics.bootstrap import (
    Resamples,
    cluster_indices,
    one_sided_p,
    percentile_interval,
    resample_indices,
    source_clusters,
)
from ..behaviour import PairScore, preference_summary
from .eraser import Eraser

__all__ = ["CONTROLS", "check_lm_eraser", "erasing", "erasure_summary", "paired_change"]

#: The random controls scored beside the eraser (condition names, as the eraser kinds).
CONTROLS = ("random", "random_matched")


def _lm_identity(lm_spec: str) -> dict[str, Any]:
    """The transformer-encoder identity of the LM's model files (no weights loaded)."""
    from ...encoders.resolve import resolve_encoder

    return resolve_encoder(lm_spec).identity()


def check_lm_eraser(eraser: Eraser, where: str | Path, *, lm_spec: str, lm: Any,
                    layer: int | None, kind: str | None = None) -> int:
    """The layer to erase at (``layer``, else the eraser's own), after checking that ``eraser``
    was fitted on this causal LM's states there: a transformer encoder of the same model files
    (``encoder_identity.resource`` in its metadata) that puts the start token first, the same
    layer, a layer the model has, and the model's hidden size; ``kind`` (``random`` or
    ``random_matched`` for a control file) when given. Raises one :class:`ParameterError` line naming both values."""
    from ..intervene import model_layers

    meta = eraser.meta

    def fail(saved: str, given: str) -> None:
        raise ParameterError(f"eraser in {where} was fitted on {saved}, not {given}")

    if lm.kind != "causal":
        raise ParameterError(f"{arg('erase')} needs a causal LM; {lm_spec!r} is a {lm.kind} LM")
    if kind is not None and eraser.kind != kind:
        raise ParameterError(f"eraser in {where} is a {eraser.kind} eraser, not a {kind} one")
    saved = meta.get("encoder_identity")
    if saved is not None:
        mine = _lm_identity(lm_spec)
        if saved.get("encoder") != mine["encoder"] or saved.get("resource") != mine["resource"]:
            fail(f"encoder {meta.get('encoder')!r}", f"the LM {lm_spec!r}")
        if saved.get("options", {}).get("bos", "auto") != "auto":
            fail("states without the start token (bos=no)", "the LM's, which start with it")
    saved_layer = meta.get("layer")
    if layer is None:
        if saved_layer is None:
            raise ParameterError(f"eraser in {where} records no layer: pass {arg('layer')}")
        layer = int(saved_layer)
    elif saved_layer is not None and int(saved_layer) != layer:
        fail(f"layer {saved_layer}", f"layer {layer}")
    n_layers = model_layers(lm.model)
    if not 0 <= layer < n_layers:
        raise ParameterError(f"layer {layer} is out of range: {lm_spec!r} has layers "
                             f"0..{n_layers - 1}")
    hidden = int(lm.model.config.hidden_size)
    if eraser.dim != hidden:
        fail(f"vectors of dimension {eraser.dim}", f"the LM's dimension {hidden}")
    return layer


@contextmanager
def erasing(lm: Any, eraser: Eraser | None, layer: int) -> Iterator[None]:
    """Within the block, ``lm``'s forward passes erase layer ``layer`` with ``eraser`` at every
    position but the first (the start token); ``None`` leaves the model as it is."""
    if eraser is None:
        yield
        return
    from ..intervene import intervene

    with intervene(lm.model, layer, eraser, positions=1):
        yield


def _means(values: np.ndarray, idx: Resamples) -> np.ndarray:
    """The mean of ``values`` on each resample of ``idx``: (B,)."""
    if isinstance(idx, np.ndarray):
        return values[idx].mean(axis=1)
    return np.array([values[r].mean() for r in idx])


def _ratios(num: np.ndarray, den: np.ndarray, idx: Resamples) -> np.ndarray:
    """``sum num / sum den`` on each resample (NaN where ``den`` sums to 0)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        if isinstance(idx, np.ndarray):
            return num[idx].sum(axis=1) / den[idx].sum(axis=1)
        return np.array([num[r].sum() / den[r].sum() for r in idx])


def paired_change(stat: Callable[[str, Resamples | None], Any], a: str, b: str,
                  idx: Resamples | None, *, alternative: str = "less") -> dict[str, Any]:
    """``stat(a) - stat(b)`` with the percentile interval of the same difference on each
    resample of ``idx`` and the one-sided bootstrap p of "the difference is below 0"
    (``alternative="less"``) or "above 0" (``"greater"``). ``stat(name, None)`` is the point
    value, ``stat(name, idx)`` the (B,) resampled values; ``idx`` None: no interval."""
    value = float(stat(a, None) - stat(b, None))
    if idx is None:
        return {"value": value, "ci95": [float("nan")] * 2, "p_value": float("nan")}
    diffs = np.asarray(stat(a, idx) - stat(b, idx), dtype=np.float64)
    p = one_sided_p(-diffs if alternative == "less" else diffs)
    return {"value": value, "ci95": percentile_interval(diffs), "p_value": p}


def erasure_summary(scores: Mapping[str, Sequence[PairScore]], *, n_boot: int = 1000,
                    seed: int = 0) -> dict[str, Any]:
    """Per condition (``clean`` and e.g. ``erased``, ``random``, ``random_matched``: the same
    pairs in the same order) its :func:`~synrob.probe.causal.behaviour.preference_summary` with
    ``nll_per_token``, and ``accuracy_change`` and ``nll_increase`` against ``clean``; for
    ``erased`` and each control of :data:`CONTROLS` present, also ``erased_vs_<control>``
    (``erased`` minus the control). See the module docstring."""
    clean = scores["clean"]
    out: dict[str, Any] = {name: preference_summary(s, n_boot=n_boot, seed=seed)
                           for name, s in scores.items()}
    clusters = source_clusters(np.array([s.pair.source for s in clean], dtype=object))
    boot = n_boot > 0 and len(clusters) > 0
    # the same draws of sources: cluster_indices draws resample_indices over the clusters first
    pair_idx = cluster_indices(clusters, n_boot, np.random.default_rng(seed)) if boot else None
    src_idx = resample_indices(len(clusters), n_boot, np.random.default_rng(seed)) if boot \
        else None
    first = np.array([c[0] for c in clusters], dtype=np.int64)
    prefers = {k: np.array([x.prefers_original for x in v], dtype=np.float64)
               for k, v in scores.items()}
    nll = {k: -np.array([v[i].logprob_original for i in first], dtype=np.float64)
           for k, v in scores.items()}
    tokens = np.array([clean[i].tokens_original for i in first], dtype=np.float64)

    def accuracy(name: str, idx: Resamples | None) -> Any:
        return prefers[name].mean() if idx is None else _means(prefers[name], idx)

    def nll_per_token(name: str, idx: Resamples | None) -> Any:
        return nll[name].sum() / tokens.sum() if idx is None else _ratios(nll[name], tokens, idx)

    comparisons = [(k, "clean", out[k]) for k in scores if k != "clean"]
    for control in (c for c in CONTROLS if "erased" in scores and c in scores):
        out[f"erased_vs_{control}"] = {}
        comparisons.append(("erased", control, out[f"erased_vs_{control}"]))
    for a, b, into in comparisons:
        into["accuracy_change"] = paired_change(accuracy, a, b, pair_idx)
        into["nll_increase"] = paired_change(nll_per_token, a, b, src_idx,
                                             alternative="greater")
    for name in scores:
        out[name]["nll_per_token"] = (float(nll_per_token(name, None)) if first.size
                                      else float("nan"))
    out["sources"] = len(clusters)
    return out
