"""``local-structure``: does performance follow local (chrF-2) or global (Levenshtein) order?

Reproduces the analysis of Clouatre et al. (2022), "Local Structure Matters Most: Perturbation
Study in NLU" (Findings of ACL 2022), Figures 4 and 5, on a treebank instead of GLUE:

1. the perturbation grid of their Appendix A - full shuffle, phrase shuffle and neighbour flip
   (one set per ``rho``) of words, subwords and characters, plus the unperturbed set - is applied
   to the (first ``test_limit`` sentences of the) test file;
2. each set gets three structure metrics, averaged over sentences: chrF-2 against the original
   (local structure), normalised Levenshtein (global order) and compression rate (characters per
   token under ``tokenizer``);
3. each set gets performances: probes trained once on the clean train file (POS, a word-level
   tag probe; tree-depth, a sentence-level probe on pooled vectors) for every ``encoder:layer``
   of ``models``, and the per-token log-likelihood of the texts under a causal LM;
4. the report gives Spearman's rho between every metric and every performance across the sets
   (their Figure 5) and scatter plots of performance against each metric (their Figure 4).

POS on subword/char sets is undefined (their words are no longer the treebank's words): it is
reported only for the unperturbed and the word-level sets. tree-depth is a property of the
sentence, so it is scored on every set against the original tree.

Runs: one per ``(encoder, layer, task)`` (trains on clean data, evaluates every set), one per set
for the LM and one per set for the structure metrics. ``prepare`` writes the sets and fills the
representation cache, so runs only read.
"""

from __future__ import annotations

import time
from pathlib import Path
from statistics import fmean
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
from synrob.perturb.errors import ParameterError, SynrobError
from synrob.perturb.params import Param

from ...runtime.threads import torch_threads
from ..base import TREEBANK_SPLITS, Context, Experiment, Row, RunSpec
from .data import PerturbedSet, SetFiles, build_set, grid

if TYPE_CHECKING:
    from ...render.figures import Figure

__all__ = ["LocalStructure", "parse_models", "probe_rows", "structure_rows", "lm_rows"]


def parse_models(spec: str) -> list[tuple[str, int]]:
    """``"minilm:3,glove-6b-50d:0"`` -> ``[("minilm", 3), ("glove-6b-50d", 0)]``."""
    out = []
    for item in (x.strip() for x in spec.split(",")):
        if not item:
            continue
        name, sep, layer = item.rpartition(":")
        if not sep or not name:
            raise ParameterError(f"models: {item!r} is not ENCODER:LAYER")
        try:
            out.append((name, int(layer)))
        except ValueError:
            raise ParameterError(f"models: layer of {item!r} is not an integer") from None
    if len(set(out)) != len(out):
        raise ParameterError(f"models: {spec!r} names one encoder:layer twice")
    return out


class LocalStructure(Experiment):
    """Structure metrics vs probe and LM performance over Clouatre et al.'s perturbation grid."""

    name = "local-structure"
    version = "1.0.0"
    summary = ("perturbation grid (shuffle/phrase/flip x word/subword/char): chrF-2, Levenshtein, "
               "compression vs POS/tree-depth probes and LM log-likelihood (Spearman, scatter)")
    paper = ("Clouatre et al. 2022, Local Structure Matters Most: Perturbation Study in NLU "
             "(Findings of ACL), Figures 4-5, Appendix A")
    params = (
        TREEBANK_SPLITS,
        Param("train", str, "ud:en_ewt:train", "clean training file of the probes"),
        Param("dev", str, "ud:en_ewt:dev", "clean dev file (probe early stopping)"),
        Param("test", str, "ud:en_ewt:test", "file that is perturbed"),
        Param("test_limit", int, 400, "perturb only the first N test sentences (0 = all)"),
        Param("kinds", str, "shuffle,phrase,flip",
              "perturbations: shuffle (full), phrase (phrase shuffle), flip (neighbour flip)"),
        Param("units", str, "word,subword,char", "units that are moved"),
        Param("rhos", str, "0.1,0.25,0.5,0.75,0.9",
              "rho of phrase shuffle (cut probability) and neighbour flip (swap probability)"),
        Param("keep_spaces", bool, False, "char units: leave whitespace in place"),
        Param("tokenizer", str, "roberta",
              "tokenizer of subword units and of the compression rate (roberta: RoBERTa-base's "
              "byte-level BPE, as in the paper)"),
        Param("models", str, "minilm:3,glove-6b-50d:0", "ENCODER:LAYER pairs that are probed"),
        Param("tasks", str, "pos,tree-depth", "probing tasks (word-level tag and sentence-level)"),
        Param("epochs", int, 40, "maximum training epochs of each probe"),
        Param("lm", str, "smollm2", "causal LM scored on every set (empty: none)"),
        Param("lm_limit", int, 50, "score the first N sentences of each set with the LM (0 = all)"),
        Param("threads", int, 1, "torch intra-op threads while encoding, training and scoring "
              "(0 = torch's default); 1 is fastest on a shared 2-core CPU"),
        Param("bootstrap", int, 1000, "bootstrap resamples of the test sentences for the 95% "
              "intervals of each probe score and of each Spearman rho (0: none)"),
    )
    presets: ClassVar[dict[str, dict[str, Any]]] = {
        "sample": {"train": "sample:en_ewt:train", "dev": "sample:en_ewt:dev",
                   "test": "sample:en_ewt:test", "test_limit": 100, "rhos": "0.5",
                   "epochs": 10, "lm_limit": 20},
    }

    # ------------------------------------------------------------------ grid
    def sets(self) -> list[PerturbedSet]:
        return grid(self.list("units"), self.list("rhos", float), self.list("kinds"))

    def _files(self, ctx: Context) -> dict[str, SetFiles]:
        from ..data import resolve_one

        test = resolve_one(self.options["test"])
        limit = self.options["test_limit"] or None
        out = {}
        items = self.sets()
        it = (ctx.progress(items, "local-structure: perturbed sets", len(items))
              if ctx.progress else items)
        for s in it:
            out[s.name] = build_set(s, test, seed=ctx.seed, dest=ctx.data_dir, limit=limit,
                                    tokenizer=self.options["tokenizer"],
                                    keep_spaces=self.options["keep_spaces"], lang=ctx.lang)
        return out

    def _perturber(self, pset: PerturbedSet) -> dict[str, Any]:
        """``{"perturber", "perturber_version", "params"}`` of a set (empty names for none)."""
        if pset.kind == "none":
            return {"perturber": "", "perturber_version": "", "params": {}}
        from ..data import perturber_info

        kind, params = pset.perturber(self.options["tokenizer"], self.options["keep_spaces"])
        return perturber_info(kind, params)

    def _layers(self) -> dict[str, list[int]]:
        by_encoder: dict[str, list[int]] = {}
        for enc, layer in parse_models(self.options["models"]):
            by_encoder.setdefault(enc, []).append(layer)
        return {e: sorted(set(ls)) for e, ls in by_encoder.items()}

    # ------------------------------------------------------------------ protocol
    def prepare(self, ctx: Context) -> None:
        with torch_threads(self.options["threads"]):
            self._prepare(ctx)

    def _prepare(self, ctx: Context) -> None:
        from synrob.probe.representations.encoding import LoadedEncoders, encode_corpus

        from ..data import resolve_one

        with ctx.stage("perturbation"):
            files = self._files(ctx)
        clean = [str(resolve_one(self.options["train"])), str(resolve_one(self.options["dev"]))]
        jobs: list[tuple[str, str, Any]] = []
        for enc, layers in self._layers().items():
            jobs += [(enc, path, "all") for path in clean]
            jobs += [(enc, str(f.conllu), layers) for f in files.values()]
        it = ctx.progress(jobs, "local-structure: encoding", len(jobs)) if ctx.progress else jobs
        # each encoder loads once for all files; an encoder of the scored LM's model uses its
        # blocks when the runs follow in this process (one read of the checkpoint)
        held = LoadedEncoders(lm=ctx.lm_for_encoders(self.options["lm"]))
        with ctx.stage("encoding"):
            for enc, path, layers in it:
                encode_corpus(enc, path, layers=layers, device=ctx.device, encoders=held)

    def plan(self, ctx: Context) -> list[RunSpec]:
        from ..data import resolve_one

        files = self._files(Context(ctx.outdir, ctx.device, ctx.seed))
        sets = self.sets()
        set_keys = [{**s.as_key(), "name": s.name, **self._perturber(s),
                     "conllu": str(files[s.name].conllu), "jsonl": str(files[s.name].jsonl),
                     "word_gold": files[s.name].word_gold}
                    for s in sets]
        clean = files["none"]
        common = {"train": str(resolve_one(self.options["train"])),
                  "dev": str(resolve_one(self.options["dev"])),
                  "test": self.options["test"], "test_limit": self.options["test_limit"],
                  "gold": str(clean.conllu)}
        specs = []
        layers = self._layers()
        for enc, layer in parse_models(self.options["models"]):
            for task in self.list("tasks"):
                specs.append(RunSpec(
                    {"run": "probe", "encoder": enc, "layer": layer,
                     "encoded_layers": layers[enc], "task": task,
                     "epochs": self.options["epochs"], **common, "sets": set_keys,
                     "bootstrap": self.options["bootstrap"]},
                    f"{enc}:{layer} {task}"))
        for sk in set_keys:
            specs.append(RunSpec({"run": "structure", "set": sk,
                                  "tokenizer": self.options["tokenizer"]},
                                 f"structure {sk['name']}"))
            if self.options["lm"]:
                specs.append(RunSpec({"run": "lm", "model": self.options["lm"], "set": sk,
                                      "lm_limit": self.options["lm_limit"]},
                                     f"lm {sk['name']}"))
        return specs

    def execute(self, spec: RunSpec, ctx: Context) -> list[Row]:
        key = dict(spec.key)
        with torch_threads(self.options["threads"]):
            if key["run"] == "probe":
                return probe_rows(key, ctx.seed, ctx.device)
            if key["run"] == "structure":
                return structure_rows(key)
            if key["run"] == "lm":
                return lm_rows(key, ctx.device)
        raise ParameterError(f"unknown run kind {key['run']!r}")

    def report(self, rows: list[Row], ctx: Context) -> list[Path]:
        from .report import write_report

        return write_report(rows, ctx.outdir, self.sets(), self.options)

    def derived_rows(self, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        from .stats import derived_rows

        return derived_rows(rows)

    def figure(self, rows: list[Row]) -> Figure:
        """The scatter plots of ``local-structure-scatter.png``."""
        from .report import scatter_figure

        return scatter_figure(rows, self.sets())


# ---------------------------------------------------------------------- runs
# The three kinds of runs: probe, structure metrics, LM log-likelihood. Each takes the run's key
# (see :meth:`LocalStructure.plan`) and returns rows; all of them only read files written by
# ``prepare`` and the representation cache.
def set_fields(sk: dict[str, Any]) -> dict[str, Any]:
    """The row fields that name a perturbed set."""
    return {"set": sk["name"], "perturbation": sk["kind"], "unit": sk["unit"], "rho": sk["rho"],
            "perturber": sk["perturber"], "perturber_version": sk["perturber_version"],
            "params": sk["params"]}


def _features(encoder: str, path: str, layers: Any, layer: int, device: str) -> Any:
    """Features of ``layer`` of ``path`` from the cache (filled by ``prepare``)."""
    from synrob.probe.probes.inputs import Features
    from synrob.probe.representations.encoding import encode_corpus

    rep = encode_corpus(encoder, path, layers=layers, device=device)
    matrix, offsets = rep.layer_matrix(layer)
    return Features(np.asarray(matrix, dtype=np.float32), np.asarray(offsets, dtype=np.int64)), rep


def probe_rows(key: dict[str, Any], seed: int, device: str) -> list[dict[str, Any]]:
    """Train the task's default probe on clean train (early stop on dev), evaluate every set.

    Sentence-level tasks are scored on every set against the tree of the original sentence;
    word-level tasks only on sets whose CoNLL-U holds the gold words (``word_gold``).
    """
    from synrob.perturb.lm.device import resolve_device
    from synrob.perturb.plugins import get_registry
    from synrob.probe.probes.normalize import inputs_for
    from synrob.probe.tasks.base import load_gold
    from synrob.probe.tasks.scores import score
    from synrob.probe.training.batches import make_batches
    from synrob.probe.training.loop import predict
    from synrob.probe.training.probing import evaluate_probe, predict_probe, train_probe

    from ..intervals import annotate

    reg = get_registry()
    task_cls = reg.get("task", key["task"])
    task = task_cls()
    probe_cls = reg.get("probe", task_cls.default_probe)
    probe = probe_cls(epochs=key["epochs"])
    enc, layer = key["encoder"], key["layer"]
    dev_name = resolve_device(device)
    train_gold, dev_gold = load_gold(key["train"]), load_gold(key["dev"])
    task.fit(train_gold)
    train_feats, _ = _features(enc, key["train"], "all", layer, device)
    dev_feats, _ = _features(enc, key["dev"], "all", layer, device)
    module, log = train_probe(task, probe, (train_feats, train_gold), (dev_feats, dev_gold),
                              seed=seed, device=device)
    dev_metrics, _ = evaluate_probe(task, probe, module, dev_feats, dev_gold, device)
    clean_gold = load_gold(key["gold"])
    base = {"encoder": enc, "layer": layer, "task": key["task"], "probe": probe.name,
            "probe_params": dict(probe.options)}
    primary = task.primary_metric
    rows: list[dict[str, Any]] = [{
        **base, "set": "clean-dev", "split": "dev", "metric": primary,
        "value": dev_metrics[primary], "best_epoch": log.best_epoch,
        "train_seconds": round(log.seconds, 3)}]
    for sk in key["sets"]:
        if task.kind != "sentence" and not sk["word_gold"]:
            continue  # the words of a subword/char set are not the treebank's words
        feats, rep = _features(enc, sk["conllu"], key["encoded_layers"], layer, device)
        t0 = time.perf_counter()
        if task.kind == "sentence":
            if feats.n_sentences != len(clean_gold):
                raise SynrobError(f"{sk['conllu']}: {feats.n_sentences} sentences, the original "
                                  f"has {len(clean_gold)}")
            data = make_batches(inputs_for(module, feats), "sentence", None, batch_size=64,
                                pooling=task.options.get("pooling", "mean"), device=dev_name)
            gold, preds = clean_gold, predict(probe, module, data)
        else:
            gold = load_gold(sk["conllu"])
            preds = predict_probe(task, probe, module, feats, gold, device)
        metrics, stats = score(task, gold, preds)
        row = {**base, **set_fields(sk), "split": "test", "metric": primary,
               "value": float(metrics[primary]), "sentences": int(feats.n_sentences),
               "encoder_identity": rep.meta.get("identity"),
               "eval_seconds": round(time.perf_counter() - t0, 3)}
        rows += annotate([row], stats, seed,
                         int(key.get("bootstrap", 0)))
    return rows


def structure_rows(key: dict[str, Any]) -> list[dict[str, Any]]:
    """Mean chrF-2, normalised Levenshtein and compression rate of a set's sentences."""
    from synrob.perturb.metrics import compression_rates

    from .data import read_texts

    sk = key["set"]
    recs = read_texts(sk["jsonl"])
    values = {
        "chrf2": fmean(float(r["chrf2"]) for r in recs),
        "lev": fmean(float(r["lev"]) for r in recs),
        "compression": fmean(compression_rates([r["perturbed"] for r in recs], key["tokenizer"])),
        "compression_original": fmean(compression_rates([r["original"] for r in recs],
                                                        key["tokenizer"])),
    }
    return [{**set_fields(sk), "split": "test", "metric": m, "value": v,
             "tokenizer": key["tokenizer"], "sentences": len(recs)} for m, v in values.items()]


def lm_rows(key: dict[str, Any], device: str) -> list[dict[str, Any]]:
    """Per-token log-likelihood (nats) of the first ``lm_limit`` perturbed texts of a set."""
    from synrob.perturb.lm.loaded import resolve_device

    from .data import read_texts
    from .lm import score_texts

    sk = key["set"]
    recs = read_texts(sk["jsonl"])
    if key["lm_limit"]:
        recs = recs[: key["lm_limit"]]
    t0 = time.perf_counter()
    scores = score_texts([r["perturbed"] for r in recs], key["model"],
                         device=resolve_device(device))
    seconds = time.perf_counter() - t0
    base = {**set_fields(sk), "split": "test", "model": key["model"], "sentences": len(recs),
            "lm_seconds": round(seconds, 3)}
    return [{**base, "metric": "loglik_per_token", "value": scores.per_token},
            {**base, "metric": "loglik_per_char", "value": scores.per_char},
            {**base, "metric": "tokens_per_sentence",
             "value": sum(scores.tokens) / len(recs) if recs else float("nan")}]
