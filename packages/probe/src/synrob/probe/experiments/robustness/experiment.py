"""``robustness``: worst-case fragility of probed syntax under syntax-preserving substitutions.

Reproduces Table 1 of La Malfa, Wicker & Kwiatkowska (2022), "Emergent linguistic structures in
neural networks are fragile". For each encoder x layer x task, a probe is trained once on the
clean training set (early stopping on dev); then, for every perturbation (coPOS, coCO) and
budget tau, each test sentence gets ``k`` perturbed variants (tree and tags unchanged, so the
gold targets stay valid) and

* **Algorithm 2** - per sentence, the adversarial variant is the one of the ``k`` with the
  highest probe loss (the probe's own training loss on that sentence alone), and every metric's
  drop is measured on that one variant, averaged over sentences (``adversary=loss``, the
  default); ``adversary=per-metric`` instead takes each metric's worst variant separately, as
  La Malfa et al.'s released code does, so one row may combine different variants. UUAS and
  SDR are also computed with their released code's definitions (:mod:`synrob.probe.metrics.lamalfa`);
* **Algorithm 1** - the worst-case (largest) l2 distance and (smallest) cosine similarity
  between the sentence representations of the original and of a variant, averaged over
  sentences. The sentence representation is the mean of the layer's word vectors (the words'
  vectors are themselves the mean of their subwords' states).

Runs are one per (encoder, layer, task, seed); each evaluates every (perturbation, tau).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from synrob.perturb.errors import ParameterError, SynrobError
from synrob.perturb.params import Param

from ..base import FUSE_LAYERS, TREEBANK_SPLITS, Context, Experiment, Row, RunSpec, layer_runs
from ..stats import finite_mean

if TYPE_CHECKING:
    from ...render.figures import Figure

__all__ = ["RobustnessExperiment", "parse_limits", "parse_perturber_params"]

PAPER = ("La Malfa, Wicker & Kwiatkowska 2022, Emergent Linguistic Structures in Neural "
         "Networks are Fragile (Table 1; Algorithms 1 and 2)")


def parse_limits(value: str, what: str = "limits") -> dict[str, int]:
    """``"coco=40, copos=0"`` -> ``{"coco": 40, "copos": 0}`` (``limits``, ``budget_caps``)."""
    out: dict[str, int] = {}
    for item in str(value or "").split(","):
        if not item.strip():
            continue
        kind, sep, n = item.partition("=")
        try:
            out[kind.strip()] = int(n)
        except ValueError:
            raise ParameterError(f"{what}: {item.strip()!r} is not PERTURBATION=N") from None
        if not sep:
            raise ParameterError(f"{what}: {item.strip()!r} is not PERTURBATION=N")
    return out


def parse_perturber_params(value: str) -> dict[str, dict[str, str]]:
    """``"coco.candidates=8; copos.upos=NOUN,VERB"`` -> ``{"coco": {"candidates": "8"}, ...}``."""
    out: dict[str, dict[str, str]] = {}
    for item in str(value or "").split(";"):
        if not item.strip():
            continue
        name, sep, val = item.partition("=")
        kind, dot, key = name.strip().partition(".")
        if not sep or not dot or not kind or not key:
            raise ParameterError(f"perturber_params: {item.strip()!r} is not KIND.KEY=VALUE")
        out.setdefault(kind, {})[key.strip()] = val.strip()
    return out


def _changed_counts(path: Path) -> np.ndarray:
    """Words changed in each sentence of a perturbed CoNLL-U file (``# synrob.changed``)."""
    counts: list[int] = []
    with path.open(encoding="utf-8") as fh:
        for line in fh:
            if line.startswith("# synrob.changed"):
                value = line.partition("=")[2].strip()
                counts.append(len([v for v in value.split(",") if v.strip()]))
    return np.asarray(counts, dtype=np.float64)


class RobustnessExperiment(Experiment):
    """Worst-case drops of probe metrics and representation shifts under coPOS/coCO."""

    name = "robustness"
    version = "1.3"  # 1.3: a perceptron probe's layers train in one run too
    summary = ("worst-case drop of probe metrics and representation shift under k syntax-"
               "preserving substitutions per sentence, per budget tau (La Malfa et al. Table 1)")
    paper = PAPER
    params = (
        TREEBANK_SPLITS,
        Param("train", str, "ud:en_ewt:train", "training treebank (probe fitting)"),
        Param("dev", str, "ud:en_ewt:dev", "dev treebank (early stopping)"),
        Param("test", str, "ud:en_ewt:test", "test treebank (perturbed)"),
        Param("encoders", str, "minilm,glove-6b-50d", "comma-separated encoders"),
        Param("layers", str, "3,6", "comma-separated layers; a layer past an encoder's last is "
              "its last (GloVe: 0)"),
        FUSE_LAYERS,
        Param("tasks", str, "distance,pos,root,tree-depth",
              "comma-separated probing tasks (distance, depth, pos, root, tree-depth)"),
        Param("perturbations", str, "copos,coco", "comma-separated perturbers (tree-keeping)"),
        Param("budgets", str, "1,5,10", "comma-separated substitution budgets tau"),
        Param("variants", int, 5, "perturbations drawn per sentence (k)"),
        Param("test_limit", int, 0, "first N test sentences perturbed and scored (0 = all)"),
        Param("limits", str, "coco=300", "per-perturbation override of test_limit (PERT=N, "
              "comma-separated; coCO runs a causal LM: slow on CPU)"),
        Param("budget_caps", str, "coco=1", "per-perturbation largest budget (PERT=TAU, "
              "comma-separated; budgets above it are skipped for that perturbation)"),
        Param("perturber_params", str, "coco.candidates=8", "extra perturber parameters, "
              "';'-separated KIND.KEY=VALUE"),
        Param("seeds", str, "0", "comma-separated seeds (probe init and perturbation draws; "
              "added to --seed)"),
        Param("train_limit", int, 3000, "first N training sentences used to fit the probes "
              "(0 = all)"),
        Param("epochs", int, 10, "maximum probe training epochs"),
        Param("adversary", str, "loss", "worst case per sentence: 'loss' = the one variant with "
              "the highest probe loss, every metric on it; 'per-metric' = each metric's worst "
              "variant separately (La Malfa et al.'s released code)", ("loss", "per-metric")),
        Param("bootstrap", int, 1000, "bootstrap resamples of the test sentences for the 95% "
              "intervals and p-values of every drop and shift (0: none)"),
    )
    presets = {
        "sample": {"train": "sample:en_ewt:train", "dev": "sample:en_ewt:dev",
                   "test": "sample:en_ewt:test", "encoders": "glove-6b-50d", "layers": "0",
                   "perturbations": "copos", "budgets": "1,5", "variants": 3,
                   "test_limit": 60, "limits": "", "budget_caps": "", "perturber_params": "",
                   "train_limit": 0, "epochs": 5},
        "full": {"limits": "", "budget_caps": "", "perturber_params": "", "train_limit": 0,
                 "epochs": 40},
    }

    # ------------------------------------------------------------------ grid helpers
    def _seeds(self, ctx: Context) -> list[int]:
        return [ctx.seed + s for s in self.list("seeds", int)] or [ctx.seed]

    def _limit(self, kind: str) -> int | None:
        n = parse_limits(self.options["limits"]).get(kind, self.options["test_limit"])
        if n < 0:
            raise ParameterError(f"robustness: the test limit of {kind} must be >= 0")
        return n or None

    def _models(self) -> list[tuple[str, int]]:
        from synrob.probe.encoders.resolve import resolve_encoder

        layers = self.list("layers", int)
        out: list[tuple[str, int]] = []
        for enc in self.list("encoders"):
            n = resolve_encoder(enc, {}).num_layers
            for layer in layers:
                pair = (enc, min(layer, n - 1) if layer >= 0 else max(n + layer, 0))
                if pair not in out:
                    out.append(pair)
        if not out:
            raise ParameterError("robustness: no encoder/layer to probe")
        return out

    def unsupported(self, lang: str) -> list[str]:
        """The perturbations that do not support ``lang`` (coPOS outside English): skipped."""
        from synrob.perturb.io.language import supports
        from synrob.perturb.plugins import get_registry

        reg = get_registry()
        return [k for k in self.list("perturbations")
                if not supports(getattr(reg.get("perturber", k), "languages", ("*",)), lang)]

    def _warn_unsupported(self, lang: str) -> None:
        import warnings

        from synrob.perturb.errors import SynrobWarning
        from synrob.perturb.plugins import get_registry

        for kind in self.unsupported(lang):
            cls = get_registry().get("perturber", kind)
            warnings.warn(f"robustness: {kind} supports only {', '.join(cls.languages)} "
                          f"({cls.language_note}), not {lang}: skipped; the other "
                          "perturbations run", SynrobWarning, stacklevel=2)

    def _conditions(self, lang: str = "en") -> list[tuple[str, dict[str, Any], int]]:
        """(perturbation, perturber params, test limit or 0) for every perturbation x budget
        (perturbations that do not support ``lang`` left out)."""
        extra = parse_perturber_params(self.options["perturber_params"])
        caps = parse_limits(self.options["budget_caps"], "budget_caps")
        skip = set(self.unsupported(lang))
        if skip == set(self.list("perturbations")):
            raise ParameterError(f"robustness: no perturbation supports {lang} "
                                 f"({', '.join(sorted(skip))} do not)")
        out = []
        for kind in (k for k in self.list("perturbations") if k not in skip):
            for tau in self.list("budgets", int):
                if kind in caps and tau > caps[kind]:
                    continue
                params = {**extra.get(kind, {}), "budget": tau}
                out.append((kind, params, self._limit(kind) or 0))
        return out

    def _files(self, ctx: Context, seed: int) -> list[dict[str, Any]]:
        """The conditions of one seed with their perturbed file's name (built when absent)."""
        from ..data import perturbed_file

        conds = []
        for kind, params, limit in self._conditions(ctx.lang):
            path = perturbed_file(self.options["test"], kind, params, seed=seed, dest=ctx.data_dir,
                                  variants=self.options["variants"], max_sentences=limit or None,
                                  lang=ctx.lang)
            conds.append({"perturbation": kind, "params": params, "limit": limit,
                          "file": path.name})
        return conds

    # ------------------------------------------------------------------ protocol
    def prepare(self, ctx: Context) -> None:
        """Build the perturbed test sets (k variants per sentence) and encode every file."""
        from synrob.probe.representations.encoding import LoadedEncoders, encode_corpus

        from ..data import resolve_one

        seeds = self._seeds(ctx)
        self._warn_unsupported(ctx.lang)
        it = ctx.progress(seeds, "perturbing test sets", len(seeds)) if ctx.progress else seeds
        with ctx.stage("perturbation"):
            files = [ctx.data_dir / c["file"] for seed in it for c in self._files(ctx, seed)]
        sources = [str(resolve_one(self.options[s])) for s in ("train", "dev", "test")]
        layers = dict(self._encoder_layers())  # only these layers (and the blocks they need)
        jobs = list(dict.fromkeys((enc, str(f)) for enc in layers for f in [*sources, *files]))
        it2 = ctx.progress(jobs, "encoding", len(jobs)) if ctx.progress else jobs
        held = LoadedEncoders()  # each encoder loads once for all files
        with ctx.stage("encoding"):
            for enc, path in it2:
                encode_corpus(enc, path, layers=sorted(layers[enc]), device=ctx.device,
                              encoders=held, any_superset=True)

    def plan(self, ctx: Context) -> Sequence[RunSpec]:
        from ..data import resolve_one

        data = {s: str(resolve_one(self.options[s])) for s in ("train", "dev", "test")}
        specs = []
        for seed in self._seeds(ctx):
            conds = self._files(ctx, seed)
            for enc, layers in self._encoder_layers():
                for task in self.list("tasks"):
                    key = {"encoder": enc, "task": task, "seed": seed,
                           **data, "variants": self.options["variants"],
                           "epochs": self.options["epochs"],
                           "train_limit": self.options["train_limit"],
                           "adversary": self.options["adversary"], "conditions": conds,
                           "bootstrap": self.options["bootstrap"]}
                    for group in self._groups(task, layers, ctx):
                        where = "+".join(map(str, group))
                        specs.append(RunSpec({**key, "layers": group},
                                             f"{enc}@{where} {task} seed={seed}"))
        return specs

    def _encoder_layers(self) -> list[tuple[str, list[int]]]:
        """:meth:`_models` grouped by encoder, in order."""
        out: dict[str, list[int]] = {}
        for enc, layer in self._models():
            out.setdefault(enc, []).append(layer)
        return list(out.items())

    def _groups(self, task: str, layers: list[int], ctx: Context) -> list[list[int]]:
        """The layers' runs (:func:`..base.layer_runs`) for the task's default probe."""
        return layer_runs(layers, task, None, self.options["fuse_layers"], ctx.device)

    def execute(self, spec: RunSpec, ctx: Context) -> list[Row]:
        return run_cell(dict(spec.key), ctx.data_dir, ctx.device, boot_seed=ctx.seed)

    def report(self, rows: list[Row], ctx: Context) -> list[Path]:
        from .report import write_report

        return write_report(self, rows, ctx)

    def derived_rows(self, rows: list[Row]) -> list[Row]:
        from .report import derived_rows

        return derived_rows(rows)

    def figure(self, rows: list[Row]) -> Figure | None:
        """The worst-case drop against tau of ``robustness-tau.png`` (None without drops)."""
        from .report import tau_figure

        return tau_figure(rows)


# ---------------------------------------------------------------------- one run
def run_cell(key: dict[str, Any], data_dir: Path, device: str = "auto",
             boot_seed: int = 0) -> list[Row]:
    """Train the probe of ``key`` on clean train, on each of its ``layers`` (together when
    there are several: :func:`synrob.probe.training.probing.train_layers`), and score every perturbed
    condition (whose files are in ``data_dir``) with each. Drops and shifts get bootstrap
    intervals over the sentences (``key["bootstrap"]`` resamples drawn from ``boot_seed``, the
    experiment's seed, so that the runs of every training seed resample the same sentences:
    :mod:`..intervals`)."""
    if key["adversary"] not in ("loss", "per-metric"):
        raise ParameterError(f"robustness: adversary must be 'loss' or 'per-metric', not "
                             f"{key['adversary']!r}")
    layers = [int(x) for x in key["layers"]]
    trained = _Trainer(key, device).train(layers)
    rows: list[Row] = []
    for layer in layers:
        cell = _Cell(key, layer, trained, Path(data_dir), boot_seed)
        rows += cell.clean_rows()
        for cond in key["conditions"]:
            rows += cell.condition_rows(cond)
    return rows


class _Trainer:
    """The probes of one run, on clean train (the first ``train_limit`` sentences) with early
    stopping on dev: the task fitted, each layer's (module, log)."""

    def __init__(self, key: dict[str, Any], device: str) -> None:
        from synrob.perturb.lm.device import resolve_device
        from synrob.perturb.plugins import get_registry
        from synrob.probe.tasks.base import load_gold
        from synrob.probe.training.probing import encoder_features

        reg = get_registry()
        self.key, self.dev = key, resolve_device(device)
        self.task_cls = reg.get("task", key["task"])
        self.task = self.task_cls()
        self.probe_cls = reg.get("probe", self.task_cls.default_probe)
        self.probe = self.probe_cls(epochs=key["epochs"])
        self.feats = encoder_features(key["encoder"], device=device, layers=key["layers"])
        self.train_gold, self.dev_gold = load_gold(key["train"]), load_gold(key["dev"])
        if key.get("train_limit"):
            n_train = min(int(key["train_limit"]), len(self.train_gold))
            self.train_gold = self.train_gold.subset(n_train)

    def _features(self, split: str, layer: int) -> Any:
        """A layer's train (cut to the training sentences) or dev vectors."""
        return self.feats(self.key[split], layer,
                          len(self.train_gold) if split == "train" else None)

    def train(self, layers: list[int]) -> _Trainer:
        """Train every layer's probe; ``self.trained``: layer -> (module, log, dim)."""
        from synrob.probe.training.probing import train_layers

        self.task.fit(self.train_gold)
        self.trained = train_layers(self.task, self.probe, self._features, layers, "train",
                                    "dev", self.train_gold, self.dev_gold,
                                    seed=int(self.key["seed"]), device=self.dev,
                                    fuse=True)  # the run's layers were grouped to be fused
        return self


def _row(base: dict[str, Any], metric: str, value: float) -> Row:
    return {**base, "metric": metric, "value": float(value)}


def _drop_row(base: dict[str, Any], metric: str, per_sentence: np.ndarray,
              boot: tuple[int, int]) -> Row:
    """The mean of per-sentence values (n,) with its interval and, for a drop, the one-sided
    p-value that it is > 0."""
    from ..intervals import annotate_mean, boots, p_above_zero

    row = annotate_mean(_row(base, metric, finite_mean(per_sentence)), per_sentence, *boot)
    b = boots([row]) if "_boot" in row else None
    if b is not None and metric.startswith("drop_"):
        row["p_value"] = p_above_zero(b)
    return row


class _Cell:
    """One layer of a run: its probe (trained by :class:`_Trainer`), its clean test scores,
    then the rows of each perturbed condition."""

    def __init__(self, key: dict[str, Any], layer: int, trained: _Trainer, data_dir: Path,
                 boot_seed: int = 0) -> None:
        from synrob.probe.tasks.base import load_gold

        self.key, self.data_dir = key, data_dir
        self.boot = (boot_seed, int(key.get("bootstrap", 0)))  # (resample seed, resamples)
        self.enc_name, self.layer = key["encoder"], layer
        self.seed, self.k = int(key["seed"]), int(key["variants"])
        self.adversary = key["adversary"]
        self.task_cls, self.task = trained.task_cls, trained.task
        self.probe_cls, self.probe = trained.probe_cls, trained.probe
        self.dev = trained.dev
        self.feats = trained.feats
        self.train_gold, self.dev_gold = trained.train_gold, trained.dev_gold
        self.test_gold = load_gold(key["test"])
        self.module, self.log, _ = trained.trained[layer]
        self._score_clean()
        self.base = self.base_fields()

    # ------------------------------------------------------------------ clean
    def _score_clean(self) -> None:
        """Corpus and per-sentence scores, losses and sentence vectors of the clean test set."""
        from synrob.probe.representations.encoding import encode_corpus
        from synrob.probe.training.probing import evaluate_probe

        from .stats import lamalfa_counts, sentence_losses, sentence_metrics

        task, probe, module, gold = self.task, self.probe, self.module, self.test_gold
        test_feats = self.feats(self.key["test"], self.layer)
        self.clean_corpus, self.clean_preds = evaluate_probe(task, probe, module, test_feats,
                                                             gold, self.dev)
        self.clean = sentence_metrics(task, gold, self.clean_preds)
        self.clean_loss = sentence_losses(task, probe, module, test_feats, gold, self.dev)
        self.clean_lm = lamalfa_counts(gold, self.clean_preds) if task.kind == "distance" else {}
        self.clean_vecs = encode_corpus(self.enc_name, self.key["test"], layers=[self.layer],
                                        any_superset=True).sentence_vectors(self.layer, "mean")

    def base_fields(self) -> dict[str, Any]:
        """The fields every row of the run shares."""
        from synrob.probe.encoders.resolve import resolve_encoder

        ident = resolve_encoder(self.enc_name, {}).identity()
        return {"encoder": self.enc_name, "layer": self.layer, "task": self.task.name,
                "seed": self.seed, "split": "test", "variants": self.k,
                "adversary": self.adversary, "probe": self.probe.name,
                "probe_version": self.probe_cls.version, "task_version": self.task_cls.version,
                "encoder_version": ident["version"],
                "model": ident["options"].get("model") or ident["options"].get("path", ""),
                "revision": ident["options"].get("revision", ""),
                "train_sentences": len(self.train_gold), "train_epochs": self.log.best_epoch + 1}

    def clean_rows(self) -> list[Row]:
        """The probe's corpus metrics on the clean test set."""
        return [{**self.base, "perturbation": "none", "params": {}, "budget": 0,
                 "metric": f"clean_corpus_{m}", "value": float(v)}
                for m, v in self.clean_corpus.items() if m != "sentences"]

    # ------------------------------------------------------------------ one condition
    def condition_rows(self, cond: dict[str, Any]) -> list[Row]:
        """Every row of one (perturbation, budget): probe drops, then representation shifts."""
        from synrob.probe.tasks.base import load_gold
        from synrob.probe.training.probing import predict_probe

        from .stats import adversarial_choice, sentence_losses

        path = self.data_dir / cond["file"]
        gold = load_gold(path)
        n = self._check_variants(path, gold)
        pert_feats = self.feats(str(path), self.layer)
        preds = predict_probe(self.task, self.probe, self.module, pert_feats, gold, self.dev)
        losses = sentence_losses(self.task, self.probe, self.module, pert_feats, gold,
                                 self.dev).reshape(n, self.k)
        pick = adversarial_choice(losses)  # the one adversarial variant of each sentence
        base = {**self.base, "perturbation": cond["perturbation"],
                "params": dict(cond["params"]), "budget": int(cond["params"]["budget"]),
                "n_sentences": n, "perturber_version": _perturber_version(cond["perturbation"])}
        rows = [_row(base, "clean_loss", finite_mean(self.clean_loss[:n])),
                _row(base, "adversary_loss", finite_mean(losses[np.arange(n), pick]))]
        rows += self._metric_rows(base, gold, preds, n, pick)
        if self.clean_lm:  # La Malfa et al.'s UUAS/SDR, aggregated as their probing_robustness.py
            rows += self._lamalfa_rows(base, gold, preds, n, pick)
        if self.task.name == "tree-depth":  # Spearman: corpus-level, on the adversary's picks
            rows += self._depth_spearman_rows(base, preds, n, pick)
        return rows + self._representation_rows(base, path, n)

    def _check_variants(self, path: Path, gold: Any) -> int:
        """The number of sentences of a file of ``k`` variants per test sentence, trees unchanged."""
        k = self.k
        n = len(gold) // k
        if n * k != len(gold) or n > len(self.test_gold):
            raise SynrobError(f"{path}: {len(gold)} sentences is not {k} variants of the test set")
        if not all(np.array_equal(gold.heads[i * k + j], self.test_gold.heads[i])
                   for i in range(n) for j in range(k)):
            raise SynrobError(f"{path}: a perturbation changed a gold tree")
        return n

    def _metric_rows(self, base: dict[str, Any], gold: Any, preds: Any, n: int,
                     pick: np.ndarray) -> list[Row]:
        """Per-sentence metrics: clean and perturbed means, and the worst-case drop."""
        from .stats import adversary_drop, sentence_metrics, worst_case_drop

        rows: list[Row] = []
        for m, values in sentence_metrics(self.task, gold, preds).items():
            per = values.reshape(n, self.k)
            clean = self.clean[m][:n]
            rows.append(_row(base, f"clean_{m}", finite_mean(clean)))
            rows.append(_row(base, f"perturbed_{m}", finite_mean(per)))
            drop = (adversary_drop(clean, per, pick) if self.adversary == "loss"
                    else worst_case_drop(clean, per))
            rows.append(_drop_row(base, f"drop_{m}", drop, self.boot))
        return rows

    def _lamalfa_rows(self, base: dict[str, Any], gold: Any, preds: Any, n: int,
                      pick: np.ndarray) -> list[Row]:
        """La Malfa et al.'s UUAS/SDR: pooled clean value, mean of the worst variants, drop."""
        from .stats import lamalfa_counts

        pert_lm = lamalfa_counts(gold, preds)
        rows: list[Row] = []
        for m, counts in self.clean_lm.items():
            hits, tot = counts[:n].sum(axis=0)
            corpus = hits / tot if tot > 0 else 0.0
            c = pert_lm[m].reshape(n, self.k, 2)
            per = np.where(c[..., 1] > 0, c[..., 0] / np.maximum(c[..., 1], 1), 0.0)
            worst = per[np.arange(n), pick] if self.adversary == "loss" else per.min(axis=1)
            rows += [_row(base, f"clean_{m}", corpus), _row(base, f"worst_{m}", float(worst.mean())),
                     self._lamalfa_drop(base, m, counts[:n], worst)]
        return rows

    def _lamalfa_drop(self, base: dict[str, Any], m: str, counts: np.ndarray, worst: np.ndarray
                      ) -> Row:
        """Pooled clean value minus mean worst value, recomputed on every resample of the
        sentences (``counts`` (n, 2): hits, total per sentence; ``worst`` (n,))."""
        from ..intervals import attach, boot_indices, p_above_zero

        hits, tot = counts.sum(axis=0)
        row = _row(base, f"drop_{m}", (hits / tot if tot > 0 else 0.0) - float(worst.mean()))
        seed, n_boot = self.boot
        if n_boot <= 0 or not len(worst):
            return row
        idx = boot_indices(seed, len(worst), n_boot)
        h, t = counts[idx, 0].sum(axis=1), counts[idx, 1].sum(axis=1)
        drops = np.where(t > 0, h / np.where(t > 0, t, 1), 0.0) - worst[idx].mean(axis=1)
        return {**attach(row, drops), "p_value": p_above_zero(drops)}

    def _depth_spearman_rows(self, base: dict[str, Any], preds: Any, n: int,
                             pick: np.ndarray) -> list[Row]:
        """tree-depth: corpus Spearman of clean vs adversarial predictions with the gold depth."""
        from synrob.probe.metrics.trees import spearman

        from .stats import adversarial_choice

        depth_labels = [int(x) for x in self.task.labels]
        gd = np.array([self.test_gold.max_depth(i) for i in range(n)], dtype=float)
        cp = np.array([depth_labels[int(p)] for p in self.clean_preds[:n]], dtype=float)
        pp = np.array([depth_labels[int(p)] for p in preds], dtype=float).reshape(n, self.k)
        sp_pick = (pick if self.adversary == "loss"
                   else adversarial_choice(np.abs(pp - gd[:, None])))
        sp_clean, sp_worst = spearman(cp, gd), spearman(pp[np.arange(n), sp_pick], gd)
        return [_row(base, "clean_spearman", sp_clean), _row(base, "worst_spearman", sp_worst),
                _row(base, "drop_spearman", sp_clean - sp_worst)]

    def _representation_rows(self, base: dict[str, Any], path: Path, n: int) -> list[Row]:
        """Algorithm 1 (worst-case l2 / cosine of the sentence vectors) and words changed."""
        from synrob.probe.representations.encoding import encode_corpus

        from .stats import worst_case_distance

        vecs = encode_corpus(self.enc_name, str(path), layers=[self.layer], any_superset=True
                             ).sentence_vectors(self.layer, "mean")
        dist = worst_case_distance(self.clean_vecs[:n], vecs.reshape(n, self.k, -1))
        changed = _changed_counts(path)
        return [_drop_row(base, "l2", np.asarray(dist["l2"]), self.boot),
                _drop_row(base, "cosine", np.asarray(dist["cosine"]), self.boot),
                _row(base, "clean_norm", finite_mean(np.linalg.norm(self.clean_vecs[:n], axis=1))),
                _row(base, "changed_words", finite_mean(changed)),
                _row(base, "unchanged_share",
                     float(np.mean(changed == 0)) if changed.size else np.nan)]


def _perturber_version(kind: str) -> str:
    from synrob.perturb.plugins import get_registry

    return str(getattr(get_registry().get("perturber", kind), "version", ""))
