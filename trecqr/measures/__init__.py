"""Measures: one module per family, each registering its measures with ``@register``.

Importing :func:`load_all` imports every module of this package, so adding a family is adding
a file; the output order comes from :mod:`.table` (trec_eval's measures.c).
"""

from __future__ import annotations

import importlib
import pkgutil

from trecqr.measures.base import REGISTRY, Measure, Params, register
from trecqr.measures.table import MODULE_OF

_INFRASTRUCTURE = {"base", "table"}
_loaded = False


def load_family(name: str) -> None:
    """Import the module that registers measure ``name`` (table.MODULE_OF)."""
    if name not in REGISTRY and name in MODULE_OF:
        importlib.import_module(f"{__name__}.{MODULE_OF[name]}")


def load_all() -> dict:
    """Import every measure family once; returns the registry name -> Measure."""
    global _loaded
    if not _loaded:
        for info in pkgutil.iter_modules(__path__):
            if info.name not in _INFRASTRUCTURE and not info.name.startswith("_"):
                importlib.import_module(f"{__name__}.{info.name}")
        _loaded = True
    return REGISTRY


__all__ = ["REGISTRY", "Measure", "Params", "register", "load_all", "load_family"]
