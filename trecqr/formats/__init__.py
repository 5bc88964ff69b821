"""TREC files in and out: runs, qrels (text, JSON dicts, DataFrames), written atomically.

Names are imported on first use (PEP 562): the C run scanner (``trecqr.formats._scan``) can then
be imported without numpy and pyarrow.
"""

from __future__ import annotations

import importlib

_EXPORTS = {
    "Qrels": ".qrels", "qrels_from_dict": ".qrels", "qrels_from_frame": ".tables",
    "read_qrels": ".qrels", "write_qrels": ".qrels",
    "Run": ".run", "read_run": ".run", "run_from_dict": ".run", "run_from_frame": ".tables",
    "write_run": ".run",
}

__all__ = list(_EXPORTS)


def __getattr__(name: str):
    if name not in _EXPORTS:
        raise AttributeError(f"module 'trecqr.formats' has no attribute {name!r}")
    value = getattr(importlib.import_module(_EXPORTS[name], __name__), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_EXPORTS))
