"""Behavioural scores on minimal pairs: does a language model prefer the original sentence?

BLiMP / SyntaxGym style scoring of the pairs synrob generates (BShift, SOMO, CoordInv,
Jabberwocky, any perturber): each side of a pair is scored by
:func:`synrob.perturb.lm.scoring.sentence_logprobs` (causal LMs: summed token log-probability given
BOS; masked LMs: pseudo-log-likelihood), and the model **prefers the original** when the
original's total log-probability is strictly higher (a tie is not a preference).

* :func:`pair_sentences` aligns a perturbed CoNLL-U file with its original: by the
  ``# synrob.source`` comments that ``synrob perturb`` writes (several variants of a sentence
  make several pairs), else by position (the files must then hold as many sentences).
* Pairs whose two texts are identical (the perturber left the sentence unchanged, label ``O``)
  carry no preference: :func:`split_unchanged` sets them aside and the summary counts them.
* :func:`preference_summary` gives the preference accuracy over the scored pairs with a seeded
  percentile bootstrap interval that resamples the source sentences, each with all its scored
  pairs (a cluster bootstrap, :mod:`synrob.probe.metrics.bootstrap`: variants are not independent).
* :func:`agreement_breakdown` gives the same accuracy and interval per bucket of an agreement
  pair's subject-verb distance (1, 2-3, 4+) and attractors (0, 1+), read from the pairs'
  ``synrob.agreement`` metadata (:func:`agreement_metadata` of a CoNLL-U file; a pairs file's
  ``synrob`` column, :func:`pairs_from_file`).
* The preference is decided on the summed log-probability (:data:`NORMALISATIONS` ``sum``);
  :func:`normalised_summary` gives the accuracy under each length normalisation too: per
  token (the LM's scored tokens), per character (lm-eval's ``acc_norm``) and per UTF-8 byte
  (lm-eval's ``acc_bytes``) of each side's text.
* :func:`pairs_from_file` reads the pairs of a MultiBLiMP TSV or a BLiMP JSONL file
  (:mod:`synrob.perturb.io.pairs`) as :class:`SentencePair` objects: the grammatical sentence
  is the original, the ungrammatical one the perturbed.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..metrics.bootstrap import cluster_indices, percentile_interval, source_clusters

__all__ = ["SentencePair", "PairScore", "pair_sentences", "split_unchanged", "score_pairs",
           "score_chunked", "check_score_options", "preference_summary", "DISTANCE_BUCKETS",
           "ATTRACTOR_BUCKETS", "distance_bucket", "attractor_bucket", "agreement_breakdown",
           "NORMALISATIONS", "normalised_summary", "agreement_metadata", "pairs_from_file",
           "check_pair_inputs"]

#: How a side's log-probability is compared: the sum (the preference of ``prefers_original``),
#: or divided by the side's length in the LM's scored tokens, in characters or in UTF-8 bytes.
NORMALISATIONS = ("sum", "per_token", "per_char", "per_byte")


@dataclass(frozen=True)
class SentencePair:
    """An original sentence and one perturbed version of it."""

    source: str  # the original's sent_id (or s{k+1} for an unnamed sentence)
    sentence: str | None  # the perturbed sentence's sent_id
    original: str  # texts (the ``# text`` comments)
    perturbed: str


@dataclass(frozen=True)
class PairScore:
    """Log-probabilities (nats) and token counts of both sides of a pair."""

    pair: SentencePair
    logprob_original: float
    logprob_perturbed: float
    tokens_original: int
    tokens_perturbed: int

    @property
    def prefers_original(self) -> bool:
        """Strictly higher total log-probability for the original (ties: False)."""
        return self.logprob_original > self.logprob_perturbed

    def lengths(self, normalisation: str) -> tuple[int, int]:
        """(original, perturbed) lengths a normalisation divides by (``sum``: 1, 1)."""
        if normalisation == "per_token":
            return self.tokens_original, self.tokens_perturbed
        if normalisation == "per_char":
            return len(self.pair.original), len(self.pair.perturbed)
        if normalisation == "per_byte":
            return (len(self.pair.original.encode("utf-8")),
                    len(self.pair.perturbed.encode("utf-8")))
        return 1, 1

    def normalised(self, normalisation: str) -> tuple[float, float]:
        """(original, perturbed) log-probability under a normalisation (NaN for length 0)."""
        n_o, n_p = self.lengths(normalisation)
        return _mean(self.logprob_original, n_o), _mean(self.logprob_perturbed, n_p)

    def prefers(self, normalisation: str = "sum") -> bool:
        """Strictly higher normalised log-probability for the original (ties, NaN: False)."""
        o, p = self.normalised(normalisation)
        return o > p

    def as_dict(self) -> dict[str, Any]:
        """The JSON record of one pair (per-token means are NaN for an empty text)."""
        return {
            "source": self.pair.source,
            "sentence": self.pair.sentence,
            "logprob_original": self.logprob_original,
            "logprob_perturbed": self.logprob_perturbed,
            "logprob_per_token_original": _mean(self.logprob_original, self.tokens_original),
            "logprob_per_token_perturbed": _mean(self.logprob_perturbed, self.tokens_perturbed),
            "tokens_original": self.tokens_original,
            "tokens_perturbed": self.tokens_perturbed,
            "chars_original": len(self.pair.original),
            "chars_perturbed": len(self.pair.perturbed),
            "bytes_original": len(self.pair.original.encode("utf-8")),
            "bytes_perturbed": len(self.pair.perturbed.encode("utf-8")),
            "prefers_original": self.prefers_original,
            **{f"prefers_original_{n}": self.prefers(n) for n in NORMALISATIONS[1:]},
        }


def _mean(total: float, n: int) -> float:
    return total / n if n else float("nan")


def _read(path: str | Path) -> list[tuple[str, str | None, str | None, str]]:
    """(key, synrob.source, sent_id, text) per sentence; key = sent_id, else ``s{k+1}``."""
    from synrob.perturb.corpus import read_conllu

    return [(s.sent_id or f"s{k + 1}", s.metadata.get("synrob.source"), s.sent_id, s.text)
            for k, s in enumerate(read_conllu(path))]


def pair_sentences(original: str | Path, perturbed: str | Path
                   ) -> tuple[list[SentencePair], str]:
    """The aligned pairs, in the perturbed file's order, and how they were aligned
    (``"source"`` or ``"position"``). Raises :class:`SynrobError` (one line) when a
    ``synrob.source`` names no sentence of ``original``, or when files without
    ``synrob.source`` comments hold different numbers of sentences."""
    from synrob.perturb.errors import SynrobError

    orig, pert = _read(original), _read(perturbed)
    if any(src is not None for _, src, _, _ in pert):
        texts: dict[str, str] = {}
        for key, _, _, text in orig:
            texts.setdefault(key, text)
        pairs = []
        for key, src, sid, text in pert:
            if src is None or src not in texts:
                raise SynrobError(f"{perturbed}: sentence {sid or key} has synrob.source "
                                  f"{src!r}, which is not a sent_id of {original}")
            pairs.append(SentencePair(src, sid, texts[src], text))
        return pairs, "source"
    if len(orig) != len(pert):
        raise SynrobError(f"files are not aligned: {original} has {len(orig)} sentences, "
                          f"{perturbed} has {len(pert)} and no synrob.source comments")
    return [SentencePair(o[0], p[2], o[3], p[3]) for o, p in zip(orig, pert, strict=True)], \
        "position"


def agreement_metadata(perturbed: str | Path) -> dict[str, dict[str, Any]]:
    """Each sentence's ``# synrob.agreement`` JSON (``synrob perturb --kind agreement``), by
    its ``sent_id``; sentences without one are left out. A comment that is not a JSON object
    is a :class:`~synrob.perturb.errors.SynrobError` naming the sentence."""
    import json

    from synrob.perturb.corpus import read_conllu
    from synrob.perturb.errors import SynrobError

    out: dict[str, dict[str, Any]] = {}
    for s in read_conllu(perturbed):
        raw = s.metadata.get("synrob.agreement")
        if raw is None or s.sent_id is None:
            continue
        try:
            value = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise SynrobError(f"{perturbed}: sentence {s.sent_id}: synrob.agreement is not "
                              f"JSON ({exc.msg})") from None
        if not isinstance(value, dict):
            raise SynrobError(f"{perturbed}: sentence {s.sent_id}: synrob.agreement is not "
                              "a JSON object")
        out[s.sent_id] = value
    return out


def pairs_from_file(path: str | Path) -> tuple[list[SentencePair], dict[str, dict[str, Any]],
                                                str]:
    """The pairs of a MultiBLiMP TSV or BLiMP JSONL file (:func:`synrob.perturb.io.pairs.
    read_pairs`: the grammatical sentence as the original), their ``synrob.agreement``
    metadata by pair id (pairs synrob wrote), and the file's format."""
    from synrob.perturb.io.pairs import read_pairs

    read = read_pairs(path)
    pairs = [SentencePair(i.source, i.id, i.good, i.bad) for i in read.items]
    meta = {i.id: i.agreement for i in read.items if i.agreement is not None}
    return pairs, meta, read.format


def check_pair_inputs(original: Any, perturbed: Any, pairs: Any) -> None:
    """Either both CoNLL-U files (original and perturbed) or a pairs file, else a
    :class:`~synrob.perturb.errors.ParameterError` of one line."""
    from synrob.perturb.errors import ParameterError, arg

    conllu = [x for x in (original, perturbed) if x is not None]
    if pairs is not None and conllu:
        raise ParameterError(f"{arg('pairs', 'FILE')} replaces the CoNLL-U pairs (ORIGINAL "
                             "PERTURBED): give one or the other")
    if pairs is None and len(conllu) != 2:
        raise ParameterError("give the CoNLL-U pairs (ORIGINAL and PERTURBED) or a MultiBLiMP "
                             f"or BLiMP file with {arg('pairs', 'FILE')}")


def split_unchanged(pairs: Sequence[SentencePair]) -> tuple[list[SentencePair], int]:
    """The pairs whose texts differ, and how many were identical (skipped: no preference)."""
    kept = [p for p in pairs if p.original != p.perturbed]
    return kept, len(pairs) - len(kept)


def score_pairs(lm: Any, pairs: Sequence[SentencePair], *, batch_size: int = 32,
                max_tokens: int = 4096) -> list[PairScore]:
    """Score both sides of each pair with ``lm`` (a :class:`~synrob.perturb.lm.loaded.LoadedLM`).

    ``batch_size`` bounds the rows of a forward pass, ``max_tokens`` its padded tokens.
    """
    from synrob.perturb.lm.scoring import sentence_logprobs

    texts = [p.original for p in pairs] + [p.perturbed for p in pairs]
    logprob, tokens = sentence_logprobs(lm, texts, max_tokens=max_tokens, max_rows=batch_size)
    n = len(pairs)
    return [PairScore(p, logprob[i], logprob[n + i], tokens[i], tokens[n + i])
            for i, p in enumerate(pairs)]


def score_chunked(lm: Any, pairs: Sequence[SentencePair], *, batch_size: int = 32,
                  chunk: int = 64, progress: Callable[[int, int], None] | None = None
                  ) -> list[PairScore]:
    """:func:`score_pairs` of ``chunk`` pairs at a time, calling ``progress(done, total)``
    after each (``synrob score``'s progress bar; the API's ``progress=``)."""
    scores: list[PairScore] = []
    for i in range(0, len(pairs), chunk):
        scores.extend(score_pairs(lm, pairs[i:i + chunk], batch_size=batch_size))
        if progress is not None:
            progress(len(scores), len(pairs))
    return scores


def check_score_options(bootstrap: int, batch_size: int, limit: int | None) -> None:
    """``synrob score``'s numeric options (the API's keywords of the same names) are in range,
    or a :class:`~synrob.perturb.errors.ParameterError` naming the first that is not."""
    from synrob.perturb.errors import ParameterError, arg

    if bootstrap < 0:
        raise ParameterError(f"{arg('bootstrap')} must be 0 or more, not {bootstrap}")
    if batch_size < 1:
        raise ParameterError(f"{arg('batch_size')} must be at least 1, not {batch_size}")
    if limit is not None and limit < 1:
        raise ParameterError(f"{arg('limit')} must be at least 1, not {limit}")


def preference_summary(scores: Sequence[PairScore], *, n_boot: int = 1000, seed: int = 0
                       ) -> dict[str, Any]:
    """Preference accuracy over ``scores`` with its 95 % percentile bootstrap interval.

    The interval resamples the pairs' source sentences with replacement, each with all its
    pairs (:func:`~synrob.probe.metrics.bootstrap.cluster_indices` over
    :func:`~synrob.probe.metrics.bootstrap.source_clusters` of the pairs' sources; ``n_boot`` resamples
    drawn by ``numpy.random.default_rng(seed)``): with one pair per source, the resample of the
    pairs themselves. With no pair or ``n_boot`` 0 it is ``[nan, nan]``.
    """
    prefers = np.array([s.prefers_original for s in scores], dtype=np.float64)
    n = prefers.size
    interval = _cluster_interval(prefers, [s.pair.source for s in scores], n_boot, seed)
    lo = np.array([s.logprob_original for s in scores], dtype=np.float64)
    lp = np.array([s.logprob_perturbed for s in scores], dtype=np.float64)
    return {
        "pairs": n,
        "preferred": int(prefers.sum()),
        "ties": int(np.sum(lo == lp)),
        "accuracy": float(prefers.mean()) if n else float("nan"),
        "accuracy_ci95": interval,
        "mean_logprob_original": float(lo.mean()) if n else float("nan"),
        "mean_logprob_perturbed": float(lp.mean()) if n else float("nan"),
        "logprob_per_token_original": _mean(float(lo.sum()),
                                            sum(s.tokens_original for s in scores)),
        "logprob_per_token_perturbed": _mean(float(lp.sum()),
                                             sum(s.tokens_perturbed for s in scores)),
    }


def normalised_summary(scores: Sequence[PairScore], *, n_boot: int = 1000, seed: int = 0
                       ) -> dict[str, dict[str, Any]]:
    """For each length normalisation but ``sum`` (:data:`NORMALISATIONS`): the pairs whose
    original has the higher normalised log-probability (``preferred``), ``ties``, the
    ``accuracy`` and its interval, the bootstrap of :func:`preference_summary` (the same
    resamples for every normalisation)."""
    out: dict[str, dict[str, Any]] = {}
    sources = [s.pair.source for s in scores]
    for norm in NORMALISATIONS[1:]:
        pairs = [s.normalised(norm) for s in scores]
        prefers = np.array([o > p for o, p in pairs], dtype=np.float64)
        out[norm] = {"preferred": int(prefers.sum()), "ties": sum(o == p for o, p in pairs),
                     "accuracy": float(prefers.mean()) if prefers.size else float("nan"),
                     "accuracy_ci95": _cluster_interval(prefers, sources, n_boot, seed)}
    return out


def _cluster_interval(prefers: np.ndarray, sources: Sequence[str], n_boot: int, seed: int
                      ) -> list[float]:
    """The 95 % percentile interval of the mean of ``prefers`` (m,) over ``n_boot`` resamples
    of the ``sources`` (m,), each drawn with all its pairs (``default_rng(seed)``);
    ``[nan, nan]`` with no pair or no resample."""
    if not prefers.size or n_boot <= 0:
        return [float("nan"), float("nan")]
    src = np.array(list(sources), dtype=object)
    idx = cluster_indices(source_clusters(src), n_boot, np.random.default_rng(seed))
    means = (prefers[idx].mean(axis=1) if isinstance(idx, np.ndarray)
             else np.array([prefers[r].mean() for r in idx]))
    return percentile_interval(means, 0.95)


# ------------------------------------------------------------------ agreement breakdowns
#: The buckets of an agreement pair's linear subject-verb distance (in words) and of its
#: number of attractors (Linzen, Dupoux & Goldberg 2016), in the order they are reported.
DISTANCE_BUCKETS = ("1", "2-3", "4+")
ATTRACTOR_BUCKETS = ("0", "1+")


def distance_bucket(distance: int) -> str:
    """The bucket of a subject-verb distance >= 1: ``1``, ``2-3`` or ``4+``."""
    return "1" if distance <= 1 else "2-3" if distance <= 3 else "4+"


def attractor_bucket(attractors: int) -> str:
    """The bucket of an attractor count >= 0: ``0`` or ``1+``."""
    return "0" if attractors == 0 else "1+"


def _counts(meta: Mapping[str, Any] | None, pair: str | None) -> tuple[int, int] | None:
    """``(distance, attractors)`` of one pair's ``synrob.agreement`` dict; None when it has
    none (or lacks either key); a :class:`~synrob.perturb.errors.SynrobError` naming the pair
    when a value is out of range."""
    from synrob.perturb.errors import SynrobError

    if meta is None or "distance" not in meta or "attractors" not in meta:
        return None
    d, a = meta["distance"], meta["attractors"]
    ok = all(isinstance(v, int) and not isinstance(v, bool) for v in (d, a))
    if not ok or d < 1 or a < 0:
        raise SynrobError(f"pair {pair}: synrob.agreement has distance {d!r} and attractors "
                          f"{a!r}, not an integer >= 1 and an integer >= 0")
    return d, a


def agreement_breakdown(scores: Sequence[PairScore], metadata: Mapping[str, Mapping[str, Any]],
                        *, n_boot: int = 1000, seed: int = 0) -> dict[str, Any]:
    """Preference accuracy of agreement pairs by subject-verb distance and by attractors.

    ``metadata`` maps a pair's perturbed-sentence id (``PairScore.pair.sentence``) to its
    ``synrob.agreement`` dict, whose ``distance`` (int >= 1, in words) and ``attractors``
    (int >= 0) place the pair in a bucket of :data:`DISTANCE_BUCKETS` and one of
    :data:`ATTRACTOR_BUCKETS`. Each bucket gets ``{"n", "accuracy", "ci95"}``: its pairs, the
    share that prefer the original, and the 95 % percentile bootstrap interval that
    :func:`preference_summary` computes, over the bucket's own pairs (its source sentences
    resampled, each with all its pairs in the bucket; ``n_boot`` resamples, each bucket's
    drawn by ``numpy.random.default_rng(seed)``). A bucket without pairs has ``n`` 0
    and NaN accuracy and interval. ``pairs_without_metadata`` counts the pairs with no entry
    (or one without both keys): they are in no bucket.
    """
    groups: dict[tuple[str, str], list[PairScore]] = {
        **{("distance", b): [] for b in DISTANCE_BUCKETS},
        **{("attractors", b): [] for b in ATTRACTOR_BUCKETS}}
    missing = 0
    for s in scores:
        sid = s.pair.sentence
        counts = _counts(metadata.get(sid) if sid is not None else None, sid)
        if counts is None:
            missing += 1
            continue
        groups[("distance", distance_bucket(counts[0]))].append(s)
        groups[("attractors", attractor_bucket(counts[1]))].append(s)
    out: dict[str, Any] = {"distance": {}, "attractors": {}}
    for (axis, bucket), members in groups.items():
        prefers = np.array([s.prefers_original for s in members], dtype=np.float64)
        out[axis][bucket] = {
            "n": int(prefers.size),
            "accuracy": float(prefers.mean()) if prefers.size else float("nan"),
            "ci95": _cluster_interval(prefers, [s.pair.source for s in members], n_boot, seed)}
    out["pairs_without_metadata"] = missing
    return out
