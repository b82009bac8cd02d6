"""Concept erasure: affine erasers fitted on a probing task's labels (LEACE and two random
controls: one matched in rank, one in rank and mean displacement), applied to cached
representations or inside a model's forward pass.

``eraser`` (the shared :class:`Eraser`), ``fit`` (LEACE, the random controls), ``store``
(safetensors files and their provenance checks), ``amnesic`` (amnesic probing on cached
representations: ``synrob erase``). torch and concept-erasure are imported inside functions.
"""

from .eraser import Eraser
from .fit import fit_leace, matched_control, mean_displacement, random_control, random_eraser
from .store import check_eraser, load_eraser, save_eraser

__all__ = ["Eraser", "fit_leace", "random_eraser", "random_control", "matched_control",
           "mean_displacement", "save_eraser", "load_eraser", "check_eraser"]
