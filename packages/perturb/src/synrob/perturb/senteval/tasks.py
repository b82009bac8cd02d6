"""The ten SentEval probing tasks (Conneau et al. 2018) built from treebank sentences.

Every builder takes the source sentences (:func:`~.source.load_sources`), a
:class:`random.Random` and its parameters, and returns a :class:`TaskBuild`: the examples
(``split, label, sentence``; classes balanced within every split, no sentence in two splits)
and an ``info`` dict of what was chosen (bins, words, classes, correlations). How each task is
made, and how it differs from the paper, is in ``docs/senteval.md``.
"""

from __future__ import annotations

import heapq
import math
import random
import re
from collections import Counter, defaultdict
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..base import sentence_rng
from .format import SPLITS, SentEvalExample
from .labels import (
    length_bin,
    length_bins,
    object_number,
    subject_number,
    tense,
    top_constituents,
    tree_depth,
)
from .source import SourceSentence
from .splits import DEFAULT_PROPORTIONS, balanced_split, grouped_split, split_sequence

__all__ = [
    "TaskBuild",
    "pearson",
    "sentence_length_task",
    "word_content_task",
    "tree_depth_task",
    "top_constituents_task",
    "bigram_shift_task",
    "lexical_task",
    "somo_task",
    "coordination_inversion_task",
]

Proportions = Sequence[float]


@dataclass
class TaskBuild:
    """The examples of one task (in split order tr, va, te) and what was chosen to make them."""

    name: str
    examples: list[SentEvalExample]
    info: dict[str, Any] = field(default_factory=dict)
    #: O/I tasks: each I example's ``{"split", "original", "modified"}`` (texts), in split order.
    pairs: list[dict[str, str]] = field(default_factory=list)


def pearson(xs: Sequence[float], ys: Sequence[float]) -> float:
    """Pearson correlation of two equally long sequences (0.0 when either is constant)."""
    n = len(xs)
    if n < 2:
        return 0.0
    mx, my = sum(xs) / n, sum(ys) / n
    sxy = sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True))
    sxx = sum((x - mx) ** 2 for x in xs)
    syy = sum((y - my) ** 2 for y in ys)
    if sxx == 0 or syy == 0:
        return 0.0
    return sxy / math.sqrt(sxx * syy)


def _examples(triples: Sequence[tuple[str, str, str]], rng: random.Random
              ) -> list[SentEvalExample]:
    """Examples grouped by split (tr, va, te), shuffled within each split."""
    out: list[SentEvalExample] = []
    for split in SPLITS:
        part = [SentEvalExample(s, label, text) for s, label, text in triples if s == split]
        rng.shuffle(part)
        out += part
    return out


# --------------------------------------------------------------------------- SentLen

def sentence_length_task(sources: Sequence[SourceSentence], rng: random.Random, *,
                         min_len: int = 5, max_len: int = 28, n_bins: int = 6,
                         proportions: Proportions = DEFAULT_PROPORTIONS) -> TaskBuild:
    """SentLen: the sentence's word-count bin (``0..n_bins-1``, equal-width bins)."""
    bins = length_bins(min_len, max_len, n_bins)
    by_class: dict[str, list[SourceSentence]] = {str(i): [] for i in range(len(bins))}
    for s in sources:
        b = length_bin(len(s), bins)
        if b is not None:
            by_class[str(b)].append(s)
    triples = balanced_split(by_class, rng, proportions=proportions)
    return TaskBuild("SentLen", _examples([(sp, c, s.text) for sp, c, s in triples], rng),
                     {"bins": {str(i): list(b) for i, b in enumerate(bins)}})


# --------------------------------------------------------------------------- WC

_ALPHA = re.compile(r"[a-z]+")


def word_content_task(sources: Sequence[SourceSentence], rng: random.Random, *,
                      per_word: int = 10, zipf_band: tuple[float, float] = (3.0, 5.0),
                      max_words: int = 1000,
                      proportions: Proportions = DEFAULT_PROPORTIONS,
                      lang: str = "en") -> TaskBuild:
    """WC: which of N mid-frequency words the sentence contains (it contains exactly one).

    Candidates are lowercased alphabetic word forms (English: ``[a-z]+``; another language:
    any letters) whose general frequency in language ``lang`` (``wordfreq`` Zipf value; a
    language ``wordfreq`` lacks is a :class:`SentEvalError`) lies in ``zipf_band`` and that
    occur in at least ``per_word`` sentences. Words are then dropped one at a time, the one
    with the fewest sentences that contain it and no other candidate first, until every
    remaining word has ``per_word`` such sentences; N is what remains (at most ``max_words``:
    the middle ones by treebank frequency). Each word gets exactly ``per_word`` sentences,
    split like every other class."""
    from wordfreq import available_languages, zipf_frequency

    if lang not in available_languages(wordlist="best"):
        from .format import SentEvalError

        raise SentEvalError(f"WC needs word frequencies of {lang}, which wordfreq does not have; "
                            "build the other tasks (--task)")
    alpha = _ALPHA.fullmatch if lang == "en" else str.isalpha
    present: list[set[str]] = []
    df: Counter[str] = Counter()
    for s in sources:
        ws = {low for w in s.words if alpha(low := w.form.lower())}
        present.append(ws)
        df.update(ws)
    lo, hi = zipf_band
    zipf = {w: zipf_frequency(w, lang) for w, c in df.items() if c >= per_word}
    band = {w for w, z in zipf.items() if lo <= z <= hi}
    occ: dict[str, list[int]] = defaultdict(list)
    for i, ws in enumerate(present):
        ws &= band
        for w in ws:
            occ[w].append(i)
    exclusive: Counter[str] = Counter(next(iter(ws)) for ws in present if len(ws) == 1)
    heap = [(exclusive[w], w) for w in band]
    heapq.heapify(heap)
    active = set(band)
    while heap:
        c, w = heapq.heappop(heap)
        if w not in active or c != exclusive[w]:
            continue  # stale entry
        if c >= per_word:
            break
        active.discard(w)
        for i in occ[w]:
            ws = present[i]
            ws.discard(w)
            if len(ws) == 1:
                x = next(iter(ws))
                exclusive[x] += 1
                heapq.heappush(heap, (exclusive[x], x))
    words = sorted(active, key=lambda w: (-df[w], w))
    if len(words) > max_words:
        start = (len(words) - max_words) // 2
        words = words[start:start + max_words]
    chosen = set(words)
    by_class: dict[str, list[SourceSentence]] = {w: [] for w in words}
    for s, ws in zip(sources, present, strict=True):
        hit = ws & chosen
        if len(hit) == 1:
            by_class[next(iter(hit))].append(s)
    triples = balanced_split(by_class, rng, proportions=proportions, per_class=per_word)
    ranks = {w: r for r, (w, _) in enumerate(df.most_common(), 1)}
    info: dict[str, Any] = {
        "n_words": len(words),
        "per_word": per_word,
        "zipf_band": [lo, hi],
        "zipf_range": [min((zipf[w] for w in words), default=None),
                       max((zipf[w] for w in words), default=None)],
        "treebank_sentence_freq_range": [min((df[w] for w in words), default=None),
                                         max((df[w] for w in words), default=None)],
        "treebank_rank_range": [min((ranks[w] for w in words), default=None),
                                max((ranks[w] for w in words), default=None)],
        "words": words,
    }
    return TaskBuild("WC", _examples([(sp, c, s.text) for sp, c, s in triples], rng), info)


# --------------------------------------------------------------------------- TreeDepth

def tree_depth_task(sources: Sequence[SourceSentence], rng: random.Random, *,
                    min_classes: int = 4,
                    proportions: Proportions = DEFAULT_PROPORTIONS) -> TaskBuild:
    """TreeDepth: the maximum depth of the dependency tree, decorrelated from length.

    Sentences are stratified by exact length: for every length the same number of sentences
    is drawn for every depth class (the smallest cell), so within the task every class has the
    same length distribution (and the depth-length correlation is 0 in every split). The
    classes are the contiguous depth range of at least ``min_classes`` values giving the most
    examples.

    Not the probe task ``tree-depth`` (the probe layer's ``CorpusTreeDepthTask``),
    which labels every sentence of a CoNLL-U file as it is, with no balancing or length control.
    """
    cells: dict[tuple[int, int], list[SourceSentence]] = defaultdict(list)
    for s in sources:
        cells[(tree_depth(s), len(s))].append(s)
    depths = sorted({d for d, _ in cells})
    lengths = sorted({n for _, n in cells})
    best: tuple[int, int, int] | None = None  # (total, n classes, -start)
    choice: list[int] = []
    for i, a in enumerate(depths):
        for b in depths[i + min_classes - 1:]:
            ds = list(range(a, b + 1))
            per = sum(min(len(cells.get((d, n), ())) for d in ds) for n in lengths)
            key = (per * len(ds), len(ds), -a)
            if per and (best is None or key > best):
                best, choice = key, ds
    triples: list[tuple[str, str, str]] = []
    offset = 0
    if choice:
        total = sum(min(len(cells.get((d, n), ())) for d in choice) for n in lengths)
        seq = split_sequence(total, proportions)
        for n in lengths:
            k = min(len(cells.get((d, n), ())) for d in choice)
            if not k:
                continue
            for d in choice:
                picked = rng.sample(cells[(d, n)], k)
                triples += [(seq[offset + j], str(d), s.text) for j, s in enumerate(picked)]
            offset += k
    all_depths = [tree_depth(s) for s in sources]
    all_lengths = [len(s) for s in sources]
    info = {
        "classes": [str(d) for d in choice],
        "depth_length_r_treebank": round(pearson(all_depths, all_lengths), 4),
        "depth_length_r_task": round(pearson([int(lab) for _, lab, _ in triples],
                                             [len(t.split(" ")) for _, _, t in triples]), 4),
    }
    return TaskBuild("TreeDepth", _examples(triples, rng), info)


# --------------------------------------------------------------------------- TopConst

def top_constituents_task(sources: Sequence[SourceSentence], rng: random.Random, *,
                          max_classes: int = 20, min_per_class: int = 100,
                          proportions: Proportions = DEFAULT_PROPORTIONS) -> TaskBuild:
    """TopConst: the sequence of top-level constituents (``NP_VP_.``), the K most frequent
    sequences plus ``OTHER``; K < ``max_classes`` is the largest with at least
    ``min_per_class`` sentences in the K-th class."""
    seqs = {s.index: top_constituents(s) for s in sources}
    freq = Counter(seqs.values()).most_common()
    k = 0
    while k < min(max_classes - 1, len(freq)) and freq[k][1] >= min_per_class:
        k += 1
    top = {c for c, _ in freq[:k]}
    by_class: dict[str, list[SourceSentence]] = {c: [] for c in top}
    if top:
        by_class["OTHER"] = []
    for s in sources:
        if top:
            c = seqs[s.index]
            by_class[c if c in top else "OTHER"].append(s)
    triples = balanced_split(by_class, rng, proportions=proportions)
    info = {"classes": [c for c, _ in freq[:k]] + (["OTHER"] if top else []),
            "distinct_sequences": len(freq),
            "treebank_counts": dict(freq[:k])}
    return TaskBuild("TopConst", _examples([(sp, c, s.text) for sp, c, s in triples], rng),
                     info)


# --------------------------------------------------------------------------- lexical tasks

def lexical_task(name: str, sources: Sequence[SourceSentence], rng: random.Random,
                 label_of: Callable[[SourceSentence], tuple[str, str] | None], *,
                 proportions: Proportions = DEFAULT_PROPORTIONS) -> TaskBuild:
    """Tense, SubjNum or ObjNum: ``label_of`` gives ``(label, target word)``; no target word
    occurs in two splits (:func:`grouped_split`), classes are balanced within each split."""
    items: list[tuple[str, Hashable, SourceSentence]] = []
    target: dict[int, str] = {}
    for s in sources:
        got = label_of(s)
        if got is not None:
            label, word = got
            items.append((label, word, s))
            target[s.index] = word
    triples = grouped_split(items, rng, proportions=proportions)
    targets = {sp: sorted({target[s.index] for x, _, s in triples if x == sp}) for sp in SPLITS}
    info = {"qualifying": dict(Counter(label for label, _, _ in items)),
            "target_words": {sp: len(v) for sp, v in targets.items()}}
    return TaskBuild(name, _examples([(sp, c, s.text) for sp, c, s in triples], rng), info)


# --------------------------------------------------------------------------- O/I tasks

Modifier = Callable[[str, SourceSentence], "str | None"]


def _original_vs_modified(name: str, candidates: Sequence[SourceSentence],
                          rng: random.Random, modify: Modifier,
                          proportions: Proportions,
                          on_modified: Callable[[str, SourceSentence], None] | None = None,
                          ) -> TaskBuild:
    """O (original) vs I (modified) from disjoint source sentences, half each per split.

    Candidates are shuffled and spread over the splits. Within a split every source is
    modified (``modify(split, source)``; None when it cannot be); sources that cannot be
    modified, or whose modification leaves the text unchanged (two identical words swapped),
    are dropped. Of the modifiable ones, in their shuffled order, the first half are the I
    examples (modified text) and the next half the O examples (original text): an original is
    always a sentence the generator could have modified, so "cannot be modified" never marks
    the O class, and no I sentence reads like its original. ``on_modified(split, source)`` is
    called for each source used as an I example, split by split in the order tr, va, te
    (before the next split is modified). The build's ``pairs`` keep each I example's original
    text (what behavioural scores compare it with: :func:`~.build.write_suite`).
    """
    cands = list(candidates)
    rng.shuffle(cands)
    seq = split_sequence(len(cands), proportions)
    triples: list[tuple[str, str, str]] = []
    pairs: list[dict[str, str]] = []
    failed = 0
    for split in SPLITS:
        modifiable: list[tuple[SourceSentence, str]] = []
        for s, sp in zip(cands, seq, strict=True):
            if sp != split:
                continue
            text = modify(split, s)
            if text is None or text == s.text:
                failed += 1
            else:
                modifiable.append((s, text))
        m = len(modifiable) // 2
        triples += [(split, "I", text) for _, text in modifiable[:m]]
        triples += [(split, "O", s.text) for s, _ in modifiable[m:2 * m]]
        pairs += [{"split": split, "original": s.text, "modified": text}
                  for s, text in modifiable[:m]]
        if on_modified is not None:
            for s, _ in modifiable[:m]:
                on_modified(split, s)
    return TaskBuild(name, _examples(triples, rng),
                     {"candidates": len(cands), "not_modifiable": failed}, pairs)


def bigram_shift_task(sources: Sequence[SourceSentence], rng: random.Random, seed: int, *,
                      proportions: Proportions = DEFAULT_PROPORTIONS) -> TaskBuild:
    """BShift: two adjacent words inverted (I) or not (O), with the ``bshift`` perturber
    (default parameters: no pair holding punctuation is swapped)."""
    from ..perturbers.order import BShift

    perturber = BShift()
    no_pair = identical = 0

    def modify(split: str, s: SourceSentence) -> str | None:
        nonlocal no_pair, identical
        p = perturber.perturb(s.sentence(), sentence_rng(seed, s.index, 101))
        if p.label == "I" and p.sentence:
            return " ".join(p.sentence.forms)
        if p.note == "the drawn pair holds two identical words":
            identical += 1
        else:
            no_pair += 1
        return None

    build = _original_vs_modified("BShift", sources, rng, modify, proportions)
    build.info["no_word_pair"] = no_pair  # sources without two adjacent non-PUNCT words
    build.info["identical_pair"] = identical  # the drawn pair holds two identical forms
    return build


def somo_task(sources: Sequence[SourceSentence], rng: random.Random, seed: int,
              table: Any, *, tolerance: float = 1.0,
              proportions: Proportions = DEFAULT_PROPORTIONS) -> TaskBuild:
    """SOMO: one NOUN/VERB replaced (I) by the ``somo`` perturber, or not (O).

    ``table`` is the :class:`~synrob.perturb.perturbers.senteval.BigramTable` of the treebanks.
    A word used as a replacement in an I example of one split is excluded as a replacement in
    the later ones (``Somo.exclude``), so no replacement word occurs in two splits. An O
    sentence is one the split's perturber could modify too (:func:`_original_vs_modified`).
    """
    from ..perturbers.senteval import Somo

    used: dict[str, set[str]] = {sp: set() for sp in SPLITS}
    perturbers: dict[str, Somo] = {}
    replacement: dict[int, str] = {}  # source index -> replacement word, for every split

    def modify(split: str, s: SourceSentence) -> str | None:
        if split not in perturbers:
            earlier = set().union(*(used[sp] for sp in SPLITS if sp != split))
            perturbers[split] = Somo.with_table(table, exclude=earlier, tolerance=tolerance)
        p = perturbers[split].perturb(s.sentence(), sentence_rng(seed, s.index, 102))
        if p.label != "I" or p.sentence is None:
            return None
        replacement[s.index] = p.extra["replacement"].lower()
        return " ".join(p.sentence.forms)

    def on_modified(split: str, s: SourceSentence) -> None:
        used[split].add(replacement[s.index])

    cands = [s for s in sources if any(w.upos in ("NOUN", "VERB") for w in s.words)]
    build = _original_vs_modified("SOMO", cands, rng, modify, proportions, on_modified)
    build.info["replacement_words"] = {sp: len(v) for sp, v in used.items()}
    build.info["tolerance"] = tolerance
    return build


def _may_coordinate(s: SourceSentence) -> bool:
    """Cheap filter: the root has a ``conj`` dependent with a subject of its own."""
    r = s.root()
    kids = s.children()
    return any(s.words[k].deprel == "conj"
               and any(s.words[c].deprel.split(":", 1)[0] in ("nsubj", "expl") for c in kids[k])
               for k in kids[r])


def coordination_inversion_task(sources: Sequence[SourceSentence], rng: random.Random,
                                seed: int, *,
                                proportions: Proportions = DEFAULT_PROPORTIONS) -> TaskBuild:
    """CoordInv: the two coordinate clauses swapped (I) by the ``coordinv`` perturber, or not
    (O); only sentences made of two coordinate clauses qualify (both O and I)."""
    from ..perturbers.senteval import CoordInv, find_coordinate_clauses

    perturber = CoordInv()
    cands = [s for s in sources
             if _may_coordinate(s) and find_coordinate_clauses(s.sentence()) is not None]

    def modify(split: str, s: SourceSentence) -> str | None:
        p = perturber.perturb(s.sentence(), sentence_rng(seed, s.index, 103))
        return " ".join(p.sentence.forms) if p.label == "I" and p.sentence else None

    return _original_vs_modified("CoordInv", cands, rng, modify, proportions)


LEXICAL_LABELS: dict[str, Callable[[SourceSentence], tuple[str, str] | None]] = {
    "Tense": tense,
    "SubjNum": subject_number,
    "ObjNum": object_number,
}
