"""synrob.cli: the ``synrob`` command line (typer). Heavy modules are imported inside commands."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("synrob")
except PackageNotFoundError:  # pragma: no cover
    __version__ = "0.0.0"
