"""Retrieval-based similarity of a generated and a target query: sim_ret, sim_ret+, sim_ret++.

All three compare the top-``k`` passages the *generated* query retrieves with a *reference*
ranking, from one BM25 index of :mod:`trecqr.retrieval.bm25` (a folder, or the tuple
:func:`~trecqr.retrieval.bm25.load_index` returns), by ``measure``:

* ``"rbo"`` (default): extrapolated rank-biased overlap, persistence ``p`` (0.9), both lists
  cut at ``k`` (:func:`trecqr.generative.overlap.rbo`);
* ``"jaccard"``: |A@k & B@k| / |A@k | B@k|;
* ``"overlap"``: |A@k & B@k| / k.

Two empty rankings give 1 and one empty ranking 0 (as in :mod:`.overlap`). Every function
returns a dict: ``value`` plus every parameter used and the two rankings' lengths.

Rankings. A query's ranking is :func:`trecqr.retrieval.bm25.search` (BM25 with the index's
k1/b, only passages sharing a term, score descending then docid descending -- trec_eval's
order).

sim_ret
    reference = the target query's top-k.
sim_ret+ (RM3, defaults = Pyserini's: ``fb_docs=10, fb_terms=10, original_weight=0.5``)
    1. the target's BM25 top ``fb_docs`` passages D_1..D_n with scores s_i;
    2. each passage's text (``texts[docid]``, by default read back from the collection file
       named in the index manifest) is analysed with the index analyzer; P(w|D_i) = tf / |D_i|
       (maximum-likelihood, over the analysed terms);
    3. the query-likelihood weight of D_i is approximated by its BM25 score normalised to sum
       1 over the feedback passages, w_i = s_i / sum s_j;
    4. relevance model RM1(w) = sum_i w_i P(w|D_i); terms kept: those of at most 20 and at
       least 2 characters, made only of ``[a-z0-9]`` (Anserini's RM3 filter; no document-
       frequency filter); the ``fb_terms`` heaviest (ties: term ascending) are kept and
       renormalised to sum 1;
    5. original query model Q(w) = tf of w in the analysed target / its length;
    6. RM3(w) = original_weight Q(w) + (1 - original_weight) RM1(w) (the filter of step 4
       does not apply to the query's own terms; terms of weight 0 are dropped);
    7. the expanded query is scored exactly as a weighted Lucene BooleanQuery of boosted
       term queries: score(d) = sum_w RM3(w) BM25(w, d) (term-by-term scoring with the bm25s
       index, combined by the weights; no term repetition), passages with score > 0, score
       descending then docid descending; the reference is its top ``k``.
sim_ret++ (fusion of the next half of the session)
    the reference queries are given (``reference_queries``) or taken by :func:`next_half`
    from a session's query list: for the target at position t of n queries, queries
    ``t .. t + ceil((n - t) / 2) - 1`` (the target and the first half of what follows it,
    at least the target). Each reference query's BM25 top ``depth`` (100) is fused:
    ``"rrf"`` (default) score(d) = sum_q 1 / (rrf_k + rank_q(d)), rank from 1, rrf_k = 60,
    a passage absent from a ranking adds 0; ``"combsum"``: each ranking's scores min-max
    normalised to [0, 1] (a ranking whose scores are all equal gives all 1), summed, absent
    adds 0. The fused list is sorted by fused score descending, then docid descending, and
    cut at ``k``.
"""

from __future__ import annotations

import math
import os
import re
import warnings

import numpy as np

from .overlap import jaccard_at_k, overlap_at_k, rbo

MEASURES = ("rbo", "jaccard", "overlap")
FUSIONS = ("rrf", "combsum")
DEFAULT_K = 10
DEFAULT_P = 0.9
FB_DOCS = 10
FB_TERMS = 10
ORIGINAL_WEIGHT = 0.5
RRF_K = 60
FUSE_DEPTH = 100
_TEXT_CACHE: dict = {}


def _index(index):
    """(retriever, docids, manifest, label) from a folder or a load_index tuple."""
    from ..retrieval.bm25 import load_index

    if isinstance(index, tuple):
        return (*index[:3], "<index>")
    return (*load_index(index), os.fspath(index))


def compare(a, b, k: int = DEFAULT_K, measure: str = "rbo", p: float = DEFAULT_P) -> float:
    """Similarity of two ranked id lists at depth k by ``measure`` (rbo, jaccard, overlap)."""
    if measure == "rbo":
        return rbo(a, b, p=p, k=k)
    if measure == "jaccard":
        return jaccard_at_k(a, b, k)
    if measure == "overlap":
        return overlap_at_k(a, b, k)
    raise ValueError(f"unknown overlap measure {measure!r} (use {', '.join(MEASURES)})")


def ranking(index, query: str, k: int) -> list:
    """[(docid, score)] of the query's BM25 top k (an empty list if no term is in the index)."""
    from ..retrieval.bm25 import search

    idx = _index(index)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        run = search(idx[3], {"q": query}, k, show_progress=False, index=idx[:3])
    return list(zip(run.docno.to_pylist(), run.score.tolist()))


def _order_scores(scores: dict, k: int) -> list:
    rows = sorted(((s, d.encode("utf-8"), d) for d, s in scores.items()), reverse=True)
    return [(d, s) for s, _, d in rows[:k]]


def rrf(rankings, k_rrf: int = RRF_K) -> dict:
    """{docid: sum 1/(k_rrf + rank)} over rankings (each a list of docids or (docid, score))."""
    out: dict = {}
    for r in rankings:
        for rank, item in enumerate(r, 1):
            d = item[0] if isinstance(item, tuple) else item
            out[d] = out.get(d, 0.0) + 1.0 / (k_rrf + rank)
    return out


def combsum(rankings) -> dict:
    """{docid: sum of min-max normalised scores} over rankings of (docid, score)."""
    out: dict = {}
    for r in rankings:
        if not r:
            continue
        s = np.asarray([x[1] for x in r], dtype=np.float64)
        lo, hi = s.min(), s.max()
        norm = np.ones_like(s) if hi == lo else (s - lo) / (hi - lo)
        for (d, _), v in zip(r, norm.tolist()):
            out[d] = out.get(d, 0.0) + v
    return out


def fuse(rankings, method: str = "rrf", k: int | None = None, k_rrf: int = RRF_K) -> list:
    """Fused [(docid, score)], score descending then docid descending, cut at k."""
    if method == "rrf":
        scores = rrf(rankings, k_rrf)
    elif method == "combsum":
        scores = combsum(rankings)
    else:
        raise ValueError(f"unknown fusion {method!r} (use {', '.join(FUSIONS)})")
    return _order_scores(scores, len(scores) if k is None else k)


def next_half(queries, t: int) -> list:
    """The target (position t) and the first half of the queries after it (see module doc)."""
    n = len(queries)
    if not 0 <= t < n:
        raise ValueError(f"target position {t} outside a session of {n} queries")
    return list(queries[t:t + max(1, math.ceil((n - t) / 2))])


def _texts_for(manifest, texts):
    if texts is not None:
        return texts
    coll = manifest.get("collection")
    if coll not in _TEXT_CACHE:
        from ..retrieval.collections import iter_collection

        _TEXT_CACHE.clear()
        _TEXT_CACHE[coll] = {doc.docid: doc.text for doc in iter_collection(coll)}
    return _TEXT_CACHE[coll]


_RM3_TERM = re.compile(r"[a-z0-9]{2,20}")


def _rm3_ok(term: str) -> bool:
    return _RM3_TERM.fullmatch(term) is not None


def rm3_query(index, query: str, *, fb_docs: int = FB_DOCS, fb_terms: int = FB_TERMS,
              original_weight: float = ORIGINAL_WEIGHT, texts=None) -> dict:
    """{term: weight} of the RM3-expanded query (see the module docstring); weights sum to 1."""
    from ..retrieval.bm25 import Analyzer

    idx = _index(index)
    analyzer = Analyzer()
    q_terms = analyzer(query)
    qmodel: dict = {}
    for t in q_terms:
        qmodel[t] = qmodel.get(t, 0.0) + 1.0 / len(q_terms)
    fb = ranking(idx, query, fb_docs)
    rm1: dict = {}
    total = sum(s for _, s in fb)
    if fb and total > 0:
        source = _texts_for(idx[2], texts)
        for docid, s in fb:
            terms = analyzer(source[docid])
            if not terms:
                continue
            w = (s / total) / len(terms)
            for t in terms:
                if _rm3_ok(t):
                    rm1[t] = rm1.get(t, 0.0) + w
    top = sorted(rm1.items(), key=lambda x: (-x[1], x[0]))[:fb_terms]
    z = sum(w for _, w in top)
    out: dict = {t: original_weight * w for t, w in qmodel.items()}
    for t, w in top:
        out[t] = out.get(t, 0.0) + (1 - original_weight) * w / z
    return {t: w for t, w in out.items() if w > 0}


def weighted_ranking(index, weights: dict, k: int) -> list:
    """[(docid, score)] for score(d) = sum_w weight(w) BM25(w, d); score > 0; top k."""
    retriever, docids, _, _ = _index(index)
    vocab = retriever.vocab_dict
    total = None
    for t, w in weights.items():
        if t not in vocab or w == 0:
            continue
        s = w * np.asarray(retriever.get_scores([vocab[t]]), dtype=np.float64)
        total = s if total is None else total + s
    if total is None:
        return []
    hit = np.flatnonzero(total > 0)
    names = docids.take(hit).to_pylist()
    return _order_scores(dict(zip(names, total[hit].tolist())), k)


def _result(value, variant, gen, ref, k, measure, p, **extra) -> dict:
    out = {"value": float(value), "variant": variant, "measure": measure, "k": k}
    if measure == "rbo":
        out["p"] = p
    out.update(extra)
    out["generated_hits"] = len(gen)
    out["reference_hits"] = len(ref)
    return out


def _manifest_params(idx) -> dict:
    m = idx[2]
    return {"retriever": "bm25", "k1": m.get("k1"), "b": m.get("b")}


def sim_ret(generated: str, target: str, index, k: int = DEFAULT_K, measure: str = "rbo",
            p: float = DEFAULT_P) -> dict:
    """Overlap of the generated and the target query's BM25 top k."""
    idx = _index(index)
    gen = [d for d, _ in ranking(idx, generated, k)]
    ref = [d for d, _ in ranking(idx, target, k)]
    return _result(compare(gen, ref, k, measure, p), "sim_ret", gen, ref, k, measure, p,
                   **_manifest_params(idx))


def sim_ret_plus(generated: str, target: str, index, k: int = DEFAULT_K, measure: str = "rbo",
                 p: float = DEFAULT_P, *, fb_docs: int = FB_DOCS, fb_terms: int = FB_TERMS,
                 original_weight: float = ORIGINAL_WEIGHT, texts=None) -> dict:
    """Overlap of the generated query's top k with the RM3-expanded target's top k."""
    idx = _index(index)
    gen = [d for d, _ in ranking(idx, generated, k)]
    weights = rm3_query(idx, target, fb_docs=fb_docs, fb_terms=fb_terms,
                        original_weight=original_weight, texts=texts)
    ref = [d for d, _ in weighted_ranking(idx, weights, k)]
    return _result(compare(gen, ref, k, measure, p), "sim_ret+", gen, ref, k, measure, p,
                   **_manifest_params(idx), expansion="rm3", fb_docs=fb_docs,
                   fb_terms=fb_terms, original_weight=original_weight,
                   fb_doc_weights="bm25 normalised to sum 1",
                   expanded_query=dict(sorted(weights.items(), key=lambda x: (-x[1], x[0]))))


def sim_ret_plus_plus(generated: str, reference_queries, index, k: int = DEFAULT_K,
                      measure: str = "rbo", p: float = DEFAULT_P, *, fusion: str = "rrf",
                      rrf_k: int = RRF_K, depth: int = FUSE_DEPTH) -> dict:
    """Overlap of the generated query's top k with the fused top k of reference_queries.

    reference_queries: the queries to fuse (e.g. :func:`next_half` of a session).
    """
    idx = _index(index)
    refs = list(reference_queries)
    if not refs:
        raise ValueError("sim_ret++ needs at least one reference query")
    gen = [d for d, _ in ranking(idx, generated, k)]
    fused = fuse([ranking(idx, q, depth) for q in refs], fusion, k, rrf_k)
    ref = [d for d, _ in fused]
    extra = {"fusion": fusion, "depth": depth, "reference_queries": refs}
    if fusion == "rrf":
        extra["rrf_k"] = rrf_k
    return _result(compare(gen, ref, k, measure, p), "sim_ret++", gen, ref, k, measure, p,
                   **_manifest_params(idx), **extra)
