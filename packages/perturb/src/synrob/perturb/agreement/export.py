"""An agreement pair's words as the field's pair formats name them (MultiBLiMP's child, verb,
cop and head), read from the perturbed sentence and its ``synrob.agreement`` metadata, for
:mod:`synrob.perturb.io.pairs`."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..corpus import Sentence
from ..errors import SynrobError
from ..io.pairs import PairOut, PairWords
from .tree import feats_of

__all__ = ["pair_words", "pair_out"]


def pair_words(sentence: Sentence, agreement: Mapping[str, Any]) -> PairWords:
    """The agreeing words of a pair in the original sentence: the subject (``child``), the
    word it depends on (``verb``), the agreeing word (``head``: the verb itself, or its
    auxiliary or copula, then also ``cop``), with 0-based word indices. ``sentence`` is the
    pair's perturbed sentence (the same tree; the agreeing word's original form is
    ``form_from``)."""
    words = {w.id: w for w in sentence.words()}
    target, subject = words.get(agreement.get("target")), words.get(agreement.get("subject"))
    if target is None or subject is None:
        raise SynrobError(f"{sentence.sent_id}: synrob.agreement names word "
                          f"{agreement.get('target')} and {agreement.get('subject')}, not "
                          "both words of the sentence")
    verb = words.get(subject.head, target)
    head = str(agreement["form_from"])
    is_cop = verb.id != target.id
    participle = feats_of(target).get("VerbForm") == "Part"
    return PairWords(child=subject.form, child_idx=subject.id - 1, child_upos=subject.upos,
                     verb=head if not is_cop else verb.form, verb_idx=verb.id - 1,
                     cop=head if is_cop else None, cop_idx=target.id - 1 if is_cop else None,
                     head=head, head_idx=target.id - 1, head_upos=target.upos,
                     participle=participle)


def pair_out(sentence: Sentence, agreement: Mapping[str, Any], *, pair_id: str, source: str,
             good: str, bad: str, meta: Mapping[str, Any]) -> PairOut:
    """The :class:`~synrob.perturb.io.pairs.PairOut` of one pair (``meta``: language,
    perturber, version, parameters, seed)."""
    return PairOut(pair_id, source, good, bad, dict(agreement), pair_words(sentence, agreement),
                   dict(meta))
