"""The headline of a language: three to five sentences generated from the card's numbers.

Each sentence is made by one rule below from numbers of the sections, never typed by hand;
every number it shows is listed beside it (``numbers``: the JSON pointer of the number in
``card.json``, the value shown and its format), with its 95 % interval in brackets. Numbers
are shown with two decimals, the share of the lead lost as a whole percentage. The phrases' definitions are in docs/card.md ("The headline"):

* **structure**: "the structural probe recovers the most tree structure at layer L": L is the
  best layer on dev UUAS; the UUAS shown is the test UUAS at L, beside the path baseline's
  and the random-initialisation control's at L;
* **decodable**: "F is decodable from layer L on": the lower end of the interval of F's
  selectivity (accuracy minus the control task's) exceeds 0.05 at L and at every later probed
  layer; the selectivity shown is L's. "decodable at no probed layer" when no L is;
* **jabberwocky**: the share of the UUAS lead over the baseline chosen on clean dev that the
  best layer's probe loses on Jabberwocky sentences (without a lead on clean sentences, the
  lead itself: no share of it can be lost);
* **behaviour**: the share of a feature's agreement pairs in which the model prefers the
  grammatical sentence, without an attractor and with one or more;
* **causal**: at the layer where LEACE erasure of the feature lowers agreement accuracy most,
  the accuracy clean, erased, and with the random erasure of the same rank and mean
  displacement;
* **absent**: the sections that could not run, and why (no numbers).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from .probing import decodable_from

__all__ = ["headline", "fmt2", "fmt_percent"]

Claim = dict[str, Any]


def fmt2(value: float | None) -> str:
    """A number as the headline shows it: two decimals (``n/a`` when unknown)."""
    return "n/a" if value is None else f"{value:.2f}"


def fmt_percent(value: float | None) -> str:
    """A share as the headline shows it: a whole percentage (``n/a`` when unknown)."""
    return "n/a" if value is None else f"{100 * value:.0f} %"


class _Sentence:
    """One sentence and the numbers it shows (their JSON pointers in card.json)."""

    def __init__(self, rule: str, base: str) -> None:
        self.rule, self.base, self.parts, self.numbers = rule, base, [], []

    def num(self, pointer: str, n: Mapping[str, Any], interval: bool = True,
            percent: bool = False) -> str:
        """The text of number ``n`` (at ``pointer`` under the language), recorded; two
        decimals, or a whole percentage with ``percent``."""
        show = fmt_percent if percent else fmt2
        lo, hi = n["ci95"]
        text = show(n["value"])
        if interval and lo is not None:
            text = f"{text} [{show(lo)}, {show(hi)}]"
        self.numbers.append({"pointer": f"{self.base}/{pointer}", "value": n["value"],
                             "shown": show(n["value"]), "ci95": n["ci95"] if interval else None,
                             "format": "percent" if percent else "2 decimals"})
        return text

    def claim(self, text: str) -> Claim:
        return {"rule": self.rule, "text": text, "numbers": self.numbers}


def _structure(sec: Mapping[str, Any], s: _Sentence, model: str) -> str | None:
    task = sec.get("tasks", {}).get("distance")
    if task is None or task["best_layer"] is None:
        return None
    i = [e["layer"] for e in task["layers"]].index(task["best_layer"])
    m, at = task["layers"][i]["measures"], f"structure/tasks/distance/layers/{i}/measures"
    if "uuas" not in m:
        return None
    text = (f"{model}'s structural probe recovers the most tree structure at layer "
            f"{task['best_layer']}: UUAS {s.num(f'{at}/uuas', m['uuas'])}")
    extra = []
    if "path" in task["baselines"]:
        extra.append("the path baseline " + s.num("structure/tasks/distance/baselines/path/uuas",
                                                  task["baselines"]["path"]["uuas"]))
    if "random_init_uuas" in m:
        extra.append("a randomly initialised copy of the model "
                     + s.num(f"{at}/random_init_uuas", m["random_init_uuas"]))
    return text + (f", against {' and '.join(extra)}" if extra else "") + "."


def _decodable(sec: Mapping[str, Any], s: _Sentence) -> str | None:
    tasks = sec.get("tasks", {})
    labels = [x for x in ("pos", "feats:Number", "feats:Person", "feats:Gender") if x in tasks]
    if not labels:
        return None
    found, never = [], []
    for label in labels:
        name = label.split(":", 1)[-1] if label.startswith("feats:") else "POS"
        task, layer = tasks[label], decodable_from(tasks[label])
        if layer is None:
            never.append(name)
            continue
        i = [e["layer"] for e in task["layers"]].index(layer)
        key = f"selectivity_{task['metric']}"
        sel = s.num(f"morphosyntax/tasks/{label}/layers/{i}/measures/{key}",
                    task["layers"][i]["measures"][key])
        found.append(f"{name} is decodable from layer {layer} on (selectivity {sel})")
    if never:
        names = ", ".join(never[:-1]) + (" and " if len(never) > 1 else "") + never[-1]
        found.append(f"{names} {'is' if len(never) == 1 else 'are'} decodable at no probed "
                     "layer")
    text = "; ".join(found)
    return text[0].upper() + text[1:] + "."


def _jabberwocky(sec: Mapping[str, Any], s: _Sentence) -> str | None:
    if "lead_clean" not in sec or sec["lead_clean"]["value"] is None:
        return None
    clean = s.num("jabberwocky/uuas_clean", sec["uuas_clean"])
    jab = s.num("jabberwocky/uuas_jabberwocky", sec["uuas_jabberwocky"])
    if sec.get("lead_lost", {}).get("value") is None:  # no lead on clean sentences to lose
        return (f"At layer {sec['layer']} the probe does not lead the {sec['baseline']} "
                f"baseline on clean sentences (lead "
                f"{s.num('jabberwocky/lead_clean', sec['lead_clean'])}), so no share of a lead "
                f"can be lost on Jabberwocky sentences (UUAS {clean} clean, {jab} Jabberwocky).")
    lost = s.num("jabberwocky/lead_lost", sec["lead_lost"], percent=True)
    flips = " and trails it there" if sec["lead_lost"]["value"] > 1 else ""
    return (f"On Jabberwocky sentences the layer-{sec['layer']} probe loses {lost} of its "
            f"UUAS lead over the {sec['baseline']} baseline{flips} (UUAS {clean} clean, {jab} "
            "Jabberwocky).")


def _behaviour(sec: Mapping[str, Any], s: _Sentence, model: str) -> str | None:
    feats = sec.get("features", {})
    if not feats:
        return None
    f = "Number" if "Number" in feats else next(iter(feats))
    b, at = feats[f], f"behaviour/features/{f}"
    n = b["pairs"]
    text = (f"{model} prefers the grammatical sentence in {s.num(f'{at}/accuracy', b['accuracy'])}"
            f" of {n} {f} agreement {'pair' if n == 1 else 'pairs'}")
    zero, more = b["attractors"].get("0"), b["attractors"].get("1+")
    parts = [f"{s.num(f'{at}/attractors/{k}', v)} {label} ({_pairs(v['n'])})"
             for k, v, label in (("0", zero, "without an attractor"),
                                 ("1+", more, "with one or more")) if v and v["n"]]
    return text + (": " + ", ".join(parts) if parts else "") + "."


def _pairs(n: int) -> str:
    return f"{n} pair" if n == 1 else f"{n} pairs"


def _causal(sec: Mapping[str, Any], s: _Sentence) -> str | None:
    feats = sec.get("features", {})
    f = "Number" if "Number" in feats else next(iter(feats), None)
    if f is None or feats[f]["hurts_most"] is None:
        return None
    layer = feats[f]["hurts_most"]
    i = [e["layer"] for e in feats[f]["layers"]].index(layer)
    m, at = feats[f]["layers"][i]["measures"], f"causal/features/{f}/layers/{i}/measures"
    clean, erased = m["accuracy_clean"], m["accuracy_erased"]
    verb = "lowers" if erased["value"] < clean["value"] else "does not lower"
    text = (f"Erasing {f} at layer {layer} {verb} agreement accuracy: "
            f"{s.num(f'{at}/accuracy_clean', clean)} clean, "
            f"{s.num(f'{at}/accuracy_erased', erased)} erased")
    if "accuracy_random_matched" in m:
        text += (", against " + s.num(f"{at}/accuracy_random_matched",
                                      m["accuracy_random_matched"])
                 + " after a random erasure of the same size")
    return text + "."


_NAMES = {"structure": "structure", "morphosyntax": "morphosyntax",
          "jabberwocky": "Jabberwocky", "behaviour": "behaviour", "causal": "causal"}


def _absent(sections: Mapping[str, Any]) -> str | None:
    """One sentence naming the absent sections and why (one reason per distinct reason)."""
    by_reason: dict[str, list[str]] = {}
    for name, sec in sections.items():
        if sec.get("status") == "absent":
            by_reason.setdefault(str(sec["reason"]), []).append(_NAMES.get(name, name))
    if not by_reason:
        return None
    parts = [f"{_and(names)} section{'s' if len(names) > 1 else ''}: {reason}"
             for reason, names in by_reason.items()]
    return "No " + "; no ".join(parts) + "."


def _and(names: list[str]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def headline(lang: str, sections: Mapping[str, Any], model: str) -> list[Claim]:
    """The headline sentences of ``lang`` (see the module docstring), in the order of the
    sections; the sections that have no such number make none, and the absent sections one
    sentence (``absent``) that says why, at most five in all."""
    base = f"/languages/{lang}/sections"
    rules: list[tuple[str, str, Callable[..., str | None], tuple[Any, ...]]] = [
        ("structure", "structure", _structure, (model,)),
        ("decodable", "morphosyntax", _decodable, ()),
        ("jabberwocky", "jabberwocky", _jabberwocky, ()),
        ("behaviour", "behaviour", _behaviour, (model,)),
        ("causal", "causal", _causal, ()),
    ]
    claims = []
    for rule, name, make, extra in rules:
        sec = sections.get(name, {})
        if sec.get("status") != "ok":
            continue
        s = _Sentence(rule, base)
        text = make(sec, s, *extra)
        if text:
            claims.append(s.claim(text))
    missing = _absent(sections)
    if missing and len(claims) < 5:
        claims.append({"rule": "absent", "text": missing, "numbers": []})
    return claims
