"""Every agreement twin keeps every character of its original but the agreement morpheme
(issue 54: *They’re* became *They's*): checked on every pair of EWT dev and test and of a
held-out English treebank (UD English GUM, tests/data/ud/en_gum)."""

from __future__ import annotations

from pathlib import Path

import pytest
from synrob.perturb.corpus import read_conllu
from synrob.perturb.perturbers.agreement import Agreement
from synrob.perturb.pipeline import perturb_records

GUM = Path(__file__).resolve().parent.parent / "data" / "ud" / "en_gum" / "en_gum-ud-test.conllu"


def changed_stretch(old: str, new: str) -> tuple[str, str]:
    """The stretches of two texts between their common prefix and common suffix."""
    start = 0
    while start < min(len(old), len(new)) and old[start] == new[start]:
        start += 1
    end = 0
    while end < min(len(old), len(new)) - start and old[-1 - end] == new[-1 - end]:
        end += 1
    return old[start:len(old) - end], new[start:len(new) - end]


def marks_lost(path: Path, **params) -> tuple[int, list[tuple[str, str, str]]]:
    """How many pairs the file gives, and those whose changed stretch differs in a character
    that is not a letter (an apostrophe, a hyphen, a space...)."""
    agreement = Agreement(reference=str(path), **params)
    bad, n = [], 0
    for rec in perturb_records(agreement, read_conllu(path)):
        if not rec.changed:
            continue
        n += 1
        old, new = changed_stretch(rec.original, rec.perturbed)
        if [c for c in old if not c.isalpha()] != [c for c in new if not c.isalpha()]:
            bad.append((rec.sent_id, old, new))
    return n, bad


def test_the_held_out_gum_twins_keep_their_marks() -> None:
    n, bad = marks_lost(GUM, lexicon="ud:en_ewt:train")
    assert n >= 40 and not bad, bad


@pytest.mark.slow
@pytest.mark.parametrize("split", ["dev", "test"])
def test_the_ewt_twins_keep_their_marks(ewt_dir: Path, split: str) -> None:
    n, bad = marks_lost(ewt_dir / f"en_ewt-ud-{split}.conllu")
    assert n >= 500 and not bad, bad
