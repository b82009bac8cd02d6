"""The one carrier CoNLL-U writer (:mod:`synrob.probe.runtime.carrier`) writes, for each of its two
callers, the very bytes their former writers wrote: the SentEval task corpora and
``local-structure``'s subword/char sets are named by (and cached under) the hash of these bytes.

The former writers are copied here verbatim (``_old_*``) and also pinned to inlined bytes.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from synrob.perturb.corpus import read_conllu
from synrob.perturb.errors import ParameterError
from synrob.probe.experiments.local_structure.data import carrier_conllu
from synrob.probe.runtime.carrier import carrier_block
from synrob.probe.senteval.features import conllu_text, task_corpus

SENTENCES = ["The cat sat .", "  Über  naïve\tcafés  ", "x", "a b c d e f g h i j"]

RECORDS: list[dict[str, Any]] = [
    {"sent_id": "w01", "original": "The cat sat .", "perturbed": "cat The . sat"},
    {"original": "no id", "perturbed": "  Ġno   Ġid\t"},
    {"sent_id": "", "original": "gone", "perturbed": "   "},
    {"sent_id": "é-4", "original": "x", "perturbed": "x"},
]


# ---------------------------------------------------------------------- the former writers
def _old_conllu_text(sentences: list[str]) -> str:
    """``synrob.probe.senteval.features.conllu_text`` before the shared writer."""
    out: list[str] = []
    for i, s in enumerate(sentences, 1):
        words = s.split()
        if not words:
            raise ParameterError(f"sentence {i} is empty")
        out.append(f"# sent_id = {i}\n# text = {' '.join(words)}\n")
        for j, w in enumerate(words, 1):
            head, rel = (0, "root") if j == 1 else (j - 1, "dep")
            out.append(f"{j}\t{w}\t_\t_\t_\t_\t{head}\t{rel}\t_\t_\n")
        out.append("\n")
    return "".join(out)


def _old_carrier_text(jsonl: Path) -> str:
    """The text ``local_structure_sets.carrier_conllu`` wrote before the shared writer."""
    blocks = []
    with jsonl.open(encoding="utf-8") as fh:
        for k, line in enumerate(fh):
            rec = json.loads(line)
            text = " ".join(rec["perturbed"].split())
            tokens = text.split(" ") if text else ["_"]
            lines = [f"# sent_id = {rec.get('sent_id') or k + 1}", f"# text = {text or '_'}"]
            for i, tok in enumerate(tokens, 1):
                head, rel = (0, "root") if i == 1 else (1, "dep")
                lines.append(f"{i}\t{tok}\t_\tX\t_\t_\t{head}\t{rel}\t_\t_")
            blocks.append("\n".join(lines) + "\n\n")
    return "".join(blocks)


def _jsonl(tmp_path: Path) -> Path:
    path = tmp_path / "set.shuffle.abc.jsonl"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in RECORDS),
                    encoding="utf-8")
    return path


# ---------------------------------------------------------------------- senteval: chain trees
def test_senteval_corpus_bytes_are_unchanged(tmp_path: Path) -> None:
    text = conllu_text(SENTENCES)
    assert text == _old_conllu_text(SENTENCES)
    assert text.startswith(
        "# sent_id = 1\n# text = The cat sat .\n"
        "1\tThe\t_\t_\t_\t_\t0\troot\t_\t_\n2\tcat\t_\t_\t_\t_\t1\tdep\t_\t_\n"
        "3\tsat\t_\t_\t_\t_\t2\tdep\t_\t_\n4\t.\t_\t_\t_\t_\t3\tdep\t_\t_\n\n"
        "# sent_id = 2\n# text = Über naïve cafés\n"
        "1\tÜber\t_\t_\t_\t_\t0\troot\t_\t_\n2\tnaïve\t_\t_\t_\t_\t1\tdep\t_\t_\n"
        "3\tcafés\t_\t_\t_\t_\t2\tdep\t_\t_\n\n"
        "# sent_id = 3\n# text = x\n1\tx\t_\t_\t_\t_\t0\troot\t_\t_\n\n")
    # the corpus file is named by the hash of these bytes: the name is the one it always had
    path = task_corpus(SENTENCES, tmp_path)
    assert path.read_bytes() == _old_conllu_text(SENTENCES).encode("utf-8")
    assert path.name == "senteval-515156d8c6e01c5b.conllu"
    assert len(list(read_conllu(path))) == len(SENTENCES)


def test_senteval_empty_sentence_is_an_error() -> None:
    with pytest.raises(ParameterError, match="sentence 2 is empty"):
        conllu_text(["a b", " \t "])


# ---------------------------------------------------------------------- local-structure: flat trees
def test_local_structure_carrier_bytes_are_unchanged(tmp_path: Path) -> None:
    jsonl = _jsonl(tmp_path)
    out = carrier_conllu(jsonl, tmp_path / "out")
    assert out.name == "set.shuffle.abc.carrier.conllu"
    assert out.read_text(encoding="utf-8") == _old_carrier_text(jsonl)
    assert out.read_bytes() == (
        "# sent_id = w01\n# text = cat The . sat\n"
        "1\tcat\t_\tX\t_\t_\t0\troot\t_\t_\n2\tThe\t_\tX\t_\t_\t1\tdep\t_\t_\n"
        "3\t.\t_\tX\t_\t_\t1\tdep\t_\t_\n4\tsat\t_\tX\t_\t_\t1\tdep\t_\t_\n\n"
        "# sent_id = 2\n# text = Ġno Ġid\n"
        "1\tĠno\t_\tX\t_\t_\t0\troot\t_\t_\n2\tĠid\t_\tX\t_\t_\t1\tdep\t_\t_\n\n"
        "# sent_id = 3\n# text = _\n1\t_\t_\tX\t_\t_\t0\troot\t_\t_\n\n"
        "# sent_id = é-4\n# text = x\n1\tx\t_\tX\t_\t_\t0\troot\t_\t_\n\n").encode()
    assert len(list(read_conllu(out))) == len(RECORDS)


def test_carrier_block_shapes() -> None:
    chain = carrier_block(7, ["a", "b", "c"], tree="chain", upos="_")
    flat = carrier_block(7, ["a", "b", "c"], tree="flat", upos="X")
    assert [line.split("\t")[6] for line in chain.splitlines()[2:] if line] == ["0", "1", "2"]
    assert [line.split("\t")[6] for line in flat.splitlines()[2:] if line] == ["0", "1", "1"]
    with pytest.raises(ValueError, match="tree shape"):
        carrier_block(1, ["a"], tree="star", upos="_")
