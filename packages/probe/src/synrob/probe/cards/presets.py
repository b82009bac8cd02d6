"""The card presets: how much of each treebank, which layers, how many seeds, and the preset of
each study a card runs (docs/card.md, "Presets").

A card preset fixes every setting of the card's studies but the model, the languages and the
treebanks. ``test`` is the suite's (2 layers, at most 50 sentences per split), ``sample`` a
quick look (about 8 layers on the bundled EWT sample), ``default`` the full treebanks.
``--layers`` replaces a preset's layers; the causal layers are then spread over the new ones.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

from synrob.perturb.errors import LayerError, ParameterError, arg

__all__ = ["CardPreset", "PRESETS", "preset", "spread", "pick"]


@dataclass(frozen=True)
class CardPreset:
    """One card preset (see the module docstring); every field is recorded in ``card.json``."""

    name: str
    #: layers probed, spread over the model's layers 1..N-1 (:func:`spread`; 0: every layer)
    layers: int
    #: the first N sentences of train, dev and test (0: all)
    train_sentences: int
    dev_sentences: int
    test_sentences: int
    #: probe training seeds (several: every interval resamples them too)
    seeds: tuple[int, ...]
    epochs: int
    patience: int
    #: rank of the structural probe (0: full)
    rank: int
    #: bootstrap resamples of every interval
    bootstrap: int
    #: MDL codelengths of the morphosyntax probes (online code, Voita & Titov 2020)
    mdl: bool
    #: Jabberwocky versions of the test set
    draws: int
    #: layers erased inside the model, spread over the probed layers (:func:`pick`)
    causal_layers: int
    #: agreement features erased (each one that has pairs); behaviour covers every feature
    causal_features: tuple[str, ...]
    #: agreement pairs scored per feature (0: all)
    pair_limit: int
    #: the study presets the card's settings start from
    jabberwocky_preset: str
    amnesic_preset: str
    #: English's treebank when --treebank en=... is not given
    english: str

    def as_json(self) -> dict[str, Any]:
        """The preset as ``card.json`` records it."""
        out = asdict(self)
        out["seeds"], out["causal_features"] = list(self.seeds), list(self.causal_features)
        return out


PRESETS: dict[str, CardPreset] = {
    "test": CardPreset("test", layers=2, train_sentences=40, dev_sentences=20,
                       test_sentences=30, seeds=(0,), epochs=20, patience=2, rank=32,
                       bootstrap=100, mdl=False, draws=1, causal_layers=1,
                       causal_features=("Number",), pair_limit=6,
                       jabberwocky_preset="sample", amnesic_preset="sample",
                       english="sample:en_ewt"),
    "sample": CardPreset("sample", layers=8, train_sentences=1000, dev_sentences=100,
                         test_sentences=150, seeds=(0,), epochs=10, patience=2, rank=64,
                         bootstrap=1000, mdl=False, draws=2, causal_layers=2,
                         causal_features=("Number",), pair_limit=40,
                         jabberwocky_preset="sample", amnesic_preset="sample",
                         english="sample:en_ewt"),
    "default": CardPreset("default", layers=0, train_sentences=0, dev_sentences=0,
                          test_sentences=0, seeds=(0, 1, 2), epochs=40, patience=2, rank=0,
                          bootstrap=1000, mdl=True, draws=3, causal_layers=5,
                          causal_features=("Number", "Person", "Gender"), pair_limit=0,
                          jabberwocky_preset="default", amnesic_preset="default",
                          english="ud:en_ewt"),
}


def preset(name: str) -> CardPreset:
    """The preset ``name``, or a one-line :class:`ParameterError` listing the presets."""
    if name not in PRESETS:
        raise ParameterError(f"{arg('preset')}: unknown card preset {name!r}; known: "
                             f"{', '.join(PRESETS)}")
    return PRESETS[name]


def spread(num_layers: int, count: int) -> list[int]:
    """``count`` layers spread evenly over a model's layers ``1 .. num_layers - 1`` (layer 0,
    the embeddings, is a baseline of the Jabberwocky study, not a layer of the curve), the
    first and the last included; every one when ``count`` is 0 or at least as many."""
    top = num_layers - 1
    if top < 1:
        raise LayerError(f"a model of {num_layers} layer(s) has no layer above its embeddings "
                         "to probe")
    if count <= 0 or count >= top:
        return list(range(1, top + 1))
    if count == 1:
        return [top]
    return sorted({round(1 + i * (top - 1) / (count - 1)) for i in range(count)})


def pick(layers: Sequence[int], count: int) -> list[int]:
    """``count`` of ``layers`` (sorted), evenly spaced inside the list (at the quantiles
    ``1/(count+1) .. count/(count+1)``, rounded half up: the ends are left to the probes); all
    when ``count`` is 0 or at least as many."""
    ordered = sorted(layers)
    if count <= 0 or count >= len(ordered):
        return ordered
    n = len(ordered) - 1
    return sorted({ordered[math.floor((i + 1) * n / (count + 1) + 0.5)] for i in range(count)})
