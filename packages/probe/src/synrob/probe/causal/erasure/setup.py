"""The components of one erasure (``synrob erase`` and :func:`synrob.probe.api.erase` share
them): names and ``-p`` parameters to task, linear probe and encoder; provenance written into a
fitted eraser; checks of a loaded one; the result's JSON form (docs/erasure.md)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ...probes.base import Probe
    from ...tasks.base import Task
    from .amnesic import AmnesicRun
    from .eraser import Eraser

__all__ = ["EraseSetup", "also_tasks", "build_erase_setup", "check_fit_params", "check_loaded",
           "erase_names", "eraser_meta", "control_paths", "matched_path", "probe_settings",
           "random_path", "result_json"]


@dataclass
class EraseSetup:
    """The components of one ``synrob erase`` call."""

    encoder: str
    layer: int
    task_name: str
    task: Task               # the task whose labels are erased (its control with --control)
    probe: Probe
    enc_params: dict[str, Any]
    identity: dict[str, Any]
    given_task_params: dict[str, Any]
    given_probe_params: dict[str, Any]


def erase_names(saved: Eraser | None, encoder: str | None, layer: int | None, task: str | None
           ) -> tuple[str, int, str]:
    """Encoder, layer and task: given, else the loaded eraser's; required without --load."""
    from synrob.perturb.errors import SynrobError, arg

    meta = saved.meta if saved is not None else {}
    encoder = encoder or meta.get("encoder")
    layer = layer if layer is not None else meta.get("layer")
    task = task or meta.get("task")
    for value, what in ((encoder, "encoder"), (layer, "layer"), (task, "task")):
        if value is None:
            raise SynrobError(f"{arg(what)} is required (or {arg('load')} a saved eraser)")
    return str(encoder), int(layer), str(task)  # type: ignore[arg-type]


def build_erase_setup(reg: Any, names: tuple[str, int, str],
                      param: Mapping[str, Any] | Sequence[str], saved: Eraser | None,
                      control: bool, seed: int) -> EraseSetup:
    """Task (a saved eraser's parameters under the given ones), linear probe (normalize
    standardize unless given) and encoder parameters from the registry and ``-p``
    (:func:`~synrob.probe.training.setup.given_params`)."""
    from ...encoders.resolve import resolve_encoder, spec_target
    from ...tasks.control import control_task
    from ...training.setup import given_params, route_params

    encoder, layer, task = names
    task_cls, probe_cls = reg.get("task", task), reg.get("probe", "linear")
    enc_cls = reg.get("encoder", spec_target(encoder)[0])
    routed = route_params(given_params(param), {
        "task": task_cls.params, "probe": probe_cls.params,
        "encoder": getattr(enc_cls, "params", ())})
    meta = saved.meta if saved is not None else {}
    same = saved is not None and meta.get("task") == task and meta.get("encoder") == encoder
    task_obj = task_cls(**{**(meta.get("task_params", {}) if same else {}), **routed["task"]})
    probe_obj = probe_cls(**{"normalize": "standardize", **routed["probe"]})
    enc_params = {**(meta.get("encoder_params", {}) if same else {}), **routed["encoder"]}
    if control:
        task_obj = control_task(task_obj, seed)
    identity = resolve_encoder(encoder, enc_params).identity()
    given = {k: task_obj.options[k] for k in routed["task"]}
    return EraseSetup(encoder, layer, task, task_obj, probe_obj, enc_params, identity, given,
                      dict(routed["probe"]))


#: The linear probe's only parameter an L-BFGS fit uses (the others are Adam's regimen).
LBFGS_PROBE_PARAMS = ("normalize",)


def check_fit_params(setup: EraseSetup, fit: str) -> None:
    """``--fit lbfgs`` uses the probe's ``normalize`` only: a given Adam setting (``-p lr=``,
    ``epochs``, ...) is one :class:`ParameterError` line instead of being recorded unused."""
    from synrob.perturb.errors import ParameterError, arg

    unused = sorted(k for k in setup.given_probe_params if k not in LBFGS_PROBE_PARAMS)
    if fit == "lbfgs" and unused:
        raise ParameterError(f"probe parameter{'s' if len(unused) > 1 else ''} "
                             f"{', '.join(unused)} appl{'y' if len(unused) > 1 else 'ies'} to "
                             f"{arg('fit', 'adam')} only; {arg('fit', 'lbfgs')} uses the "
                             "probe's normalize")


def probe_settings(setup: EraseSetup, fit: str) -> dict[str, Any]:
    """The probe settings a fit used: ``probe_params`` (all the linear probe's for Adam; its
    ``normalize`` for L-BFGS) and, for L-BFGS, ``lbfgs`` (:data:`~.softmax.SETTINGS`)."""
    from .softmax import SETTINGS

    if fit == "lbfgs":
        return {"probe_params": {k: setup.probe.options[k] for k in LBFGS_PROBE_PARAMS},
                "lbfgs": dict(SETTINGS)}
    return {"probe_params": dict(setup.probe.options)}


def also_tasks(reg: Any, spec: str | None) -> dict[str, Task]:
    """``--also pos,feats:feature=Person`` -> {item: fitted-later task}."""
    from synrob.perturb.params import parse_assignments

    out: dict[str, Task] = {}
    for item in (x.strip() for x in (spec or "").split(",")):
        if item:
            name, _, params = item.partition(":")
            out[item] = reg.get("task", name)(**parse_assignments(
                [p for p in params.split(":") if p]))
    return out


def eraser_meta(setup: EraseSetup, control: bool, seed: int, train: str, lang: str) -> dict[str, Any]:
    """The provenance written into a fitted eraser (store.py's ``meta``)."""
    from ...representations.cache import corpus_hash
    from ...runtime.provenance import probe_version

    return {"encoder": setup.encoder, "encoder_params": setup.enc_params,
            "encoder_identity": setup.identity, "layer": setup.layer, "task": setup.task_name,
            "task_params": dict(setup.task.options), "control": control,
            **({"control_seed": seed} if control else {}), "seed": seed, "train": train,
            "train_sha256": corpus_hash(train), "lang": lang, "synrob_version": probe_version()}


def check_loaded(saved: Eraser, where: Path, setup: EraseSetup, control: bool, train: str) -> None:
    """A loaded eraser must fit this setup (one error line); other training data: a warning."""
    import warnings

    from synrob.perturb.errors import SynrobWarning

    from ...representations.cache import corpus_hash
    from .store import check_eraser

    check_eraser(saved, where, encoder=setup.encoder, identity=setup.identity,
                 layer=setup.layer, dim=None, task=setup.task_name,
                 task_params=dict(setup.task.options), control=control)
    if saved.meta.get("train_sha256") not in (None, corpus_hash(train)):
        warnings.warn(f"eraser in {where} was fitted on other training data "
                      f"({saved.meta.get('train')}); LEACE's guarantee holds on that data",
                      SynrobWarning, stacklevel=2)


def random_path(output: Path) -> Path:
    """``E.safetensors`` -> ``E.random.safetensors`` (the rank-matched random control beside
    the eraser)."""
    return output.with_name(f"{output.stem}.random{output.suffix or '.safetensors'}")


def matched_path(output: Path) -> Path:
    """``E.safetensors`` -> ``E.random_matched.safetensors`` (the rank- and
    displacement-matched random control beside the eraser)."""
    return output.with_name(f"{output.stem}.random_matched{output.suffix or '.safetensors'}")


def control_paths(output: Path) -> dict[str, Path]:
    """Where ``synrob erase -o output`` writes each control: {kind: path}."""
    return {"random": random_path(output), "random_matched": matched_path(output)}


def _matched_info(run: AmnesicRun) -> dict[str, Any]:
    """How the displacement-matched control was built (:func:`~.fit.matched_control`)."""
    meta = run.matched.meta
    return {k: meta[k] for k in ("construction", "oblique", "scale", "seed") if k in meta}


def result_json(run: AmnesicRun, setup: EraseSetup, n_boot: int, seed: int, fit: str
                ) -> dict[str, Any]:
    """The ``--json`` object (see docs/erasure.md for every field)."""
    e = run.eraser
    train, test = run.displacement["train"], run.displacement["test"]
    return {
        **run.erased.summary(n_boot, seed),
        "task": setup.task_name, "control": e.meta.get("control", False),
        "rank": int(e.meta.get("rank", e.rank)), "dim": e.dim, "labels": e.labels,
        "train_words": e.meta.get("train_words"), "class_mean_gap": run.gaps,
        **{f"displacement_{k}": v for k, v in train.items()},
        "displacement_test": dict(test), "random_matched": _matched_info(run),
        "also": {k: r.summary(n_boot, seed) for k, r in run.also.items()},
        "probe": setup.probe.name, **probe_settings(setup, fit),
        "encoder": setup.encoder, "encoder_identity": setup.identity, "layer": setup.layer,
        "fit": fit, "seed": seed, "bootstrap": n_boot, "seconds": round(run.seconds, 3)}


