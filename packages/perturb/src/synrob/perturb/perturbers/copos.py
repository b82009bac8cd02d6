"""coPOS: consistent-POS substitution by WordNet synonyms (La Malfa et al., Def. 5).

``budget`` content words are replaced by a WordNet synonym of the same WordNet POS, re-inflected
with lemminflect to the original XPOS (``NNS`` stays plural, ``VBD`` past, ``JJR`` comparative)
and cased like the original. Only FORM and LEMMA change; UPOS, XPOS, FEATS, HEAD and DEPREL of
every word stay as they were. Synonyms come from :func:`synrob.perturb.lexicon.wordnet.synonym_table`
(WordNet 3.0 parsed once and cached on disk), looked up by the treebank LEMMA.

A word is eligible when its UPOS is in ``upos``, its XPOS is a regular Penn tag of that UPOS
(NOUN: NN NNS; VERB: VB VBD VBG VBN VBP VBZ; ADJ: JJ JJR JJS; ADV: RB RBR RBS), its FORM is
alphabetic and at least two letters long, and at least one synonym survives the filters: a different lemma, one lower-case
alphabetic word (no multiword, hyphenated or capitalised WordNet lemma), an inflection known to
lemminflect for the tag (comparatives and superlatives only from its dictionary, never
``more``-forms built by rule) that differs from the original FORM. Synonym lists and
inflections are cached per (lemma, POS) and (synonym, tag).
"""

from __future__ import annotations

import random
from functools import lru_cache

from ..base import Param, Perturbation, Perturber
from ..corpus import Sentence, Word
from ..errors import ParameterError
from ..lexicon.morphology import match_case

__all__ = ["CoPOS", "PERTURBERS", "synonyms", "inflect_as", "candidates"]

_WN_POS = {"NOUN": "n", "VERB": "v", "ADJ": "a", "ADV": "r"}
_XPOS = {
    "NOUN": frozenset({"NN", "NNS"}),
    "VERB": frozenset({"VB", "VBD", "VBG", "VBN", "VBP", "VBZ"}),
    "ADJ": frozenset({"JJ", "JJR", "JJS"}),
    "ADV": frozenset({"RB", "RBR", "RBS"}),
}
_BASE_TAGS = frozenset({"NN", "VB", "VBP", "JJ", "RB"})
#: Tags whose regular rule (lemminflect's OOV path) is trusted when the dictionary lacks the word.
_RULE_TAGS = frozenset({"NNS", "VBD", "VBG", "VBN", "VBZ"})


def synonyms(lemma: str, wn_pos: str) -> tuple[str, ...]:
    """WordNet synonyms of ``lemma`` for ``wn_pos`` (n, v, a, r), in WordNet sense order.

    Single lower-case alphabetic words only, ``lemma`` itself excluded; adjective satellites
    count as adjectives. ``lemma`` is looked up as given (it is already a lemma: no ``morphy``).
    """
    from ..lexicon.wordnet import synonym_table

    return synonym_table()[wn_pos].get(lemma, ())


@lru_cache(maxsize=200_000)
def inflect_as(lemma: str, upos: str, xpos: str) -> str | None:
    """``lemma`` inflected for Penn tag ``xpos`` by lemminflect, or None when it has no such form."""
    if xpos in _BASE_TAGS:
        return lemma
    from lemminflect import getAllInflections, getInflection

    known = getAllInflections(lemma, upos=upos)
    if known:  # in lemminflect's dictionary: only the forms it lists
        forms = getInflection(lemma, xpos, inflect_oov=False) or known.get(xpos, ())
    elif xpos in _RULE_TAGS:  # unknown word: regular -s/-ed/-ing rules
        forms = getInflection(lemma, xpos, inflect_oov=True)
    else:
        forms = ()
    return forms[0] if forms else None


@lru_cache(maxsize=200_000)
def candidates(lemma: str, upos: str, xpos: str, form: str) -> tuple[tuple[str, str], ...]:
    """``(synonym lemma, inflected form)`` pairs that may replace a word (lower-case inputs)."""
    out = []
    for syn in synonyms(lemma, _WN_POS[upos]):
        inflected = inflect_as(syn, upos, xpos)
        if inflected and inflected.isalpha() and inflected != form:
            out.append((syn, inflected))
    return tuple(out)


class CoPOS(Perturber):
    """Replace ``budget`` content words by WordNet synonyms re-inflected to the original tag."""

    name = "copos"
    version = "1.0"
    summary = (
        "replace `budget` content words by WordNet synonyms of the same POS, re-inflected to the "
        "original XPOS; tags and tree unchanged"
    )
    paper = (
        "La Malfa & Kwiatkowska 2022, The King is Naked: on the Notion of Robustness for "
        "Natural Language Processing (Def. 5, consistent-POS substitution)"
    )
    languages = ("en",)
    language_note = "English WordNet 3.0 and English inflection rules"
    params = (
        Param("budget", int, 1, "number of content words replaced (fewer when fewer are eligible)"),
        Param("upos", str, "NOUN,VERB,ADJ,ADV", "comma-separated eligible UPOS among NOUN, VERB, ADJ, ADV"),
    )

    def __init__(self, **params: object) -> None:
        super().__init__(**params)
        if self.options["budget"] < 1:
            raise ParameterError(f"perturber 'copos': budget must be >= 1, got {self.options['budget']}")
        upos = tuple(u.strip().upper() for u in self.options["upos"].split(",") if u.strip())
        bad = [u for u in upos if u not in _WN_POS]
        if bad or not upos:
            raise ParameterError(
                f"perturber 'copos': upos must list some of NOUN, VERB, ADJ, ADV, got {self.options['upos']!r}"
            )
        self._upos = frozenset(upos)

    def setup(self) -> None:
        """Load the WordNet synonym table and lemminflect's tables (once per process)."""
        from lemminflect import getAllInflections

        from ..lexicon.wordnet import synonym_table

        synonym_table()
        getAllInflections("be", upos="VERB")
        self._ready = True

    def _may_replace(self, word: Word) -> bool:
        """Cheap eligibility test: UPOS/XPOS, alphabetic FORM and LEMMA, some WordNet synonym."""
        if word.upos not in self._upos or word.xpos not in _XPOS[word.upos]:
            return False
        if len(word.form) < 2 or not word.form.isalpha() or not word.lemma.isalpha():
            return False
        return bool(synonyms(word.lemma.lower(), _WN_POS[word.upos]))

    def options_for(self, word: Word) -> tuple[tuple[str, str], ...]:
        """Replacement candidates ``(lemma, lower-case form)`` for one word; empty if ineligible."""
        if not self._may_replace(word):
            return ()
        return candidates(word.lemma.lower(), word.upos, word.xpos, word.form.lower())

    def perturb(self, sentence: Sentence, rng: random.Random) -> Perturbation:
        self.ensure_setup()
        maybe = [w for w in sentence.words() if self._may_replace(w)]
        # Visit the words in a random order and keep the first `budget` that have a candidate:
        # the same choice as sampling among all eligible words, without inflecting every one.
        chosen: list[tuple[Word, tuple[tuple[str, str], ...]]] = []
        for word in rng.sample(maybe, len(maybe)):
            cands = candidates(word.lemma.lower(), word.upos, word.xpos, word.form.lower())
            if cands:
                chosen.append((word, cands))
                if len(chosen) == self.options["budget"]:
                    break
        if not chosen:
            return Perturbation(sentence, sentence.text, (), note="no content word with a usable WordNet synonym")
        chosen.sort(key=lambda wc: wc[0].id)
        changes: dict[int, dict[str, str]] = {}
        for word, cands in chosen:
            lemma, form = cands[rng.randrange(len(cands))]
            changes[word.id] = {"form": match_case(word.form, form), "lemma": lemma}
        new = sentence.replace_words(changes)
        return Perturbation(new, new.text, tuple(changes))


PERTURBERS = [CoPOS]
