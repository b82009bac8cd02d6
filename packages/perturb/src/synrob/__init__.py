"""synrob: one import name for the toolkit's distributions.

``synrob.perturb`` ships in synrob-perturb, which every other synrob distribution depends on,
and so does this file: the only ``synrob/__init__.py``. The other distributions' subpackages
are portions of this package wherever they are installed (pkgutil-style ``extend_path``: side
by side in one ``site-packages``, or in separate source trees for an editable install).

``import synrob`` stays light: ``synrob.__version__`` (of the ``synrob`` distribution, else of
synrob-perturb) and every subpackage (``synrob.perturb``) are looked up on first use, and
``dir(synrob)`` lists the subpackages installed.
"""

from pkgutil import extend_path as _extend_path

__path__ = _extend_path(__path__, __name__)
# Tools that read the package's spec instead of its ``__path__`` (grimp, the graph builder of
# import-linter: ``bash dev.sh lint``) see every portion too once ``synrob`` is imported.
if __spec__ is not None and __spec__.submodule_search_locations is not None:
    __spec__.submodule_search_locations[:] = __path__


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    for dist in ("synrob", "synrob-perturb"):
        try:
            return version(dist)
        except PackageNotFoundError:
            continue
    return "0.0.0"  # pragma: no cover - running from a bare source tree


def _subpackages() -> list[str]:
    from pkgutil import iter_modules

    return sorted({m.name for m in iter_modules(__path__) if not m.name.startswith("_")})


def __getattr__(name: str) -> object:
    """``__version__`` and the installed subpackages, imported when first read (PEP 562)."""
    if name == "__version__":
        globals()[name] = value = _version()
        return value
    if name in _subpackages():
        from importlib import import_module

        return import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return ["__version__", *_subpackages()]
