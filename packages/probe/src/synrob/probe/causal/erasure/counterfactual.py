"""Counterfactual intervention on agreement pairs (AlterRep, Ravfogel et al. 2021): does moving
the subject's Number inside a causal LM flip the verb form the LM prefers?

Each pair is an original sentence and its twin from ``synrob perturb --kind agreement``, whose
``# synrob.agreement`` JSON names the agreeing word (``target``) and its ``subject`` (1-based
word IDs), the ``feature`` and the ``from`` and ``to`` values (the twin's target has the ``to``
value; its subject still has ``from``). Both sentences are tokenized word by word exactly as the
transformer encoder does (:func:`synrob.probe.encoders.transformer.word_tokens`: the same
word -> token alignment the eraser was fitted on, start token first), and each is scored as a
whole (summed token log-probability given the start token; :func:`synrob.perturb.lm.scoring.
causal_sequence_logprobs`). The LM **prefers the original** when its total is strictly higher.
Three conditions, on the same pairs:

* ``clean``: the model as it is;
* ``counterfactual``: at layer ``L`` the states of the subject's tokens are moved to the ``to``
  class along the eraser's subspace (:meth:`~synrob.probe.causal.erasure.Eraser.counterfactual`, the
  class mean of label ``to``), in both sentences of the pair: the subject comes before the
  target (pairs where it does not are set aside and counted), so its tokens and, in a causal
  LM, their states are the same in both;
* ``random``: the same tokens moved by the same distance (per token, the norm of the
  counterfactual's change) in a random direction: a standard normal vector per token, drawn by
  ``numpy.random.default_rng([seed, k])`` for the ``k``-th pair scored (0-based, in file
  order, after the pairs set aside) and scaled to unit length, the same in both sentences.

:func:`flip_summary` reports per condition the preference accuracy, and for ``counterfactual``
and ``random`` the **flip rate** (of the pairs whose original the clean LM prefers, the share
whose twin it prefers under the intervention) and the mean **shift** of the log-odds
``logP(twin) - logP(original)`` from clean (nats; positive: towards the twin), each with its
95 % interval, and the counterfactual's lead over random with a paired interval and the
one-sided p of "above 0": every statistic on the same cluster-bootstrap resamples of the source
sentences (as ``synrob score``).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from synrob.perturb.errors import ParameterError, SynrobError

from ...metrics.bootstrap import Resamples, cluster_indices, percentile_interval, source_clusters
from .eraser import Eraser
from .inside import _means, _ratios, paired_change

__all__ = ["AgreementPair", "FlipScore", "CONDITIONS", "agreement_pairs", "subject_first",
           "pair_sequences", "clean_logprobs", "counterfactual_scores", "flip_summary"]

CONDITIONS = ("clean", "counterfactual", "random")


@dataclass(frozen=True)
class AgreementPair:
    """An original sentence's words and its agreement twin's (one word differs): ``subject``
    and ``target`` are 0-based word indices, ``to`` the twin's value of ``feature``."""

    source: str
    sentence: str | None
    original: tuple[str, ...]
    flipped: tuple[str, ...]
    subject: int
    target: int
    feature: str
    to: str


@dataclass
class FlipScore:
    """Per condition, the total log-probabilities (nats) ``(original, twin)`` of one pair."""

    pair: AgreementPair
    logprob: dict[str, tuple[float, float]] = field(default_factory=dict)

    def prefers_original(self, condition: str) -> bool:
        lo, lf = self.logprob[condition]
        return lo > lf

    def log_odds(self, condition: str) -> float:
        """``logP(twin) - logP(original)`` under ``condition``."""
        lo, lf = self.logprob[condition]
        return lf - lo

    def as_dict(self) -> dict[str, Any]:
        """The JSON record of one pair."""
        p = self.pair
        return {"source": p.source, "sentence": p.sentence, "subject": p.subject + 1,
                "target": p.target + 1, "to": p.to,
                **{c: {"logprob_original": lo, "logprob_flipped": lf,
                       "prefers_original": lo > lf} for c, (lo, lf) in self.logprob.items()}}


def agreement_pairs(original: str | Path, perturbed: str | Path
                    ) -> tuple[list[AgreementPair], int]:
    """The agreement pairs of ``perturbed`` (its sentences with a ``# synrob.agreement``
    comment, matched to ``original`` by ``# synrob.source``) and how many of its sentences had
    no such comment. One :class:`SynrobError` line for a source not in ``original``, an
    unreadable comment, or a twin that differs from its original elsewhere than the target."""
    from synrob.perturb.corpus import read_conllu

    words = {}
    for k, s in enumerate(read_conllu(original)):
        words.setdefault(s.sent_id or f"s{k + 1}", tuple(s.forms))
    pairs, other = [], 0
    for k, s in enumerate(read_conllu(perturbed)):
        raw = s.metadata.get("synrob.agreement")
        if raw is None:
            other += 1
            continue
        where = f"{perturbed}: sentence {s.sent_id or k + 1}"
        src = s.metadata.get("synrob.source")
        if src not in words:
            raise SynrobError(f"{where} has synrob.source {src!r}, which is not a sent_id of "
                              f"{original}")
        try:
            info = json.loads(raw) if isinstance(raw, str) else dict(raw)
            subject, target = int(info["subject"]) - 1, int(info["target"]) - 1
            feature, to = str(info["feature"]), str(info["to"])
        except (ValueError, KeyError, TypeError) as exc:
            raise SynrobError(f"{where}: unreadable synrob.agreement ({exc})") from None
        orig, twin = words[src], tuple(s.forms)
        diff = [i for i in range(max(len(orig), len(twin)))
                if i >= min(len(orig), len(twin)) or orig[i] != twin[i]]
        if diff not in ([target], []) or not 0 <= subject < len(orig):
            raise SynrobError(f"{where}: not the agreement twin of {src} (words differ at "
                              f"{[i + 1 for i in diff]}, target {target + 1})")
        pairs.append(AgreementPair(src, s.sent_id, orig, twin, subject, target, feature, to))
    return pairs, other


def subject_first(pairs: Sequence[AgreementPair]) -> tuple[list[AgreementPair], int]:
    """The pairs whose subject comes before the target, and how many did not."""
    kept = [p for p in pairs if p.subject < p.target and p.original != p.flipped]
    return kept, len(pairs) - len(kept)


def _class_ids(eraser: Eraser, pairs: Sequence[AgreementPair]) -> list[int]:
    index = {label: k for k, label in enumerate(eraser.labels)}
    missing = sorted({p.to for p in pairs if p.to not in index})
    if missing:
        raise ParameterError(f"the eraser's classes ({', '.join(eraser.labels)}) have no "
                             f"{', '.join(missing)}: fit it on the pairs' feature")
    return [index[p.to] for p in pairs]


@dataclass
class _Prepared:
    """Token ids of each pair's two sentences (rows ``2k``, ``2k + 1``), the subject's token
    positions, its class id and the random unit directions (n_tokens, d) of each pair."""

    seqs: list[list[int]]
    subject: list[np.ndarray]
    target: list[int]
    dirs: list[np.ndarray]


def _prepare(lm: Any, pairs: Sequence[AgreementPair], eraser: Eraser, seed: int, first: int
             ) -> _Prepared:
    from ...encoders.transformer import word_tokens

    sents = [s for p in pairs for s in (p.original, p.flipped)]
    toks = word_tokens(lm.tokenizer, sents, causal=True, model=lm.spec)
    out = _Prepared([], [], _class_ids(eraser, pairs), [])
    for k, p in enumerate(pairs):
        (ids_o, wid_o), (ids_f, _) = toks[2 * k], toks[2 * k + 1]
        cut = int(np.flatnonzero(wid_o == p.target)[0])
        pos = np.flatnonzero(wid_o == p.subject)
        if not pos.size or not np.array_equal(ids_o[:cut], ids_f[:cut]) or pos.max() >= cut:
            raise SynrobError(f"pair {p.sentence or p.source}: the subject's tokens are not a "
                              "shared prefix of both sentences")
        out.seqs += [ids_o.tolist(), ids_f.tolist()]
        out.subject.append(pos)
        rng = np.random.default_rng([seed, first + k])
        d = rng.standard_normal((pos.size, eraser.dim))
        out.dirs.append(d / np.linalg.norm(d, axis=1, keepdims=True))
    return out


def _around(lm: Any, eraser: Eraser, layer: int, prep: _Prepared, condition: str) -> Any:
    """The :data:`synrob.perturb.lm.scoring.Around` of ``condition`` for these pairs."""
    import torch

    from ..intervene import intervene

    def around(rows: list[int], shape: tuple[int, int]) -> Any:
        mask = torch.zeros(shape, dtype=torch.bool)
        target, dirs = [], []
        for r, i in enumerate(rows):
            k = i // 2
            mask[r, torch.from_numpy(prep.subject[k])] = True
            target += [prep.target[k]] * prep.subject[k].size
            dirs.append(prep.dirs[k])
        tgt = torch.tensor(target, dtype=torch.int64)
        unit = torch.from_numpy(np.concatenate(dirs))

        def move(x: Any) -> Any:
            moved = eraser.counterfactual(x, tgt.to(x.device))
            if condition == "counterfactual":
                return moved
            size = (moved - x).norm(dim=-1, keepdim=True)
            return x + unit.to(x.device, x.dtype) * size

        return intervene(lm.model, layer, move, positions=mask.to(lm.device))

    return around


def pair_sequences(lm: Any, pairs: Sequence[AgreementPair]) -> list[list[int]]:
    """The token ids each pair's original and twin are scored on (rows ``2k`` and ``2k + 1``):
    word by word as the transformer encoder tokenizes them, start token first."""
    from ...encoders.transformer import word_tokens

    sents = [s for p in pairs for s in (p.original, p.flipped)]
    return [ids.tolist() for ids, _ in word_tokens(lm.tokenizer, sents, causal=True,
                                                   model=lm.spec)]


def clean_logprobs(lm: Any, seqs: Sequence[Sequence[int]], *, batch_size: int = 32,
                   max_tokens: int = 4096) -> list[tuple[float, float]]:
    """The ``clean`` condition's ``(original, twin)`` total log-probabilities of the pairs whose
    :func:`pair_sequences` are ``seqs``: the same numbers :func:`counterfactual_scores`
    computes, for its ``clean=`` (the clean pass does not depend on the layer or the
    eraser)."""
    from synrob.perturb.lm.scoring import causal_sequence_logprobs

    lp = causal_sequence_logprobs(lm, seqs, max_tokens=max_tokens, max_rows=batch_size)
    return [(lp[2 * k], lp[2 * k + 1]) for k in range(len(seqs) // 2)]


def counterfactual_scores(lm: Any, pairs: Sequence[AgreementPair], eraser: Eraser, layer: int,
                          *, seed: int = 0, first: int = 0, batch_size: int = 32,
                          max_tokens: int = 4096,
                          clean: Sequence[tuple[float, float]] | None = None
                          ) -> list[FlipScore]:
    """Score each pair (subject before target: :func:`subject_first`) under the three
    :data:`CONDITIONS` with a causal ``lm`` (:class:`~synrob.perturb.lm.loaded.LoadedLM`); ``first``
    is the index of ``pairs[0]`` among all the pairs (it seeds the random directions, so that
    scoring in chunks gives the same values). ``clean``: the pairs' :func:`clean_logprobs`,
    computed before (then the clean pass is not run again)."""
    from synrob.perturb.lm.scoring import causal_sequence_logprobs

    prep = _prepare(lm, pairs, eraser, seed, first)
    out = [FlipScore(p) for p in pairs]
    if clean is not None:
        if len(clean) != len(pairs):
            raise ParameterError(f"clean log-probabilities of {len(clean)} pairs given for "
                                 f"{len(pairs)} pairs")
        for score, (lo, lf) in zip(out, clean, strict=True):
            score.logprob["clean"] = (float(lo), float(lf))
    for condition in CONDITIONS:
        if condition == "clean" and clean is not None:
            continue
        around = None if condition == "clean" else _around(lm, eraser, layer, prep, condition)
        lp = causal_sequence_logprobs(lm, prep.seqs, max_tokens=max_tokens, max_rows=batch_size,
                                      around=around)
        for k, score in enumerate(out):
            score.logprob[condition] = (lp[2 * k], lp[2 * k + 1])
    return out


def flip_summary(scores: Sequence[FlipScore], *, n_boot: int = 1000, seed: int = 0
                 ) -> dict[str, Any]:
    """Accuracy per condition, flip rates and log-odds shifts with their intervals, and the
    counterfactual's lead over random (see the module docstring)."""
    clusters = source_clusters(np.array([s.pair.source for s in scores], dtype=object))
    idx: Resamples | None = (cluster_indices(clusters, n_boot, np.random.default_rng(seed))
                             if n_boot > 0 and clusters else None)
    prefers = {c: np.array([s.prefers_original(c) for s in scores], dtype=np.float64)
               for c in CONDITIONS}
    odds = {c: np.array([s.log_odds(c) for s in scores], dtype=np.float64) for c in CONDITIONS}
    base = prefers["clean"]

    def flip(c: str, r: Resamples | None) -> Any:
        hit = base * (1.0 - prefers[c])
        return (hit.sum() / base.sum()) if r is None else _ratios(hit, base, r)

    def shift(c: str, r: Resamples | None) -> Any:
        moved = odds[c] - odds["clean"]
        return moved.mean() if r is None else _means(moved, r)

    def interval(stat: Any, c: str) -> list[float]:
        return [float("nan")] * 2 if idx is None else percentile_interval(stat(c, idx))

    out: dict[str, Any] = {"pairs": len(scores), "sources": len(clusters),
                           "clean_prefers_original": int(base.sum())}
    for c in CONDITIONS:
        row: dict[str, Any] = {"accuracy": float(prefers[c].mean()) if scores else float("nan"),
                               "accuracy_ci95": interval(lambda c_, r: _means(prefers[c_], r), c)}
        if c != "clean":
            row |= {"flip_rate": float(flip(c, None)) if base.sum() else float("nan"),
                    "flip_rate_ci95": interval(flip, c),
                    "shift": float(shift(c, None)) if scores else float("nan"),
                    "shift_ci95": interval(shift, c)}
        out[c] = row
    if scores and base.sum():
        out["counterfactual_vs_random"] = {
            "flip_rate": paired_change(flip, "counterfactual", "random", idx,
                                       alternative="greater"),
            "shift": paired_change(shift, "counterfactual", "random", idx,
                                   alternative="greater")}
    return out
