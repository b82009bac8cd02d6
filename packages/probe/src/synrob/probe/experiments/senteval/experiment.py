"""``senteval``: the ten SentEval probing tasks of Conneau et al. (2018), Table 2.

Task files come from ``tasks_dir`` (official SentEval files or built ones) or are built from
``treebanks`` in ``prepare`` (``synrob senteval build``). Each task's sentences are encoded once
per encoder (representation cache), then one run per (task, encoder, layer, classifier) trains
the classifier on pooled sentence vectors, and one run per (task, baseline) scores a baseline.
The report is a Table-2-shaped table (tasks as columns) beside the paper's numbers, each task's
best-dev model row against its best-dev baseline (the lead, with a paired 95 % bootstrap
interval over the test sentences and a one-sided p-value: :mod:`..intervals`), plus the
accuracy per layer of every multi-layer encoder.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from synrob.perturb.errors import ParameterError, ResourceError
from synrob.perturb.params import Param

from ..base import Context, Experiment, Row, RunSpec

if TYPE_CHECKING:
    from ...render.figures import Figure

__all__ = ["SentEvalExperiment"]

_ALL_BASELINES = "majority,length,nb-uni-tfidf,nb-bi-tfidf,bov-glove"
#: The original-vs-modified tasks (labels O and I) that have behavioural pairs.
OI_TASKS = ("BShift", "SOMO", "CoordInv")
#: The encoder behind the bag-of-vectors baseline.
BOV_ENCODER = "glove-6b-50d"


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()[:16]


class SentEvalExperiment(Experiment):
    """Probing-task accuracies of encoders/layers and baselines (Conneau et al. 2018, Table 2)."""

    name = "senteval"
    version = "1.0.0"
    summary = "SentEval probing tasks: classifiers on pooled sentence vectors vs. the Table 2 baselines"
    paper = ("Conneau, Kruszewski, Lample, Barrault & Baroni 2018, What you can cram into a single "
             "$&!#* vector: Probing sentence embeddings for linguistic properties (ACL), Table 2")
    params = (
        Param("tasks_dir", str, "", "directory of SentEval task files (official or built); "
              "empty: build them from 'treebanks'"),
        Param("treebanks", str, "ud:en_ewt", "treebanks the tasks are built from when tasks_dir "
              "is empty (pooled, then split 80/10/10 by synrob senteval build)"),
        Param("tasks", str, "all", "task names (SentLen, WC, TreeDepth, TopConst, BShift, Tense, "
              "SubjNum, ObjNum, SOMO, CoordInv) or 'all'"),
        Param("encoders", str, "minilm,glove-6b-50d", "encoders (see synrob encoders)"),
        Param("layers", str, "0,2,4,6", "layers: numbers for every encoder that has them, "
              "'ENC:N,M' for one encoder, 'all', negatives from the end"),
        Param("classifiers", str, "logreg,mlp", "classifiers on the sentence vectors"),
        Param("baselines", str, _ALL_BASELINES, "baselines (empty: none)"),
        Param("pooling", str, "mean", "words -> sentence vector", ("mean", "max", "first", "last")),
        Param("max_epochs", int, 200, "epochs at most (early stopping on dev accuracy)"),
        Param("patience", int, 5, "epochs without a better dev accuracy before stopping"),
        Param("bootstrap", int, 1000, "bootstrap resamples of each task's test sentences for the "
              "95% intervals of every accuracy and lead (0: none)"),
        Param("behaviour_lm", str, "", "a language model (e.g. smollm2) whose preference for the "
              "original of each modified test sentence of BShift, SOMO and CoordInv is reported "
              "beside the classifiers' accuracy on the same sentences (empty: none)"),
    )
    language_param = "treebanks"
    presets = {
        "sample": {
            "treebanks": "sample:en_ewt",
            "layers": "minilm:0,6,glove-6b-50d:0",
        },
    }

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self._layer_plan: dict[str, list[int]] | None = None  # memo of layer_plan()

    # ------------------------------------------------------------------ tasks
    def task_names(self) -> list[str]:
        """The chosen task names, in Table 2 order."""
        from synrob.perturb.senteval import TASK_FILES

        wanted = self.list("tasks")
        if wanted in ([], ["all"]):
            return list(TASK_FILES)
        by_key = {k.lower(): k for k in TASK_FILES}
        by_key.update({Path(f).stem.lower(): k for k, f in TASK_FILES.items()})
        out = []
        for t in wanted:
            if t.lower() not in by_key:
                raise ParameterError(f"senteval: unknown task {t!r}; known: {', '.join(TASK_FILES)}")
            out.append(by_key[t.lower()])
        return [t for t in TASK_FILES if t in out]

    def tasks_dir(self, ctx: Context) -> Path:
        """Where the task files are: ``tasks_dir`` or the built ones under ``ctx.data_dir``."""
        if self.options["tasks_dir"]:
            return Path(self.options["tasks_dir"]).expanduser()
        tag = hashlib.sha256(f"{self.options['treebanks']}|{ctx.seed}".encode()).hexdigest()[:10]
        return ctx.data_dir / f"tasks-{tag}"

    def task_files(self, ctx: Context) -> dict[str, Path]:
        """Task name -> file, each checked to exist."""
        from synrob.perturb.senteval import TASK_FILES

        d = self.tasks_dir(ctx)
        out = {t: d / TASK_FILES[t] for t in self.task_names()}
        missing = [str(p) for p in out.values() if not p.is_file()]
        if missing:
            raise ResourceError(f"senteval: missing task file(s): {', '.join(missing)}")
        return out

    def _build(self, ctx: Context) -> None:
        """Build all ten tasks from ``treebanks`` (once: ``stats.json`` is written last)."""
        from synrob.perturb.senteval import build_suite, write_suite

        specs = self.list("treebanks")
        if not specs:
            raise ParameterError("senteval: give 'tasks_dir' or at least one treebank")
        dest = self.tasks_dir(ctx)
        if (dest / "stats.json").is_file():
            return
        write_suite(build_suite(specs, seed=ctx.seed, lang=ctx.lang), dest)

    # ------------------------------------------------------------------ encoders
    def layer_plan(self) -> dict[str, list[int]]:
        """Encoder -> layers (see :func:`synrob.probe.senteval.features.parse_layer_spec`)."""
        from synrob.probe.senteval.features import encoder_layers, parse_layer_spec

        if self._layer_plan is None:
            encoders = self.list("encoders")
            self._layer_plan = parse_layer_spec(
                self.options["layers"], encoders, {e: encoder_layers(e) for e in encoders}
            ) if encoders else {}
        return {e: list(v) for e, v in self._layer_plan.items()}

    def _encodings(self) -> dict[str, list[int]]:
        """Every (encoder -> layers) encoded in prepare, including the BoV baseline's."""
        plan = self.layer_plan()
        if "bov-glove" in self.list("baselines") and BOV_ENCODER not in plan:
            plan[BOV_ENCODER] = [0]
        return plan

    # ------------------------------------------------------------------ protocol
    def prepare(self, ctx: Context) -> None:
        from synrob.perturb.senteval import read_task_file
        from synrob.probe.encoders.resolve import resolve_encoder
        from synrob.probe.senteval.classifiers import CLASSIFIERS
        from synrob.probe.senteval.features import encode_task, task_corpus
        from synrob.probe.senteval.text_baselines import BASELINES

        for b in self.list("baselines"):
            if b not in BASELINES:
                raise ParameterError(f"senteval: unknown baseline {b!r}; known: {', '.join(BASELINES)}")
        for c in self.list("classifiers"):
            if c not in CLASSIFIERS:
                raise ParameterError(f"senteval: unknown classifier {c!r}; known: {', '.join(CLASSIFIERS)}")
        if not self.options["tasks_dir"]:
            with ctx.stage("perturbation"):  # building the task files (BShift, SOMO, ...)
                self._build(ctx)
        files = self.task_files(ctx)
        corpora = {t: task_corpus([e.sentence for e in read_task_file(f)],
                                  ctx.data_dir / "corpora") for t, f in files.items()}
        jobs = [(enc, layers, t) for enc, layers in self._encodings().items() for t in files]
        items = ctx.progress(jobs, "encoding SentEval tasks", len(jobs)) if ctx.progress else jobs
        instances: dict[str, Any] = {}  # one instance per encoder: weights load once
        lm = ctx.lm_for_encoders(self.options["behaviour_lm"])
        with ctx.stage("encoding"):
            for enc, layers, task in items:
                if enc not in instances:
                    instances.clear()
                    instances[enc] = resolve_encoder(enc, {"device": ctx.device})
                    if lm:  # an encoder of the behaviour LM's model uses its blocks
                        instances[enc].share_lm(lm, ctx.device)
                encode_task(instances[enc], corpora[task], layers, device=ctx.device)

    def plan(self, ctx: Context) -> Sequence[RunSpec]:
        files = self.task_files(ctx)
        pooling = self.options["pooling"]
        train = {"max_epochs": self.options["max_epochs"], "patience": self.options["patience"]}
        specs: list[RunSpec] = []
        for task, path in files.items():
            base = {"task": task, "task_file": str(path.resolve()), "task_sha": _sha(path),
                    "bootstrap": self.options["bootstrap"]}
            for b in self.list("baselines"):
                extra = {"encoder": BOV_ENCODER, "layer": 0, "pooling": pooling, **train} \
                    if b == "bov-glove" else {}
                specs.append(RunSpec({**base, "baseline": b, **extra}, f"{task} {b}"))
            for enc, layers in self.layer_plan().items():
                for layer in layers:
                    for clf in self.list("classifiers"):
                        specs.append(RunSpec({**base, "encoder": enc, "layers": layers,
                                              "layer": layer, "classifier": clf,
                                              "pooling": pooling, **train},
                                             f"{task} {enc} L{layer} {clf}"))
        return specs + self._behaviour_specs(files)

    def _behaviour_specs(self, files: dict[str, Path]) -> list[RunSpec]:
        """One run per O/I task scoring its test (original, modified) pairs with the LM."""
        from synrob.perturb.senteval import pairs_file

        lm = str(self.options["behaviour_lm"]).strip()
        specs = []
        for task, path in files.items() if lm else ():
            if task not in OI_TASKS:
                continue
            pairs = pairs_file(path.parent, task)
            if not pairs.is_file():
                raise ResourceError(f"senteval: behaviour_lm needs {pairs} (the original of "
                                    "each modified sentence, written by synrob senteval build; "
                                    "the official SentEval files have none)")
            specs.append(RunSpec({"kind": "behaviour", "task": task, "lm": lm,
                                  "pairs_file": str(pairs.resolve()), "pairs_sha": _sha(pairs),
                                  "bootstrap": self.options["bootstrap"]},
                                 f"{task} behaviour {lm}"))
        return specs

    def execute(self, spec: RunSpec, ctx: Context) -> list[Row]:
        from synrob.perturb.senteval import read_task_file
        from synrob.probe.senteval.text_baselines import TEXT_BASELINE_FUNCS, split_examples

        key = dict(spec.key)
        if key.get("kind") == "behaviour":
            return _behaviour_rows(key, ctx)
        examples = read_task_file(key["task_file"])
        train, dev, test = split_examples(examples)
        common: dict[str, Any] = {"task": key["task"], "n_train": len(train), "n_dev": len(dev),
                                  "n_test": len(test),
                                  "n_classes": len({e.label for e in train})}
        baseline = key.get("baseline")
        if baseline in TEXT_BASELINE_FUNCS:
            res = TEXT_BASELINE_FUNCS[baseline](train, dev, test)
            info = {**common, "row": baseline, "kind": "baseline", "baseline": baseline,
                    "encoder": "", "layer": None, "classifier": "", "chosen": res.chosen}
            right = [p == e.label for p, e in zip(res.test_predictions or [], test, strict=True)]
            return self._rows(info, res.dev_accuracy, res.test_accuracy, right, key, ctx.seed,
                              test)
        layers = [0] if baseline == "bov-glove" else key["layers"]
        res_c = self._classify(key, examples, train, dev, test, layers, ctx,
                               "logreg" if baseline else key["classifier"])
        info = {**common, "kind": "baseline" if baseline else "encoder",
                "row": baseline or f"{key['encoder']} L{key['layer']} {key['classifier']}",
                "baseline": baseline or "", "encoder": key["encoder"], "layer": key["layer"],
                "classifier": res_c["classifier"], "chosen": res_c["chosen"],
                "epochs": res_c["epochs"], **res_c["identity"]}
        return self._rows(info, res_c["dev"], res_c["test"], res_c["right"], key, ctx.seed,
                          test)

    @staticmethod
    def _rows(info: dict[str, Any], dev: float, test: float, right: Sequence[bool],
              key: dict[str, Any], seed: int, examples: Sequence[Any]) -> list[Row]:
        """The dev and test accuracy rows; the test row with its bootstrap interval over the
        test sentences (``right``: per test sentence, whether it was classified right). O/I
        tasks add ``accuracy_modified``: the accuracy on the modified (I) test sentences, the
        items a behavioural score compares with their originals."""
        from ..intervals import annotate_mean

        rows = [{**info, "split": split, "metric": "accuracy", "value": value}
                for split, value in (("dev", dev), ("test", test))]
        n_boot = int(key.get("bootstrap", 0))
        ok = np.asarray(right, dtype=np.float64)
        rows[1] = annotate_mean(rows[1], ok, seed, n_boot)
        if key["task"] in OI_TASKS:
            mod = ok[np.array([e.label == "I" for e in examples], dtype=bool)]
            rows.append(annotate_mean({**rows[1], "metric": "accuracy_modified",
                                       "value": float(mod.mean()) if mod.size else float("nan"),
                                       "n_items": int(mod.size)}, mod, seed, n_boot))
        return rows

    def _classify(self, key: dict[str, Any], examples: list[Any], train: list[Any],
                  dev: list[Any], test: list[Any], layers: list[int], ctx: Context,
                  classifier: str) -> dict[str, Any]:
        import numpy as np
        from synrob.probe.encoders.resolve import resolve_encoder
        from synrob.probe.senteval.classifiers import TrainConfig, encode_labels, fit_select
        from synrob.probe.senteval.features import sentence_vectors, task_corpus

        corpus = task_corpus([e.sentence for e in examples], ctx.data_dir / "corpora")
        vecs = sentence_vectors(key["encoder"], corpus, layers, key["layer"],
                                pooling=key["pooling"], device=ctx.device)
        splits = np.array([e.split for e in examples])
        x = {s: vecs[splits == s] for s in ("tr", "va", "te")}
        classes, (y_tr, y_va, y_te) = encode_labels([e.label for e in train],
                                                    [e.label for e in dev], [e.label for e in test])
        cfg = TrainConfig(max_epochs=int(key["max_epochs"]), patience=int(key["patience"]))
        res = fit_select(classifier, x["tr"], y_tr, x["va"], y_va, x["te"], y_te,
                         n_classes=len(classes), seed=ctx.seed, config=cfg)
        enc = resolve_encoder(key["encoder"], {})
        opts = enc.identity()["options"]
        identity = {"encoder_version": enc.version,
                    "model": Path(str(opts.get("model") or opts.get("path", ""))).name,
                    "revision": opts.get("revision", "")}
        return {"classifier": classifier, "chosen": res.chosen, "epochs": res.epochs,
                "dev": res.dev_accuracy, "test": res.test_accuracy, "identity": identity,
                "right": np.asarray(res.test_predictions) == y_te}

    def report(self, rows: list[Row], ctx: Context) -> list[Path]:
        from .report import write_report

        return write_report(rows, ctx.outdir, self.task_names())

    def derived_rows(self, rows: list[Row]) -> list[Row]:
        from .stats import derived_rows

        return derived_rows(rows, self.task_names())

    def figure(self, rows: list[Row]) -> Figure | None:
        """Accuracy per layer of ``senteval-layers.png`` (None unless an encoder was probed
        at several layers)."""
        from .report import layers_figure

        return layers_figure(rows, self.task_names())


def _behaviour_rows(key: dict[str, Any], ctx: Context) -> list[Row]:
    """The LM's preference for the original of each modified test sentence of one O/I task
    (BLiMP style, :mod:`synrob.probe.causal.behaviour`), with a bootstrap interval over the pairs."""
    from synrob.perturb.lm.loaded import load_lm
    from synrob.perturb.senteval import read_pairs
    from synrob.probe.causal.behaviour import SentencePair, score_pairs

    from ..intervals import annotate_mean

    items = [p for p in read_pairs(Path(key["pairs_file"]).parent, key["task"]) or []
             if p["split"] == "te"]
    pairs = [SentencePair(f"te{k}", None, p["original"], p["modified"])
             for k, p in enumerate(items)]
    lm = load_lm(key["lm"], device=ctx.device)
    prefers = np.array([float(s.prefers_original) for s in score_pairs(lm, pairs)])
    row = {"kind": "behaviour", "task": key["task"], "row": f"LM {key['lm']}", "lm": key["lm"],
           "lm_kind": lm.kind, "encoder": "", "layer": None, "classifier": "", "split": "test",
           "metric": "lm_prefers_original", "n_items": len(pairs),
           "value": float(prefers.mean()) if prefers.size else float("nan")}
    return [annotate_mean(row, prefers, ctx.seed, int(key.get("bootstrap", 0)))]
