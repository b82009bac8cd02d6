"""``amnesic``: find a property with a probe, erase or flip it inside the model, measure behaviour.

Per layer ``L`` of a causal LM (default SmolLM2-135M on UD English EWT; ``-p treebank=`` for any
UD language whose verbs agree in Number), one run:

1. **amnesic probing** (:func:`synrob.probe.causal.erasure.amnesic.run_amnesic`; Elazar et al. 2021):
   LEACE (Belrose et al. 2023) is fitted on layer ``L``'s training word vectors and the labels
   of ``task`` (default ``feats`` with ``feature=Number``); a linear probe is fitted to
   convergence on the vectors as they are, LEACE-erased, erased along a random subspace of the
   same rank (the rank-matched control) and by a random oblique projection of the same rank
   and LEACE's mean displacement (the displacement-matched control), and scored on the test
   words beside the majority rate (the training majority label's test accuracy); the same for
   the ``also`` tasks (what else the erasure took away);
2. **erasure inside the model** (:mod:`synrob.probe.causal.erasure.inside`): the test set's agreement
   minimal pairs (``synrob perturb --kind agreement``, built in ``prepare``) are scored by the LM
   clean, with LEACE applied to layer ``L``'s hidden states of every token but the start token,
   and with each random control: agreement accuracy (the LM prefers the grammatical original)
   and the damage, the increase of the per-token negative log-likelihood of the original
   sentences (nats; positive = worse);
3. **counterfactual intervention** (:mod:`synrob.probe.causal.erasure.counterfactual`; AlterRep,
   Ravfogel et al. 2021): the subject's token states at layer ``L`` are moved to the other
   Number's class mean along the LEACE subspace, against a random direction of the same size;
   the flip rate is the share of the pairs the clean LM gets right whose twin it then prefers.

Every figure has a 95 % bootstrap interval over the test sentences (clusters of pairs by source
sentence), every difference a paired one with its one-sided p-value; the rows are in
``results.json``, the tables in ``report.md``, the layer curves in ``amnesic-layers.png``.
"""

from __future__ import annotations

import time
from itertools import islice
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from synrob.perturb.errors import ParameterError, SynrobError
from synrob.perturb.params import Param

from ..base import TREEBANK_SPLITS, Context, Experiment, Row, RunSpec

if TYPE_CHECKING:
    from ...render.figures import Figure

__all__ = ["AmnesicExperiment"]


class AmnesicExperiment(Experiment):
    """LEACE erasure and counterfactual intervention per layer of a causal LM."""

    name = "amnesic"
    version = "2.1.0"  # 2: two random controls, majority from train, damage as NLL increase;
    # 2.1: the softmax probes' L-BFGS steps on one thread (their rows no longer depend on it)
    summary = ("concept erasure (LEACE vs random erasures of the same rank, and of the same "
               "rank and mean displacement) and counterfactual intervention per layer of a "
               "causal LM: probe accuracy, agreement accuracy on minimal pairs, damage (NLL "
               "increase), flip rate")
    paper = ("Elazar et al. 2021 (amnesic probing, TACL); Belrose et al. 2023 (LEACE); "
             "Ravfogel et al. 2021 (AlterRep); Jumelet et al. 2025 (MultiBLiMP)")
    params = (
        TREEBANK_SPLITS,
        Param("train", str, "ud:en_ewt:train", "training file of the erasers and the probes"),
        Param("dev", str, "ud:en_ewt:dev", "dev file (the probes' L2 choice)"),
        Param("test", str, "ud:en_ewt:test", "test file: probe accuracy and the agreement pairs"),
        Param("model", str, "smollm2", "causal LM: probed, erased and scored"),
        Param("layers", str, "3,6,9,12,15,18,21,24,27",
              "layers erased, one run each (the encoder's --layer numbering)"),
        Param("task", str, "feats", "word classification task whose labels are erased"),
        Param("feature", str, "Number", "the feats task's feature and the agreement pairs' "
              "(Number, Person or Gender)"),
        Param("also", str, "pos", "other tasks probed before and after the erasure (what else "
              "was lost): NAME or NAME:key=value, comma-separated"),
        Param("train_sentences", int, 0, "fit erasers and probes on the first N training "
              "sentences (0 = all)"),
        Param("dev_sentences", int, 0, "use the first N dev sentences (0 = all)"),
        Param("test_sentences", int, 0, "use the first N test sentences, for the probes and "
              "the agreement pairs (0 = all)"),
        Param("pairs_lexicon", str, "train", "where agreement forms are attested beside the "
              "test file: train (the training file), none, or CoNLL-U specs"),
        Param("direction", str, "both", "feature=Number: which agreement flips are made: both, "
              "to_plur or to_sing (a direction the treebank shows grammatical, as Turkish "
              "plural subjects with singular verbs, is refused anyway, with a warning)",
              ("both", "to_plur", "to_sing")),
        Param("pair_limit", int, 0, "score the first N agreement pairs (0 = all)"),
        Param("batch_size", int, 32, "sentences per LM forward pass"),
        Param("bootstrap", int, 1000, "bootstrap resamples for the 95% intervals (0: none)"),
    )
    presets: ClassVar[dict[str, dict[str, Any]]] = {
        "sample": {"train": "sample:en_ewt:train", "dev": "sample:en_ewt:dev",
                   "test": "sample:en_ewt:test", "layers": "12", "train_sentences": 400,
                   "pair_limit": 60, "bootstrap": 200},
        "demo": {"layers": "6,12,18,24", "train_sentences": 2000, "dev_sentences": 500,
                 "test_sentences": 1000, "pair_limit": 120},
    }

    def _check(self) -> None:
        if self.options["task"] == "feats" and not self.options["feature"]:
            raise ParameterError("experiment amnesic: task feats needs a feature")
        if not self.layers():
            raise ParameterError("experiment amnesic: layers names no layer")

    def layers(self) -> list[int]:
        try:
            return sorted(set(self.list("layers", int)))
        except ValueError:
            raise ParameterError(f"experiment amnesic: layers {self.options['layers']!r} are "
                                 "not integers") from None

    # ------------------------------------------------------------------ data
    def _first(self, split: str, ctx: Context) -> str:
        """The ``split`` file, or its first ``{split}_sentences`` sentences under ``data/``."""
        from synrob.perturb.io.atomic import atomic_open
        from synrob.perturb.pipeline import read_blocks

        from ..data import content_hash, resolve_one

        src = resolve_one(self.options[split])
        n = int(self.options[f"{split}_sentences"])
        if n <= 0:
            return str(src)
        out = ctx.data_dir / f"{src.stem}.first{n}.{content_hash(src)[:12]}.conllu"
        if not out.is_file():
            with src.open(encoding="utf-8") as fh, atomic_open(out) as w:
                for block in islice(read_blocks(fh, str(src)), n):
                    w.write("".join(f"{line}\n" for _, line in block.lines) + "\n")
        return str(out)

    def _lexicon(self) -> str:
        lex = str(self.options["pairs_lexicon"]).strip()
        if lex == "train":
            return self.options["train"]
        return "" if lex in ("", "none") else lex

    def _pairs_file(self, ctx: Context) -> Path:
        from ..data import perturbed_file

        test = self._first("test", ctx)
        params = {"feature": self.options["feature"], "direction": self.options["direction"],
                  **({"lexicon": self._lexicon()} if self._lexicon() else {})}
        return perturbed_file(test, "agreement", params, seed=ctx.seed,
                              dest=ctx.data_dir, lang=ctx.lang)

    def paths(self, ctx: Context) -> dict[str, str]:
        """The train, dev and test files the runs read and the agreement pairs file, built
        where absent."""
        return {**{s: self._first(s, ctx) for s in ("train", "dev", "test")},
                "pairs": str(self._pairs_file(ctx))}

    # ------------------------------------------------------------------ protocol
    def prepare(self, ctx: Context) -> None:
        """Build the agreement pairs (an error when the test file gives none) and encode the
        three files at the chosen layers."""
        from synrob.probe.representations.encoding import LoadedEncoders, encode_corpus

        from .runs import count_pairs

        self._check()
        with ctx.stage("perturbation"):
            paths = self.paths(ctx)
        if count_pairs(paths["pairs"]) == 0:
            raise SynrobError(f"experiment amnesic: {self.options['test']} gives no agreement "
                              f"pairs (no finite verb whose subject has "
                              f"{self.options['feature']}); see the perturber's warning")
        files = [paths[s] for s in ("train", "dev", "test")]
        it = ctx.progress(files, "amnesic: encoding", len(files)) if ctx.progress else files
        # the model loads once for the three files; when the runs follow in this process,
        # the encoder uses the blocks of the LM they score with (one read of the checkpoint);
        # an entry of more layers (a card's sweep) holds these layers: the runs read it too
        held = LoadedEncoders(lm=ctx.lm_for_encoders(self.options["model"]))
        with ctx.stage("encoding"):
            for path in it:
                encode_corpus(self.options["model"], path, layers=self.layers(),
                              device=ctx.device, encoders=held, any_superset=True)

    def plan(self, ctx: Context) -> list[RunSpec]:
        self._check()
        paths = self.paths(ctx)
        common = {k: self.options[k] for k in ("model", "task", "feature", "also",
                                                "pair_limit", "batch_size", "bootstrap")}
        return [RunSpec({"run": "layer", "layer": layer, "encoded_layers": self.layers(),
                         **paths, **common}, f"{self.options['model']} layer {layer}")
                for layer in self.layers()]

    def execute(self, spec: RunSpec, ctx: Context) -> list[Row]:
        from .runs import layer_rows

        key = dict(spec.key)
        if key.get("run") != "layer":
            raise ParameterError(f"unknown run kind {key.get('run')!r}")
        t0 = time.perf_counter()
        rows = layer_rows(key, seed=ctx.seed, device=ctx.device, lang=ctx.lang)
        seconds = round(time.perf_counter() - t0, 3)
        return [{**r, "run_seconds": seconds} for r in rows]

    def report(self, rows: list[Row], ctx: Context) -> list[Path]:
        from .report import write_report

        return write_report(rows, ctx.outdir, self.options)

    def figure(self, rows: list[Row]) -> Figure:
        """The four panels of ``amnesic-layers.png`` against the layer."""
        from .report import layers_figure

        feature = self.options.get("feature") or self.options["task"]
        return layers_figure(rows, f"{self.options['model']}: erasing and flipping {feature}")
