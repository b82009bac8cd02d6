"""Domain errors. Library code raises these; only the CLI turns them into one line on stderr.

Each error is also the built-in exception it means, so that ``except ValueError`` and its
kin work in Python: a bad value is a :class:`ValueError` (:class:`ParameterError`, its
:class:`LayerError`, :class:`LanguageError <synrob.perturb.io.language.LanguageError>`, malformed
CoNLL-U), an unknown name a :class:`KeyError` (:class:`UnknownNameError`,
:class:`UnknownComponentError`) and a missing file a :class:`FileNotFoundError`
(:class:`MissingFileError`).

**The caller's arguments in a message.** A message names an argument with :func:`arg`
(``f"{arg('train')} and {arg('dev')} are needed"``) and a component parameter with
:func:`param` (``param("feature=Number")``). ``str(error)`` spells them for Python
(``train=``, ``feature=Number``); the CLI's error boundary spells them as its flags
(``--train``, ``-p feature=Number``) with :meth:`SynrobError.render`.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable

__all__ = ["ConlluError", "ConlluFileNotFoundError", "DeviceError", "LayerError",
           "MissingFileError", "ParameterError", "PluginError", "ResourceError", "SynrobError",
           "SynrobWarning", "UnknownComponentError", "UnknownNameError", "arg", "close_names", "did_you_mean", "param"]

# private-use characters around an argument (or a parameter): no user text holds them
_ARG, _PARAM, _VALUE, _END = "\ue000", "\ue002", "\ue003", "\ue001"
_MARKED = re.compile(f"([{_ARG}{_PARAM}])([^{_END}{_VALUE}]*)(?:{_VALUE}([^{_END}]*))?{_END}")


def arg(name: str, value: str | None = None) -> str:
    """The caller's argument ``name`` (with ``value``, as text, when given) inside an error
    message: ``name=`` or ``name=value`` from Python, ``--name`` or ``--name value``
    (underscores as dashes) from the command line."""
    return f"{_ARG}{name}{'' if value is None else _VALUE + value}{_END}"


def param(assignment: str) -> str:
    """A component parameter (``key=value``) inside an error message: as is from Python (a
    keyword, or a key of ``params=``), ``-p key=value`` from the command line."""
    return f"{_PARAM}{assignment}{_END}"


def spell(text: str, cli: bool = False) -> str:
    """``text`` with every :func:`arg` and :func:`param` in it spelled for Python or, with
    ``cli``, for the command line."""

    def one(m: re.Match[str]) -> str:
        kind, name, value = m.groups()
        if kind == _PARAM:
            return f"-p {name}" if cli else name
        if cli:
            flag = "--" + name.replace("_", "-")
            return flag if value is None else f"{flag} {value}"
        return f"{name}={value or ''}"

    return _MARKED.sub(one, text)


def close_names(name: str, known: Iterable[str], cutoff: float = 0.75) -> list[str]:
    """The names of ``known`` close to ``name`` (a typo: ``minlm`` -> ``minilm``; the same
    name in other case), closest first."""
    known = list(known)
    same = [k for k in known if k.lower() == name.lower() and k != name]
    return same or difflib.get_close_matches(name, known, n=3, cutoff=cutoff)


def did_you_mean(name: str, known: Iterable[str]) -> str:
    """`` (did you mean 'minilm'?)`` for a name close to one of ``known``, else ``''``."""
    close = close_names(name, known)
    return f" (did you mean {' or '.join(map(repr, close))}?)" if close else ""


class SynrobError(Exception):
    """Base class of every error synrob reports to a user (the CLI prints it, no traceback).

    ``str(error)`` is the message with the caller's arguments spelled for Python;
    :meth:`render` with ``cli=True`` spells them as the command line's flags."""

    def __init__(self, *args: object) -> None:
        self.template = str(args[0]) if len(args) == 1 else ""
        super().__init__(*(spell(a) if isinstance(a, str) else a for a in args))

    def render(self, cli: bool = False) -> str:
        """The message, the arguments it names spelled for Python or (``cli``) as flags."""
        template = getattr(self, "template", "")
        return spell(template, cli) if template else str(self)

    def __str__(self) -> str:  # KeyError's own would quote the message
        return BaseException.__str__(self)


class ConlluError(SynrobError, ValueError):
    """Malformed CoNLL-U input, located by file and line."""

    def __init__(self, path: str, line: int, problem: str, sent_id: str | None = None) -> None:
        self.path = path
        self.line = line
        self.problem = problem
        self.sent_id = sent_id
        super().__init__(f"{path}:{line}: {problem}")


class ConlluFileNotFoundError(ConlluError, FileNotFoundError):
    """A CoNLL-U input that does not exist: a :class:`ConlluError` at line 0 that is also a
    :class:`FileNotFoundError`."""

    def __init__(self, path: str) -> None:
        super().__init__(path, 0, "no such file")
        self.filename = path


class PluginError(SynrobError):
    """A plugin could not be loaded, or two components claim the same name."""


class UnknownNameError(SynrobError, KeyError):
    """A name synrob does not know (a bundled sample, a model alias); the message lists the
    known ones or the closest."""


class UnknownComponentError(UnknownNameError):
    """A component name (perturber, encoder, probe, ...) is not registered."""


class ParameterError(SynrobError, ValueError):
    """A component or a function was given an unknown parameter or a bad value."""


class LayerError(ParameterError):
    """A layer that is not a layer number, or that the encoder does not have (from
    ``probe()``, ``encode()`` and ``erase()`` alike)."""


class ResourceError(SynrobError):
    """A model, vector file, treebank or lexicon is missing and cannot be fetched."""


class MissingFileError(ResourceError, FileNotFoundError):
    """A file or directory the caller named does not exist."""


class DeviceError(ResourceError, ValueError):
    """A torch device spec is invalid, or names a device this machine does not have."""


class SynrobWarning(UserWarning):
    """A problem the user should know about that does not stop the work (the CLI prints it
    as one ``synrob: warning:`` line)."""
