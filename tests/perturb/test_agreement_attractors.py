"""Distance and attractors of agreement pairs (synrob.perturb.agreement.attractors): the keys
``distance``, ``attractors``, ``attractor_in_pp`` and ``attractor_in_rc`` of every pair's
``synrob.agreement`` (Linzen, Dupoux & Goldberg 2016)."""

from __future__ import annotations

from collections import defaultdict

from synrob.perturb.agreement.attractors import Position, attractor_ids, position
from synrob.perturb.corpus import Word, sentences_from_string


def parsed(rows: list[tuple]) -> tuple[list[Word], dict[int, list[Word]]]:
    """Words and children of a sentence of rows ``(form, upos, feats, head, deprel)``."""
    lines = ["# sent_id = t", "# text = " + " ".join(r[0] for r in rows)]
    for i, (form, upos, feats, head, deprel) in enumerate(rows, 1):
        lines.append(f"{i}\t{form}\t{form.lower()}\t{upos}\t_\t{feats}\t{head}\t{deprel}\t_\t_")
    (sentence,) = sentences_from_string("\n".join(lines) + "\n\n")
    words = sentence.words()
    children: dict[int, list[Word]] = defaultdict(list)
    for w in words:
        children[w.head].append(w)
    return words, children


def where(rows: list[tuple], subject: int, target: int, feature: str = "Number") -> Position:
    words, children = parsed(rows)
    return position(words, children, words[subject - 1], words[target - 1], feature)


SG, PL = "Number=Sing", "Number=Plur"


def test_an_attractor_in_a_prepositional_phrase() -> None:
    # The key to the cabinets is on the table .
    rows = [("The", "DET", "_", 2, "det"), ("key", "NOUN", SG, 8, "nsubj"),
            ("to", "ADP", "_", 5, "case"), ("the", "DET", "_", 5, "det"),
            ("cabinets", "NOUN", PL, 2, "nmod"), ("is", "AUX", SG, 8, "cop"),
            ("on", "ADP", "_", 8, "case"), ("table", "NOUN", SG, 0, "root")]
    assert where(rows, 2, 6) == Position(distance=4, attractors=1, in_pp=True, in_rc=False)
    assert where(rows, 2, 6).metadata() == {"distance": 4, "attractors": 1,
                                            "attractor_in_pp": True, "attractor_in_rc": False}


def test_an_attractor_in_a_relative_clause_and_words_without_the_feature() -> None:
    # The boys that the girl likes are tall : "that" has no Number, "girl" is in the relcl
    rows = [("The", "DET", "_", 2, "det"), ("boys", "NOUN", PL, 8, "nsubj"),
            ("that", "PRON", "PronType=Rel", 6, "obj"), ("the", "DET", "_", 5, "det"),
            ("girl", "NOUN", SG, 6, "nsubj"), ("likes", "VERB", SG, 2, "acl:relcl"),
            ("are", "AUX", PL, 8, "cop"), ("tall", "ADJ", "_", 0, "root")]
    assert where(rows, 2, 7) == Position(distance=5, attractors=1, in_pp=False, in_rc=True)
    # the same clause as a plain acl with its relative pronoun counts as a relative clause
    acl = [r if r[0] != "likes" else ("likes", "VERB", SG, 2, "acl") for r in rows]
    assert where(acl, 2, 7).in_rc


def test_same_value_nouns_are_no_attractors_and_order_does_not_matter() -> None:
    # Where are the owners of the dogs ? (verb before the subject; "dogs" has its Number)
    rows = [("Where", "ADV", "_", 2, "advmod"), ("are", "AUX", PL, 0, "root"),
            ("the", "DET", "_", 4, "det"), ("owners", "NOUN", PL, 2, "nsubj"),
            ("of", "ADP", "_", 7, "case"), ("the", "DET", "_", 7, "det"),
            ("dogs", "NOUN", PL, 4, "nmod")]
    assert where(rows, 4, 2) == Position(distance=2, attractors=0, in_pp=False, in_rc=False)


def test_a_pronoun_between_counts_and_a_multi_valued_word_only_without_the_value() -> None:
    # Czech-like: subject Neut, a PRON Fem between, a NOUN Fem,Neut between (holds Neut)
    rows = [("pole", "NOUN", "Gender=Neut", 4, "nsubj"), ("jí", "PRON", "Gender=Fem", 4, "iobj"),
            ("stavení", "NOUN", "Gender=Fem,Neut", 4, "obl"), ("patřilo", "VERB",
                                                               "Gender=Neut", 0, "root")]
    words, _ = parsed(rows)
    assert attractor_ids(words, words[0], words[3], "Gender") == [2]
    got = where(rows, 1, 4, "Gender")
    assert (got.attractors, got.in_pp, got.in_rc) == (1, False, False)
