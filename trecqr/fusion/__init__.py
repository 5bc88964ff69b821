"""Fusion of runs: ranx's 25 algorithms and six normalisations on columns (see :mod:`.fuse`)."""

from __future__ import annotations

from .fuse import fuse
from .methods import ALIASES, METHODS
from .normalization import NORMS

__all__ = ["fuse", "METHODS", "ALIASES", "NORMS"]
