"""Search of a Lucene index built by :mod:`trecqr.retrieval.lucene` (or a Pyserini prebuilt
one): BM25 with Anserini's own classes, RM3 feedback terms.

Search (:func:`search`) uses Anserini's ``SimpleSearcher`` -- the Java object behind Pyserini's
``LuceneSearcher``, with its ``set_bm25`` and ``batch_search`` calls -- through
``pyserini.pyclass``, without importing ``pyserini.search`` (which imports torch, transformers
and scikit-learn: 6-10 s per process for nothing used here). SimpleSearcher cuts each topic's
hits at k by (Lucene score descending, docid *ascending*), then its default reranker,
``ScoreTiesAdjusterReranker``, rounds every score to 4 decimals and breaks the ties this makes
by subtracting 1e-6 steps in that docid-ascending order: the scores of Pyserini's runs are not
Lucene's. By default this backend gives SimpleSearcher an empty reranker cascade, so scores are
Lucene's own float32 BM25 scores, and ranks them as trec_eval does (score descending, docid
descending): each topic is searched k + 10 deep, and when the score at rank k reaches the last
hit returned (the tie may go on past it) the topic is searched again deeper until the tie
ends; :func:`~trecqr.retrieval.indexdir.order_hits` then orders and cuts. A run is then the
same whatever order the passages were indexed in, and ties agree with the bm25s backend's.
With ``pyserini_scores=True`` the adjuster is kept and hits are cut at k as SimpleSearcher
cuts them: the run is Pyserini's (its ``LuceneSearcher.search``/``batch_search`` results), for
reproducing published Pyserini numbers. What remains different from a Pyserini run file: it
prints scores with 6 decimals; here they are written as computed.
"""

from __future__ import annotations

import os

import numpy as np

from trecqr.errors import InputError, UsageError
from trecqr.runtime.progress import progress
from trecqr.retrieval.indexdir import (as_topics, hits_to_run, is_lucene_dir, order_hits,
                                       read_manifest, thread_count)
from trecqr.retrieval.java_runtime import jvm

BACKEND = "lucene"
DEFAULT_K1 = 0.9  # Pyserini's defaults; also used for foreign indexes
DEFAULT_B = 0.4
SEARCHER = "io.anserini.search.SimpleSearcher"
CASCADE = "io.anserini.rerank.RerankerCascade"
TIES_ADJUSTER = "io.anserini.rerank.lib.ScoreTiesAdjusterReranker"
RM3_RERANKER = "io.anserini.rerank.lib.Rm3Reranker"


def load_index(index_dir):
    """(Anserini SimpleSearcher, manifest) of a trecqr Lucene index or a bare Lucene index."""
    index_dir = os.fspath(index_dir)
    manifest = dict(read_manifest(index_dir))
    if manifest["backend"] != BACKEND:
        raise UsageError(f"{index_dir}: a {manifest['backend']} index, not a lucene one")
    if not is_lucene_dir(index_dir):
        raise InputError(index_dir, None, "no Lucene index files (segments_N) in the folder")
    autoclass, _ = jvm()
    try:
        searcher = autoclass(SEARCHER)(os.path.abspath(index_dir))
    except Exception as exc:
        raise InputError(index_dir, None, f"cannot open the Lucene index: {exc}") from None
    if manifest.get("foreign"):  # no manifest: Pyserini's defaults
        manifest.setdefault("documents", int(searcher.get_total_num_docs()))
        manifest.setdefault("k1", DEFAULT_K1)
        manifest.setdefault("b", DEFAULT_B)
    return searcher, manifest


def _hits(results) -> dict:
    """{qid: ([docid], [score])} of batch_search's Java map."""
    out = {}
    for entry in results.entrySet().toArray():
        hits = entry.getValue()
        out[entry.getKey()] = ([h.docid for h in hits], [h.score for h in hits])
    return out


def _set_cascade(autoclass, searcher, pyserini_scores: bool, rm3: dict | None = None) -> None:
    """Anserini's reranker cascade: empty (Lucene's own scores) or its score-ties adjuster (what
    SimpleSearcher and Pyserini use by default), after Anserini's own RM3 reranker when ``rm3``
    gives its parameters (``fb_terms``, ``fb_docs``, ``original_weight``, ``filter_terms``):
    what Pyserini's ``set_rm3`` builds, the first stage then ``rerankcutoff`` (50) deep."""
    cascade = autoclass(CASCADE)()
    try:
        if rm3 is not None:
            cascade.add(autoclass(RM3_RERANKER)(
                searcher.analyzer, None, "contents", int(rm3["fb_terms"]), int(rm3["fb_docs"]),
                float(rm3["original_weight"]), False, bool(rm3["filter_terms"])))
        if pyserini_scores:
            cascade.add(autoclass(TIES_ADJUSTER)())
        searcher.cascade = cascade
        searcher.useRM3 = rm3 is not None
    except Exception as exc:  # another Anserini: the field moved
        raise UsageError(f"cannot reach Anserini's reranker cascade ({exc}); this backend is "
                         "tested with pyserini 0.22.1 (pyserini_scores=True still works)") from None


def check_rm3(searcher, index_dir) -> None:
    """RM3 reads each feedback passage's document vector: refuse an index without them."""
    try:
        has = searcher.get_total_num_docs() > 0 and searcher.reader.getTermVectors(0) is not None
    except Exception:
        has = False
    if not has:
        raise UsageError(f"{index_dir}: RM3 on a Lucene index needs stored document vectors: "
                         "build it with `trecqr index --backend lucene --store-docvectors`")


def feedback_terms(index, query: str, *, k1: float | None = None, b: float | None = None,
                   **rm3) -> dict:
    """{term: weight} of Anserini's RM3 expansion of ``query`` on a loaded Lucene index
    (``load_index``'s tuple); rm3: fb_terms, fb_docs, original_weight, filter_terms."""
    searcher, manifest = index
    autoclass, _ = jvm()
    searcher.set_bm25(float(k1 if k1 is not None else manifest["k1"]),
                      float(b if b is not None else manifest["b"]))
    _set_cascade(autoclass, searcher, False, rm3)
    terms = searcher.get_feedback_terms(query) if query.strip() else None
    if terms is None:
        return {}
    out = {e.getKey(): float(e.getValue()) for e in terms.entrySet().toArray()}
    return {t: w for t, w in sorted(out.items(), key=lambda x: (-x[1], x[0])) if w > 0}


def search(index_dir, topics, k: int = 100, *, n_threads: int = 1, runid: str = "trecqr-lucene",
           show_progress: bool = True, index=None, **params):
    """BM25 run of the topics (a Topics, a ``{qid: query}`` dict or a topics file) on a Lucene
    index; params k1/b override the index's (0.9/0.4 for a foreign index), pyserini_scores
    gives Pyserini's scores and cut; rm3 (a dict of fb_terms, fb_docs, original_weight,
    filter_terms) expands every query with Anserini's RM3 first (an index with document
    vectors). Rows in trec_eval order, ties at rank k cut as trec_eval ranks them (see the
    module docstring)."""
    unknown = sorted(set(params) - {"k1", "b", "pyserini_scores", "rm3"})
    if unknown:
        raise UsageError(f"unknown lucene search option(s): {', '.join(unknown)}")
    if k < 1:
        raise UsageError("k must be at least 1")
    n_threads = thread_count(n_threads)
    topics = as_topics(topics)
    own = index is None
    searcher, manifest = load_index(index_dir) if own else index
    autoclass, JArrayList = jvm()
    k1 = float(params["k1"] if params.get("k1") is not None else manifest["k1"])
    b = float(params["b"] if params.get("b") is not None else manifest["b"])
    exact = not params.get("pyserini_scores")
    rm3 = params.get("rm3")
    if rm3 is not None:
        check_rm3(searcher, index_dir)
    try:
        searcher.set_bm25(k1, b)
        _set_cascade(autoclass, searcher, not exact, rm3)
        n_docs = int(searcher.get_total_num_docs())
        want = min(max(n_docs, 1), k + 10) if exact else k
        results = {}
        step = max(256, 64 * n_threads)
        bar = progress(range(0, len(topics), step), show_progress, desc="searching",
                       unit=" batches", mininterval=0.5)
        for start in bar:
            queries, qids = JArrayList(), JArrayList()
            for i in range(start, min(start + step, len(topics))):
                queries.add(topics.queries[i] or "")
                qids.add(str(i))
            found = _hits(searcher.batch_search(queries, qids, int(want), int(n_threads)))
            for key, (names, scores) in found.items():
                i = int(key)
                if not names:
                    continue
                scores = np.asarray(scores, dtype=np.float32)
                depth = want
                # the tie at rank k may run past the last hit: search deeper until it ends
                while exact and len(names) == depth and depth < n_docs and len(names) >= k and \
                        np.sort(scores)[::-1][k - 1] <= scores.min():
                    depth = min(n_docs, depth * 4)
                    hits = searcher.search(topics.queries[i], int(depth))
                    names = [h.docid for h in hits]
                    scores = np.asarray([h.score for h in hits], dtype=np.float32)
                if len(set(names)) != len(names):  # a foreign index may repeat an id
                    best = {}
                    for name, s in zip(names, scores.tolist()):
                        best[name] = max(s, best.get(name, s))
                    names, scores = list(best), np.asarray(list(best.values()), np.float32)
                results[i] = order_hits(scores, names, k)
    finally:
        if own:
            searcher.close()
    return hits_to_run(topics, results, runid, f"<lucene {index_dir}>",
                       why_empty="no query term in the index")


def describe(manifest) -> str:
    k1 = manifest.get("k1", DEFAULT_K1)
    b = manifest.get("b", DEFAULT_B)
    if manifest.get("foreign"):
        return f"BM25 k1={k1} b={b} (Lucene, a foreign Pyserini/Anserini index)"
    return f"BM25 k1={k1} b={b} (Lucene via Pyserini {manifest.get('pyserini', '?')})"
