"""How many pseudowords of a Jabberwocky output a Hunspell dictionary knows, and how much was
replaced (docs/languages.md, "Hunspell dictionaries" and "How much is replaced").

Usage: ``python bench/pseudowords_hunspell.py ORIGINAL.conllu PERTURBED.conllu [DICT]``, where
PERTURBED is ``synrob perturb --kind jabberwocky --seed 0 ORIGINAL.conllu -o PERTURBED.conllu``
and DICT the dictionary's base path (default: the one synrob finds for the output's language).
Each word is looked up with spylls directly (``Dictionary.lookup``), not through synrob's cache.

Prints ``name: value`` lines:

* ``sentences_changed``, ``content_words``, ``content_replaced``, ``content_replaced_share``:
  sentences with a changed FORM; NOUN/VERB/ADJ/ADV words and those whose FORM changed;
* ``distinct_lower`` / ``accepted_lower`` / ``accepted_lower_share``: distinct replaced forms,
  lower-cased, with the pseudo-lemmas, and how many the dictionary accepts;
* the same for ``forms_alone`` (lower-cased forms without the lemmas) and ``as_written``
  (forms as written, capitalised where the original was, with the lemmas);
* ``accepted_examples``: up to 12 accepted words.
"""

from __future__ import annotations

import sys
from pathlib import Path

from spylls.hunspell import Dictionary
from synrob.perturb.corpus import read_conllu
from synrob.perturb.lexicon.hunspell import find_dictionary

CONTENT = ("NOUN", "VERB", "ADJ", "ADV")


def _collect(original: Path, perturbed: Path) -> tuple[dict[str, int], set[str], set[str], str]:
    """Counts, replaced forms (as written), pseudo-lemmas, and the output's language."""
    counts = {"sentences_changed": 0, "content_words": 0, "content_replaced": 0}
    forms: set[str] = set()
    lemmas: set[str] = set()
    lang = "en"
    for a, b in zip(read_conllu(original), read_conllu(perturbed), strict=True):
        lang = b.metadata.get("synrob.lang", lang)
        new = {w.id: w for w in b.words()}
        changed = False
        for w in a.words():
            moved = new[w.id].form != w.form
            changed |= moved
            if w.upos in CONTENT:
                counts["content_words"] += 1
                counts["content_replaced"] += moved
            if moved:
                forms.add(new[w.id].form)
                lemmas.add(new[w.id].lemma)
        counts["sentences_changed"] += changed
    return counts, forms, lemmas, lang


def _share(name: str, words: set[str], dictionary: Dictionary) -> list[str]:
    accepted = sorted(w for w in words if dictionary.lookup(w))
    share = len(accepted) / len(words) if words else 0.0
    return [f"distinct_{name}: {len(words)}", f"accepted_{name}: {len(accepted)}",
            f"accepted_{name}_share: {share:.4f}"]


def main(argv: list[str]) -> None:
    original, perturbed = Path(argv[0]), Path(argv[1])
    counts, forms, lemmas, lang = _collect(original, perturbed)
    if len(argv) > 2:
        base = argv[2]
    else:
        files = find_dictionary(lang)
        if files is None:
            raise SystemExit(f"no Hunspell dictionary for {lang}: give its base path")
        base = str(files.base)
    dictionary = Dictionary.from_files(base)
    lines = [f"{k}: {v}" for k, v in counts.items()]
    lines.append(f"content_replaced_share: {counts['content_replaced'] / counts['content_words']:.4f}")
    lower = {f.lower() for f in forms}
    lines += _share("lower", lower | lemmas, dictionary)
    lines += _share("forms_alone", lower, dictionary)
    lines += _share("as_written", forms | lemmas, dictionary)
    examples = sorted(w for w in lower | lemmas if dictionary.lookup(w))[:12]
    lines.append(f"accepted_examples: {' '.join(examples)}")
    print("\n".join(lines))


if __name__ == "__main__":
    main(sys.argv[1:])
