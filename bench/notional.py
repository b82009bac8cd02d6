"""Precision and recall of the notional-agreement filter (``synrob.perturb.agreement.notional``)
on the hand-labelled EWT subjects of tests/data/agreement (README there; docs/perturbers.md,
"Notional agreement").

Usage: ``python bench/notional.py [--ewt DIR] [--list NAME]... [--misses] [--ceilings]`` (default: every
list; DIR defaults to ``$SYNROB_DATA/ud/en_ewt``, else ``../shared/data/ud/en_ewt``).

Three lists, each scored with the reference the ``agreement`` perturber would read for it:

* ``dev-test``: ``notional_ewt.tsv``, 1,201 subjects of EWT dev and test; the reference is
  dev and test. The filter's rules were tuned on this list.
* ``train-heldout``: ``notional_ewt_train_0-3999.tsv``, 1,537 subjects of the first 4,000
  sentences of EWT train, labelled by a second annotator who never ran or read the filter; the
  reference is those 4,000 sentences. Blind for the filter of commit e938003; one rule was
  added after reading its errors.
* ``train-blind``: ``notional_ewt_train_4000-7999.tsv``, 1,366 subjects of EWT train sentences
  4,000–7,999, labelled by a third annotator in the same way and read only with the filter
  frozen (its README says how); the reference is those sentences.

For each list and each set of sources (``all``, ``no_wordnet``, ``no_spacy``,
``no_spacy_no_wordnet``) it prints ``name: value`` lines: ``{list}.{sources}.flagged``,
``.true_flags``, ``.gold``, ``.precision``, ``.recall``, and ``{list}.sources`` (the sources
the full filter ran with: WordNet and spaCy's model may be absent). ``--misses`` also prints
each wrong decision (``miss`` or ``false_flag``) of the full filter; ``--ceilings`` scores
wider nets (the filter's flags plus every untyped name, every name, every name and every noun
with any group sense: :func:`ceilings`), to show how far any rule over these sources can go.
"""

from __future__ import annotations

import argparse
import csv
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from synrob.perturb.agreement.evidence import Evidence
from synrob.perturb.agreement.notional import Notional
from synrob.perturb.agreement.tree import children_of
from synrob.perturb.corpus import Word, read_conllu

LABELS = Path(__file__).resolve().parents[1] / "tests" / "data" / "agreement"
#: list name: (label file, EWT splits of the reference, the range of their sentences read)
LISTS = {"dev-test": ("notional_ewt.tsv", ("dev", "test"), range(0, 10**9)),
         "train-heldout": ("notional_ewt_train_0-3999.tsv", ("train",), range(0, 4000)),
         "train-blind": ("notional_ewt_train_4000-7999.tsv", ("train",), range(4000, 8000))}
#: sources switched off: (wordnet, spacy)
ABLATIONS = {"all": (True, True), "no_wordnet": (False, True), "no_spacy": (True, False),
             "no_spacy_no_wordnet": (False, False)}


@dataclass(frozen=True)
class Scores:
    """One list's counts: flagged subjects, true flags among them, gold-labelled subjects."""

    flagged: int
    true_flags: int
    gold: int

    @property
    def precision(self) -> float:
        return self.true_flags / self.flagged if self.flagged else 0.0

    @property
    def recall(self) -> float:
        return self.true_flags / self.gold if self.gold else 0.0


def reference(ewt: Path, name: str) -> dict[str, list[Word]]:
    """The reference sentences of a list, by sent_id, in file order."""
    _, splits, read = LISTS[name]
    out: dict[str, list[Word]] = {}
    for split in splits:
        for i, sentence in enumerate(read_conllu(ewt / f"en_ewt-ud-{split}.conllu")):
            if i >= read.stop:
                break
            if i >= read.start:
                out[sentence.sent_id] = sentence.words()
    return out


def labelled(name: str) -> list[dict[str, str]]:
    """The rows of a list's label file."""
    with (LABELS / LISTS[name][0]).open(encoding="utf-8") as fh:
        return list(csv.DictReader(fh, delimiter="\t"))


def notional_for(sentences: Mapping[str, Sequence[Word]], *, wordnet: bool = True,
                 spacy: bool = True) -> Notional:
    """The filter as the perturber builds it with these sentences as its reference."""
    evidence = Evidence("Number", frozenset({"VERB", "AUX", "ADJ"}))
    for words in sentences.values():
        evidence.add(words)
    notional = Notional(evidence.lemma_configs, wordnet=wordnet, spacy=spacy)
    notional.add_names(sentences.values())
    return notional


def decisions(rows: Sequence[Mapping[str, str]], sentences: Mapping[str, Sequence[Word]],
              notional: Notional) -> Iterator[tuple[Mapping[str, str], str | None]]:
    """Each row with the source that flags its subject (None: not flagged)."""
    for row in rows:
        words = sentences[row["sent_id"]]
        subject = words[int(row["subject"]) - 1]
        if subject.form != row["form"]:
            raise ValueError(f"{row['sent_id']}: word {row['subject']} is {subject.form!r}, "
                             f"the list says {row['form']!r}")
        yield row, notional.source(subject, words, children_of(words))


def score(rows: Sequence[Mapping[str, str]], sentences: Mapping[str, Sequence[Word]],
          notional: Notional, also: Callable[[Word, Sequence[Word]], bool] | None = None
          ) -> Scores:
    """The counts of the filter's flags, or of its flags and the subjects ``also`` flags."""
    flagged = true = gold = 0
    for row, source in decisions(rows, sentences, notional):
        words = sentences[row["sent_id"]]
        hit = source is not None or (also is not None and also(words[int(row["subject"]) - 1],
                                                               words))
        is_gold = row["label"] != "no"
        flagged, true, gold = flagged + hit, true + (hit and is_gold), gold + is_gold
    return Scores(flagged, true, gold)


def ceilings() -> dict[str, Callable[[Word, Sequence[Word]], bool]]:
    """Wider nets than the filter, to show what recall any rule over these sources can reach:
    every name spaCy does not type as a person, place or nationality; every name; every name
    and every noun not plural in form with *any* WordNet sense under a group of people or an
    organisation."""
    from synrob.perturb.agreement.entities import entity_types
    from synrob.perturb.agreement.tree import feats_of
    from synrob.perturb.lexicon.wordnet import get_wordnet

    wordnet, groups = get_wordnet(), {"social_group.n.01", "organization.n.01", "people.n.01"}

    def group_sense(lemma: str) -> bool:
        return any(h.name() in groups for s in wordnet.synsets(lemma, pos="n")
                   for path in s.hypernym_paths() for h in path)

    def untyped_name(w: Word, words: Sequence[Word]) -> bool:
        return w.upos == "PROPN" and entity_types([x.form for x in words])[w.id - 1] not in (
            "PERSON", "GPE", "LOC", "NORP")

    return {"ceiling_untyped_names": untyped_name,
            "ceiling_every_name": lambda w, words: w.upos == "PROPN",
            "ceiling_every_name_and_group_noun": lambda w, words: w.upos == "PROPN" or (
                w.upos == "NOUN" and feats_of(w).get("Number") != "Plur"
                and group_sense(w.lemma.lower()))}


def _score_lines(prefix: str, s: Scores) -> Iterator[str]:
    yield from (f"{prefix}.{key}: {value}" for key, value in (
        ("flagged", s.flagged), ("true_flags", s.true_flags), ("gold", s.gold),
        ("precision", f"{s.precision:.3f}"), ("recall", f"{s.recall:.3f}")))


def _lines(name: str, ewt: Path, misses: bool, wider: bool) -> Iterator[str]:
    sentences, rows = reference(ewt, name), labelled(name)
    for label, (wordnet, spacy) in ABLATIONS.items():
        notional = notional_for(sentences, wordnet=wordnet, spacy=spacy)
        if label != "all":
            yield from _score_lines(f"{name}.{label}", score(rows, sentences, notional))
            continue
        yield f"{name}.sources: {','.join(notional.sources)}"
        yield from _score_lines(f"{name}.{label}", score(rows, sentences, notional))
        for ceiling, also in (ceilings() if wider else {}).items():
            yield from _score_lines(f"{name}.{ceiling}", score(rows, sentences, notional, also))
        for row, source in decisions(rows, sentences, notional) if misses else ():
            if (source is None) == (row["label"] != "no"):
                kind = "miss" if source is None else "false_flag"
                yield (f"{name}.{kind}: {row['sent_id']} {row['form']} ({row['label']}; "
                       f"{source or '-'}) {row['note']}")


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    data = os.environ.get("SYNROB_DATA")
    default = (Path(data) if data else Path(__file__).resolve().parent.parent.parent / "shared"
               / "data") / "ud" / "en_ewt"
    parser.add_argument("--ewt", type=Path, default=default, help="the EWT folder")
    parser.add_argument("--list", choices=sorted(LISTS), action="append",
                        help="a list to score (default: every list)")
    parser.add_argument("--misses", action="store_true", help="print each wrong decision")
    parser.add_argument("--ceilings", action="store_true",
                        help="also score the wider nets of ceilings() (the filter's flags and more)")
    args = parser.parse_args(argv)
    for name in args.list or list(LISTS):
        for line in _lines(name, args.ewt, args.misses, args.ceilings):
            print(line, flush=True)


if __name__ == "__main__":
    main()
