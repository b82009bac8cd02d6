"""Domain errors. Library code raises these; only the CLI turns them into one line on stderr."""

from __future__ import annotations


class SynrobError(Exception):
    """Base class of every error synrob reports to a user (the CLI prints it, no traceback)."""


class ConlluError(SynrobError):
    """Malformed CoNLL-U input, located by file and line."""

    def __init__(self, path: str, line: int, problem: str, sent_id: str | None = None) -> None:
        self.path = path
        self.line = line
        self.problem = problem
        self.sent_id = sent_id
        super().__init__(f"{path}:{line}: {problem}")


class PluginError(SynrobError):
    """A plugin could not be loaded, or two components claim the same name."""


class UnknownComponentError(SynrobError):
    """A component name (perturber, encoder, probe, ...) is not registered."""


class ParameterError(SynrobError):
    """A component was given an unknown parameter or a value of the wrong type."""


class ResourceError(SynrobError):
    """A model, vector file, treebank or lexicon is missing and cannot be fetched."""


class DeviceError(ResourceError):
    """A torch device spec is invalid, or names a device this machine does not have."""


class SynrobWarning(UserWarning):
    """A problem the user should know about that does not stop the work (the CLI prints it
    as one ``synrob: warning:`` line)."""
