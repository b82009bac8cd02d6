"""A card as a result: :class:`Card` (what :func:`synrob.probe.card` returns), a table of
every number with the card's headline and figure."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# the lazy package: `_public.Figure` (a return type) imports matplotlib only when read
import synrob.probe as _public
from synrob.perturb.errors import ParameterError
from synrob.perturb.io.table import ResultTable

__all__ = ["Card"]


@dataclass(repr=False)
class Card(ResultTable):
    """A card: ``data`` (``card.json``), ``path`` (its directory), ``rows`` (every number as
    a flat row: language, section, task or feature, layer, measure, value, interval, settings)
    and ``invocation`` (runs executed and reused, seconds, stages; empty when loaded)."""

    data: dict[str, Any]
    path: Path
    rows: list[dict[str, Any]] = field(default_factory=list)
    invocation: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        from .numbers import flat_rows

        self.title = f"card {self.data['model']['name']} ({', '.join(self.data['languages'])})"
        self.rows = flat_rows(self.data)

    @property
    def headline(self) -> dict[str, list[str]]:
        """Language -> its headline sentences."""
        return {lang: [c["text"] for c in entry["headline"]]
                for lang, entry in self.data["languages"].items()}

    def plot(self, lang: str | None = None) -> _public.Figure:
        """The card's figure of ``lang`` (default: its first language): structure, selectivity
        and erasure against the layer, with 95 % intervals."""
        from .figure import card_figure

        lang = lang or next(iter(self.data["languages"]))
        if lang not in self.data["languages"]:
            raise ParameterError(f"the card has no language {lang!r}; it has "
                                 f"{', '.join(self.data['languages'])}")
        return card_figure(self.data, lang)

    def _repr_html_(self) -> str:
        import html

        lines = "".join(f"<li>{html.escape(lang)}: {html.escape(t)}</li>"
                        for lang, texts in self.headline.items() for t in texts)
        return f"<ul>{lines}</ul>" + super()._repr_html_()
