"""Concept erasure: affine erasers fitted on a probing task's labels (LEACE and its random
control), applied to cached representations or inside a model's forward pass.

``eraser`` (the shared :class:`Eraser`), ``fit`` (LEACE, the random control), ``store``
(safetensors files and their provenance checks), ``amnesic`` (amnesic probing on cached
representations: ``synrob erase``). torch and concept-erasure are imported inside functions.
"""

from .eraser import Eraser
from .fit import fit_leace, random_control, random_eraser
from .store import check_eraser, load_eraser, save_eraser

__all__ = ["Eraser", "fit_leace", "random_eraser", "random_control", "save_eraser",
           "load_eraser", "check_eraser"]
