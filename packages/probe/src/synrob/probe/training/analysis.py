"""``synrob probe --control --mdl --bootstrap N --seeds ...``: a probing run with control tasks,
MDL codelengths, paired-bootstrap intervals and several training seeds.

:func:`run_analysed` trains with :func:`synrob.probe.training.probing.run_probe` once per seed (and once
per seed on the control task of :mod:`synrob.probe.tasks.control`), then adds, to each layer's
per-file results (``LayerResult.results[file]``):

* with several seeds: every metric ``M`` becomes the mean over seeds, plus ``M_seeds`` (the
  per-seed values, in ``seeds`` order) and ``M_std`` (population standard deviation, ddof 0);
* ``control`` (the control task's metrics, same keys) and ``selectivity`` (``M`` - control ``M``
  for every metric of both, ``sentences`` excepted);
* ``mdl`` / ``control_mdl`` (:mod:`synrob.probe.training.mdl`; the training set's codelength, the same
  for every test file; averaged over seeds);
* with ``bootstrap`` > 0, ``M_ci95`` for every metric (and in ``control`` and ``selectivity``),
  from :mod:`synrob.probe.metrics.bootstrap`; the baselines' ``M_ci95`` (in ``ProbeRun.baselines``) and
  each layer's ``lead`` over each baseline (``lead[baseline][M]``, probe - baseline, with its
  paired ``M_ci95``), all on the same resamples;

and to ``LayerResult.extras["deltas"]``, per perturbed test file (every test file after the
first, aligned with the first), the **drop** clean - perturbed of every metric (``drops``, on
whenever there are several test files: a point difference needs no bootstrap), with ``bootstrap``
> 0 its ``M_ci95`` and one-sided ``M_p_value``; ``p_value`` is that of the task's primary metric
(None without a bootstrap).

Intervals of length-averaged metrics (DSpr, NSpr) resample within each sentence length, and
intervals and drops resample source sentences with all their variants
(:mod:`synrob.probe.metrics.bootstrap`).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from synrob.perturb.errors import ParameterError, arg

from ..metrics import bootstrap as st
from ..tasks.base import Task, load_gold
from ..tasks.control import ControlTask, control_task
from ..tasks.scores import sentence_stats
from .mdl import check_mdl, online_codelengths
from .probing import FeatureSource, LayerResult, ProbeRun, fuse_groups, run_probe

__all__ = ["AnalysisOptions", "run_analysed", "paired_drops"]

_SKIP = ("sentences",)


@dataclass
class AnalysisOptions:
    """What to add to a probing run (all off: a plain run)."""

    control: bool = False
    mdl: bool = False
    bootstrap: int = 0
    seeds: list[int] = field(default_factory=list)
    #: clean - perturbed drops between the first test file and the others (point values; with
    #: their intervals when ``bootstrap`` > 0, which implies them)
    drops: bool = False
    #: with several ``seeds``, the intervals of the metrics, the control's, the selectivity and
    #: the leads resample the seeds too (:func:`synrob.probe.metrics.bootstrap.seed_draws`),
    #: so they hold the seed variance; off: each resample averages every seed
    seed_variance: bool = False

    @property
    def active(self) -> bool:
        return (self.control or self.mdl or self.bootstrap > 0 or bool(self.seeds)
                or self.drops)


def check_options(opts: AnalysisOptions, task: Task, loading: bool) -> None:
    """One-line :class:`ParameterError` for combinations that cannot work."""
    if opts.control:
        ControlTask(task)  # refuses tasks without a control
    if opts.mdl:
        check_mdl(task)
    if loading and (opts.control or opts.mdl or opts.seeds):
        raise ParameterError(f"{arg('control')}, {arg('mdl')} and {arg('seeds')} train "
                             f"probes; they cannot be used with {arg('load')}")
    if opts.bootstrap < 0:
        raise ParameterError(f"{arg('bootstrap')} must be >= 0, not {opts.bootstrap}")


def _mean_metrics(dicts: Sequence[dict[str, float]], with_seeds: bool) -> dict[str, Any]:
    """Mean of each metric over seeds; with ``with_seeds``, ``M_seeds`` and ``M_std`` too."""
    if len(dicts) == 1:
        return dict(dicts[0])
    out: dict[str, Any] = {}
    for k in dicts[0]:
        vals = [float(d[k]) for d in dicts]
        out[k] = float(np.mean(vals))
        if with_seeds and k not in _SKIP:
            out[f"{k}_seeds"] = vals
            out[f"{k}_std"] = float(np.std(vals))
    return out


def _combine(runs: list[ProbeRun]) -> ProbeRun:
    """The first run with each layer's metrics (results and dev) averaged over the runs."""
    first = runs[0]
    for k, res in enumerate(first.layers):
        per_seed = [r.layers[k] for r in runs]
        res.results = {f: _mean_metrics([p.results[f] for p in per_seed], True)
                       for f in res.results}
        res.dev = _mean_metrics([p.dev for p in per_seed], False)
        res.extras["seed_results"] = per_seed
    return first


def _metric_keys(m: dict[str, Any]) -> list[str]:
    return [k for k, v in m.items() if isinstance(v, float) and k not in _SKIP
            and not k.endswith("_std")]


def _add_control(res: LayerResult, controls: list[LayerResult]) -> None:
    for f, m in res.results.items():
        ctrl = _mean_metrics([c.results[f] for c in controls], True)
        m["control"] = ctrl
        m["selectivity"] = {k: m[k] - ctrl[k] for k in _metric_keys(m) if k in ctrl}


def _mdl_values(run: ProbeRun, features: FeatureSource, train: str, dev: str,
                seeds: list[int], device: str, controls: bool
                ) -> dict[int, dict[str, dict[str, Any]]]:
    """layer -> ``mdl`` (and ``control_mdl``), averaged over seeds: the online codes of the
    layers computed together (:func:`~synrob.probe.training.mdl.online_codelengths`, in groups of at most
    :data:`~synrob.probe.training.probing.FUSE_MAX_BYTES` of vectors), each layer's the same as alone."""
    tr_gold, dv_gold = load_gold(train), load_gold(dev)
    layers = [r.layer for r in run.layers]
    tasks: list[tuple[str, Any]] = [("mdl", lambda s: run.task)]
    if controls:
        tasks.append(("control_mdl", lambda s: _fitted_control(run.task, s, tr_gold)))
    out: dict[int, dict[str, dict[str, Any]]] = {layer: {} for layer in layers}
    for group in fuse_groups(features, layers, train, tr_gold, dv_gold):
        trs = [features(train, layer) for layer in group]
        dvs = [features(dev, layer) for layer in group]
        for key, make in tasks:
            per_seed = [online_codelengths(make(s), run.probe, trs, tr_gold, dvs, dv_gold,
                                           seed=s, device=device) for s in seeds]
            for j, layer in enumerate(group):
                out[layer][key] = _mdl_value([found[j] for found in per_seed])
    return out


def _mdl_value(found: list[Any]) -> dict[str, Any]:
    """One layer's MDL entry from its results for each seed (online bits averaged)."""
    online = float(np.mean([r.online_bits for r in found]))
    uniform = found[0].uniform_bits
    value = {"online_bits": online, "uniform_bits": uniform,
             "compression": uniform / online if online > 0 else float("nan")}
    if len(found) > 1:
        value["online_bits_seeds"] = [r.online_bits for r in found]
    return value


def _fitted_control(task: Task, seed: int, train: Any) -> ControlTask:
    ctrl = control_task(task, seed)
    ctrl.fit(train)
    return ctrl


def _stats(run_task: Task, res_list: list[LayerResult], golds: dict[str, Any], f: str
           ) -> list[dict[str, st.SentenceStats]]:
    """Each result's per-sentence statistics of file ``f``: kept by :func:`run_probe`
    (``keep_stats``), else computed from its predictions."""
    return [r.stats[f] if f in r.stats else sentence_stats(run_task, golds[f], r.predictions[f])
            for r in res_list]


def _metric_indices(stats: st.SentenceStats, plain: st.Resamples, drawn: dict[bytes, Any],
                    draw: Any) -> st.Resamples:
    """The resamples of one metric: ``plain`` for a metric without strata, else those
    ``draw(strata)`` gives for its strata (drawn once per distinct strata, kept in ``drawn``)."""
    strata = stats.strata
    if strata is None:
        return plain
    key = np.asarray(strata).tobytes()
    if key not in drawn:
        drawn[key] = draw(strata)
    return drawn[key]


def _add_baseline_intervals(m: dict[str, Any], k: str, values: np.ndarray, idx: st.Resamples,
                            baselines: dict[str, tuple[dict[str, Any], dict[str, Any]]]) -> None:
    """Metric ``k``'s ``k_ci95`` of each baseline and the layer's paired lead over it
    (``m["lead"][baseline]``), on the resamples ``idx`` that gave the layer's ``values``."""
    for name, (metrics, stats) in baselines.items():
        if k not in stats or k not in metrics:
            continue
        base = st.bootstrap_values([stats[k]], idx)
        metrics[f"{k}_ci95"] = st.percentile_interval(base)
        lead = m.setdefault("lead", {}).setdefault(name, {})
        lead[k] = m[k] - metrics[k]
        lead[f"{k}_ci95"] = st.percentile_interval(values - base)


def _strata_draw(clusters: list[np.ndarray], n_boot: int, rng: np.random.Generator,
                 strata: np.ndarray) -> st.Resamples:
    """:func:`stats.cluster_indices` of ``clusters``, each drawn within the stratum of its first
    item in ``strata`` (n,)."""
    first = np.array([c[0] for c in clusters], dtype=np.int64)
    return st.cluster_indices(clusters, n_boot, rng, strata=np.asarray(strata)[first])


def _add_intervals(res: LayerResult, task: Task, golds: dict[str, Any], n_boot: int, seed: int,
                   controls: list[LayerResult], ctrl_tasks: list[ControlTask],
                   run: ProbeRun | None = None,
                   clusters: dict[str, list[np.ndarray]] | None = None,
                   seed_variance: bool = False) -> None:
    """``M_ci95`` of each metric, of the control's and of the selectivity (paired), and of
    ``run``'s baselines with the layer's lead over each (:func:`_add_baseline_intervals`).

    Per test file, in order, a cluster bootstrap over its source sentences
    (:func:`stats.file_clusters`: one group per sentence unless the file holds several
    variants of a sentence): plain draws from ``default_rng(seed)``; a length-averaged
    metric's drawn within the strata of its groups' first sentences from
    ``default_rng([seed, 2])`` (its control and the baselines scored on the same resamples).
    ``clusters``: each file's groups, when the caller has read them already (every layer of a
    run shares them). ``seed_variance``: each resample averages the training seeds drawn for
    it (:func:`stats.seed_draws`, from ``default_rng([seed, 4])``; the same draw for the task
    and its control, seed by seed) instead of every seed."""
    rng, rng_s = np.random.default_rng(seed), np.random.default_rng([seed, 2])
    per_seed = res.extras.get("seed_results", [res])
    drawn_seeds = (st.seed_draws(len(per_seed), n_boot, np.random.default_rng([seed, 4]))
                   if seed_variance else None)
    for f, m in res.results.items():
        groups = (clusters or {}).get(f) or st.file_clusters(golds[f].path, len(golds[f]))
        plain = st.cluster_indices(groups, n_boot, rng)
        drawn: dict[bytes, Any] = {}
        task_stats = _stats(task, per_seed, golds, f)
        ctrl_stats = [_stats(t, [c], golds, f)[0] for t, c in zip(ctrl_tasks, controls, strict=True)]
        base = {} if run is None else {name: (run.baselines[name][f], s[f])
                                       for name, s in run.baseline_stats.items() if f in s}
        for k in task_stats[0]:
            if k not in m:
                continue
            idx = _metric_indices(task_stats[0][k], plain, drawn, functools.partial(
                _strata_draw, groups, n_boot, rng_s))
            values = st.bootstrap_values([s[k] for s in task_stats], idx, drawn_seeds)
            m[f"{k}_ci95"] = st.percentile_interval(values)
            if ctrl_stats and k in m.get("control", {}):
                cv = st.bootstrap_values([s[k] for s in ctrl_stats], idx, drawn_seeds)
                m["control"][f"{k}_ci95"] = st.percentile_interval(cv)
                m["selectivity"][f"{k}_ci95"] = st.percentile_interval(values - cv)
            _add_baseline_intervals(m, k, values, idx, base)


def paired_drops(clean: Sequence[dict[str, st.SentenceStats]],
                 pert: Sequence[dict[str, st.SentenceStats]], ci: np.ndarray, pi: np.ndarray,
                 n_boot: int, rngs: tuple[np.random.Generator, np.random.Generator],
                 metrics: Sequence[str]) -> dict[str, Any]:
    """The drop clean - perturbed of each metric over the aligned pairs ``ci``/``pi`` (m,),
    with its ``M_ci95`` and one-sided ``M_p_value``, by a **cluster bootstrap**: the pairs of
    one clean sentence (its variants) are resampled together (:func:`stats.source_clusters`,
    :func:`stats.cluster_indices`). ``clean`` / ``pert``: per training seed, the files'
    statistics. Plain cluster draws come from ``rngs[0]``; a length-averaged metric's are
    stratified by its clean sentence's stratum and come from ``rngs[1]``. With ``n_boot`` 0,
    the point drops alone."""
    clusters = st.source_clusters(ci)
    plain = st.cluster_indices(clusters, n_boot, rngs[0]) if n_boot > 0 else None
    drawn: dict[bytes, Any] = {}
    out: dict[str, Any] = {"pairs": int(ci.size), "sources": len(clusters)}
    for k in metrics:  # a pair's stratum is its clean sentence's
        point = (float(np.mean([s[k].value(ci) for s in clean]))
                 - float(np.mean([s[k].value(pi) for s in pert])))
        out[k] = point
        if plain is None:
            continue
        idx = _metric_indices(clean[0][k], plain, drawn, lambda s: _strata_draw(
            clusters, n_boot, rngs[1], np.asarray(s)[ci]))
        drops = (st.bootstrap_values([s[k] for s in clean], st.take(ci, idx))
                 - st.bootstrap_values([s[k] for s in pert], st.take(pi, idx)))
        out[f"{k}_ci95"] = st.percentile_interval(drops)
        out[f"{k}_p_value"] = st.one_sided_p(drops)
    return out


def _add_deltas(res: LayerResult, task: Task, golds: dict[str, Any], n_boot: int,
                seed: int) -> None:
    """Clean (first test file) minus perturbed drops (:func:`paired_drops`), one perturbed
    file after the other, from ``default_rng([seed, 1])`` and ``default_rng([seed, 3])``."""
    files = list(res.results)
    if len(files) < 2:
        return
    rngs = (np.random.default_rng([seed, 1]), np.random.default_rng([seed, 3]))
    per_seed = res.extras.get("seed_results", [res])
    clean = _stats(task, per_seed, golds, files[0])
    deltas: dict[str, Any] = {}
    for f in files[1:]:
        pairs = st.align_pairs(files[0], f, len(golds[files[0]]), len(golds[f]))
        if pairs is None:
            continue
        ci, pi, how = pairs
        keys = [k for k in clean[0] if k in res.results[f]]
        d = paired_drops(clean, _stats(task, per_seed, golds, f), ci, pi, n_boot, rngs, keys)
        out = {"reference": files[0], "pairs": d.pop("pairs"), "sources": d.pop("sources"),
               "aligned_by": how, **d}
        out["p_value"] = out.get(f"{task.primary_metric}_p_value")
        deltas[f] = out
    res.extras["deltas"] = deltas


def run_analysed(opts: AnalysisOptions, **kw: Any) -> ProbeRun:
    """:func:`run_probe` (same keyword arguments) with what ``opts`` asks for added."""
    task: Task = kw["task"]
    check_options(opts, task, kw.get("load") is not None)
    seeds = opts.seeds or [int(kw.get("seed", 0))]
    keep = bool(kw.get("keep_predictions")) or opts.bootstrap > 0
    kw = {**kw, "keep_stats": opts.bootstrap > 0 or opts.drops}
    runs = [run_probe(**{**kw, "seed": s, "keep_predictions": keep,
                         "save": kw.get("save") if k == 0 else None,
                         "baselines": kw.get("baselines", True) and k == 0})
            for k, s in enumerate(seeds)]
    ctrl_tasks = [control_task(task, s) for s in seeds] if opts.control else []
    ctrl_runs = [run_probe(**{**kw, "task": t, "seed": s, "keep_predictions": keep, "save": None,
                              "baselines": False, "on_layer": None})
                 for t, s in zip(ctrl_tasks, seeds if opts.control else [], strict=True)]
    run = _combine(runs)
    run.seed = seeds[0]
    clusters = ({f: st.file_clusters(g.path, len(g)) for f, g in run.golds.items()}
                if opts.bootstrap > 0 else {})  # read once, shared by every layer
    mdl = (_mdl_values(run, kw["features"], kw["train"], kw["dev"], seeds,
                       kw.get("device", "cpu"), opts.control) if opts.mdl else {})
    for k, res in enumerate(run.layers):
        if opts.seeds:
            res.extras["seeds"] = seeds
        controls = [c.layers[k] for c in ctrl_runs]
        if controls:
            _add_control(res, controls)
        for key, value in mdl.get(res.layer, {}).items():
            for m in res.results.values():
                m[key] = dict(value)
        if opts.bootstrap > 0:
            _add_intervals(res, task, run.golds, opts.bootstrap, seeds[0], controls, ctrl_tasks,
                           run, clusters, opts.seed_variance)
        if opts.bootstrap > 0 or opts.drops:
            _add_deltas(res, task, run.golds, opts.bootstrap, seeds[0])
    return run
