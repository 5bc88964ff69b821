"""Retrieval: topics to runs (the index, search and cqr commands are in
:mod:`trecqr.cli.retrieval`).

* :mod:`.collections`: passage collections (TSV, JSONL, ``irds:``), streamed;
* :mod:`.indexdir`, :mod:`.backends`: the index folder and its manifest, and the dispatch to
  the backend that built it: :mod:`.bm25` (bm25s, analysed as Lucene's :mod:`.analysis`),
  :mod:`.lucene` (Pyserini) and :mod:`.dense` (sentence-transformers and faiss);
* :mod:`.demo`: the builder of the demo fixtures.

Each backend's library is imported only when its index is built or searched, so ``trecqr eval``
stays lean; ``build_index``, ``search``, ``analyze`` and ``load_index`` (bm25s) are exported
lazily. Beside them: :mod:`.lucene_search` and :mod:`.java_runtime` (the Lucene backend's search
and its Java), :mod:`.dense_encoders` (the dense backend's encoders) and
:mod:`.candidate_vectors` (LLM4CS' Mean and SC over several candidate rewrites per turn). The
flows that search and score (``trecqr cqr``) are in :mod:`trecqr.workflows`, one floor up.
"""

from __future__ import annotations

from trecqr.retrieval.collections import Doc, iter_collection  # noqa: F401

__all__ = ["Doc", "iter_collection", "build_index", "search", "analyze"]


def __getattr__(name):
    if name in ("build_index", "search", "analyze", "load_index"):
        from . import bm25

        return getattr(bm25, name)
    raise AttributeError(f"module 'trecqr.retrieval' has no attribute {name!r}")
