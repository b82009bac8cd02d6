"""SentEval generators that need more than a word swap: SOMO and CoordInv (Conneau et al. 2018).

* ``somo`` replaces one random NOUN or VERB by another word of the same UPOS and XPOS whose
  bigrams with the left and right neighbours have about the same corpus frequency as the
  original bigrams. Frequencies come from a :class:`BigramTable` built from reference CoNLL-U
  files (``-p reference=PATH[,PATH...]``; ``synrob perturb`` passes its own inputs when the
  parameter is not given) or handed over ready-made (``Somo(table=...)``).
* ``coordinv`` swaps the two clauses of a sentence made of two coordinate clauses, keeping the
  tree with its words and fixing capitalisation and punctuation spacing.

Both label their outputs ``I`` (modified/inverted) or ``O`` (left unchanged, with a ``note``).
"""

from __future__ import annotations

import math
import random
import re
import threading
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import tree as _tree
from ..base import Perturbation, Perturber
from ..corpus import Sentence, Word, _set_space_after
from ..errors import ConlluError, ParameterError
from ..morphology import match_case
from ..params import Param

__all__ = ["BigramTable", "Somo", "CoordInv", "BOS", "EOS", "PERTURBERS"]

#: Pseudo-words standing for the sentence boundaries in bigrams.
BOS = "<s>"
EOS = "</s>"

_WORD_RE = re.compile(r"[a-z]+(?:[-'][a-z]+)*")
_SOMO_UPOS = ("NOUN", "VERB")

Tag = tuple[str, str]  # (UPOS, XPOS)


def _eligible_form(lower: str) -> bool:
    """Whether a lowercased form can be replaced or be a replacement (letters, - and ' only)."""
    return _WORD_RE.fullmatch(lower) is not None


@dataclass
class BigramTable:
    """Bigram counts of a reference corpus plus its NOUN/VERB vocabulary by (UPOS, XPOS).

    Forms are lowercased; the sentence boundaries are :data:`BOS` and :data:`EOS`. For every tag
    ``(UPOS, XPOS)`` of a NOUN or VERB, ``vocab[tag]`` lists the eligible forms seen with it,
    ``followers[tag][left]`` those seen right after ``left`` and ``predecessors[tag][right]``
    those seen right before ``right``; ``analyses[(form, upos, xpos)]`` is the most frequent
    ``(lemma, feats)`` of that form with that tag.
    """

    counts: dict[tuple[str, str], int]
    vocab: dict[Tag, list[str]]
    followers: dict[Tag, dict[str, list[str]]]
    predecessors: dict[Tag, dict[str, list[str]]]
    analyses: dict[tuple[str, str, str], tuple[str, str]]
    sentences: int = 0

    def count(self, left: str, right: str) -> int:
        """Corpus count of the (lowercased) bigram ``left right``."""
        return self.counts.get((left, right), 0)

    def log_count(self, left: str, right: str) -> float:
        """``log(1 + count)`` of a bigram (natural log; 0 for an unseen bigram)."""
        return math.log1p(self.counts.get((left, right), 0))

    @classmethod
    def from_rows(cls, sentences: Iterable[Sequence[tuple[str, str, str, str, str]]]
                  ) -> BigramTable:
        """Build from sentences given as ``(form, lemma, upos, xpos, feats)`` word rows."""
        counts: Counter[tuple[str, str]] = Counter()
        tagged: Counter[tuple[str, str, str, str, str]] = Counter()
        n = 0
        for rows in sentences:
            n += 1
            prev = BOS
            for form, lemma, upos, xpos, feats in rows:
                low = form.lower()
                counts[(prev, low)] += 1
                if upos in _SOMO_UPOS and _eligible_form(low):
                    tagged[(low, upos, xpos, lemma, feats)] += 1
                prev = low
            counts[(prev, EOS)] += 1
        best: dict[tuple[str, str, str], tuple[int, str, str]] = {}
        for (low, upos, xpos, lemma, feats), c in sorted(tagged.items()):
            key = (low, upos, xpos)
            if key not in best or c > best[key][0]:
                best[key] = (c, lemma, feats)
        analyses = {k: (lemma, feats) for k, (_, lemma, feats) in best.items()}
        tags_of: dict[str, list[Tag]] = defaultdict(list)
        vocab: dict[Tag, list[str]] = defaultdict(list)
        for low, upos, xpos in sorted(analyses):
            tags_of[low].append((upos, xpos))
            vocab[(upos, xpos)].append(low)
        followers: dict[Tag, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
        predecessors: dict[Tag, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
        for (left, right) in sorted(counts):
            for tag in tags_of.get(right, ()):
                followers[tag][left].append(right)
            for tag in tags_of.get(left, ()):
                predecessors[tag][right].append(left)
        return cls(
            counts=dict(counts),
            vocab=dict(vocab),
            followers={t: dict(d) for t, d in followers.items()},
            predecessors={t: dict(d) for t, d in predecessors.items()},
            analyses=analyses,
            sentences=n,
        )

    @classmethod
    def from_sentences(cls, sentences: Iterable[Sentence]) -> BigramTable:
        """Build from parsed sentences (syntactic words; ranges and empty nodes excluded)."""
        return cls.from_rows(
            [(w.form, w.lemma, w.upos, w.xpos, w.feats) for w in s.words()] for s in sentences
        )

    @classmethod
    def from_conllu(cls, paths: Sequence[str | Path]) -> BigramTable:
        """Build from CoNLL-U files, read line by line (fast; no tree validation needed here)."""
        return cls.from_rows(s for p in paths for s in _conllu_rows(Path(p)))


def _conllu_rows(path: Path) -> Iterable[list[tuple[str, str, str, str, str]]]:
    """The word rows ``(form, lemma, upos, xpos, feats)`` of each sentence of a CoNLL-U file."""
    try:
        fh = open(path, encoding="utf-8")  # noqa: SIM115 - closed below
    except OSError as exc:
        raise ConlluError(str(path), 0, f"cannot read reference corpus: {exc.strerror}") from None
    with fh:
        rows: list[tuple[str, str, str, str, str]] = []
        for line in fh:
            if not line.strip():
                if rows:
                    yield rows
                    rows = []
                continue
            if line.startswith("#"):
                continue
            cols = line.rstrip("\r\n").split("\t")
            if len(cols) < 6 or not cols[0].isdigit():
                continue  # multiword ranges and empty nodes
            rows.append((cols[1], cols[2], cols[3], cols[4], cols[5]))
        if rows:
            yield rows


_TABLES: dict[tuple[tuple[str, float], ...], BigramTable] = {}
_TABLES_LOCK = threading.Lock()


def _table_for(specs: str) -> BigramTable:
    """The (process-cached) bigram table of comma-separated input specs (paths, sample:, ud:)."""
    from ..data import resolve_input

    paths = [p for spec in specs.split(",") if spec.strip() for p in resolve_input(spec.strip())]
    if not paths or any(str(p) == "-" for p in paths):
        raise ParameterError("somo: reference must name CoNLL-U files (not stdin)")
    key = tuple((str(p.resolve()), p.stat().st_mtime) for p in paths)
    with _TABLES_LOCK:
        table = _TABLES.get(key)
        if table is None:
            table = _TABLES[key] = BigramTable.from_conllu(paths)
        return table


def _feats_dict(feats: str) -> dict[str, str] | None:
    if feats in ("", "_"):
        return None
    return dict(part.split("=", 1) for part in feats.split("|"))


class Somo(Perturber):
    """SentEval SOMO: swap one NOUN or VERB for a same-tag word with similar bigram frequencies.

    Candidates share UPOS and XPOS with the original word, differ from it in form and lemma,
    are not in :attr:`exclude`, and for both bigrams (left neighbour + word, word + right
    neighbour; sentence boundaries count as neighbours) satisfy
    ``|log(1 + c(candidate bigram)) - log(1 + c(original bigram))| <= tolerance``.
    Target positions are tried in random order; the replacement is drawn uniformly among the
    candidates. LEMMA and FEATS of the new word are the replacement's most frequent analysis
    with that tag in the reference corpus; its casing follows the original word's.
    """

    name = "somo"
    summary = "replace one NOUN/VERB by a same-tag word with similar bigram frequencies; label I"
    paper = "Conneau et al. 2018, What you can cram into a single vector (SOMO)"
    params = (
        Param("reference", str, None, "comma-separated CoNLL-U files (or sample:/ud: specs) "
              "whose bigrams are counted; synrob perturb defaults it to its inputs"),
        Param("tolerance", float, 1.0, "largest allowed |difference| of log(1+count) between "
              "each original bigram and the new one"),
    )

    #: Tries of uniform rejection sampling before scanning every candidate.
    SAMPLE_TRIES = 64

    def __init__(self, *, table: BigramTable | None = None, exclude: Iterable[str] = (),
                 **params: Any) -> None:
        super().__init__(**params)
        if self.options["tolerance"] < 0:
            raise ParameterError("perturber 'somo': tolerance must be >= 0")
        self.table = table
        #: Lowercased words never used as replacements (e.g. ones used by another split).
        self.exclude: set[str] = {w.lower() for w in exclude}

    @classmethod
    def with_table(cls, table: BigramTable, exclude: Iterable[str] = (), **params: Any) -> Somo:
        """A SOMO perturber sharing a prebuilt bigram table (e.g. across SentEval splits)."""
        return cls(table=table, exclude=exclude, **params)

    def setup(self) -> None:
        if self.table is None:
            ref = self.options["reference"]
            if not ref:
                raise ParameterError(
                    "perturber 'somo' needs a reference corpus for its bigram counts: "
                    "-p reference=FILE.conllu[,FILE...]"
                )
            self.table = _table_for(ref)
        self._ready = True

    def perturb(self, sentence: Sentence, rng: random.Random) -> Perturbation:
        self.ensure_setup()
        words = sentence.words()
        lows = [w.form.lower() for w in words]
        targets = [i for i, w in enumerate(words)
                   if w.upos in _SOMO_UPOS and _eligible_form(lows[i])]
        if not targets:
            return Perturbation(sentence, sentence.text, (), "O", "no NOUN or VERB")
        rng.shuffle(targets)
        for i in targets:
            choice = self._replacement(words, lows, i, rng)
            if choice is None:
                continue
            w = words[i]
            lemma, feats = self.table.analyses[(choice, w.upos, w.xpos)]  # type: ignore[union-attr]
            new_form = match_case(w.form, choice)
            new = sentence.replace_words(
                {w.id: {"form": new_form, "lemma": lemma, "feats": _feats_dict(feats)}}
            )
            return Perturbation(
                new, new.text, (w.id,), "I",
                extra={"original": w.form, "replacement": new_form, "position": w.id},
            )
        return Perturbation(sentence, sentence.text, (), "O",
                            "no NOUN or VERB replacement within the bigram tolerance")

    def _replacement(self, words: list[Word], lows: list[str], i: int, rng: random.Random
                     ) -> str | None:
        """A random candidate for word ``i`` (0-based), or None."""
        table = self.table
        assert table is not None
        w = words[i]
        tag = (w.upos, w.xpos)
        left = lows[i - 1] if i > 0 else BOS
        right = lows[i + 1] if i + 1 < len(lows) else EOS
        orig = lows[i]
        tol = self.options["tolerance"]
        ref_l = table.log_count(left, orig)
        ref_r = table.log_count(orig, right)
        # a candidate unseen next to a neighbour (log count 0) only passes when ref <= tol
        pools: list[list[str]] = []
        if ref_l > tol:
            pools.append(table.followers.get(tag, {}).get(left, []))
        if ref_r > tol:
            pools.append(table.predecessors.get(tag, {}).get(right, []))
        pool = min(pools, key=len) if pools else table.vocab.get(tag, [])
        if not pool:
            return None
        orig_lemma = w.lemma.lower()
        counts = table.counts
        analyses = table.analyses
        exclude = self.exclude

        def ok(c: str) -> bool:
            return (
                c != orig
                and c not in exclude
                and abs(math.log1p(counts.get((left, c), 0)) - ref_l) <= tol
                and abs(math.log1p(counts.get((c, right), 0)) - ref_r) <= tol
                and analyses[(c, w.upos, w.xpos)][0].lower() != orig_lemma
            )

        for _ in range(self.SAMPLE_TRIES):
            c = pool[rng.randrange(len(pool))]
            if ok(c):
                return c
        good = [c for c in pool if ok(c)]
        return rng.choice(good) if good else None


# --------------------------------------------------------------------------- CoordInv

_SUBJECTS = ("nsubj", "expl")
#: Sentence-initial words that stay in front when the clauses swap ("But", quotes, "Well").
_PREFIX_DEPRELS = ("cc", "punct", "discourse")


def _base(deprel: str) -> str:
    return deprel.split(":", 1)[0]


@dataclass(frozen=True)
class _Clauses:
    """0-based position lists of ``prefix A connector B final`` (A is the root clause)."""

    prefix: list[int]
    first: list[int]
    connector: list[int]
    second: list[int]
    final: list[int]


def find_coordinate_clauses(sentence: Sentence) -> _Clauses | None:
    """Split a sentence ``A [,] cc B [punct]`` made of two coordinate clauses, or None.

    The root must have exactly one ``conj`` dependent, after it; both the root and that
    conjunct have their own subject (``nsubj``, ``nsubj:pass``, ``expl``, ...); the conjunct has
    a ``cc``. The conjunct's subtree must be contiguous and followed only by sentence-final
    punctuation. The connector is the punctuation ending clause A plus the ``cc`` and
    punctuation opening clause B; sentence-initial ``cc``/``punct``/``discourse`` words of A
    form a prefix that stays in front.
    """
    words = sentence.words()
    n = len(words)
    heads = [w.head for w in words]
    kids = _tree.children(heads)
    r = _tree.root(heads)
    conjs = [k for k in kids[r] if words[k].deprel == "conj"]
    if len(conjs) != 1 or conjs[0] < r:
        return None
    c = conjs[0]

    def has_subject(x: int) -> bool:
        return any(_base(words[k].deprel) in _SUBJECTS for k in kids[x])

    if not (has_subject(r) and has_subject(c)):
        return None
    if not any(words[k].deprel == "cc" and k < c for k in kids[c]):
        return None
    sub = set()
    stack = [c]
    while stack:
        x = stack.pop()
        sub.add(x)
        stack.extend(kids[x])
    lo, hi = min(sub), max(sub)
    if hi - lo + 1 != len(sub) or lo == 0:
        return None
    end = n
    while end > 0 and words[end - 1].deprel == "punct":
        end -= 1
    final = list(range(end, n))
    if hi + 1 < end:  # root-clause words between the conjunct and the final punctuation
        return None
    b_lo = lo
    while b_lo < end and words[b_lo].deprel in ("cc", "punct"):
        b_lo += 1
    a_hi = lo
    while a_hi > 0 and words[a_hi - 1].deprel == "punct":
        a_hi -= 1
    a_lo = 0
    while a_lo < a_hi and words[a_lo].deprel in _PREFIX_DEPRELS:
        a_lo += 1
    first = list(range(a_lo, a_hi))
    second = list(range(b_lo, end))
    if not first or not second or not (a_lo <= r < a_hi):
        return None
    return _Clauses(list(range(a_lo)), first, list(range(a_hi, b_lo)), second, final)


def _keeps_capital(w: Word) -> bool:
    return w.upos == "PROPN" or w.form == "I" or w.form.startswith("I'") or (
        len(w.form) > 1 and w.form.isupper()
    )


def _first_non_punct(words: Sequence[Word], positions: Iterable[int]) -> int | None:
    """The first of ``positions`` (0-based) whose word is not punctuation."""
    return next((i for i in positions if words[i].upos not in ("PUNCT", "SYM")), None)


def _set_space(sentence: Sentence, wid: int, space: bool) -> None:
    """Set SpaceAfter of word ``wid`` (or of the multiword token it ends) in place."""
    for tok in sentence.tokens:
        tid = tok["id"]
        if isinstance(tid, tuple):
            if tid[1] == "-" and tid[0] <= wid <= tid[2]:
                if wid != tid[2]:
                    return  # inside a multiword token: no space of its own
                target = tok
                break
            continue
        if tid == wid:
            target = tok
            break
    else:
        return
    _set_space_after(target, space)


class CoordInv(Perturber):
    """SentEval CoordInv: swap two coordinate clauses (``A, but B.`` -> ``B, but a.``).

    Clause B moves to the front (after any sentence-initial ``cc``/punctuation/discourse
    words) and the new sentence-initial word is capitalised; the old one is lowercased unless
    it is a PROPN, "I" or an acronym; the
    sentence-final punctuation stays last and words before a comma/final mark keep their
    no-space. HEADs travel with their words (:meth:`Sentence.reorder`).
    """

    name = "coordinv"
    summary = "swap the two clauses of a coordinated sentence; label I, else O (unchanged)"
    paper = "Conneau et al. 2018, What you can cram into a single vector (CoordInv)"

    NOTE = "no two coordinate clauses"

    def perturb(self, sentence: Sentence, rng: random.Random) -> Perturbation:
        parts = find_coordinate_clauses(sentence)
        if parts is None:
            return Perturbation(sentence, sentence.text, (), "O", self.NOTE)
        words = sentence.words()
        orig_space = sentence.space_after()
        order0 = parts.prefix + parts.second + parts.connector + parts.first + parts.final
        new = sentence.reorder([i + 1 for i in order0])
        pos = {old: p for p, old in enumerate(order0)}  # old 0-based -> new 0-based
        a_last, b_last = parts.first[-1], parts.second[-1]
        conn_last = parts.connector[-1] if parts.connector else None
        before_conn = parts.connector[0] - 1 if parts.connector else a_last
        fixes: list[tuple[int, bool]] = [
            (pos[b_last] + 1, orig_space[before_conn]),
            (pos[a_last] + 1, orig_space[b_last]),
        ]
        if conn_last is not None:
            fixes.append((pos[conn_last] + 1, orig_space[conn_last]))
        if parts.prefix:
            fixes.append((pos[parts.prefix[-1]] + 1, orig_space[parts.prefix[-1]]))
        for wid, space in fixes:
            _set_space(new, wid, space)
        forms: dict[int, dict[str, str]] = {}
        old_initial = _first_non_punct(words, range(len(words)))
        new_initial = _first_non_punct(words, order0)
        if old_initial != new_initial and old_initial is not None and new_initial is not None:
            a0, b0 = words[old_initial], words[new_initial]
            if not _keeps_capital(a0) and a0.form[:1].isupper():
                forms[pos[old_initial] + 1] = {"form": a0.form[:1].lower() + a0.form[1:]}
            if b0.form[:1].islower():
                forms[pos[new_initial] + 1] = {"form": b0.form[:1].upper() + b0.form[1:]}
        if forms:
            new = new.replace_words(forms)
        else:
            new.tokens.metadata["text"] = new.surface_text()
        changed = tuple(sorted(old + 1 for p, old in enumerate(order0) if p != old))
        return Perturbation(new, new.text, changed, "I",
                            extra={"order": tuple(i + 1 for i in order0)})


PERTURBERS: list[type[Perturber]] = [Somo, CoordInv]
