"""The three kinds of runs of ``local-structure``: probe, structure metrics, LM log-likelihood.

Each takes the run's key (see :meth:`LocalStructure.plan`) and returns rows; all of them only
read files written by ``prepare`` and the representation cache.
"""

from __future__ import annotations

import time
from statistics import fmean
from typing import Any

import numpy as np

__all__ = ["probe_rows", "structure_rows", "lm_rows", "set_fields"]


def set_fields(sk: dict[str, Any]) -> dict[str, Any]:
    """The row fields that name a perturbed set."""
    return {"set": sk["name"], "perturbation": sk["kind"], "unit": sk["unit"], "rho": sk["rho"],
            "perturber": sk["perturber"], "perturber_version": sk["perturber_version"],
            "params": sk["params"]}


def _features(encoder: str, path: str, layers: Any, layer: int, device: str) -> Any:
    """Features of ``layer`` of ``path`` from the cache (filled by ``prepare``)."""
    from synrob.probe.representations import encode_corpus
    from synrob.probe.training import Features

    rep = encode_corpus(encoder, path, layers=layers, device=device)
    matrix, offsets = rep.layer_matrix(layer)
    return Features(np.asarray(matrix, dtype=np.float32), np.asarray(offsets, dtype=np.int64)), rep


def probe_rows(key: dict[str, Any], seed: int, device: str) -> list[dict[str, Any]]:
    """Train the task's default probe on clean train (early stop on dev), evaluate every set.

    Sentence-level tasks are scored on every set against the tree of the original sentence;
    word-level tasks only on sets whose CoNLL-U holds the gold words (``word_gold``).
    """
    from synrob.perturb.errors import SynrobError
    from synrob.perturb.plugins import get_registry
    from synrob.probe.probing import evaluate_probe, train_probe
    from synrob.probe.tasks.base import load_gold
    from synrob.probe.training import make_batches, predict, resolve_device

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
            data = make_batches(feats, "sentence", None, batch_size=64,
                                pooling=task.options.get("pooling", "mean"), device=dev_name)
            metrics = task.evaluate(clean_gold, predict(probe, module, data))
        else:
            metrics, _ = evaluate_probe(task, probe, module, feats, load_gold(sk["conllu"]),
                                        device)
        rows.append({**base, **set_fields(sk), "split": "test", "metric": primary,
                     "value": float(metrics[primary]), "sentences": int(feats.n_sentences),
                     "encoder_identity": rep.meta.get("identity"),
                     "eval_seconds": round(time.perf_counter() - t0, 3)})
    return rows


def structure_rows(key: dict[str, Any]) -> list[dict[str, Any]]:
    """Mean chrF-2, normalised Levenshtein and compression rate of a set's sentences."""
    from synrob.perturb.metrics import compression_rates

    from .local_structure_sets import read_texts

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
    from synrob.perturb.lm import resolve_device

    from .local_structure_lm import score_texts
    from .local_structure_sets import read_texts

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
