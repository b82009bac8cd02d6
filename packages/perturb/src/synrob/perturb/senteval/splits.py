"""Balanced train/dev/test assignment for the SentEval tasks.

* :func:`split_sequence` spreads ``n`` items over the splits in given proportions, interleaved
  (item ``j`` of every class gets the same split, so classes stay balanced within each split);
* :func:`balanced_split` downsamples every class to the smallest class and splits it;
* :func:`grouped_split` keeps every group (a target word) inside one split, then balances the
  classes within each split (the lexical control of Tense, SubjNum and ObjNum).
"""

from __future__ import annotations

import random
from collections import Counter, defaultdict
from collections.abc import Hashable, Mapping, Sequence
from typing import TypeVar

from .format import SPLITS

__all__ = ["DEFAULT_PROPORTIONS", "split_sequence", "balanced_split", "grouped_split"]

T = TypeVar("T")

#: Train/dev/test shares (SentEval's 100k/10k/10k is 10:1:1; here 80/10/10).
DEFAULT_PROPORTIONS: tuple[float, float, float] = (0.8, 0.1, 0.1)


def split_sequence(n: int, proportions: Sequence[float] = DEFAULT_PROPORTIONS) -> list[str]:
    """``n`` split codes in the given proportions, interleaved (largest-deficit first).

    >>> split_sequence(10)
    ['tr', 'tr', 'tr', 'va', 'tr', 'tr', 'te', 'tr', 'tr', 'tr']
    """
    total = float(sum(proportions))
    shares = [p / total for p in proportions]
    counts = [0] * len(SPLITS)
    out: list[str] = []
    for j in range(n):
        deficits = [shares[s] * (j + 1) - counts[s] for s in range(len(SPLITS))]
        s = max(range(len(SPLITS)), key=lambda i: (deficits[i], -i))
        counts[s] += 1
        out.append(SPLITS[s])
    return out


def balanced_split(by_class: Mapping[str, Sequence[T]], rng: random.Random, *,
                   proportions: Sequence[float] = DEFAULT_PROPORTIONS,
                   per_class: int | None = None) -> list[tuple[str, str, T]]:
    """``(split, label, item)`` triples: every class downsampled to the same size, then split.

    The size is the smallest class (or ``per_class`` when smaller); items are drawn at random.
    """
    labels = sorted(by_class)
    m = min((len(by_class[c]) for c in labels), default=0)
    if per_class is not None:
        m = min(m, per_class)
    seq = split_sequence(m, proportions)
    out: list[tuple[str, str, T]] = []
    for c in labels:
        items = list(by_class[c])
        rng.shuffle(items)
        out += [(seq[j], c, items[j]) for j in range(m)]
    return out


def grouped_split(items: Sequence[tuple[str, Hashable, T]], rng: random.Random, *,
                  proportions: Sequence[float] = DEFAULT_PROPORTIONS
                  ) -> list[tuple[str, str, T]]:
    """Split ``(label, group, item)`` so that no group occurs in two splits, classes balanced.

    Groups are assigned whole, largest first (ties in random order), each to the split whose
    per-class quotas it fills best; then within each split every class is downsampled at random
    to the split's smallest class.
    """
    groups: dict[Hashable, list[tuple[str, T]]] = defaultdict(list)
    for label, group, item in items:
        groups[group].append((label, item))
    labels = sorted({label for label, _, _ in items})
    totals = Counter(label for label, _, _ in items)
    total_p = float(sum(proportions))
    quota = [{c: proportions[s] / total_p * totals[c] for c in labels} for s in range(len(SPLITS))]
    filled = [Counter() for _ in SPLITS]
    keys = list(groups)
    rng.shuffle(keys)
    keys.sort(key=lambda g: -len(groups[g]))
    assigned: dict[str, list[tuple[str, T]]] = {s: [] for s in SPLITS}
    for g in keys:
        size = Counter(label for label, _ in groups[g])

        def gain(s: int, size: Counter = size) -> float:
            return sum(n * (quota[s][c] - filled[s][c]) / max(quota[s][c], 1.0)
                       for c, n in size.items())

        s = max(range(len(SPLITS)), key=lambda i: (gain(i), -i))
        filled[s].update(size)
        assigned[SPLITS[s]] += groups[g]
    out: list[tuple[str, str, T]] = []
    for split in SPLITS:
        by_class: dict[str, list[T]] = {c: [] for c in labels}
        for label, item in assigned[split]:
            by_class[label].append(item)
        m = min((len(v) for v in by_class.values()), default=0)
        for c in labels:
            chosen = rng.sample(by_class[c], m)
            out += [(split, c, item) for item in chosen]
    return out
