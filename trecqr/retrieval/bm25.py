"""Embedded BM25 with bm25s, analysed as Pyserini's default Lucene analyzer.

Terms: :class:`trecqr.retrieval.analysis.Analyzer` (Lucene's StandardTokenizer, possessives,
lowercase, English stop words, Lucene's Porter stemmer; token for token as Lucene on the texts
measured). Scoring: bm25s ``method="lucene"`` (idf = ln(1 + (N - df + 0.5) / (df + 0.5)), tf
part tf / (tf + k1 (1 - b + b dl/avgdl))).

Known differences from Lucene: Lucene stores document lengths in one lossy byte (SmallFloat),
bm25s uses exact lengths, so scores differ slightly and near-ties may swap; scores are float32
(Lucene's are float32 too).

An index is a folder: bm25s's arrays (loaded memory-mapped), ``docids.txt`` (row i's docid)
and ``trecqr-index.json`` (written last; a folder without it is not an index). It is built in
a temporary folder beside the target and renamed into place, so an interrupted build leaves
nothing that loads as an index.
"""

from __future__ import annotations

import math
import os
from array import array
from collections import deque
from concurrent.futures import ThreadPoolExecutor
from itertools import chain

import numpy as np

from trecqr.runtime.deferred import pa
from trecqr.errors import InputError, UsageError
from trecqr.runtime.progress import progress, progress_bar
from trecqr.runtime.workers import worker_pool
from trecqr.retrieval.analysis import ANALYZER_ID, LUCENE_STOPWORDS, Analyzer, analyze  # noqa: F401
from trecqr.retrieval.collections import (collection_format, collection_label, is_irds,
                                          iter_collection, jsonl_docs, jsonl_line_blocks)
from trecqr.retrieval.indexdir import (as_topics, atomic_index_dir, check_unique_docids,
                                       hits_to_run, order_hits, read_docids, read_manifest,
                                       thread_count, write_docids, write_manifest)

BACKEND = "bm25s"
DEFAULT_K1 = 0.9  # Pyserini's defaults (the TopiOCQA protocol's too)
DEFAULT_B = 0.4


BATCH = 8000  # passages per tokenising task


def build_index(collection, out_dir, k1: float = DEFAULT_K1, b: float = DEFAULT_B, *,
                format: str | None = None, show_progress: bool = True,
                threads: int | None = None) -> dict:
    """Index a collection (TSV/JSONL file or ``irds:<dataset>``) into out_dir (replaced
    atomically); returns the manifest.

    Passages are tokenised in ``threads`` processes (None or < 1: one per CPU; 1: in this
    process), batch by batch;
    each batch comes back as its terms in first-seen order and term ids local to it, and is
    merged in collection order, so term ids (first-seen order over the collection) and so the
    index are bit for bit those of one process. Term ids are appended to one flat int32
    buffer (no list per passage); the BM25 matrix is then computed column-wise by
    :func:`bm25_matrix` and saved in bm25s's own layout.

    Memory: the flat term ids (4 bytes a token), the passages' lengths (8 bytes each), the
    vocabulary, and at most 2 batches per worker in flight while tokenising; then
    bm25_matrix's arrays, about 40 bytes per distinct (passage, term) pair at their peak.
    For 10M passages of ~50 tokens (MS MARCO's, ~40 distinct terms each): ~2 GB of term ids and
    ~16 GB for the matrix step: beyond that size, use the Lucene backend.
    """
    import bm25s

    workers = thread_count(threads)
    with atomic_index_dir(out_dir) as tmp:
        vocab = _Vocabulary()
        flat = array("i")
        lengths = array("q")

        def docids(bar):
            for batch_ids, (terms, local, lens) in _tokenised(_tasks(collection, format),
                                                              workers):
                # the batch's terms in their first-seen order: a new one gets the next id
                remap = np.fromiter(map(vocab.__getitem__, terms), dtype=np.int32,
                                    count=len(terms))
                flat.frombytes(remap[np.frombuffer(local, dtype=np.int32)].tobytes())
                lengths.frombytes(np.frombuffer(lens, dtype=np.int32).astype(np.int64)
                                  .tobytes())
                bar.update(len(batch_ids))
                yield from batch_ids

        with progress_bar(show_progress, desc="tokenising", unit=" docs",
                          mininterval=0.5) as bar:
            n = write_docids(tmp, docids(bar))
        if n == 0:
            raise InputError(os.fspath(collection), None, "the collection holds no passages")
        check_unique_docids(read_docids(tmp), collection)
        retriever = bm25s.BM25(k1=k1, b=b, method="lucene")
        retriever.scores = bm25_matrix(np.frombuffer(flat, dtype=np.int32),
                                       np.frombuffer(lengths, dtype=np.int64), len(vocab), k1, b,
                                       threads=workers)
        retriever.vocab_dict = dict(vocab)
        if "" not in retriever.vocab_dict:  # as bm25s.index() does (create_empty_token)
            retriever.vocab_dict[""] = len(vocab)
        retriever.nonoccurrence_array = None
        retriever.save(tmp, show_progress=show_progress)
        return write_manifest(tmp, {
            "format": "trecqr-bm25s", "backend": "bm25s", "version": 1, "k1": k1, "b": b,
            "method": "lucene", "analyzer": ANALYZER_ID, "documents": n,
            "terms": len(vocab), "collection": collection_label(collection),
            **({} if is_irds(collection) else
               {"collection_format": collection_format(collection, format)}),
            "bm25s": getattr(bm25s, "__version__", "?")})


class _Vocabulary(dict):
    """term -> id; looking up a new term gives it the next id (looked up in C for the terms
    already there, which are most of a batch's)."""

    def __missing__(self, term):
        tid = self[term] = len(self)
        return tid


_ANALYZER = None


def tokenise_batch(texts) -> tuple:
    """(terms in first-seen order, term ids into them (int32 bytes), lengths (int32 bytes))
    of a batch of passages: what a tokenising worker returns.

    The batch is lowercased and cut into its white-space-separated chunks at once (no token
    spans white space), the passages kept apart by a NUL chunk (a NUL is in no token, so NULs
    in a text are read as spaces); the chunks are factorised (Arrow: codes in first-seen
    order), and each distinct chunk analysed once (Analyzer.chunk_terms, cached across
    batches). The chunks' terms, in chunk first-seen order, are factorised again: a term's
    first occurrence there is its first in the batch, so the terms come out in first-seen
    order, as one Analyzer() call per passage would give them
    (tests/retrieval/test_retrieval_bm25.py compares the two)."""
    global _ANALYZER
    if _ANALYZER is None:
        _ANALYZER = Analyzer()
    analyzer = _ANALYZER
    joined = _SEPARATOR.join(texts)
    if joined.count("\x00") != len(texts) - 1:
        texts = [text.replace("\x00", " ") for text in texts]
        joined = _SEPARATOR.join(texts)
    if "Σ" in joined or "İ" in joined:  # lowercased text by text, as Java does (Analyzer.lower)
        joined = _SEPARATOR.join(map(analyzer.lower, texts))
    else:
        joined = joined.lower()
    codes, chunks = _factorise(joined.split())
    del joined
    term_lists = list(map(analyzer.known_chunks.get, chunks))  # the cached ones, in C
    for i in [i for i, terms in enumerate(term_lists) if terms is None]:
        term_lists[i] = () if chunks[i] == "\x00" else analyzer.chunk_terms(chunks[i])
    n_terms = np.fromiter(map(len, term_lists), dtype=np.int64, count=len(term_lists))
    term_codes, terms = _factorise(list(chain.from_iterable(term_lists)))
    # the term ids of every chunk, in order: chunk c's run of term_codes, repeated
    per_chunk = n_terms[codes]
    first = np.zeros(len(n_terms), dtype=np.int64)
    np.cumsum(n_terms[:-1], out=first[1:])
    before = np.zeros(len(per_chunk), dtype=np.int64)
    np.cumsum(per_chunk[:-1], out=before[1:])
    total = int(per_chunk.sum())
    where = np.repeat(first[codes] - before, per_chunk) + np.arange(total, dtype=np.int64)
    ids = term_codes[where].astype(np.int32)
    try:
        separator = chunks.index("\x00")
    except ValueError:  # one passage
        separator = -1
    text_of_chunk = np.cumsum(codes == separator)
    lens = np.bincount(text_of_chunk, weights=per_chunk, minlength=len(texts)).astype(np.int32)
    return terms, ids.tobytes(), lens.tobytes()


_SEPARATOR = " \x00 "


def _factorise(values: list) -> tuple:
    """(codes, distinct values) of a list of strings, values numbered in first-seen order."""
    encoded = pa.array(values, pa.large_string()).dictionary_encode()
    codes = encoded.indices.to_numpy(zero_copy_only=False).astype(np.int64, copy=False)
    return codes, encoded.dictionary.to_pylist()


def _tasks(collection, format):
    """The tokenising tasks of a collection, in order: blocks of BATCH lines of a JSONL file
    (parsed by the worker), or batches of BATCH passages read here (TSV, ir_datasets)."""
    if not is_irds(collection) and collection_format(collection, format) == "jsonl":
        name = os.fspath(collection)
        for first, lines in jsonl_line_blocks(collection, BATCH):
            yield ("jsonl", name, first, lines)
        return
    ids, texts = [], []
    for doc in iter_collection(collection, format):
        ids.append(doc.docid)
        texts.append(doc.text)
        if len(texts) == BATCH:
            yield ("docs", ids, texts)
            ids, texts = [], []
    if texts:
        yield ("docs", ids, texts)


def tokenise_task(task) -> tuple:
    """(docids, tokenise_batch result) of a task of _tasks: what a worker runs."""
    kind, *args = task
    ids, texts = jsonl_docs(*args) if kind == "jsonl" else args
    return ids, tokenise_batch(texts)


def _tokenised(tasks, workers: int):
    """tokenise_task of each task, in order, in worker processes (at most 2 tasks per worker
    in flight; here when there is one task or one worker)."""
    first = next(tasks, None)
    if first is None:
        return
    second = next(tasks, None)
    if workers <= 1 or second is None:  # one batch: not worth starting processes
        yield tokenise_task(first)
        if second is not None:
            yield tokenise_task(second)
            yield from map(tokenise_task, tasks)
        return


    # pandas too: pyarrow imports it at a worker's first batch (dictionary_encode's lists)
    with worker_pool(workers, ["trecqr.retrieval.bm25", "pandas"]) as pool:
        pending = deque()
        for task in chain((first, second), tasks):
            pending.append(pool.submit(tokenise_task, task))
            if len(pending) >= 2 * workers:
                yield pending.popleft().result()
        while pending:
            yield pending.popleft().result()


def bm25_matrix(term_ids: np.ndarray, lengths: np.ndarray, n_terms: int, k1: float, b: float,
                *, threads: int = 1) -> dict:
    """bm25s's ``method="lucene"`` score matrix (CSC: one column per term) from the flat term
    ids of all passages and each passage's length, computed with whole-array operations.

    The arithmetic is bm25s's, operation by operation, so the stored float32 scores are the
    ones ``bm25s.BM25.index`` computes (tests compare the arrays): idf with ``math.log`` per
    term, cast to float32; tf part ``tf / (k1 ((1 - b) + b dl / avgdl) + tf)`` with tf float32
    and the length part in float64 (numpy's promotion of that float64 scalar decides whether
    the sum is float64 or float32, as it does inside bm25s); score ``idf * tf part`` stored as
    float32.
    """
    n_docs = len(lengths)
    lengths = np.asarray(lengths, dtype=np.int64)
    # (term, passage) keys, sorted in place: runs of equal keys are the term frequencies, and
    # the pairs come out in the matrix's order (column by column), so no second sort
    key = np.asarray(term_ids, dtype=np.int64) * n_docs
    key += np.repeat(np.arange(n_docs, dtype=np.int64), lengths)
    key.sort()
    starts = np.flatnonzero(np.concatenate(([True], key[1:] != key[:-1])))
    tf = np.diff(np.append(starts, len(key))).astype(np.float32)
    key = key[starts]
    del starts
    t = (key // n_docs).astype(np.int32)
    d = (key - t.astype(np.int64) * n_docs).astype(np.int32)
    del key
    df = np.bincount(t, minlength=n_terms)
    idf = np.zeros(n_terms, dtype=np.float32)
    for tid, f in enumerate(df.tolist()):
        if f:
            idf[tid] = math.log(1 + (n_docs - f + 0.5) / (f + 0.5))
    avg = lengths.mean()
    wide = np.result_type(np.float64(1.0), tf[:1]) == np.float64  # numpy >= 2 (NEP 50)
    scores = np.empty(len(tf), dtype=np.float32)

    def chunk(a):  # float64 temporaries a chunk at a time; numpy lets go of the GIL
        tf32 = tf[a:a + step]
        length_part = k1 * ((1 - b) + b * lengths[d[a:a + step]].astype(np.float64) / avg)
        if wide:
            scores[a:a + step] = idf[t[a:a + step]] * (tf32 / (length_part + tf32))
        else:  # legacy value-based casting: the float64 scalar joins the float32 array as float32
            scores[a:a + step] = idf[t[a:a + step]] * (
                tf32 / (length_part.astype(np.float32) + tf32))

    step = 1 << 21
    starts = range(0, len(tf), step)
    if len(starts) > 1 and threads > 1:
        with ThreadPoolExecutor(threads) as pool:
            list(pool.map(chunk, starts))
    else:
        for a in starts:
            chunk(a)
    del tf
    indptr = np.zeros(n_terms + 1, dtype=np.int64)
    np.cumsum(df, out=indptr[1:])
    return {"data": scores, "indices": d, "indptr": indptr, "num_docs": n_docs}


def load_index(index_dir, *, mmap: bool = True):
    """(bm25s retriever, docids Arrow array, manifest) of a saved index."""
    import bm25s

    index_dir = os.fspath(index_dir)
    manifest = read_manifest(index_dir)
    if manifest["backend"] != "bm25s":
        raise UsageError(f"{index_dir}: a {manifest['backend']} index, not a bm25s one")
    if manifest.get("analyzer", ANALYZER_ID) != ANALYZER_ID:
        raise UsageError(f"{index_dir}: built with an earlier trecqr analyzer "
                         f"({manifest['analyzer']!r}, now {ANALYZER_ID!r}: Lucene's Porter "
                         "stemmer and tokenizer); its terms differ from the queries': rebuild it "
                         "with `trecqr index`")
    retriever = bm25s.BM25.load(index_dir, mmap=mmap, load_corpus=False, show_progress=False)
    docids = read_docids(index_dir)
    if len(docids) != manifest["documents"]:
        raise InputError(index_dir, None, f"{len(docids)} docids but the manifest says "
                                          f"{manifest['documents']}")
    return retriever, docids, manifest


def search(index_dir, topics, k: int = 100, *, n_threads: int = 1, runid: str = "trecqr-bm25",
           show_progress: bool = True, index=None):
    """BM25 run for the topics (a Topics, a ``{qid: query}`` dict or a topics file).

    k1/b are the index's. Scores are bm25s's own (``get_scores_from_ids``, float32); the top k
    are selected by :func:`top_passages`. Only passages sharing a term with the query are
    returned (as Lucene does). Rows are in topic order, then score descending, then docid
    descending, so the ranks agree with trec_eval's; ties at rank k are cut in the same order.
    n_threads < 1: one thread per CPU.
    """
    if k < 1:
        raise UsageError("k must be at least 1")
    topics = as_topics(topics)
    retriever, docids, manifest = index if index is not None else load_index(index_dir)
    analyzer = Analyzer()
    vocab = retriever.vocab_dict
    queries = [retriever.get_tokens_ids([t for t in analyzer(q) if t in vocab])
               for q in topics.queries]
    live = [i for i, q in enumerate(queries) if q]

    def one(i):
        s, d = top_passages(retriever.get_scores_from_ids(queries[i]), k)
        return i, order_hits(s, docids.take(pa.array(d, pa.int64())).to_pylist(), k)

    n_threads = thread_count(n_threads)
    bar = progress(live, show_progress, desc="searching", unit=" queries", mininterval=0.5)
    if n_threads == 1:
        results = dict(map(one, bar))
    else:
        with ThreadPoolExecutor(n_threads) as pool:  # numpy releases the GIL in the kernels
            results = dict(pool.map(one, bar))
    return hits_to_run(topics, results, runid, f"<bm25 {index_dir}>",
                       why_empty="no query term in the index")


def top_passages(scores: np.ndarray, k: int):
    """(scores, rows) of the passages that can rank in the top k: every passage scoring above
    zero (sharing a term with the query) when there are at most k, else every passage scoring at
    least the k-th best score, so a tie at rank k is kept whole for :func:`order_hits` to cut in
    trec_eval's order. Selection runs on the nonzero scores only (np.partition), not on a sort
    of the whole collection."""
    rows = np.flatnonzero(scores > 0)
    if len(rows) > k:
        vals = scores[rows]
        kth = np.partition(vals, len(vals) - k)[len(vals) - k]
        rows = rows[vals >= kth]
    return scores[rows], rows


def describe(manifest) -> str:
    return f"BM25 k1={manifest['k1']} b={manifest['b']} (bm25s, Lucene-style English analysis)"
