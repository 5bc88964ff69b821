"""Retrieval: passage collections (streamed) and an embedded BM25 backend (bm25s).

bm25s is imported only when an index is built or searched, so ``trecqr eval`` stays lean.
"""

from __future__ import annotations

from .collections import Doc, iter_collection  # noqa: F401

__all__ = ["Doc", "iter_collection", "build_index", "search", "analyze"]


def __getattr__(name):
    if name in ("build_index", "search", "analyze", "load_index"):
        from . import bm25

        return getattr(bm25, name)
    raise AttributeError(f"module 'trecqr.retrieval' has no attribute {name!r}")
