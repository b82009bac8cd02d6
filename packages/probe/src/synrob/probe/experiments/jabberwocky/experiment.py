"""Jabberwocky probing (Hall Maudslay & Cotterell 2021, "Do syntactic probes probe syntax?").

Train the distance probe (task ``distance``, probe ``structural``) and the perceptron probe
(task ``parse``, probe ``perceptron``) on clean training data; evaluate them on the clean test
set and on Jabberwocky versions of it (content words replaced by pseudowords, tree unchanged),
next to baselines: ``path`` and ``majority`` (tree heuristics, blind to words), ``layer0`` (the
model's embedding layer, trained like the model) and ``fast+pos`` (static vectors ++ the
model's position embeddings). Beyond the paper, ``train_on=jabberwocky`` trains the probes on a
Jabberwocky version of the training (and dev) set of each draw.

Grid (one :class:`RunSpec` per cell):

* ``probe`` runs, ``train_on=clean``: one per (encoder, layer, probe); trained once, evaluated
  on clean dev, clean test and every Jabberwocky draw of the test set;
* ``probe`` runs, ``train_on=jabberwocky``: one per (encoder, layer, probe, draw); evaluated
  on that draw's Jabberwocky dev/test and on the clean test;
* ``baselines`` runs: one per probe's task (path and majority on clean dev, clean test and
  every draw);
* ``behaviour`` runs, with ``behaviour_lm``: one per draw, the LM's preference for each clean
  test sentence over its Jabberwocky version (BLiMP style, :mod:`synrob.probe.causal.behaviour`).

Every test score carries a 95 % bootstrap interval over the test sentences (``bootstrap``
resamples, drawn the same way in every run, so drops and leads are paired: :mod:`..intervals`).

Draw ``d`` perturbs with seed ``1000 * seed + d``. The model's reported layer is the sweep layer
with the best clean dev UUAS (per probe, among ``train_on=clean`` runs); the same layer is used
for its ``train_on=jabberwocky`` row. The baseline the model's lead is measured against is also
chosen on clean dev (per panel, the best clean dev score of its metric), and used in both
conditions (:func:`.stats.summarize`; tables and plot in :mod:`.report`).

Version 1.1.0: baseline runs score clean dev (for that choice); DSpr resamples are stratified by
sentence length (:mod:`..intervals`).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from synrob.perturb.errors import ParameterError
from synrob.perturb.params import Param

from ...runtime.precision import PRECISION_HELP, PRECISIONS
from ..base import FUSE_LAYERS, TREEBANK_SPLITS, Context, Experiment, Row, RunSpec, layer_runs

if TYPE_CHECKING:
    from ...render.figures import Figure

__all__ = ["JabberwockyExperiment", "PROBE_TASKS", "BASELINE_NAMES"]

#: probe -> the task it is trained on.
PROBE_TASKS: dict[str, str] = {"structural": "distance", "perceptron": "parse"}
#: The baselines this experiment knows (``layer0`` and ``fast+pos`` are trained probes).
BASELINE_NAMES = ("path", "majority", "layer0", "fast+pos")

# feature sources per (encoder spec, params, device), kept per worker process
_SOURCES: dict[str, Any] = {}
#: (encoder, params) -> (version, identity), per process (:func:`_identity`)
_IDENTITIES: dict[str, tuple[str, dict[str, Any]]] = {}


class JabberwockyExperiment(Experiment):
    """Probes trained on clean (or Jabberwocky) data, tested on clean vs Jabberwocky sentences."""

    name = "jabberwocky"
    version = "1.3.0"  # 1.3.0: the perceptron's layers train in one run too
    summary = "Jabberwocky probing: syntactic probes on clean vs pseudoword sentences"
    paper = ("Hall Maudslay & Cotterell 2021, Do Syntactic Probes Probe Syntax? Experiments with "
             "Jabberwocky Probing (NAACL), Figure 3")
    params = (
        TREEBANK_SPLITS,
        Param("train", str, "ud:en_ewt:train", "training treebank"),
        Param("dev", str, "ud:en_ewt:dev", "dev treebank (early stopping, layer choice)"),
        Param("test", str, "ud:en_ewt:test", "test treebank (clean; perturbed per draw)"),
        Param("model", str, "minilm", "the probed transformer (an encoder alias or spec)"),
        Param("layers", str, "all", "the model's layer sweep: 'all' or a comma list (best on "
              "clean dev UUAS)"),
        Param("baselines", str, "path,majority,layer0,fast+pos",
              "baselines: path, majority, layer0 (model layer 0), fast+pos"),
        Param("vectors", str, "glove-6b-50d", "static vectors of the fast+pos baseline"),
        Param("probes", str, "structural,perceptron",
              "probes: structural (task distance), perceptron (task parse)"),
        Param("draws", int, 3, "Jabberwocky versions of the test set (seeds 1000*seed+d)"),
        Param("train_on", str, "clean,jabberwocky",
              "training data: clean and/or jabberwocky (a Jabberwocky train/dev per draw)"),
        Param("jabberwocky_layers", str, "sweep",
              "model layers trained on Jabberwocky: 'sweep' (= layers) or a comma list"),
        Param("rate", float, 1.0, "share of eligible words the jabberwocky perturber replaces"),
        Param("train_sentences", int, 0, "use the first N training sentences (0 = all)"),
        Param("epochs", int, 40, "maximum training epochs of every probe"),
        Param("patience", int, 2, "epochs without dev improvement before stopping"),
        Param("rank", int, 0, "rank of the probes' linear map (0 = full)"),
        FUSE_LAYERS,
        Param("train_precision", str, "auto", "probe training precision, resolved per encoder and "
              "probe when the runs are planned (part of their keys): " + PRECISION_HELP,
              PRECISIONS),
        Param("bootstrap", int, 1000, "bootstrap resamples of the test sentences for the 95% "
              "intervals of every score, drop and lead (0: none)"),
        Param("behaviour_lm", str, "", "a language model (e.g. smollm2) whose preference for "
              "each clean test sentence over its Jabberwocky version is reported beside the "
              "probes (empty: no behavioural column)"),
    )
    presets: ClassVar[dict[str, dict[str, Any]]] = {
        "demo": {"train": "sample:en_ewt:train", "dev": "sample:en_ewt:dev",
                 "test": "sample:en_ewt:test", "layers": "2,3,4", "draws": 2,
                 "train_on": "clean", "epochs": 6, "patience": 1, "rank": 64},
        "sample": {"train": "sample:en_ewt:train", "dev": "sample:en_ewt:dev",
                   "test": "sample:en_ewt:test", "layers": "3", "draws": 2,
                   "train_on": "clean,jabberwocky", "jabberwocky_layers": "3",
                   "baselines": "path,majority,fast+pos", "probes": "structural",
                   "train_sentences": 300, "epochs": 3, "patience": 1, "rank": 32},
    }

    # ------------------------------------------------------------------ configuration
    def _check(self) -> None:
        bad = [p for p in self.list("probes") if p not in PROBE_TASKS]
        bad += [b for b in self.list("baselines") if b not in BASELINE_NAMES]
        bad += [t for t in self.list("train_on") if t not in ("clean", "jabberwocky")]
        if bad:
            raise ParameterError(f"experiment jabberwocky: unknown value(s) {', '.join(bad)} "
                                 f"(probes: {', '.join(PROBE_TASKS)}; baselines: "
                                 f"{', '.join(BASELINE_NAMES)}; train_on: clean, jabberwocky)")
        if self.options["draws"] < 1:
            raise ParameterError("experiment jabberwocky: draws must be >= 1")
        self._check_encoders()

    def _check_encoders(self) -> None:
        """Make every encoder the runs need, so that a model that cannot serve (a fast+pos
        model that is no transformer, an unknown name) fails before any work; a model with
        rotary positions gets fast+pos's sinusoidal substitute here, with its warning line."""
        from synrob.probe.encoders.resolve import resolve_encoder

        for enc in self._encoders():
            resolve_encoder(enc["encoder"], enc["params"])

    def _model_layers(self) -> list[int]:
        from synrob.probe.encoders.resolve import resolve_encoder

        n = resolve_encoder(self.options["model"]).num_layers
        spec = str(self.options["layers"]).strip()
        layers = list(range(n)) if spec == "all" else self.list("layers", int)
        out = [layer % n if layer < 0 else layer for layer in layers]
        if any(not 0 <= layer < n for layer in out):
            raise ParameterError(f"experiment jabberwocky: {self.options['model']} has layers "
                                 f"0..{n - 1}, not {layers}")
        return out

    def _jab_layers(self) -> list[int]:
        spec = str(self.options["jabberwocky_layers"]).strip()
        return self._model_layers() if spec == "sweep" else self.list("jabberwocky_layers", int)

    def _encoders(self) -> list[dict[str, Any]]:
        """``[{"encoder", "params", "role", "layers"}]``: the model and the trained baselines."""
        base = self.list("baselines")
        model_layers = self._model_layers()
        if "layer0" in base and 0 not in model_layers:
            model_layers = [0, *model_layers]
        out = [{"encoder": self.options["model"], "params": {}, "layers": model_layers}]
        if "fast+pos" in base:
            out.append({"encoder": "fast+pos",
                        "params": {"vectors": self.options["vectors"],
                                   "model": self.options["model"]}, "layers": [0]})
        return out

    def _perturbation(self, ctx: Context) -> dict[str, Any]:
        """The perturber's params; outside English the generic generator learns from the
        experiment's three treebanks (their sounds, rules and vocabulary)."""
        if ctx.lang == "en":
            return {"rate": self.options["rate"]}
        from ..data import resolve_one

        refs = ",".join(str(resolve_one(self.options[s])) for s in ("train", "dev", "test"))
        return {"rate": self.options["rate"], "reference": refs}

    def _draw_seed(self, ctx: Context, draw: int) -> int:
        return 1000 * ctx.seed + draw

    def _files(self, ctx: Context) -> dict[str, Any]:
        """Clean paths and, per draw, the Jabberwocky train/dev/test paths (built if absent)."""
        from ..data import perturbed_files, resolve_one

        clean = {s: str(resolve_one(self.options[s])) for s in ("train", "dev", "test")}
        jab_splits = ("train", "dev", "test") if "jabberwocky" in self.list("train_on") else ("test",)
        n = self.options["train_sentences"] or None
        which = [(d, s) for d in range(self.options["draws"]) for s in jab_splits]
        jobs = [{"source": clean[s], "kind": "jabberwocky", "params": self._perturbation(ctx),
                 "seed": self._draw_seed(ctx, d), "dest": ctx.data_dir,
                 "max_sentences": n if s == "train" else None, "lang": ctx.lang}
                for d, s in which]
        paths = perturbed_files(jobs, ctx.workers)  # --workers processes build them at once
        draws: list[dict[str, str]] = [{} for _ in range(self.options["draws"])]
        for (d, s), path in zip(which, paths, strict=True):
            draws[d][s] = str(path)
        return {"clean": clean, "draws": draws}

    # ------------------------------------------------------------------ protocol
    def prepare(self, ctx: Context) -> None:
        """Build the Jabberwocky files of every draw, then encode every file with every encoder."""
        from synrob.probe.representations.encoding import LoadedEncoders

        self._check()
        for enc in self._encoders():  # a precision this device lacks fails before any work
            for probe in self.list("probes"):
                self._precision(enc["encoder"], probe, ctx)
        with ctx.stage("perturbation"):
            files = self._files(ctx)
        paths = [*files["clean"].values(), *(p for d in files["draws"] for p in d.values())]
        jobs = [(e, p) for e in self._encoders() for p in paths]
        items = ctx.progress(jobs, "encoding", total=len(jobs)) if ctx.progress else jobs
        # each encoder loads once for all files; when the behaviour runs follow in this
        # process, an encoder of their LM's model uses its blocks (one read of the checkpoint)
        held = LoadedEncoders(lm=ctx.lm_for_encoders(self.options["behaviour_lm"]))
        with ctx.stage("encoding"):
            for enc, path in items:
                _features(enc["encoder"], enc["params"], ctx.device,
                          enc["layers"]).encode(path, held)

    def plan(self, ctx: Context) -> Sequence[RunSpec]:
        self._check()
        files = self._files(ctx)
        clean, draws = files["clean"], files["draws"]
        jab_info = _perturber_info(self._perturbation(ctx), ctx.lang)
        common = {"train_sentences": self.options["train_sentences"],
                  "bootstrap": self.options["bootstrap"],
                  "perturbation": jab_info,
                  "probe_params": {"epochs": self.options["epochs"],
                                   "patience": self.options["patience"],
                                   "rank": self.options["rank"], "normalize": "auto"}}
        tests_clean = {"clean": clean["test"],
                       **{f"jabberwocky-{d}": f["test"] for d, f in enumerate(draws)}}
        specs: list[RunSpec] = []
        base = self.list("baselines")
        for probe in self.list("probes"):
            task = PROBE_TASKS[probe]
            if {"path", "majority"} & set(base):
                specs.append(RunSpec({"kind": "baselines", "task": task, "probe": probe,
                                      "baselines": [b for b in ("path", "majority") if b in base],
                                      "train": clean["train"], "dev": clean["dev"],
                                      "tests": tests_clean, **common},
                                     f"baselines/{probe}"))
            for enc in self._encoders():
                is_model = enc["encoder"] == self.options["model"]
                params = {**common["probe_params"],
                          "train_precision": self._precision(enc["encoder"], probe, ctx)}
                key = {"kind": "probe", "encoder": enc["encoder"],
                       "encoder_params": enc["params"], "task": task, "probe": probe, **common,
                       "probe_params": params}
                jab_layers = [layer for layer in enc["layers"]
                              if not is_model or layer == 0 or layer in self._jab_layers()]
                if "clean" in self.list("train_on"):
                    for layers in self._groups(probe, task, enc["layers"], ctx):
                        specs.append(_probe_spec(key, is_model, layers, "clean", None,
                                                 clean["train"], clean["dev"], tests_clean))
                if "jabberwocky" in self.list("train_on"):
                    for d, f in enumerate(draws):
                        tests = {"clean": clean["test"], f"jabberwocky-{d}": f["test"]}
                        for layers in self._groups(probe, task, jab_layers, ctx):
                            specs.append(_probe_spec(key, is_model, layers, "jabberwocky", d,
                                                     f["train"], f["dev"], tests))
        return specs + self._behaviour_specs(clean["test"], draws, common)

    def _groups(self, probe: str, task: str, layers: list[int], ctx: Context
                ) -> list[list[int]]:
        """The layers of one encoder as runs (:func:`..base.layer_runs`)."""
        return layer_runs(layers, task, probe, self.options["fuse_layers"], ctx.device)

    def _precision(self, encoder: str, probe: str, ctx: Context) -> str:
        """The training precision of ``probe`` on ``encoder``'s vectors on this device."""
        from synrob.perturb.lm.device import resolve_device
        from synrob.probe.training.precision import resolve_train_precision

        return resolve_train_precision(self.options["train_precision"], resolve_device(ctx.device),
                                       encoder, probe)

    def _behaviour_specs(self, test: str, draws: list[dict[str, str]], common: dict[str, Any]
                         ) -> list[RunSpec]:
        """One run per draw scoring (clean, Jabberwocky) test pairs with ``behaviour_lm``."""
        lm = str(self.options["behaviour_lm"]).strip()
        if not lm:
            return []
        return [RunSpec({"kind": "behaviour", "lm": lm, "draw": d, "test": test,
                         "perturbed": f["test"], "bootstrap": common["bootstrap"],
                         "perturbation": common["perturbation"]}, f"behaviour/{lm}/{d}")
                for d, f in enumerate(draws)]

    def execute(self, spec: RunSpec, ctx: Context) -> list[Row]:
        key = spec.key
        if key["kind"] == "baselines":
            return _execute_baselines(key, ctx.seed)
        if key["kind"] == "behaviour":
            return _execute_behaviour(key, ctx)
        return _train_and_score(key, ctx)

    def report(self, rows: list[Row], ctx: Context) -> list[Path]:
        from .report import write_report

        return write_report(rows, ctx.outdir, self.options, self.list("probes"))

    def derived_rows(self, rows: list[Row]) -> list[Row]:
        from .stats import derived_rows

        return derived_rows(rows, self.list("probes"))

    def figure(self, rows: list[Row]) -> Figure:
        """The grouped bars of ``jabberwocky-bars.png`` (clean vs Jabberwocky per model)."""
        from .report import bars_figure
        from .stats import summarize

        return bars_figure(summarize(rows, self.list("probes")))


# ---------------------------------------------------------------------- runs
def _probe_spec(key: dict[str, Any], is_model: bool, layers: list[int], train_on: str,
                draw: int | None, train: str, dev: str, tests: dict[str, str]) -> RunSpec:
    """The run training ``key``'s probe on ``layers`` (together when there are several)."""
    where = "L" + "+".join(map(str, layers))  # L3, or L0+1+2 for layers trained together
    label = "clean" if draw is None else f"jabberwocky-{draw}"
    return RunSpec({**key, "layers": layers, "roles": [_role(is_model, x) for x in layers],
                    "train_on": train_on, "draw": draw, "train": train, "dev": dev,
                    "tests": tests}, f"{key['encoder']}/{where}/{key['probe']}/{label}")


def _role(is_model: bool, layer: int) -> str:
    """``model``, ``layer0`` (the model's embedding layer: a baseline) or ``fast+pos``."""
    if not is_model:
        return "fast+pos"
    return "layer0" if layer == 0 else "model"


def _perturber_info(params: dict[str, Any], lang: str) -> dict[str, Any]:
    from ..data import perturber_info

    return perturber_info("jabberwocky", params, lang=lang)


def _features(encoder: str, params: dict[str, Any], device: str, layers: list[int]) -> Any:
    """A cached :func:`encoder_features` source of ``layers``: :meth:`prepare` encodes the
    sweep's layers (only the blocks they need), a run reads its layers from those entries."""
    from synrob.probe.training.probing import encoder_features

    ident = repr((encoder, sorted(params.items()), device, sorted(layers)))
    if ident not in _SOURCES:
        _SOURCES[ident] = encoder_features(encoder, params=params, device=device,
                                           layers=sorted(layers))
    return _SOURCES[ident]


def _split_label(label: str) -> tuple[str, int | None]:
    if label == "clean":
        return "clean", None
    return "jabberwocky", int(label.rsplit("-", 1)[1])


def _common_fields(key: dict[str, Any]) -> dict[str, Any]:
    pert = key["perturbation"]
    return {"task": key["task"], "probe": key["probe"],
            "perturbation": pert["perturber"], "params": pert["params"],
            "perturber_version": pert["perturber_version"],
            "train_sentences": key["train_sentences"]}


def _execute_baselines(key: dict[str, Any], seed: int) -> list[Row]:
    from synrob.perturb.plugins import get_registry
    from synrob.probe.tasks.base import load_gold
    from synrob.probe.tasks.baselines import baseline_predictions

    task = get_registry().get("task", key["task"])()
    train = load_gold(key["train"], limit=key["train_sentences"] or None)
    rows: list[Row] = []
    evals = [("dev", "clean", key["dev"]), *(("test", k, v) for k, v in key["tests"].items())]
    for split, label, path in evals:
        gold = load_gold(path)
        test_on, draw = _split_label(label)
        for name in key["baselines"]:
            preds = baseline_predictions(name, task, train, gold)
            if preds is None:
                continue
            rows += _scored_rows(
                {**_common_fields(key), "role": name, "encoder": name, "layer": None,
                 "train_on": "clean", "train_draw": None, "test_on": test_on, "draw": draw,
                 "split": split, "encoder_version": "1.0"},
                task, gold, preds, key, seed)
    return rows


def _scored_rows(fields: dict[str, Any], task: Any, gold: Any, preds: Any, key: dict[str, Any],
                 seed: int) -> list[Row]:
    """One row per metric of ``task`` on ``gold``; test rows get their bootstrap interval
    (:mod:`..intervals`), from per-sentence scores computed once with the metrics."""
    from synrob.probe.tasks.scores import score

    from ..intervals import annotate

    if fields["split"] != "test" or not key.get("bootstrap"):
        return [{**fields, "metric": m, "value": float(v)}
                for m, v in task.evaluate(gold, preds).items()]
    metrics, stats = score(task, gold, preds)
    rows = [{**fields, "metric": m, "value": float(v)} for m, v in metrics.items()]
    return annotate(rows, stats, seed, int(key["bootstrap"]))


def _execute_behaviour(key: dict[str, Any], ctx: Context) -> list[Row]:
    """The LM's preference for each clean test sentence over its Jabberwocky version.

    Per test sentence: 1 when the clean text's log-probability is strictly higher, 0 when not,
    NaN when the draw left it unchanged (no preference); the row's value is the mean over the
    changed sentences, with a bootstrap interval over the test sentences (:mod:`..intervals`).
    """
    import numpy as np
    from synrob.perturb.lm.loaded import load_lm
    from synrob.probe.causal.behaviour import pair_sentences, score_pairs

    from ..intervals import annotate_mean

    pairs, how = pair_sentences(key["test"], key["perturbed"])
    changed = [k for k, p in enumerate(pairs) if p.original != p.perturbed]
    lm = load_lm(key["lm"], device=ctx.device)
    scores = score_pairs(lm, [pairs[k] for k in changed])
    prefers = np.full(len(pairs), np.nan)
    prefers[changed] = [float(s.prefers_original) for s in scores]
    row = {"kind": "behaviour", "role": "lm", "encoder": key["lm"], "lm": key["lm"],
           "lm_kind": lm.kind, "probe": "", "task": "", "layer": None, "train_on": None,
           "test_on": "jabberwocky", "draw": key["draw"], "split": "test",
           "perturbation": key["perturbation"]["perturber"], "aligned_by": how,
           "pairs": len(changed), "unchanged": len(pairs) - len(changed),
           "metric": "lm_prefers_clean",
           "value": float(np.mean(prefers[changed])) if changed else float("nan")}
    return [annotate_mean(row, prefers, ctx.seed, int(key["bootstrap"]))]


def _identity(encoder: str, params: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """The encoder's version and identity, once per process: making some encoders reads a
    model config and hashes files (fast+pos: 0.7 s a run, 7 of the demo's 43 s of runs)."""
    from synrob.probe.encoders.resolve import resolve_encoder

    ident = repr((encoder, sorted(params.items())))
    if ident not in _IDENTITIES:
        enc = resolve_encoder(encoder, params)
        _IDENTITIES[ident] = (enc.version, enc.identity())
    return _IDENTITIES[ident]


def _train_and_score(key: dict[str, Any], ctx: Context) -> list[Row]:
    """Train the run's probe on each of its layers (together when there are several) and
    score each on dev and every test file, on the run's share of the cores (``ctx.threads``,
    set around every run by :func:`..backends.execute_run`): all of them with one worker, one
    each with ``--workers`` as many as the cores."""
    from synrob.perturb.plugins import get_registry
    from synrob.probe.tasks.base import load_gold
    from synrob.probe.training.probing import train_layers

    reg = get_registry()
    task = reg.get("task", key["task"])()
    probe = reg.get("probe", key["probe"])(**key["probe_params"])
    source = _features(key["encoder"], key["encoder_params"], ctx.device, key["layers"])
    train_gold = load_gold(key["train"], key["train_sentences"] or None)  # the first N only
    dev_gold = load_gold(key["dev"])

    def features(split: str, layer: int) -> Any:  # only the train split is cut (even when
        # train and dev are the same file), and only its first sentences are read
        return source(key[split], layer, len(train_gold) if split == "train" else None)

    task.fit(train_gold)
    trained = train_layers(task, probe, features, key["layers"], "train", "dev", train_gold,
                           dev_gold, seed=ctx.seed, device=ctx.device, fuse=True)  # as planned
    rows: list[Row] = []
    for layer, role in zip(key["layers"], key["roles"], strict=True):
        module, log, _ = trained[layer]
        rows += _layer_rows(key, ctx, task, probe, module, log, layer, role,
                            (source(key["dev"], layer), dev_gold), source)
    return rows


def _layer_rows(key: dict[str, Any], ctx: Context, task: Any, probe: Any, module: Any,
                log: Any, layer: int, role: str, dev: tuple[Any, Any], source: Any) -> list[Row]:
    """One trained layer's rows: its dev and test scores with the run's fields."""
    from synrob.probe.probes import normalize
    from synrob.probe.tasks.base import load_gold
    from synrob.probe.training.probing import predict_probe

    version, ident = _identity(key["encoder"], key["encoder_params"])
    model = ident["options"].get("model", ident["options"].get("path", key["encoder"]))
    fields = {**_common_fields(key), "role": role, "encoder": key["encoder"],
              "layer": layer, "train_on": key["train_on"], "train_draw": key["draw"],
              "encoder_version": version, "model": model,
              "revision": ident["options"].get("revision"), "epochs_run": len(log.dev_loss),
              "word_norm": normalize.of(module).method,
              "train_precision": probe.options["train_precision"]}
    dev_on = "clean" if key["train_on"] == "clean" else "jabberwocky"
    evals = [("dev", dev_on, key["draw"], dev)]
    for label, path in key["tests"].items():
        test_on, draw = _split_label(label)
        evals.append(("test", test_on, draw, (source(path, layer), load_gold(path))))
    rows: list[Row] = []
    for split, test_on, draw, (feats, gold) in evals:
        preds = predict_probe(task, probe, module, feats, gold, ctx.device)
        rows += _scored_rows({**fields, "test_on": test_on, "draw": draw, "split": split},
                             task, gold, preds, key, ctx.seed)
    return rows
