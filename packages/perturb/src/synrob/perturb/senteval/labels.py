"""Per-sentence labels of the SentEval tasks, read off a UD dependency tree.

Each function takes a :class:`SourceSentence` and returns its label (or ``(label, target word)``
for the tasks with a lexical control), or None when the sentence does not qualify.

TopConst approximates the constituency-tree task from dependencies
(:func:`top_constituents`); the mapping is documented in ``docs/senteval.md``.
"""

from __future__ import annotations

from ..io.feats import parse_feats
from .source import SourceSentence

__all__ = [
    "length_bins",
    "length_bin",
    "tense",
    "subject_number",
    "object_number",
    "top_constituents",
    "tree_depth",
]


def length_bins(min_len: int, max_len: int, n: int = 6) -> list[tuple[int, int]]:
    """``n`` equal-width word-count bins covering ``min_len..max_len`` (the last may be shorter).

    >>> length_bins(5, 28)
    [(5, 8), (9, 12), (13, 16), (17, 20), (21, 24), (25, 28)]
    """
    span = max_len - min_len + 1
    width = -(-span // n)
    return [(min_len + i * width, min(max_len, min_len + (i + 1) * width - 1)) for i in range(n)]


def length_bin(length: int, bins: list[tuple[int, int]]) -> int | None:
    """Index of the bin holding ``length`` (None outside every bin)."""
    for i, (lo, hi) in enumerate(bins):
        if lo <= length <= hi:
            return i
    return None


def tree_depth(s: SourceSentence) -> int:
    """Maximum depth of the dependency tree in edges (the root has depth 0)."""
    return s.max_depth()


_SUBJ = ("nsubj", "nsubj:pass")


def tense(s: SourceSentence) -> tuple[str, str] | None:
    """``(PAST|PRES, target)`` for a sentence whose main verb (the root, UPOS VERB) is finite.

    The tense is that of the first finite word (``VerbForm=Fin`` with ``Tense=Past|Pres``) among
    the root's ``aux``/``aux:pass`` dependents and the root itself, so "has left" is PRES and
    "was leaving" PAST. Modal (no Tense feature) and imperative main clauses do not qualify. The
    target word is the lowercased root form.
    """
    words = s.words
    r = s.root()
    root = words[r]
    if root.upos != "VERB":
        return None
    chain = sorted([k for k in s.children()[r] if words[k].deprel in ("aux", "aux:pass")] + [r])
    for i in chain:
        f = parse_feats(words[i].feats, strict=False)
        if f.get("VerbForm") != "Fin":
            continue
        t = f.get("Tense")
        if t == "Past":
            return "PAST", root.form.lower()
        if t == "Pres":
            return "PRES", root.form.lower()
        return None  # a finite modal or imperative: no tense
    return None


def _noun_number(s: SourceSentence, deprels: tuple[str, ...]) -> tuple[str, str] | None:
    words = s.words
    r = s.root()
    for k in s.children()[r]:
        w = words[k]
        if w.deprel in deprels:
            if w.upos != "NOUN":
                return None
            num = parse_feats(w.feats, strict=False).get("Number")
            if num == "Sing":
                return "NN", w.form.lower()
            if num == "Plur":
                return "NNS", w.form.lower()
            return None
    return None


def subject_number(s: SourceSentence) -> tuple[str, str] | None:
    """``(NN|NNS, target)``: the number of the main clause's subject, a common noun.

    The subject is the root's first ``nsubj``/``nsubj:pass`` dependent; it must have UPOS NOUN
    and a ``Number`` feature (pronoun and proper-noun subjects do not qualify). The target word
    is its lowercased form.
    """
    return _noun_number(s, _SUBJ)


def object_number(s: SourceSentence) -> tuple[str, str] | None:
    """``(NN|NNS, target)``: the number of the main clause's direct object (``obj`` of the root),
    a common noun with a ``Number`` feature; the target word is its lowercased form."""
    return _noun_number(s, ("obj",))


# --------------------------------------------------------------------------- TopConst

#: UPOS of a phrase head -> phrase label.
_PHRASE = {
    "NOUN": "NP", "PROPN": "NP", "PRON": "NP", "NUM": "NP", "DET": "NP", "SYM": "NP",
    "ADJ": "ADJP", "ADV": "ADVP", "INTJ": "INTJ", "ADP": "PP", "SCONJ": "SBAR",
    "CCONJ": "CC", "PART": "ADVP", "X": "X",
}
_CLAUSAL = ("advcl", "ccomp", "csubj", "csubj:pass", "parataxis", "xcomp", "acl", "conj")
_VP_AUX = ("aux", "aux:pass", "cop")


def _constituent(s: SourceSentence, k: int) -> str:
    """Phrase label of the subtree of word ``k`` (0-based), a dependent of the root."""
    words = s.words
    w = words[k]
    kids = s.children()[k]
    base = w.deprel.split(":", 1)[0]
    if w.deprel == "punct" or w.upos == "PUNCT":
        return w.xpos if w.xpos not in ("_", "") else w.form
    if base in ("aux", "cop"):
        return w.xpos  # an inverted auxiliary: "Did you ...", "Is it ..."
    if base == "cc":
        return "CC"
    if base in ("discourse",) or w.upos == "INTJ":
        return "INTJ"
    if base in _CLAUSAL:
        if any(words[c].deprel == "mark" for c in kids):
            return "SBAR"
        return "S"
    if base == "mark":
        return "IN"
    if base in ("obl", "nmod") and any(words[c].deprel == "case" for c in kids):
        return "PP"
    return _PHRASE.get(w.upos, "NP")


def top_constituents(s: SourceSentence) -> str:
    """The sequence of the top-level constituents of the sentence, e.g. ``NP_VP_.``.

    Derived from the dependency tree (an approximation of the Penn-Treebank-style task):

    * a root with a subject, an auxiliary/copula or UPOS VERB is a clause; its verb phrase
      ``VP`` spans the root, its dependents to the right (except the trailing punctuation) and
      its dependents to the left from the first ``aux``/``cop`` that follows the subject;
    * every other dependent of the root to the left of the VP is one constituent, labelled by
      its relation and head (:func:`_constituent`: ``NP`` for nominals, ``PP`` for obliques with
      a case marker, ``ADVP``, ``SBAR`` for clauses with a ``mark``, ``S`` for other clauses,
      ``CC``, ``INTJ``, the XPOS of an inverted auxiliary, the XPOS of punctuation);
    * a clause with a coordinated clause (a ``conj`` of the root with its own subject, at the
      end) is ``S [punct] CC S``;
    * any other root (a fragment) is one phrase labelled by the root's UPOS (``NP``, ``ADJP``,
      ...), preceded and followed by its peripheral punctuation, ``CC`` and ``INTJ``;
    * trailing punctuation dependents of the root are labelled by their XPOS (``.``, ``,``).
    """
    words = s.words
    r = s.root()
    kids = s.children()[r]
    # trailing punctuation: punct dependents of the root after everything else
    n = len(words)
    end = n
    while end > r + 1 and words[end - 1].deprel == "punct" and words[end - 1].head == r + 1:
        end -= 1
    trailing = [_constituent(s, k) for k in range(end, n)]
    left = [k for k in kids if k < r]
    subj = [k for k in left if words[k].deprel.split(":", 1)[0] in ("nsubj", "csubj", "expl")]
    clausal = (
        words[r].upos in ("VERB", "AUX") or bool(subj)
        or any(words[k].deprel in _VP_AUX for k in kids)
    )
    labels: list[str] = []
    prefix = _prefix(s, r)
    if not clausal:
        return "_".join([*(_constituent(s, k) for k in prefix),
                         _PHRASE.get(words[r].upos, "NP"), *trailing])
    conj = [k for k in kids if k > r and words[k].deprel == "conj"
            and any(words[c].deprel.split(":", 1)[0] in ("nsubj", "expl")
                    for c in s.children()[k])]
    if conj and max(_subtree(s, conj[-1])) == end - 1:
        c = conj[-1]
        lo = min(_subtree(s, c))
        connector = []
        a = lo
        while a - 1 > r and words[a - 1].deprel == "punct" and words[a - 1].head == r + 1:
            a -= 1
            connector.insert(0, a)
        b = lo
        while b < c and words[b].deprel in ("cc", "punct") and words[b].head == c + 1:
            connector.append(b)
            b += 1
        labels = [_constituent(s, k) for k in prefix]
        labels.append("S")
        labels += [_constituent(s, k) for k in connector]
        labels.append("S")
        return "_".join(labels + trailing)
    first_subj = min(subj, default=-1)
    vp_start = r
    for k in sorted(left):
        if k > first_subj and words[k].deprel in _VP_AUX:
            vp_start = k
            break
    for k in sorted(left):
        if k < vp_start:
            labels.append(_constituent(s, k))
    labels.append("VP")
    return "_".join(labels + trailing)


def _prefix(s: SourceSentence, r: int) -> list[int]:
    """Sentence-initial ``cc``/``punct``/``discourse`` dependents of the root (0-based)."""
    out = []
    i = 0
    while i < r and s.words[i].head == r + 1 and s.words[i].deprel in ("cc", "punct", "discourse"):
        out.append(i)
        i += 1
    return out


def _subtree(s: SourceSentence, k: int) -> list[int]:
    kids = s.children()
    out, stack = [], [k]
    while stack:
        x = stack.pop()
        out.append(x)
        stack.extend(kids[x])
    return out
