"""Lucene BM25 through Pyserini 0.22.1 (Anserini 0.22.1): for full-size collections and
Pyserini's prebuilt indexes.

Needs ``pip install 'trecqr[lucene]'`` and a Java 11+ runtime (tested: Debian's openjdk-17).
A user's ``JAVA_HOME`` wins; when it is unset, one is chosen under ``/usr/lib/jvm`` before
pyjnius starts the JVM (:func:`pick_java_home`: Java 17 first, the version Pyserini 0.22.1 is
tested with here, then 11 and 21, then any newer: a newer JDK, such as a Temurin 25 installed
beside it, is untested with 0.22.1's libraries, so it is only a last resort).

Build (:func:`build_index`). The collection is staged for Anserini's ``JsonCollection``
(``{"id", "contents"}`` per line) in a folder inside the index's temporary build folder: a JSONL
file already in that layout (every record has a string ``id`` that is a valid docid and a string
``contents``; gzip is fine) is used as is through a symbolic link, so a 54M-passage collection is
not copied; anything else (TSV, other JSONL layouts, ``irds:``) is converted while streamed, into
shards of :data:`SHARD_DOCS` passages so that Anserini's indexing threads (one per file) work in
parallel. (A linked file is a single file, so it is indexed by one thread.) Anserini's indexer
(``IndexCollection``, DefaultLuceneDocumentGenerator: DefaultEnglishAnalyzer with Porter stemming
and Lucene's English stop words) runs as a ``java`` child process from Pyserini's own fat jar:
Ctrl-C stops it at once (an in-process JNI call would not return to Python until indexing
ended), and its log is shown as the progress of that step. The staging folder is removed, and
the manifest written last; an interrupted build leaves nothing (see
:func:`~trecqr.retrieval.indexdir.atomic_index_dir`). Docids must be unique: checked with 64-bit
hashes of the docids (8 bytes a passage, not the strings), exact on a hash collision.

Anserini skips passages whose text is empty or blank (its ``empty`` counter; bm25s indexes them
but can never retrieve them); they still count in the manifest's ``documents``, the manifest's
``indexed`` is Lucene's count. Those skipped passages also leave Lucene's N and average length,
so BM25 scores can differ from bm25s's a little for collections holding empty passages.

k1 and b are search-time parameters in Lucene: the manifest stores the build's (the defaults of
searches of that index); ``search(..., k1=, b=)`` overrides them. A foreign Lucene index (a
Pyserini prebuilt index, no manifest) is searched with 0.9/0.4 unless told otherwise.

Search (:func:`search`, :func:`load_index`, RM3's :func:`feedback_terms`) is
:mod:`trecqr.retrieval.lucene_search`; its names are exported here too (the backend table,
:mod:`trecqr.retrieval.backends`, names this module).

Differences from bm25s (the embedded backend): Lucene stores document lengths in one lossy byte
(SmallFloat), so passages of nearby lengths score the same in Lucene and not in bm25s; Lucene's
StandardTokenizer follows the full Unicode word-break rules that bm25s's regex approximates.
"""

from __future__ import annotations

import array
import collections as _collections
import gzip
import json
import os
import re
import shutil
import subprocess
import zlib

import numpy as np

from trecqr.errors import InputError, UsageError
from trecqr.runtime.progress import info, progress
from trecqr.retrieval.collections import (collection_format, collection_label, is_irds,
                                          iter_collection, valid_docid)
from trecqr.retrieval.indexdir import (atomic_index_dir, is_lucene_dir, thread_count, write_docids,
                                       write_manifest)
from trecqr.retrieval.java_runtime import anserini_jar, java_binary, versions
from trecqr.retrieval.lucene_search import (BACKEND, DEFAULT_B, DEFAULT_K1, check_rm3, describe,
                            feedback_terms, load_index, search)

# the backend's functions (trecqr.retrieval.backends loads this module): search's from lucene_search
__all__ = ["BACKEND", "PARAMS", "build_index", "check_rm3", "describe", "feedback_terms",
           "load_index", "search"]

SHARD_DOCS = 500_000  # passages per converted JsonCollection file
INDEXER = "io.anserini.index.IndexCollection"
STAGE = "collection-input"  # no leading "_" nor "segments": Lucene leaves it alone
PARAMS = {
    "k1": (DEFAULT_K1, "BM25 k1: stored at indexing as the index's default; at search, "
                       "overrides it (Lucene applies k1/b at search time)"),
    "b": (DEFAULT_B, "BM25 b (as k1)"),
    "threads": (None, "indexing threads (Anserini's, one file each) [default: CPUs, at most 8]"),
    "store_docvectors": (False, "also store positions, document vectors and raw text (what "
                                "Pyserini's RM3/Rocchio and rerankers need; a bigger index)"),
    "pyserini_scores": (False, "search: Pyserini's scores and order (rounded to 4 decimals, "
                               "ties broken by docid ascending in 1e-6 steps; cut at k as "
                               "Pyserini cuts) instead of Lucene's float32 scores in trec_eval "
                               "order"),
}
_BUILD_PARAMS = ("k1", "b", "threads", "store_docvectors")
_COUNTER = re.compile(r"\b(indexed|unindexable|empty|skipped|errors):\s+([\d,]+)\s*$")


# ---------------------------------------------------------------- build

class _NotLayout(Exception):
    """The JSONL file is not in Pyserini's layout (or is bad): convert it instead."""


def _layout_docids(path, show_progress):
    """Yield the docids of a JSONL file in Pyserini's exact layout; raise _NotLayout at the
    first line that is not (blank, bad JSON or UTF-8, a non-string or unclean id, no string
    contents), so the caller converts the file through iter_collection (which reports real
    errors with their line)."""
    name = os.fspath(path)
    opener = gzip.open if name.endswith(".gz") else open
    try:
        fh = opener(name, "rb")
    except OSError:
        raise _NotLayout() from None
    with fh:
        try:
            yield from _layout_lines(fh, show_progress)
        except (EOFError, zlib.error, gzip.BadGzipFile):  # iter_collection reports it
            raise _NotLayout() from None


def _layout_lines(fh, show_progress):
    for line in progress(fh, show_progress, desc="checking", unit=" docs", mininterval=0.5):
        if line.startswith(b"\xef\xbb\xbf"):  # a BOM: Anserini's JSON reader rejects it
            raise _NotLayout()
        try:
            rec = json.loads(line)
        except (ValueError, UnicodeDecodeError):
            raise _NotLayout() from None
        if not (isinstance(rec, dict) and valid_docid(rec.get("id")) and
                isinstance(rec.get("contents"), str)):
            raise _NotLayout()
        yield rec["id"]


def _hashing(docids, hashes: array.array):
    for d in docids:
        hashes.append(hash(d))
        yield d


def _stage(collection, format, folder, tmp, show_progress) -> tuple:
    """Write docids.txt in tmp and the JsonCollection input in folder; (n, hashes, linked)."""
    os.mkdir(folder)
    if not is_irds(collection) and collection_format(collection, format) == "jsonl":
        hashes = array.array("q")
        try:
            n = write_docids(tmp, _hashing(_layout_docids(collection, show_progress), hashes))
        except _NotLayout:
            pass
        else:
            suffix = ".jsonl.gz" if os.fspath(collection).endswith(".gz") else ".jsonl"
            os.symlink(os.path.abspath(os.fspath(collection)),
                       os.path.join(folder, "collection" + suffix))
            return n, hashes, True
    hashes = array.array("q")
    shard = {"fh": None, "i": 0, "n": 0}

    def docids():
        docs = progress(iter_collection(collection, format), show_progress,
                        desc="converting", unit=" docs", mininterval=0.5)
        dumps = json.dumps
        try:
            for doc in docs:
                if shard["fh"] is None or shard["n"] == SHARD_DOCS:
                    if shard["fh"] is not None:
                        shard["fh"].close()
                    shard["fh"] = open(os.path.join(folder, f"part-{shard['i']:05d}.jsonl"), "w",
                                       encoding="utf-8", newline="\n")
                    shard["i"] += 1
                    shard["n"] = 0
                shard["fh"].write(dumps({"id": doc.docid, "contents": doc.text},
                                        ensure_ascii=False) + "\n")
                shard["n"] += 1
                hashes.append(hash(doc.docid))
                yield doc.docid
        finally:
            if shard["fh"] is not None:
                shard["fh"].close()

    n = write_docids(tmp, docids())
    return n, hashes, False


def _check_unique(tmp, hashes: array.array, source) -> None:
    """InputError naming a docid that occurs twice: 64-bit hashes first, the strings of the
    colliding hashes only (so the check is exact and needs 8 bytes a passage)."""
    h = np.frombuffer(hashes, dtype=np.int64).copy()
    h.sort()
    same = h[1:][h[1:] == h[:-1]]
    if not len(same):
        return
    suspects = set(same.tolist())
    seen = set()
    with open(os.path.join(tmp, "docids.txt"), encoding="utf-8") as fh:
        for line in fh:
            d = line.rstrip("\n")
            if hash(d) in suspects:
                if d in seen:
                    raise InputError(os.fspath(source), None, f"docid {d!r} occurs twice")
                seen.add(d)


def _run_indexer(java, jar, folder, index, threads, store, show_progress) -> dict:
    """Run Anserini's IndexCollection; its counters (indexed, empty, ...) from its log."""
    cmd = [java, "-cp", jar, INDEXER, "-collection", "JsonCollection", "-input", folder,
           "-index", index, "-generator", "DefaultLuceneDocumentGenerator",
           "-threads", str(threads)]
    if store:
        cmd += ["-storePositions", "-storeDocvectors", "-storeRaw"]
    counters, tail, started = {}, _collections.deque(maxlen=20), False
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            stdin=subprocess.DEVNULL, text=True, encoding="utf-8",
                            errors="replace")
    try:
        for line in proc.stdout:
            tail.append(line.rstrip("\n"))
            m = _COUNTER.search(line)
            if m:
                counters[m.group(1)] = int(m.group(2).replace(",", ""))
            started = started or "Starting to index" in line
            if show_progress and (started or "ERROR" in line):  # not the parameter dump
                info("lucene: " + line.split(" - ", 1)[-1].rstrip("\n"))
        status = proc.wait()
    except BaseException:  # Ctrl-C included: stop Java before the build folder goes
        proc.kill()
        proc.wait()
        raise
    finally:
        proc.stdout.close()
    if status != 0 or "indexed" not in counters:
        errors = [t for t in tail if "ERROR" in t or "Exception" in t] or list(tail)[-3:]
        raise UsageError(f"Anserini's indexer failed (exit {status}): "
                         + " | ".join(e.strip() for e in errors[-3:]))
    return counters


def build_index(collection, out_dir, *, format: str | None = None, show_progress: bool = True,
                **params) -> dict:
    """Index a collection (TSV/JSONL file or ``irds:<dataset>``) with Lucene into out_dir
    (replaced atomically); returns the manifest. params: see :data:`PARAMS`."""
    unknown = sorted(set(params) - set(_BUILD_PARAMS))
    if unknown:
        raise UsageError(f"unknown lucene index option(s): {', '.join(unknown)}")
    k1 = float(params.get("k1", DEFAULT_K1))
    b = float(params.get("b", DEFAULT_B))
    threads = params.get("threads")
    if threads is None or threads < 1:  # as the other backends: one per CPU, at most 8
        threads = min(thread_count(None), 8)
    store = bool(params.get("store_docvectors", False))
    jar = anserini_jar()
    java = java_binary()
    with atomic_index_dir(out_dir) as tmp:
        folder = os.path.join(tmp, STAGE)
        n, hashes, linked = _stage(collection, format, folder, tmp, show_progress)
        if n == 0:
            raise InputError(os.fspath(collection) if not is_irds(collection) else
                             collection_label(collection), None,
                             "the collection holds no passages")
        _check_unique(tmp, hashes, collection)
        del hashes
        counters = _run_indexer(java, jar, folder, tmp, threads, store, show_progress)
        shutil.rmtree(folder)
        skipped = counters.get("empty", 0) + counters.get("unindexable", 0) + \
            counters.get("skipped", 0)
        if counters.get("errors", 0) or counters["indexed"] + skipped != n:
            raise UsageError(f"Anserini indexed {counters['indexed']} of {n} passages "
                             f"({counters})")
        if not is_lucene_dir(tmp):
            raise UsageError("Anserini's indexer wrote no Lucene index")
        manifest = {
            "format": "trecqr-lucene", "backend": BACKEND, "version": 1, "k1": k1, "b": b,
            "analyzer": "lucene-english-porter", "documents": n,
            "indexed": counters["indexed"], "empty": counters.get("empty", 0),
            "collection": collection_label(collection), "linked": linked,
            "store_docvectors": store, "threads": threads,
            "anserini": os.path.basename(jar), **versions()}
        return write_manifest(tmp, manifest)
