"""synrob-typo: a third-party synrob plugin adding the ``typo`` perturber (keyboard-typo noise).

synrob finds it only through the ``synrob`` entry point declared in this distribution's
``pyproject.toml`` (``typo = "synrob_typo.plugin"``); importing this package registers nothing.
"""

from __future__ import annotations

__version__ = "0.1.0"
