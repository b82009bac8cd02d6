"""``python -m synrob.cli``: the ``synrob`` command where no console script is on the PATH
(a ``pip install --target`` directory, an embedded interpreter)."""

from .app import main

if __name__ == "__main__":
    main()
