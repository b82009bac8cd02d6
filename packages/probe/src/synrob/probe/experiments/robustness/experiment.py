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
  SDR are also computed with their released code's definitions (:mod:`synrob.probe.lamalfa`);
* **Algorithm 1** - the worst-case (largest) l2 distance and (smallest) cosine similarity
  between the sentence representations of the original and of a variant, averaged over
  sentences. The sentence representation is the mean of the layer's word vectors (the words'
  vectors are themselves the mean of their subwords' states).

Runs are one per (encoder, layer, task, seed); each evaluates every (perturbation, tau).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from synrob.perturb.errors import ParameterError, SynrobError
from synrob.perturb.params import Param

from ..base import Context, Experiment, Row, RunSpec

__all__ = ["RobustnessExperiment", "parse_limits", "parse_perturber_params"]

PAPER = ("La Malfa, Wicker & Kwiatkowska 2022, Emergent Linguistic Structures in Neural "
         "Networks are Fragile (Table 1; Algorithms 1 and 2)")

#: Columns of the Table-1-shaped report: (header, task, per-sentence metric).
COLUMNS: tuple[tuple[str, str, str], ...] = (
    ("ΔSDR", "distance", "sdr"),
    ("ΔUUAS", "distance", "uuas"),
    ("ΔSp", "distance", "dspr"),
    ("ΔSDR (LM code)", "distance", "sdr_lamalfa"),
    ("ΔUUAS (LM code)", "distance", "uuas_lamalfa"),
    ("ΔAcc POS (words/sent)", "pos", "words_right"),
    ("ΔAcc root", "root", "root_acc"),
    ("ΔAcc tree depth", "tree-depth", "acc"),
    ("ΔSp tree depth", "tree-depth", "spearman"),
    ("ΔSp depth", "depth", "nspr"),
    ("ΔAcc root (depth)", "depth", "root_acc"),
)


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


def _mean(values: np.ndarray) -> float:
    finite = np.asarray(values, float)[np.isfinite(values)]
    return float(finite.mean()) if finite.size else float("nan")


class RobustnessExperiment(Experiment):
    """Worst-case drops of probe metrics and representation shifts under coPOS/coCO."""

    name = "robustness"
    version = "1.1"
    summary = ("worst-case drop of probe metrics and representation shift under k syntax-"
               "preserving substitutions per sentence, per budget tau (La Malfa et al. Table 1)")
    paper = PAPER
    params = (
        Param("train", str, "ud:en_ewt:train", "training treebank (probe fitting)"),
        Param("dev", str, "ud:en_ewt:dev", "dev treebank (early stopping)"),
        Param("test", str, "ud:en_ewt:test", "test treebank (perturbed)"),
        Param("encoders", str, "minilm,glove-6b-50d", "comma-separated encoders"),
        Param("layers", str, "3,6", "comma-separated layers; a layer past an encoder's last is "
              "its last (GloVe: 0)"),
        Param("tasks", str, "distance,pos,root,tree-depth",
              "comma-separated probing tasks (distance, depth, pos, root, tree-depth)"),
        Param("perturbations", str, "copos,coco", "comma-separated perturbers (tree-keeping)"),
        Param("budgets", str, "1,5,10", "comma-separated substitution budgets tau"),
        Param("variants", int, 5, "perturbations drawn per sentence (k)"),
        Param("test_limit", int, 0, "first N test sentences perturbed and scored (0 = all)"),
        Param("limits", str, "coco=6", "per-perturbation override of test_limit (PERT=N, "
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

    def _conditions(self) -> list[tuple[str, dict[str, Any], int]]:
        """(perturbation, perturber params, test limit or 0) for every perturbation x budget."""
        extra = parse_perturber_params(self.options["perturber_params"])
        caps = parse_limits(self.options["budget_caps"], "budget_caps")
        out = []
        for kind in self.list("perturbations"):
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
        for kind, params, limit in self._conditions():
            path = perturbed_file(self.options["test"], kind, params, seed=seed, dest=ctx.data_dir,
                                  variants=self.options["variants"], max_sentences=limit or None)
            conds.append({"perturbation": kind, "params": params, "limit": limit,
                          "file": path.name})
        return conds

    # ------------------------------------------------------------------ protocol
    def prepare(self, ctx: Context) -> None:
        """Build the perturbed test sets (k variants per sentence) and encode every file."""
        from synrob.probe.representations import encode_corpus

        from ..data import resolve_one

        seeds = self._seeds(ctx)
        it = ctx.progress(seeds, "perturbing test sets", len(seeds)) if ctx.progress else seeds
        files = [ctx.data_dir / c["file"] for seed in it for c in self._files(ctx, seed)]
        sources = [str(resolve_one(self.options[s])) for s in ("train", "dev", "test")]
        jobs = list(dict.fromkeys((enc, str(f)) for enc, _ in self._models()
                                  for f in [*sources, *files]))
        it2 = ctx.progress(jobs, "encoding", len(jobs)) if ctx.progress else jobs
        for enc, path in it2:
            encode_corpus(enc, path, layers="all", device=ctx.device)

    def plan(self, ctx: Context) -> Sequence[RunSpec]:
        from ..data import resolve_one

        data = {s: str(resolve_one(self.options[s])) for s in ("train", "dev", "test")}
        specs = []
        for seed in self._seeds(ctx):
            conds = self._files(ctx, seed)
            for enc, layer in self._models():
                for task in self.list("tasks"):
                    key = {"encoder": enc, "layer": layer, "task": task, "seed": seed,
                           **data, "variants": self.options["variants"],
                           "epochs": self.options["epochs"],
                           "train_limit": self.options["train_limit"],
                           "adversary": self.options["adversary"], "conditions": conds}
                    specs.append(RunSpec(key, f"{enc}@{layer} {task} seed={seed}"))
        return specs

    def execute(self, spec: RunSpec, ctx: Context) -> list[Row]:
        return run_cell(dict(spec.key), ctx.data_dir, ctx.device)

    def report(self, rows: list[Row], ctx: Context) -> list[Path]:
        return write_report(self, rows, ctx)


# ---------------------------------------------------------------------- one run
def run_cell(key: dict[str, Any], data_dir: Path, device: str = "auto") -> list[Row]:
    """Train the probe of ``key`` on clean train and score every perturbed condition (whose
    files are in ``data_dir``)."""
    from synrob.perturb.plugins import get_registry
    from synrob.probe.encoders.resolve import resolve_encoder
    from synrob.probe.experiment import encoder_features, evaluate_probe, train_probe
    from synrob.probe.representations import encode_corpus
    from synrob.probe.tasks.base import load_gold
    from synrob.probe.training import Features, resolve_device

    from .stats import (
        adversarial_choice,
        adversary_drop,
        lamalfa_counts,
        sentence_losses,
        sentence_metrics,
        worst_case_distance,
        worst_case_drop,
    )

    reg = get_registry()
    enc_name, layer, seed, k = key["encoder"], int(key["layer"]), int(key["seed"]), int(key["variants"])
    adversary = key["adversary"]
    if adversary not in ("loss", "per-metric"):
        raise ParameterError(f"robustness: adversary must be 'loss' or 'per-metric', not "
                             f"{adversary!r}")
    task_cls = reg.get("task", key["task"])
    task = task_cls()
    probe_cls = reg.get("probe", task_cls.default_probe)
    probe = probe_cls(epochs=key["epochs"])
    dev = resolve_device(device)
    feats = encoder_features(enc_name, device=device)
    train_gold, dev_gold, test_gold = (load_gold(key[s]) for s in ("train", "dev", "test"))
    train_feats = feats(key["train"], layer)
    if key.get("train_limit"):
        n_train = min(int(key["train_limit"]), len(train_gold))
        train_gold = train_gold.subset(n_train)
        train_feats = Features(train_feats.matrix[:train_feats.offsets[n_train]],
                               train_feats.offsets[:n_train + 1])
    task.fit(train_gold)
    module, log = train_probe(task, probe, (train_feats, train_gold),
                              (feats(key["dev"], layer), dev_gold), seed=seed, device=dev)
    test_feats = feats(key["test"], layer)
    clean_corpus, clean_preds = evaluate_probe(task, probe, module, test_feats, test_gold, dev)
    clean = sentence_metrics(task, test_gold, clean_preds)
    clean_loss = sentence_losses(task, probe, module, test_feats, test_gold, dev)
    clean_lm = lamalfa_counts(test_gold, clean_preds) if task.kind == "distance" else {}
    clean_vecs = encode_corpus(enc_name, key["test"], layers="all").sentence_vectors(layer, "mean")
    ident = resolve_encoder(enc_name, {}).identity()
    base = {"encoder": enc_name, "layer": layer, "task": task.name, "seed": seed, "split": "test",
            "variants": k, "adversary": adversary, "probe": probe.name, "probe_version": probe_cls.version,
            "task_version": task_cls.version, "encoder_version": ident["version"],
            "model": ident["options"].get("model") or ident["options"].get("path", ""),
            "revision": ident["options"].get("revision", ""),
            "train_sentences": len(train_gold), "train_epochs": log.best_epoch + 1}
    rows: list[Row] = [{**base, "perturbation": "none", "params": {}, "budget": 0,
                        "metric": f"clean_corpus_{m}", "value": float(v)}
                       for m, v in clean_corpus.items() if m != "sentences"]
    depth_labels = [int(x) for x in task.labels] if task.name == "tree-depth" else []
    for cond in key["conditions"]:
        path = Path(data_dir) / cond["file"]
        gold = load_gold(path)
        n = len(gold) // k
        if n * k != len(gold) or n > len(test_gold):
            raise SynrobError(f"{path}: {len(gold)} sentences is not {k} variants of the test set")
        if not all(np.array_equal(gold.heads[i * k + j], test_gold.heads[i])
                   for i in range(n) for j in range(k)):
            raise SynrobError(f"{path}: a perturbation changed a gold tree")
        pert_feats = feats(str(path), layer)
        _, preds = evaluate_probe(task, probe, module, pert_feats, gold, dev)
        pert = sentence_metrics(task, gold, preds)
        losses = sentence_losses(task, probe, module, pert_feats, gold, dev).reshape(n, k)
        pick = adversarial_choice(losses)  # the one adversarial variant of each sentence
        cond_base = {**base, "perturbation": cond["perturbation"],
                     "params": dict(cond["params"]), "budget": int(cond["params"]["budget"]),
                     "n_sentences": n, "perturber_version": _perturber_version(cond["perturbation"])}

        def row(metric: str, value: float, _b: dict[str, Any] = cond_base) -> Row:
            return {**_b, "metric": metric, "value": float(value)}

        rows += [row("clean_loss", _mean(clean_loss[:n])),
                 row("adversary_loss", _mean(losses[np.arange(n), pick]))]
        for m, values in pert.items():
            per = values.reshape(n, k)
            rows.append(row(f"clean_{m}", _mean(clean[m][:n])))
            rows.append(row(f"perturbed_{m}", _mean(per)))
            drop = (adversary_drop(clean[m][:n], per, pick) if adversary == "loss"
                    else worst_case_drop(clean[m][:n], per))
            rows.append(row(f"drop_{m}", _mean(drop)))
        if clean_lm:  # La Malfa et al.'s UUAS/SDR, aggregated as their probing_robustness.py
            pert_lm = lamalfa_counts(gold, preds)
            for m, counts in clean_lm.items():
                hits, tot = counts[:n].sum(axis=0)
                corpus = hits / tot if tot > 0 else 0.0
                c = pert_lm[m].reshape(n, k, 2)
                per = np.where(c[..., 1] > 0, c[..., 0] / np.maximum(c[..., 1], 1), 0.0)
                worst = per[np.arange(n), pick] if adversary == "loss" else per.min(axis=1)
                rows += [row(f"clean_{m}", corpus), row(f"worst_{m}", float(worst.mean())),
                         row(f"drop_{m}", corpus - float(worst.mean()))]
        if task.name == "tree-depth":  # Spearman: corpus-level, on the adversary's picks
            gd = np.array([test_gold.max_depth(i) for i in range(n)], dtype=float)
            cp = np.array([depth_labels[int(p)] for p in clean_preds[:n]], dtype=float)
            pp = np.array([depth_labels[int(p)] for p in preds], dtype=float).reshape(n, k)
            sp_pick = (pick if adversary == "loss"
                       else adversarial_choice(np.abs(pp - gd[:, None])))
            from synrob.probe.metrics import spearman

            sp_clean, sp_worst = spearman(cp, gd), spearman(pp[np.arange(n), sp_pick], gd)
            rows += [row("clean_spearman", sp_clean), row("worst_spearman", sp_worst),
                     row("drop_spearman", sp_clean - sp_worst)]
        vecs = encode_corpus(enc_name, str(path), layers="all").sentence_vectors(layer, "mean")
        dist = worst_case_distance(clean_vecs[:n], vecs.reshape(n, k, -1))
        changed = _changed_counts(path)
        rows += [row("l2", _mean(dist["l2"])), row("cosine", _mean(dist["cosine"])),
                 row("clean_norm", _mean(np.linalg.norm(clean_vecs[:n], axis=1))),
                 row("changed_words", _mean(changed)),
                 row("unchanged_share", float(np.mean(changed == 0)) if changed.size else np.nan)]
    return rows


def _perturber_version(kind: str) -> str:
    from synrob.perturb.plugins import get_registry

    return str(getattr(get_registry().get("perturber", kind), "version", ""))


# ---------------------------------------------------------------------- report
def _by_condition(rows: list[Row]) -> dict[tuple[Any, ...], dict[tuple[str, str], list[float]]]:
    """(encoder, layer, perturbation, budget) -> (task, metric) -> values over seeds."""
    out: dict[tuple[Any, ...], dict[tuple[str, str], list[float]]] = {}
    for r in rows:
        if r.get("perturbation") in (None, "none"):
            continue
        cond = (r["encoder"], r["layer"], r["perturbation"], r["budget"])
        out.setdefault(cond, {}).setdefault((r["task"], r["metric"]), []).append(r["value"])
    return out


def _rep_values(cell: dict[tuple[str, str], list[float]], metric: str) -> list[float]:
    """A representation metric (identical in every task's run): the first task's values."""
    for (_, m), values in sorted(cell.items()):
        if m == metric:
            return values
    return []


#: How the report describes each ``adversary`` setting.
ADVERSARY_TEXT = {
    "loss": ("one adversarial variant per sentence, the one of the k with the highest probe loss "
             "(the probe's training loss on that sentence alone); every probe column is clean − "
             "that variant, averaged over sentences, and ΔSp tree depth is the corpus Spearman of "
             "clean predictions minus that of the adversarial variants'."),
    "per-metric": ("each metric's worst variant separately (max over the k variants of clean − "
                   "perturbed), averaged over sentences, so one row may combine different "
                   "variants; ΔSp tree depth uses the variant with the largest depth error."),
}


def write_report(exp: Experiment, rows: list[Row], ctx: Context) -> list[Path]:
    """``report.md`` (Table-1-shaped drops, clean scores, representation shifts) and
    ``robustness-tau.png`` (worst-case drop against tau)."""
    from ..report import markdown_table, mean_std, write_markdown

    cells = _by_condition(rows)
    present = {tm for cell in cells.values() for tm in cell}
    cols = [c for c in COLUMNS if (c[1], f"drop_{c[2]}") in present]
    conds = sorted(cells, key=lambda c: (str(c[0]), c[1], str(c[2]), c[3]))
    seeds = sorted({r.get("seed") for r in rows})
    header = ["encoder@layer", "perturbation", "τ", *(c[0] for c in cols), "ℓ2 (max)",
              "cosine (min)", "words changed"]
    drop_rows, clean_rows = [], []
    for cond in conds:
        cell = cells[cond]
        lead = [f"{cond[0]}@{cond[1]}", cond[2], cond[3]]
        drop_rows.append([*lead, *(mean_std(cell.get((t, f"drop_{m}"), [])) for _, t, m in cols),
                          mean_std(_rep_values(cell, "l2")), mean_std(_rep_values(cell, "cosine")),
                          mean_std(_rep_values(cell, "changed_words"), 2)])
        n = next((r.get("n_sentences") for r in rows if r.get("encoder") == cond[0]
                  and r.get("layer") == cond[1] and r.get("perturbation") == cond[2]
                  and r.get("budget") == cond[3]), None)
        clean_rows.append([*lead, *(mean_std(cell.get((t, f"clean_{m}"), [])) for _, t, m in cols),
                           mean_std(_rep_values(cell, "clean_norm")),
                           mean_std(_rep_values(cell, "unchanged_share"), 2), n])
    o = exp.options
    sections = [
        f"Paper: {exp.paper}.",
        (f"Test `{o['test']}` (probes trained on `{o['train']}`, early stopping on `{o['dev']}`); "
         f"k = {o['variants']} perturbations per sentence; seeds {', '.join(map(str, seeds))} "
         f"(mean ± std over seeds). Adversary: `{o['adversary']}` — "
         + ADVERSARY_TEXT.get(o["adversary"], "")
         + " (LM code) columns: La Malfa et al.'s released UUAS/SDR (first 20 words, no MST, "
         "no punctuation removal, padding cells included in SDR), clean corpus value minus the "
         "mean per-sentence value of the adversarial variant(s), as their probing_robustness.py. "
         "ℓ2 / cosine (Algorithm 1, no probe): worst-case (max / min over all k variants) "
         "distance between the mean-pooled layer vectors of the original and a perturbed "
         "sentence, averaged over sentences."),
        "## Worst-case drops (Table 1)",
        markdown_table(header, drop_rows),
        "## Clean scores on the same sentences",
        ("Per-sentence means, except the (LM code) columns: corpus values pooled over the "
         "sentences, as La Malfa et al.'s code computes its clean scores."),
        markdown_table(["encoder@layer", "perturbation", "τ", *(c[0][1:] for c in cols),
                        "‖clean vector‖", "unchanged variants", "sentences"], clean_rows),
    ]
    files = [write_markdown(ctx.outdir / "report.md", f"# {exp.name}", sections)]
    if cells:
        files.append(_plot(cells, cols, ctx.outdir / "robustness-tau.png"))
    return files


def _plot(cells: dict[tuple[Any, ...], dict[tuple[str, str], list[float]]],
          cols: list[tuple[str, str, str]], path: Path) -> Path:
    from ..report import pyplot, save_figure

    plt = pyplot()
    panels = [*cols, ("ℓ2 (max)", "", "l2")]
    ncol = min(4, len(panels))
    nrow = (len(panels) + ncol - 1) // ncol
    fig, axes = plt.subplots(nrow, ncol, figsize=(3.6 * ncol, 2.8 * nrow), squeeze=False)
    lines = sorted({(c[0], c[1], c[2]) for c in cells}, key=str)
    for ax, (title, task, metric) in zip(axes.flat, panels, strict=False):
        for enc, layer, pert in lines:
            taus = sorted(c[3] for c in cells if c[:3] == (enc, layer, pert))
            ys = []
            for tau in taus:
                cell = cells[(enc, layer, pert, tau)]
                vals = (_rep_values(cell, metric) if not task
                        else cell.get((task, f"drop_{metric}"), []))
                vals = [v for v in vals if v == v]
                ys.append(float(np.mean(vals)) if vals else np.nan)
            ax.plot(taus, ys, marker="o", label=f"{enc}@{layer} {pert}")
        ax.set_title(title, fontsize=9)
        ax.set_xlabel("τ (words substituted)", fontsize=8)
        ax.axhline(0, color="grey", lw=0.5)
        ax.tick_params(labelsize=7)
    for ax in list(axes.flat)[len(panels):]:
        ax.axis("off")
    handles, labels = axes.flat[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=min(4, len(labels)), fontsize=7,
               bbox_to_anchor=(0.5, -0.02 - 0.03 * ((len(labels) - 1) // 4)))
    fig.suptitle("Worst-case drop against the substitution budget τ", fontsize=10)
    fig.tight_layout()
    return save_figure(fig, path)
