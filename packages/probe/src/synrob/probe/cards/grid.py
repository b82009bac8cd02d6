"""The card as one grid of the experiment framework: every language's runs, resumable, on any
backend (:func:`synrob.probe.experiments.runner.run_experiment`).

Per language, the runs are

* ``probe``: one task on one encoder at some layers (:func:`.runs.probing_rows`): the
  structural distance probe (``structure``) on the model, with its control task, and on a
  randomly initialised copy of the model (``random-init``, the same architecture); POS,
  dependency relation and every agreement feature the treebank annotates (``morphosyntax``),
  with their control tasks;
* ``behaviour``: one feature's agreement pairs scored by the model (:func:`.runs.behaviour_rows`);
* ``causal``: the ``amnesic`` study's runs (one per causal layer and feature);
* ``jabberwocky``: the ``jabberwocky`` study's runs at the language's best structural layer,
  once it is known (:attr:`CardGrid.jabberwocky_at`, the second pass of :func:`.make.card`).

The studies prepare their files under ``OUTDIR/studies/LANG/PART/`` and keep their own keys, so
a run's id depends on its language's inputs only: adding a language adds its runs, and a card
made again reuses every finished run (``OUTDIR/runs/``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from synrob.perturb.io.language import Language

from ..experiments.base import Context, Experiment, Row, RunSpec, layer_runs
from .settings import CardSettings
from .treebanks import Treebank

__all__ = ["AGREEMENT_FEATURES", "ModelInfo", "CardGrid"]

#: The agreement features a card probes, scores and erases, where the treebank has them.
AGREEMENT_FEATURES = ("Number", "Person", "Gender")
#: Sentences per LM forward pass of the behaviour and causal runs (the amnesic study's).
BATCH_SIZE = 32


@dataclass(frozen=True)
class ModelInfo:
    """What a card says of its model: identity, layers, LM head, and whether the studies
    (which take no encoder keys) read the same vectors as the probing runs."""

    name: str
    identity: dict[str, Any]
    num_layers: int
    #: ``causal``, ``masked`` or None (no LM head in the checkpoint)
    lm_kind: str | None
    #: why there is no behaviour section ("" when there is one)
    no_lm: str = ""
    #: why the studies cannot run with the card's ``-p`` keys ("" when they can)
    not_plain: str = ""
    placement: dict[str, Any] = field(default_factory=dict)


class CardGrid(Experiment):
    """Every run of a card (see the module docstring)."""

    name: ClassVar[str] = "card"
    version: ClassVar[str] = "1.0.0"
    summary: ClassVar[str] = ("a model's syntactic profile: structural and morphosyntactic "
                              "probes by layer, Jabberwocky, agreement behaviour, erasure")

    def __init__(self, settings: CardSettings, treebanks: Mapping[str, Treebank],
                 info: ModelInfo, jabberwocky_at: Mapping[str, int] | None = None) -> None:
        self.settings, self.treebanks, self.info = settings, dict(treebanks), info
        self.jabberwocky_at = dict(jabberwocky_at or {})
        self.options = {"settings": settings.as_json(), "jabberwocky_at": self.jabberwocky_at}
        self._features: dict[str, dict[str, str]] = {}

    def language(self, given: str | None = None) -> Language:
        langs = self.settings.languages
        return Language(langs[0], f"the card's languages: {','.join(langs)}")

    # ------------------------------------------------------------------ per language
    def features(self, lang: str) -> dict[str, str]:
        """Agreement feature -> "" when the treebank annotates it (two values or more in
        train, and some test word has it), else why not."""
        if lang not in self._features:
            from .sections import feature_reasons

            files = self.treebanks[lang].files
            self._features[lang] = feature_reasons(files["train"], files["test"],
                                                   AGREEMENT_FEATURES)
        return self._features[lang]

    def annotated(self, lang: str) -> list[str]:
        return [f for f, why in self.features(lang).items() if not why]

    def lm_sections(self) -> str:
        """Why the behaviour section cannot run ("" when it can)."""
        return self.info.no_lm or self.info.not_plain

    def causal_reason(self) -> str:
        """Why the causal section cannot run ("" when it can)."""
        if self.lm_sections():
            return self.lm_sections()
        if self.info.lm_kind != "causal":
            return (f"{self.settings.model} is a {self.info.lm_kind} LM: the amnesic study "
                    "erases inside a causal LM and scores its next-token predictions")
        return ""

    def sub(self, ctx: Context, lang: str, part: str) -> Context:
        """The context a study works in for ``lang``: its own directory, the language."""
        return dataclasses.replace(ctx, outdir=ctx.outdir / "studies" / lang / part, lang=lang)

    def amnesic(self, lang: str, feature: str) -> Any:
        """The ``amnesic`` study of ``feature`` on ``lang``'s treebank at the causal layers (no
        ``also`` task: the card reports the erased feature's probe only)."""
        from ..experiments.amnesic.experiment import AmnesicExperiment

        s, p, files = self.settings, self.settings.preset, self.treebanks[lang].files
        return AmnesicExperiment.from_preset(
            p.amnesic_preset, train=files["train"], dev=files["dev"], test=files["test"],
            model=s.model, layers=",".join(map(str, s.causal_layers)), feature=feature,
            also="", train_sentences=0, dev_sentences=0, test_sentences=0, pair_limit=p.pair_limit,
            batch_size=BATCH_SIZE, bootstrap=p.bootstrap)

    def jabberwocky(self, lang: str) -> Any:
        """The ``jabberwocky`` study at ``lang``'s best structural layer (None before it is
        known, or without Jabberwocky for this card)."""
        from ..experiments.jabberwocky.experiment import JabberwockyExperiment

        layer = self.jabberwocky_at.get(lang)
        if layer is None or self.info.not_plain:
            return None
        s, p, files = self.settings, self.settings.preset, self.treebanks[lang].files
        return JabberwockyExperiment.from_preset(
            p.jabberwocky_preset, train=files["train"], dev=files["dev"], test=files["test"],
            model=s.model, layers=str(layer), jabberwocky_layers=str(layer),
            probes="structural", baselines="path,majority", draws=p.draws, train_on="clean",
            train_sentences=0, epochs=p.epochs, patience=p.patience, rank=p.rank,
            bootstrap=p.bootstrap)

    def pair_counts(self, lang: str, ctx: Context) -> dict[str, int]:
        """Feature -> agreement pairs its test split gives (the pairs file built if absent);
        empty when the behaviour section cannot run."""
        from ..experiments.amnesic.runs import count_pairs

        if self.lm_sections():
            return {}
        return {f: count_pairs(self.amnesic(lang, f).paths(self.sub(ctx, lang, f"agreement-{f}"))
                               ["pairs"]) for f in self.annotated(lang)}

    def causal_features(self, lang: str, counts: Mapping[str, int]) -> list[str]:
        """The features erased: the preset's, where the treebank gives pairs."""
        if self.causal_reason():
            return []
        return [f for f in self.settings.preset.causal_features if counts.get(f, 0) > 0]

    # ------------------------------------------------------------------ the protocol
    def prepare(self, ctx: Context) -> None:
        """Encode every language's splits with the model (and its random copy) at the
        card's layers, build the agreement pairs, then let the studies prepare (their
        vectors are in those entries already)."""
        for lang in self.settings.languages:
            self._encode(lang, ctx)
            with ctx.stage("perturbation"):
                counts = self.pair_counts(lang, ctx)
            for feature in self.causal_features(lang, counts):
                self.amnesic(lang, feature).prepare(self.sub(ctx, lang, f"agreement-{feature}"))
            jab = self.jabberwocky(lang)
            if jab is not None:
                jab.prepare(self.sub(ctx, lang, "jabberwocky"))

    def _encode(self, lang: str, ctx: Context) -> None:
        from ..representations.encoding import LoadedEncoders, encode_corpus

        lm = "" if self.lm_sections() or self.info.lm_kind != "causal" else self.settings.model
        held = LoadedEncoders(lm=ctx.lm_for_encoders(lm))  # one read of the checkpoint
        jobs = [(enc, params, path) for enc, params, _ in self._encoders()
                for path in self.treebanks[lang].files.values()]
        items = ctx.progress(jobs, f"card {lang}: encoding", len(jobs)) if ctx.progress else jobs
        with ctx.stage("encoding"):
            for enc, params, path in items:
                encode_corpus(enc, path, layers=list(self.settings.layers), params=params or None,
                              device=ctx.device, encoders=held, any_superset=True)

    def _encoders(self) -> list[tuple[str, dict[str, Any], str]]:
        """``(encoder, params, role)``: the model, and its random copy (same architecture,
        seeded weights; the placement keys apply to a checkpoint only)."""
        from synrob.perturb.lm.placement import PLACEMENT_PARAMS

        s = self.settings
        random = {k: v for k, v in s.params.items() if k not in {p.name for p in PLACEMENT_PARAMS}}
        return [(s.model, dict(s.params), "model"),
                ("random-init", {**random, "model": s.model, "seed": s.seed}, "random-init")]

    def plan(self, ctx: Context) -> Sequence[RunSpec]:
        specs: list[RunSpec] = []
        for lang in self.settings.languages:
            specs += self._probing_specs(lang, ctx)
            counts = self.pair_counts(lang, ctx)
            specs += self._behaviour_specs(lang, counts, ctx)
            for feature in self.causal_features(lang, counts):
                study = self.amnesic(lang, feature)
                specs += [RunSpec({"part": "causal", "lang": lang, "feature": feature,
                                   "study": dict(r.key)}, f"{lang}/causal/{feature}/{r.label}")
                          for r in study.plan(self.sub(ctx, lang, f"agreement-{feature}"))]
            jab = self.jabberwocky(lang)
            if jab is not None:
                specs += [RunSpec({"part": "jabberwocky", "lang": lang, "study": dict(r.key)},
                                  f"{lang}/jabberwocky/{r.label}")
                          for r in jab.plan(self.sub(ctx, lang, "jabberwocky"))]
        return specs

    def _tasks(self, lang: str) -> list[tuple[str, str, dict[str, Any], str]]:
        """``(section, task, task params, label)`` of every probing task of ``lang``."""
        return [("structure", "distance", {}, "distance"),
                ("morphosyntax", "pos", {}, "pos"), ("morphosyntax", "deprel", {}, "deprel"),
                *(("morphosyntax", "feats", {"feature": f}, f"feats:{f}")
                  for f in self.annotated(lang))]

    def _probing_specs(self, lang: str, ctx: Context) -> list[RunSpec]:
        from synrob.perturb.lm.device import resolve_device
        from synrob.perturb.plugins import get_registry

        from ..training.precision import resolve_train_precision

        s, p, files = self.settings, self.settings.preset, self.treebanks[lang].files
        reg, device = get_registry(), resolve_device(ctx.device)
        specs = []
        for section, task, task_params, label in self._tasks(lang):
            probe = reg.get("task", task).default_probe
            for enc, params, role in self._encoders():
                if role == "random-init" and section != "structure":
                    continue
                pp = {"epochs": p.epochs, "patience": p.patience,
                      **({"rank": p.rank} if probe == "structural" else {}),
                      "train_precision": resolve_train_precision("auto", device, enc, probe)}
                key = {"part": "probe", "lang": lang, "section": section, "label": label,
                       "encoder_role": role, "encoder": enc, "encoder_params": params,
                       "task": task, "task_params": task_params, "probe": probe,
                       "probe_params": pp, **files, "seeds": s.seeds, "bootstrap": p.bootstrap,
                       "control": role == "model", "mdl": p.mdl and section == "morphosyntax"}
                for group in layer_runs(list(s.layers), task, probe, "auto", ctx.device):
                    where = "L" + "+".join(map(str, group))
                    specs.append(RunSpec({**key, "layers": group},
                                         f"{lang}/{label}/{role}/{where}"))
        return specs

    def _behaviour_specs(self, lang: str, counts: Mapping[str, int], ctx: Context
                         ) -> list[RunSpec]:
        p = self.settings.preset
        specs = []
        for feature, n in counts.items():
            if n == 0:
                continue
            paths = self.amnesic(lang, feature).paths(self.sub(ctx, lang, f"agreement-{feature}"))
            specs.append(RunSpec({"part": "behaviour", "lang": lang, "feature": feature,
                                  "model": self.settings.model, "test": paths["test"],
                                  "pairs": paths["pairs"], "pair_limit": p.pair_limit,
                                  "batch_size": BATCH_SIZE, "bootstrap": p.bootstrap},
                                 f"{lang}/behaviour/{feature}"))
        return specs

    def execute(self, spec: RunSpec, ctx: Context) -> list[Row]:
        from .runs import behaviour_rows, probing_rows

        key, lang = spec.key, str(spec.key["lang"])
        part = key["part"]
        if part == "probe":
            rows = probing_rows(key, self.sub(ctx, lang, "probing"))
        elif part == "behaviour":
            rows = behaviour_rows(key, self.sub(ctx, lang, f"agreement-{key['feature']}"))
        elif part == "causal":
            study = self.amnesic(lang, key["feature"])
            rows = study.execute(RunSpec(key["study"]),
                                 self.sub(ctx, lang, f"agreement-{key['feature']}"))
            rows = [{**r, "feature": key["feature"]} for r in rows]
        else:
            rows = self.jabberwocky(lang).execute(RunSpec(key["study"]),
                                                  self.sub(ctx, lang, "jabberwocky"))
        return [{**r, "part": part, "lang": lang} for r in rows]

    def report(self, rows: list[Row], ctx: Context) -> list[Path]:
        from ..experiments.report import write_markdown

        text = ("The runs of a card; the card itself is `../card.md` (and `card.json`, "
                "`card.html`), written from these rows.")
        return [write_markdown(ctx.outdir / "report.md", "# card runs", [text])]

    def derived_rows(self, rows: list[Row]) -> list[Row]:
        """Each language's Jabberwocky drops, leads and lead lost (the study's own)."""
        out: list[Row] = []
        for lang in self.settings.languages:
            jab = self.jabberwocky(lang)
            mine = [r for r in rows if r.get("part") == "jabberwocky" and r.get("lang") == lang]
            if jab is not None and mine:
                out += [{**r, "part": "jabberwocky", "lang": lang}
                        for r in jab.derived_rows(mine)]
        return out
