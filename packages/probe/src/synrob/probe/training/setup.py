"""The components of a probe run, built from names and ``-p`` parameters (the CLI's
``synrob probe`` and :func:`synrob.probe.api.probe` share them), and the run's JSON form."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..probes.base import Probe
    from ..tasks.base import Task
    from .probing import ProbeRun, SavedSetup

__all__ = ["ProbeSetup", "build_setup", "check_saved_setup", "data_paths", "layer_list",
           "given_params", "probe_names", "route_params", "run_json", "seed_list"]


def given_params(params: Mapping[str, Any] | Sequence[str]) -> dict[str, Any]:
    """Component parameters as given: a mapping as it is, ``key=value`` strings (``-p``)
    parsed."""
    from synrob.perturb.params import parse_assignments

    return dict(params) if isinstance(params, Mapping) else parse_assignments(list(params))


def route_params(assignments: dict[str, str], owners: dict[str, tuple[Any, ...]]
                 ) -> dict[str, dict[str, str]]:
    """Send each ``-p key=value`` to its component: ``task.k``, ``probe.k``, ``encoder.k``, or
    an unprefixed key to the first of task, probe, encoder that declares it."""
    from synrob.perturb.errors import ParameterError

    out: dict[str, dict[str, str]] = {k: {} for k in owners}
    for key, value in assignments.items():
        owner, dot, name = key.partition(".")
        if dot and owner in owners:
            out[owner][name] = value
            continue
        for comp, params in owners.items():
            if any(p.name == key for p in params):
                out[comp][key] = value
                break
        else:
            known = sorted({f"{c}.{p.name}" for c, ps in owners.items() for p in ps})
            raise ParameterError(f"unknown parameter {key!r}; known: {', '.join(known)}")
    return out



def run_json(run: ProbeRun, many_layers: bool) -> dict[str, Any]:
    """The ``--json`` object (results of the best layer; every layer under ``layers``)."""
    best = run.best
    out: dict[str, Any] = {
        "encoder": run.encoder, "layer": best.layer, "task": run.task.name,
        "probe": run.probe.name, "seed": run.seed, "results": best.results,
        "baselines": run.baselines, "dev": best.dev,
        "train_seconds": round(best.log.seconds, 3) if best.log else None,
        "train_precision": run.probe.options["train_precision"],
    }
    if many_layers:
        out["layers"] = {str(r.layer): {"results": r.results, "dev": r.dev} for r in run.layers}
        for r in run.layers:
            if "deltas" in r.extras:
                out["layers"][str(r.layer)]["deltas"] = r.extras["deltas"]
    if "deltas" in best.extras:
        out["deltas"] = best.extras["deltas"]
    if "seeds" in best.extras:
        out["seeds"] = best.extras["seeds"]
    return out



@dataclass
class ProbeSetup:
    """The components of one ``synrob probe`` call, built from names and ``-p`` parameters."""

    encoder: str
    task_name: str
    task: Task
    probe: Probe
    routed: dict[str, dict[str, str]]  # -p assignments per component (task, probe, encoder)
    enc_params: dict[str, Any]         # encoder parameters (with a saved probe's, if any)
    identity: dict[str, Any]           # the encoder's identity, checked against a saved probe



def probe_names(saved: SavedSetup | None, encoder: str | None, layer: str | None, task: str | None,
           probe_name: str | None) -> tuple[str, str, str, str | None]:
    """Encoder, layer, task and probe names: what is not given is taken from a saved probe's
    ``probe.json``; the encoder and the layer are required, the task defaults to distance."""
    from synrob.perturb.errors import LayerError, SynrobError, arg

    if saved is not None:  # what is not given is taken from probe.json; the rest must agree
        encoder = encoder or saved.meta.get("encoder")
        task = task or saved.meta.get("task")
        probe_name = probe_name or saved.meta.get("probe")
        if layer is None:
            layer = "all" if saved.many else str(saved.layers[0])
    if encoder is None:
        raise SynrobError(f"{arg('encoder')} is required (or {arg('load')} a saved probe)")
    if layer is None:
        raise LayerError(f"{arg('layer')} is required: a layer number or 'all'")
    return encoder, layer, task or "distance", probe_name



def build_setup(reg: Any, encoder: str, task: str, probe_name: str | None,
                param: Mapping[str, Any] | Sequence[str],
                saved: SavedSetup | None, given_encoder: str | None) -> ProbeSetup:
    """Task, probe and encoder parameters from the registry and ``-p`` (:func:`given_params`);
    a saved probe's encoder parameters apply when the same encoder (or none) is given."""
    from ..encoders.resolve import resolve_encoder, spec_target

    task_cls = reg.get("task", task)
    probe_cls = reg.get("probe", probe_name or task_cls.default_probe)
    enc_cls = reg.get("encoder", spec_target(encoder)[0])
    given = given_params(param)
    routed = route_params(given, {
        "task": task_cls.params, "probe": probe_cls.params, "encoder": getattr(enc_cls, "params", ())})
    task_obj = task_cls(**routed["task"])
    probe_obj = probe_cls(**routed["probe"])
    enc_params: dict[str, Any] = dict(routed["encoder"])
    if saved is not None and given_encoder in (None, saved.meta.get("encoder")):
        enc_params = {**saved.meta.get("encoder_params", {}), **enc_params}
    identity = resolve_encoder(encoder, enc_params).identity()
    return ProbeSetup(encoder, task, task_obj, probe_obj, routed, enc_params, identity)



def layer_list(layer: str, saved: SavedSetup | None) -> list[int] | None:
    """``--layer`` as a list; None for ``all`` without a saved probe (every encoded layer)."""
    from synrob.perturb.errors import LayerError, arg

    if layer != "all":
        try:
            return [int(layer)]
        except ValueError:
            raise LayerError(f"{arg('layer')} must be a number or 'all', not {layer!r}"
                             ) from None
    return saved.layers if saved is not None else None



def check_saved_setup(saved: SavedSetup, setup: ProbeSetup, layers: list[int]) -> None:
    """A saved probe must have been trained on this encoder, layers, task and probe."""
    from .probing import check_saved

    task_obj, probe_obj, routed = setup.task, setup.probe, setup.routed
    check_saved(saved, encoder=setup.encoder, identity=setup.identity, layers=layers,
                task=setup.task_name,
                task_params={k: task_obj.options[k] for k in routed["task"]},
                probe=probe_obj.name,
                probe_params={k: probe_obj.options[k] for k in routed["probe"]})



def data_paths(test: list[str], train: str | None, dev: str | None
                ) -> tuple[list[str], str | None, str | None]:
    """The test, train and dev files, each one CoNLL-U file."""
    from synrob.perturb.io.data import resolve_one

    tests = [str(resolve_one(t, "test")) for t in test]
    train_p = str(resolve_one(train, "train")) if train else None
    dev_p = str(resolve_one(dev, "dev")) if dev else None
    return tests, train_p, dev_p



def seed_list(seeds: str | None) -> list[int]:
    from synrob.perturb.errors import ParameterError, arg

    if not seeds:
        return []
    try:
        out = [int(x) for x in seeds.split(",") if x.strip()]
    except ValueError:
        raise ParameterError(f"{arg('seeds')} must be comma-separated integers, not {seeds!r}") from None
    if len(set(out)) != len(out) or not out:
        raise ParameterError(f"{arg('seeds')} must list distinct integers, not {seeds!r}")
    return out


