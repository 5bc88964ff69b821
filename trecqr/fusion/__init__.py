"""Fusion of runs: ranx's 25 algorithms and seven normalisations, on columns.

``fuse`` (:mod:`.entry`) fuses runs, ``optimize_fusion`` (:mod:`.optimize`) grid-searches a
method's weights or parameter on training qrels. Names are imported on first use, so that a
caller of one kernel (sim_ret++ uses RRF and CombSUM) does not load the Python API.
"""

from __future__ import annotations

import importlib

_EXPORTS = {"fuse": ".entry", "optimize_fusion": ".optimize", "METHODS": ".methods",
            "ALIASES": ".methods", "NORMS": ".normalization"}

__all__ = list(_EXPORTS)


def __getattr__(name: str):
    if name not in _EXPORTS:
        raise AttributeError(f"module 'trecqr.fusion' has no attribute {name!r}")
    value = getattr(importlib.import_module(_EXPORTS[name], __name__), name)
    globals()[name] = value
    return value
