"""The retrieval backends, and the dispatch from an index folder to the one that built it.

========  ===========================================  ==================================
backend   what                                         needs
========  ===========================================  ==================================
bm25s     embedded BM25 (bm25s), Lucene-style analysis  the base install
lucene    Lucene BM25 through Pyserini 0.22.1           ``trecqr[lucene]`` and Java 11+
dense     sentence-transformers encoder, faiss flat IP  ``trecqr[dense]`` (torch CPU)
========  ===========================================  ==================================

Every backend module has the same surface (``BACKEND``, ``build_index``, ``load_index``,
``search``, ``describe``); an index folder's manifest names its backend
(:func:`~trecqr.retrieval.indexdir.read_manifest`), so ``search`` needs only the folder.
"""

from __future__ import annotations

import importlib

from ..errors import UsageError
from .indexdir import BACKENDS, read_manifest

MODULES = {"bm25s": "trecqr.retrieval.bm25", "lucene": "trecqr.retrieval.lucene",
           "dense": "trecqr.retrieval.dense"}
assert tuple(MODULES) == BACKENDS


def backend(name: str):
    """The module of backend ``name``."""
    if name not in MODULES:
        raise UsageError(f"unknown retrieval backend {name!r} (one of {', '.join(MODULES)})")
    return importlib.import_module(MODULES[name])


def build_index(collection, out_dir, backend_name: str = "bm25s", *, format=None,
                show_progress: bool = True, **params) -> dict:
    """Build an index of ``collection`` with ``backend_name``; returns its manifest."""
    return backend(backend_name).build_index(collection, out_dir, format=format,
                                             show_progress=show_progress, **params)


class Index:
    """A loaded index: its backend module, the backend's handle, and the manifest."""

    def __init__(self, index_dir, **params):
        self.dir = index_dir
        self.manifest = read_manifest(index_dir)
        self.module = backend(self.manifest["backend"])
        self.handle = self.module.load_index(index_dir, **params)

    def search(self, topics, k: int = 100, **kw):
        return self.module.search(self.dir, topics, k, index=self.handle, **kw)

    def describe(self) -> str:
        return self.module.describe(self.manifest)


def load_index(index_dir, **params) -> Index:
    return Index(index_dir, **params)


def search(index_dir, topics, k: int = 100, **kw):
    """Search any trecqr index (or a bare Lucene index) with the topics; a Run."""
    return load_index(index_dir).search(topics, k, **kw)
