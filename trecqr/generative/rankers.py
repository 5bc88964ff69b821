"""The retriever behind sim_ret, sim_ret+ and sim_ret++: any trecqr index.

:class:`Ranker` wraps one loaded index of :mod:`trecqr.retrieval` -- bm25s, Lucene or dense,
or a bare Lucene index such as a Pyserini prebuilt one -- and gives the rankings the
similarities compare: ``rank(query, k)`` is the index's own run for that query (the rows
``trecqr search`` writes: trec_eval order, cut at k), and ``expand(query, k, ...)`` is the
RM3-expanded ranking of sim_ret+:

* bm25s: :mod:`trecqr.generative.rm3` (Anserini's RM3 computed on the bm25s index);
* Lucene: Anserini's own ``Rm3Reranker`` (needs an index built with ``--store-docvectors``);
* dense: refused (RM3 expands a bag of terms; a dense index has none).

A query that is empty or blank retrieves nothing on every backend (a dense encoder would
otherwise embed the empty string). Rankings are cached per query at the deepest depth asked,
since sim_ret, sim_ret+ and sim_ret++ search the same queries again; :meth:`Ranker.prefetch`
searches many queries in one batch (the backends' threads and batched encoders) and
:meth:`Ranker.clear` forgets them, so callers hold the rankings of one batch at a time. RM3
expansions are computed for many queries at once (:meth:`Ranker.expansions`) and kept.
"""

from __future__ import annotations

import os
import warnings

from trecqr.errors import UsageError
from trecqr.retrieval import backends, lucene_search
from trecqr.retrieval.analysis import Analyzer
from trecqr.retrieval.collections import iter_collection
from trecqr.generative import rm3 as R

BATCH = 2000  # queries searched together (and rankings held) at a time
CACHE_LIMIT = 20_000  # rankings kept at most (a sim_ret++ batch fuses up to a few per query)


class Ranker:
    """Rankings of queries from one index (see the module docstring)."""

    def __init__(self, index):
        if isinstance(index, Ranker):
            self.index, self.label = index.index, index.label
        elif isinstance(index, backends.Index):
            self.index, self.label = index, os.fspath(index.dir)
        elif isinstance(index, tuple):  # a bm25s load_index tuple (retriever, docids, manifest)
            self.index = backends.Index.loaded("<index>", backends.backend("bm25s"), index[:3])
            self.label = "<index>"
        else:
            self.index, self.label = backends.load_index(index), os.fspath(index)
        self.backend = self.index.manifest["backend"]
        self._cache: dict = {}
        self._expanded: dict = {}
        self._expansions: dict = {}
        self._texts: dict = {}

    def params(self) -> dict:
        """The retriever's parameters, reported with every value."""
        m = self.index.manifest
        out = {"retriever": self.index.describe(), "backend": self.backend}
        if "k1" in m:
            out.update({"k1": m.get("k1"), "b": m.get("b")})
        return out

    def prefetch(self, queries, k: int) -> None:
        """Search every query not yet cached at depth k, in one batch."""
        todo = list(dict.fromkeys(q for q in queries if q.strip() and self._depth(q) < k))
        if not todo:
            return
        found = self._search(todo, k)
        if len(self._cache) + len(todo) > CACHE_LIMIT:  # bounded: forget the older rankings
            self._cache.clear()
        for q in todo:
            self._cache[q] = (k, found.get(q, []))

    def rank(self, query: str, k: int) -> list:
        """[(docid, score)]: the query's top k on this index (empty for a blank query)."""
        if not query.strip():
            return []
        if self._depth(query) < k:
            self.prefetch([query], k)
        return self._cache[query][1][:k]

    def expand(self, query: str, k: int, *, fb_docs: int = R.FB_DOCS,
               fb_terms: int = R.FB_TERMS, original_weight: float = R.ORIGINAL_WEIGHT,
               filter_terms: bool = R.FILTER_TERMS) -> tuple:
        """([(docid, score)] of the RM3-expanded query's top k, {term: weight} of the
        expansion)."""
        rm3 = {"fb_docs": fb_docs, "fb_terms": fb_terms, "original_weight": original_weight,
               "filter_terms": filter_terms}
        if not query.strip():
            return [], {}
        weights = self.expansions([query], **rm3)[query]
        if self.backend == "bm25s":
            return R.bm25s_weighted_ranking(self.index.handle, weights, k), weights
        hit = self._expanded.get((tuple(sorted(rm3.items())), query))
        if hit is None or hit[0] < k:
            self.prefetch_expanded([query], k, **rm3)
            hit = self._expanded[(tuple(sorted(rm3.items())), query)]
        return hit[1][:k], weights

    def prefetch_expanded(self, queries, k: int, **rm3) -> None:
        """Lucene: search the RM3-expanded queries in one batch (Anserini's threads) and keep
        their rankings until :meth:`clear`. (bm25s scores an expansion directly.)"""
        if self.backend != "lucene":
            return
        rm3 = {"fb_docs": R.FB_DOCS, "fb_terms": R.FB_TERMS,
               "original_weight": R.ORIGINAL_WEIGHT, "filter_terms": R.FILTER_TERMS, **rm3}
        key = tuple(sorted(rm3.items()))
        todo = list(dict.fromkeys(q for q in queries if q.strip()
                                  and self._expanded.get((key, q), (-1,))[0] < k))
        if todo:
            found = self._search(todo, k, rm3=rm3)
            for q in todo:
                self._expanded[(key, q)] = (k, found.get(q, []))

    def expansions(self, queries, *, fb_docs: int = R.FB_DOCS, fb_terms: int = R.FB_TERMS,
                   original_weight: float = R.ORIGINAL_WEIGHT,
                   filter_terms: bool = R.FILTER_TERMS) -> dict:
        """{query: {term: weight}} of RM3 expansions, computed once per query and parameters
        and kept. On bm25s the feedback passages of all the queries are found first (first
        stages searched in batches, only their top fb_docs kept) and their texts read in one
        pass over the collection, so the texts of the whole collection are never held."""
        rm3 = {"fb_docs": fb_docs, "fb_terms": fb_terms, "original_weight": original_weight,
               "filter_terms": filter_terms}
        key = tuple(sorted(rm3.items()))
        done = self._expansions.setdefault(key, {})
        todo = list(dict.fromkeys(q for q in queries if q not in done))
        if todo and self.backend == "bm25s":
            feedback = {}
            for lo in range(0, len(todo), BATCH):
                part = todo[lo:lo + BATCH]
                found = self._search([q for q in part if q.strip()], R.RERANK_CUTOFF)
                feedback.update({q: R.feedback_passages(found.get(q, []), fb_docs) for q in part})
            texts = self._texts_of({d for fb in feedback.values() for d, _ in fb})
            analyzer = Analyzer()
            for q in todo:
                done[q] = R.bm25s_expand(self.index.handle, q, feedback[q], texts, **rm3,
                                         analyzer=analyzer)
        elif todo and self.backend == "lucene":
            lucene_search.check_rm3(self.index.handle[0], self.label)
            for q in todo:
                done[q] = lucene_search.feedback_terms(self.index.handle, q, **rm3)
        elif todo:
            raise UsageError(f"sim_ret+ expands the target with RM3, which needs a term index "
                             f"(bm25s or lucene); {self.label} is a {self.backend} index")
        return {q: done[q] for q in queries}

    def set_texts(self, texts) -> None:
        """{docid: text} of the bm25s feedback passages (default: read from the collection
        file the index was built from)."""
        self._texts = dict(texts)

    def clear(self) -> None:
        """Forget the cached rankings (expansions are kept: they are small)."""
        self._cache.clear()
        self._expanded.clear()

    # ------------------------------------------------------------------ internals
    def _depth(self, query) -> int:
        hit = self._cache.get(query)
        return -1 if hit is None else hit[0]

    def _search(self, queries, k, **kw) -> dict:
        """{query: [(docid, score)]} of one batch search."""
        if not queries:
            return {}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # "n topics retrieved nothing": an empty ranking
            run = self.index.search({str(i): q for i, q in enumerate(queries)}, k,
                                    show_progress=False, **kw)
        out: dict = {}
        for qid, doc, score in zip(run.qid.to_pylist(), run.docno.to_pylist(),
                                   run.score.tolist()):
            out.setdefault(queries[int(qid)], []).append((doc, score))
        return out

    def _texts_of(self, docids) -> dict:
        """{docid: text} for these docids: those not yet read are read in one pass over the
        collection file named in the index manifest."""
        missing = set(docids) - set(self._texts)
        if missing:
            coll = self.index.manifest.get("collection")
            if not coll:
                raise UsageError(f"{self.label}: the index does not name its collection file; "
                                 "give the passages' texts (Ranker.set_texts)")
            for doc in iter_collection(coll, self.index.manifest.get("collection_format")):
                if doc.docid in missing:
                    self._texts[doc.docid] = doc.text
                    missing.discard(doc.docid)
                    if not missing:
                        break
            if missing:
                raise UsageError(f"{self.label}: {len(missing)} retrieved passages are not in "
                                 f"its collection file {coll} (changed since indexing?)")
        return self._texts
