"""Typed component parameters (``-p key=value`` on the command line).

Every component (perturber, encoder, task, probe) declares its parameters as a tuple of
:class:`Param`; :func:`parse_params` checks names, converts strings and fills defaults.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .errors import ParameterError

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off"}


@dataclass(frozen=True)
class Param:
    """One parameter: name, Python type (bool, int, float or str), default, help, choices."""

    name: str
    type: type
    default: Any
    help: str
    choices: tuple[Any, ...] | None = None

    def convert(self, value: Any, owner: str) -> Any:
        """Convert ``value`` (a string from the CLI, or a Python value) to this type."""
        try:
            if self.type is bool and isinstance(value, str):
                low = value.lower()
                if low not in _TRUE | _FALSE:
                    raise ValueError(value)
                out: Any = low in _TRUE
            elif self.type is bool:
                if not isinstance(value, bool):
                    raise ValueError(value)
                out = value
            elif value is None and self.default is None:
                out = None
            elif self.type is float and isinstance(value, (int, float)) and not isinstance(value, bool):
                out = float(value)
            else:
                out = self.type(value)
        except (TypeError, ValueError):
            raise ParameterError(
                f"{owner}: parameter {self.name!r} expects {self.type.__name__}, got {value!r}"
            ) from None
        if self.choices is not None and out not in self.choices:
            allowed = ", ".join(map(str, self.choices))
            raise ParameterError(f"{owner}: {self.name}={out!r} is not one of: {allowed}")
        return out


def parse_params(specs: Sequence[Param], given: Mapping[str, Any], owner: str) -> dict[str, Any]:
    """Validated parameter dict: defaults filled in, strings converted, unknown keys refused."""
    by_name = {p.name: p for p in specs}
    unknown = sorted(set(given) - set(by_name))
    if unknown:
        known = ", ".join(sorted(by_name)) or "(none)"
        raise ParameterError(f"{owner}: unknown parameter {unknown[0]!r}; known: {known}")
    return {
        p.name: p.convert(given[p.name], owner) if p.name in given else p.default for p in specs
    }


def parse_assignments(items: Iterable[str]) -> dict[str, str]:
    """``["rho=0.5", "unit=char"]`` -> ``{"rho": "0.5", "unit": "char"}``."""
    out: dict[str, str] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise ParameterError(f"parameter {item!r} is not of the form key=value")
        out[key.strip()] = value.strip()
    return out


def describe_params(specs: Sequence[Param]) -> list[dict[str, Any]]:
    """JSON-friendly description of parameters (for ``--describe`` and docs)."""
    return [
        {
            "name": p.name,
            "type": p.type.__name__,
            "default": p.default,
            "help": p.help,
            **({"choices": list(p.choices)} if p.choices else {}),
        }
        for p in specs
    ]


def describe_component(cls: type) -> dict[str, Any]:
    """JSON-friendly description of a component class: name, version, summary, paper, params."""
    return {
        "name": cls.name,  # type: ignore[attr-defined]
        "version": getattr(cls, "version", ""),
        "summary": getattr(cls, "summary", ""),
        "paper": getattr(cls, "paper", ""),
        "params": describe_params(getattr(cls, "params", ())),
    }
