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
import warnings
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..base import Perturbation, Perturber
from ..corpus import Sentence, Word, _set_space_after
from ..errors import ConlluError, ParameterError, param
from ..io import tree as _tree
from ..io.feats import feats_value
from ..lexicon.morphology import match_case
from ..params import Param

__all__ = ["BigramTable", "Somo", "CoordInv", "BOS", "EOS", "PERTURBERS", "brackets_balanced",
           "find_coordinate_clauses"]

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
        """Build from the valid sentences of CoNLL-U files (invalid ones are left out)."""
        from ..io.validate import ConlluWarning

        with warnings.catch_warnings():  # a repeated sent_id: the input reader says it once
            warnings.simplefilter("ignore", ConlluWarning)
            return cls.from_rows(s for p in paths for s in _conllu_rows(Path(p)))


def _conllu_rows(path: Path) -> Iterable[list[tuple[str, str, str, str, str]]]:
    """The word rows ``(form, lemma, upos, xpos, feats)`` of each valid sentence of a CoNLL-U
    file. Sentences are validated as by :func:`~synrob.perturb.corpus.read_conllu` and invalid
    ones left out (as ``synrob perturb --skip-invalid`` skips them in its input, which is also
    the default reference): nothing of theirs, e.g. a malformed FEATS or a byte that is not
    UTF-8, may become a substitute."""
    from ..corpus import iter_blocks
    from ..io.validate import split_rows

    try:
        for name, block in iter_blocks(path):
            try:
                _, rows = split_rows(block, name)
            except ConlluError:
                continue
            # validated: word IDs are ASCII digits; ranges and empty nodes are left out
            yield [(c[1], c[2], c[3], c[4], c[5]) for c in rows if c[0].isdigit()]
    except ConlluError as exc:
        if exc.line == 0:  # missing or unreadable file
            raise ConlluError(str(path), 0, f"cannot read reference corpus: {exc.problem}"
                              ) from None
        raise


_TABLES: dict[tuple[tuple[str, float], ...], BigramTable] = {}
_TABLES_LOCK = threading.Lock()


def _table_for(specs: str) -> BigramTable:
    """The (process-cached) bigram table of comma-separated input specs (paths, sample:, ud:)."""
    from ..io.data import resolve_input

    paths = [p for spec in specs.split(",") if spec.strip() for p in resolve_input(spec.strip())]
    if not paths or any(str(p) == "-" for p in paths):
        raise ParameterError("somo: reference must name CoNLL-U files (not stdin)")
    key = tuple((str(p.resolve()), p.stat().st_mtime) for p in paths)
    with _TABLES_LOCK:
        table = _TABLES.get(key)
        if table is None:
            table = _TABLES[key] = BigramTable.from_conllu(paths)
        return table


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
    languages = ("*",)
    language_note = "language-independent: works on any UD treebank"
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
                    f"{param('reference=FILE.conllu[,FILE...]')}"
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
                {w.id: {"form": new_form, "lemma": lemma, "feats": feats_value(feats)}}
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
#: Sentence-initial dependents of the root that stay in front when the conjuncts swap
#: ("But", "Well", a dash; an opening quote or bracket only when the final one closes it).
_PREFIX_DEPRELS = ("cc", "punct", "discourse")

#: Bracket and quote characters (counted in words tagged PUNCT): openers, their closers, and
#: the straight quotes, which close the innermost open quote of the same kind or open one.
_OPENERS = {"(": ")", "[": "]", "{": "}", "“": "”", "‘": "’", "«": "»"}
_CLOSERS = {v: k for k, v in _OPENERS.items()}
_TOGGLES = frozenset("\"'")
_BRACKET_CHARS = frozenset(_OPENERS) | frozenset(_CLOSERS) | _TOGGLES


def _base(deprel: str) -> str:
    return deprel.split(":", 1)[0]


def _is_bracket(w: Word) -> bool:
    """Whether ``w`` is a punctuation word holding a bracket or quote character."""
    return w.upos == "PUNCT" and any(ch in _BRACKET_CHARS for ch in w.form)


def brackets_balanced(words: Iterable[Word]) -> bool:
    """Whether the brackets and quotes of ``words`` (PUNCT words only) are balanced.

    ``( ) [ ] { } “ ” ‘ ’ « »`` must nest; a straight quote (``"`` or ``'``) closes the
    innermost open quote of the same character when that is the innermost open item, and
    opens one otherwise. Apostrophes inside words (``'s``, ``n't``) and emoticons (SYM) do not
    count.
    """
    stack: list[str] = []
    for w in words:
        if w.upos != "PUNCT":
            continue
        for ch in w.form:
            if ch in _TOGGLES:
                if stack and stack[-1] == ch:
                    stack.pop()
                else:
                    stack.append(ch)
            elif ch in _OPENERS:
                stack.append(ch)
            elif ch in _CLOSERS:
                if not stack or stack[-1] != _CLOSERS[ch]:
                    return False
                stack.pop()
    return not stack


@dataclass(frozen=True)
class _Clauses:
    """0-based position lists of ``prefix A separator B final`` (A holds the root)."""

    prefix: list[int]
    first: list[int]
    connector: list[int]
    second: list[int]
    final: list[int]

    def order(self) -> list[int]:
        """The swapped order ``prefix B separator A final`` (0-based old positions)."""
        return self.prefix + self.second + self.connector + self.first + self.final


#: Why a sentence has no coordinate clauses to swap (the ``note`` of an ``O`` output).
NO_CLAUSES = "no two coordinate clauses"
SPANNING_BRACKETS = "brackets or quotes span the two conjuncts"
DANGLING_PUNCT = "the first conjunct ends in punctuation"


def _split_clauses(sentence: Sentence) -> _Clauses | str:
    """The parts of ``A [,] cc B [final]``, or the reason (a note) why there are none."""
    words = sentence.words()
    n = len(words)
    heads = [w.head for w in words]
    kids = _tree.children(heads)
    r = _tree.root(heads)
    conjs = [k for k in kids[r] if words[k].deprel == "conj"]
    if len(conjs) != 1 or conjs[0] < r:
        return NO_CLAUSES
    c = conjs[0]

    def has_subject(x: int) -> bool:
        return any(_base(words[k].deprel) in _SUBJECTS for k in kids[x])

    if not (has_subject(r) and has_subject(c)):
        return NO_CLAUSES
    sub = set()
    stack = [c]
    while stack:
        x = stack.pop()
        sub.add(x)
        stack.extend(kids[x])
    lo, hi = min(sub), max(sub)
    if hi - lo + 1 != len(sub) or lo == 0:
        return NO_CLAUSES
    # separator: the conjunct's cc and the punctuation (no bracket or quote) opening its subtree
    b_lo = lo
    while b_lo < c and (
        (words[b_lo].deprel == "cc" and heads[b_lo] == c + 1)
        or (words[b_lo].deprel == "punct" and not _is_bracket(words[b_lo]))
    ):
        b_lo += 1
    if not any(words[k].deprel == "cc" for k in range(lo, b_lo)):
        return NO_CLAUSES
    # final: only punctuation may follow the second conjunct (it stays last)
    if any(words[k].deprel != "punct" for k in range(hi + 1, n)):
        return NO_CLAUSES
    final = list(range(hi + 1, n))
    # prefix: sentence-initial cc/punct/discourse dependents of the root. A bracket or quote
    # among them stays in front when that leaves both conjuncts balanced (it wraps the whole
    # sentence, or is never closed); otherwise the prefix ends before it and it joins A.
    a_lo = 0
    while a_lo < r and words[a_lo].deprel in _PREFIX_DEPRELS:
        a_lo += 1
    # ... attached to the root or to one another ("no ," with the comma on "no")
    while a_lo and not all(heads[k] - 1 in (r, *range(a_lo)) for k in range(a_lo)):
        a_lo = next(k for k in range(a_lo) if heads[k] - 1 not in (r, *range(a_lo)))
    second = list(range(b_lo, hi + 1))  # holds the conjunct c, so never empty
    if not brackets_balanced(words[k] for k in second):
        return SPANNING_BRACKETS
    starts = [a_lo]
    if any(_is_bracket(words[k]) for k in range(a_lo)):
        starts.append(next(k for k in range(a_lo) if _is_bracket(words[k])))
    for a_lo in starts:
        first = list(range(a_lo, lo))  # holds the root (a_lo <= r < lo), so never empty
        if brackets_balanced(words[k] for k in first):
            break
    else:
        return SPANNING_BRACKETS
    if words[first[-1]].upos == "PUNCT" and not _is_bracket(words[first[-1]]):
        return DANGLING_PUNCT
    parts = _Clauses(list(range(a_lo)), first, list(range(lo, b_lo)), second, final)
    if brackets_balanced(words) and not brackets_balanced(words[k] for k in parts.order()):
        return SPANNING_BRACKETS  # e.g. a straight quote pairing differently once moved
    return parts


def find_coordinate_clauses(sentence: Sentence) -> _Clauses | None:
    """Split a sentence ``A [,] cc B [punct]`` made of two coordinate clauses, or None.

    The root must have exactly one ``conj`` dependent, after it; both the root and that
    conjunct have their own subject (``nsubj``, ``nsubj:pass``, ``expl``, ...). The conjunct's
    subtree B must be contiguous and followed only by punctuation (the final part, which stays
    last). The separator is the run of the conjunct's own ``cc`` and of punctuation that opens
    B's subtree (it must hold the ``cc``; brackets and quotes never belong to it). The prefix
    is the sentence-initial ``cc``/``punct``/``discourse`` words attached to the root or to one
    another ("But", "Well ,"); a bracket or quote among them stays in front only if both conjuncts are then
    balanced (it wraps the whole sentence or is never closed), else it joins A. Everything else — the root's subtree without B, with its own punctuation, brackets and
    quotes — is the first conjunct A. None also when the brackets/quotes of A or of B are not
    balanced on their own (they span the conjuncts) or when A ends in a punctuation mark that
    is not a bracket or quote (it would dangle before the final mark).
    """
    parts = _split_clauses(sentence)
    return parts if isinstance(parts, _Clauses) else None


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

    Whole conjuncts move (:func:`find_coordinate_clauses`): the second conjunct B goes to the
    front (after any sentence-initial ``cc``/punctuation/discourse words), the separator (its
    ``cc`` and the punctuation of B before it) stays between the two, and the first conjunct
    A follows with its own punctuation, brackets and quotes; the final punctuation stays last.
    The new sentence-initial word is capitalised; the old one is lowercased unless it is a
    PROPN, "I" or an acronym; the words that end B and A take the no-space of the words they
    replace. HEADs travel with their words (:meth:`Sentence.reorder`). Whenever the source's
    brackets and quotes are balanced (:func:`brackets_balanced`), the output's are too.
    """

    name = "coordinv"
    languages = ("*",)
    language_note = "language-independent: works on any UD treebank"
    version = "1.1"
    summary = "swap the two clauses of a coordinated sentence; label I, else O (unchanged)"
    paper = "Conneau et al. 2018, What you can cram into a single vector (CoordInv)"

    NOTE = NO_CLAUSES

    def perturb(self, sentence: Sentence, rng: random.Random) -> Perturbation:
        parts = _split_clauses(sentence)
        if not isinstance(parts, _Clauses):
            return Perturbation(sentence, sentence.text, (), "O", parts)
        words = sentence.words()
        orig_space = sentence.space_after()
        order0 = parts.order()
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
