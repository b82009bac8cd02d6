"""Everything a card depends on: the model, its languages and their treebanks, the preset,
the layers, the model's ``-p`` keys and the seed (``card.json``'s ``settings``).

:func:`check_request` checks what can be checked without reading a model (languages,
treebanks, ``-p`` keys, a quantization's fidelity check), so bad input is one line before
any work; :meth:`CardSettings.from_json` reads the settings back (``synrob card --from``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from synrob.perturb.errors import ParameterError, arg

from .presets import CardPreset, pick, preset, spread

__all__ = ["CardSettings", "check_request", "split_languages", "encoder_options",
           "placement_options"]


@dataclass(frozen=True)
class CardSettings:
    """The settings of one card (see the module docstring)."""

    model: str
    languages: tuple[str, ...]
    #: language -> treebank spec (as given, or the language's default)
    treebanks: dict[str, str]
    preset: CardPreset
    layers: tuple[int, ...]
    causal_layers: tuple[int, ...]
    #: the model's ``-p`` keys (encoder options: layer-only loading, offload, quantization)
    params: dict[str, Any] = field(default_factory=dict)
    seed: int = 0

    @property
    def seeds(self) -> list[int]:
        """The probes' training seeds: the preset's, shifted by :attr:`seed`."""
        return [self.seed + s for s in self.preset.seeds]

    def as_json(self) -> dict[str, Any]:
        """The settings as ``card.json`` records them (read back by :meth:`from_json`)."""
        return {"model": self.model, "languages": list(self.languages),
                "treebanks": dict(self.treebanks), "preset": self.preset.as_json(),
                "layers": list(self.layers), "causal_layers": list(self.causal_layers),
                "params": dict(self.params), "seed": self.seed, "seeds": self.seeds}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> CardSettings:
        """The settings a ``card.json`` recorded (its preset by name: a preset that changed
        since is a :class:`ParameterError`)."""
        try:
            named = preset(str(data["preset"]["name"]))
            if named.as_json() != dict(data["preset"]):
                raise ParameterError(f"card preset {named.name!r} has changed since this card "
                                     "was made; its recorded settings cannot be reproduced")
            return cls(str(data["model"]), tuple(data["languages"]), dict(data["treebanks"]),
                       named, tuple(int(x) for x in data["layers"]),
                       tuple(int(x) for x in data["causal_layers"]), dict(data["params"]),
                       int(data["seed"]))
        except (KeyError, TypeError, ValueError) as exc:
            raise ParameterError(f"card.json: its settings are incomplete or malformed "
                                 f"({type(exc).__name__}: {exc})") from None


def split_languages(value: str | Sequence[str]) -> tuple[str, ...]:
    """``"en,cs"`` or ``["en", "cs"]`` -> ``("en", "cs")``, each code checked, none twice."""
    from synrob.perturb.io.language import check_code

    items = value.split(",") if isinstance(value, str) else list(value)
    codes = [check_code(x) for x in items if str(x).strip()]
    if not codes:
        raise ParameterError(f"{arg('languages')} names no language")
    if len(set(codes)) != len(codes):
        raise ParameterError(f"{arg('languages')} names a language twice: {','.join(codes)}")
    return tuple(codes)


def encoder_options(params: Mapping[str, Any]) -> dict[str, Any]:
    """The ``-p`` keys as the transformer encoder parses them (unknown keys: one line)."""
    from synrob.perturb.params import parse_params

    from ..encoders.transformer import TransformerEncoder

    known = {p.name for p in TransformerEncoder.params} - {"model", "device"}
    unknown = sorted(set(params) - known)
    if unknown:
        raise ParameterError(f"-p {unknown[0]}: not a key a card takes; known: "
                             f"{', '.join(sorted(known))}")
    parsed = parse_params(TransformerEncoder.params, dict(params), "card -p")
    return {k: parsed[k] for k in params}


def placement_options(params: Mapping[str, Any]) -> Any:
    """The :class:`~synrob.perturb.lm.placement.Placement` of the ``-p`` keys."""
    from synrob.perturb.lm.placement import PLACEMENT_PARAMS, Placement

    return Placement.from_options({p.name: params[p.name] for p in PLACEMENT_PARAMS
                                   if p.name in params})


def check_request(model: str, languages: Sequence[str], treebanks: Mapping[str, str],
                  card_preset: CardPreset, params: Mapping[str, Any]) -> dict[str, str]:
    """Every language's treebank spec (given or default), after the checks that need no
    model: the languages, the ``--treebank`` languages, the ``-p`` keys and the fidelity
    check of a quantization (one-line errors)."""
    from .treebanks import default_treebank

    extra = sorted(set(treebanks) - set(languages))
    if extra:
        raise ParameterError(f"{arg('treebank')} names {', '.join(extra)}, which "
                             f"{arg('languages')} does not ({','.join(languages)})")
    specs = {lang: treebanks.get(lang) or default_treebank(lang, card_preset.english)
             for lang in languages}
    placement_options(encoder_options(params)).check(model)
    return specs


def card_layers(num_layers: int, card_preset: CardPreset, given: Sequence[int] | None
                ) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The probed layers (``given``, else the preset's spread) and the causal layers among
    them (:func:`~.presets.pick`)."""
    from synrob.perturb.errors import LayerError

    layers = sorted(set(given)) if given else spread(num_layers, card_preset.layers)
    bad = [x for x in layers if not 0 <= x < num_layers]
    if bad:
        raise LayerError(f"{arg('layers')}: the model has layers 0..{num_layers - 1}, not "
                         f"{', '.join(map(str, bad))}")
    return tuple(layers), tuple(pick(layers, card_preset.causal_layers))
