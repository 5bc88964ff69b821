"""The retrieval backends, and the dispatch from an index folder to the one that built it.

========  ===========================================  ==================================
backend   what                                         needs
========  ===========================================  ==================================
bm25s     embedded BM25 (bm25s), Lucene-style analysis  ``trecqr[retrieval]``
lucene    Lucene BM25 through Pyserini 0.22.1           ``trecqr[lucene]`` and Java 11+
dense     sentence-transformers encoder, faiss flat IP  ``trecqr[dense]`` (torch CPU)
========  ===========================================  ==================================

Every backend module has the same surface (``BACKEND``, ``build_index``, ``load_index``,
``search``, ``describe``); an index folder's manifest names its backend
(:func:`~trecqr.retrieval.indexdir.read_manifest`), so ``search`` needs only the folder.
"""

from __future__ import annotations

import importlib
import warnings

from trecqr.errors import TrecqrError, UsageError
from trecqr.retrieval.indexdir import BACKENDS, damaged, read_manifest

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
        self.module = backend(read_manifest(index_dir)["backend"])
        try:
            self.handle = self.module.load_index(index_dir, **params)
        except TrecqrError:
            raise
        except (KeyError, IndexError, TypeError, ValueError, OSError, EOFError,
                UnicodeDecodeError, AttributeError) as exc:
            # the manifest's files checked out, yet the backend cannot read them (an index
            # built before manifests listed their files, or a manifest edited by hand)
            raise damaged(index_dir, f"{type(exc).__name__}: {exc}") from None
        self.manifest = self.handle[-1]  # the backend's, with any defaults it fills in

    @classmethod
    def loaded(cls, index_dir, module, handle) -> "Index":
        """An Index around a handle the backend module's load_index already returned."""
        self = cls.__new__(cls)
        self.dir, self.module, self.handle, self.manifest = index_dir, module, handle, handle[-1]
        return self

    def search(self, topics, k: int = 100, **kw):
        return self.module.search(self.dir, topics, k, index=self.handle, **kw)

    def describe(self, manifest: dict | None = None) -> str:
        return self.module.describe(manifest or self.manifest)

    def preset_search_params(self, preset) -> dict:
        """The search parameters a protocol preset implies for this index. Lucene's k1/b are
        search-time, so a preset's apply to any Lucene index (a Pyserini prebuilt one too); an
        index whose k1/b were fixed at build time (bm25s) keeps them, with a warning when the
        preset's differ."""
        if preset is None or preset.bm25_k1 is None:
            return {}
        k1, b = preset.bm25_k1, preset.bm25_b
        if self.manifest["backend"] == "lucene":
            return {"k1": k1, "b": b}
        if "k1" in self.manifest and (self.manifest["k1"], self.manifest["b"]) != (k1, b):
            warnings.warn(f"index {self.dir} has k1={self.manifest['k1']} "
                          f"b={self.manifest['b']}, preset {preset.name} says k1={k1} b={b} "
                          f"(a {self.manifest['backend']} index keeps its build's)", stacklevel=3)
        return {}


def load_index(index_dir, **params) -> Index:
    return Index(index_dir, **params)


def search(index_dir, topics, k: int = 100, **kw):
    """Search any trecqr index (or a bare Lucene index) with the topics; a Run."""
    return load_index(index_dir).search(topics, k, **kw)
