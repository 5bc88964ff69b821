"""Retrieval-based similarity of a generated and a target query: sim_ret, sim_ret+, sim_ret++.

All three compare the top-``k`` passages the *generated* query retrieves with a *reference*
ranking, from one index of :mod:`trecqr.retrieval` -- bm25s, Lucene or dense (a folder, a
:class:`~trecqr.generative.rankers.Ranker`, or the tuple
:func:`trecqr.retrieval.bm25.load_index` returns) -- by ``measure``:

* ``"rbo"`` (default): extrapolated rank-biased overlap, persistence ``p`` (0.9), both lists
  cut at ``k`` (:func:`trecqr.generative.overlap.rbo`);
* ``"jaccard"``: |A@k & B@k| / |A@k | B@k|;
* ``"overlap"``: |A@k & B@k| / k.

Two empty rankings give 1 and one empty ranking 0 (as in :mod:`.overlap`). Every function
returns a dict: ``value`` plus every parameter used and the two rankings' lengths.

Rankings. A query's ranking is the index's own run for it, the rows ``trecqr search`` writes
(BM25 on bm25s/Lucene: only passages sharing a term; dense: the nearest passages), in trec_eval
order (score descending, docid descending), cut at k; a blank query retrieves nothing.

sim_ret
    reference = the target query's top-k.
sim_ret+ (RM3; defaults = Pyserini's: ``fb_docs=10, fb_terms=10, original_weight=0.5``)
    reference = the top k of the target expanded by RM3 pseudo-relevance feedback, Anserini's
    RM3 (its ``Rm3Reranker``: feedback passages, term filter including its 10% document
    frequency cut-off, per-passage pruning, interpolation; every step in
    :mod:`trecqr.generative.rm3`). On a Lucene index Anserini runs it (an index with document
    vectors); on a bm25s index trecqr computes the same steps; a dense index has no terms
    to expand, so sim_ret+ is refused there.
sim_ret++ (fusion of the next half of the session)
    the reference queries are given (``reference_queries``) or taken by :func:`next_half`
    from a session's query list: for the target at position t of n queries, queries
    ``t .. t + ceil((n - t) / 2) - 1`` (the target and the first half of what follows it,
    at least the target). Each reference query's top ``depth`` (100) is fused:
    ``"rrf"`` (default) score(d) = sum_q 1 / (rrf_k + rank_q(d)), rank from 1, rrf_k = 60,
    a passage absent from a ranking adds 0; ``"combsum"``: each ranking's scores min-max
    normalised to [0, 1] (a ranking whose scores are all equal gives all 1), summed, absent
    adds 0. The fused list is sorted by fused score descending, then docid descending, and
    cut at ``k``.
"""

from __future__ import annotations

import math
import os

import numpy as np

from trecqr.runtime.deferred import pa
from trecqr.formats.run import Run
from trecqr.fusion import comb as fusion_comb
from trecqr.fusion import normalization as fusion_norm
from trecqr.fusion import positional as fusion_positional
from trecqr.fusion.pool import build_pool
from trecqr.retrieval.indexdir import MANIFEST
from trecqr.generative import rm3 as R
from trecqr.generative.overlap import jaccard_at_k, overlap_at_k, rbo
from trecqr.generative.rankers import Ranker

MEASURES = ("rbo", "jaccard", "overlap")
FUSIONS = ("rrf", "combsum")
DEFAULT_K = 10
DEFAULT_P = 0.9
FB_DOCS = R.FB_DOCS
FB_TERMS = R.FB_TERMS
ORIGINAL_WEIGHT = R.ORIGINAL_WEIGHT
RRF_K = 60
FUSE_DEPTH = 100


def ranker(index) -> Ranker:
    """A :class:`~trecqr.generative.rankers.Ranker` of ``index``. A folder given again is not
    loaded again: the last folder's Ranker is kept (until its manifest changes), so a loop of
    ``sim_ret(g, t, "index-dir")`` calls loads the index (a dense model, a JVM searcher) once."""
    if isinstance(index, Ranker):
        return index
    if not isinstance(index, (str, os.PathLike)):
        return Ranker(index)

    path = os.path.abspath(os.fspath(index))
    try:
        stamp = os.stat(os.path.join(path, MANIFEST)).st_mtime_ns
    except OSError:
        stamp = None
    key = (path, stamp)
    if key not in _LAST:
        _LAST.clear()
        _LAST[key] = Ranker(index)
    return _LAST[key]


_LAST: dict = {}





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
    """[(docid, score)] of the query's top k (an empty list if it retrieves nothing)."""
    return ranker(index).rank(query, k)


def _order_scores(scores: dict, k: int) -> list:
    rows = sorted(((s, d.encode("utf-8"), d) for d, s in scores.items()), reverse=True)
    return [(d, s) for s, _, d in rows[:k]]


def _pool(rankings, scored: bool):
    """The rankings as one topic's Pool (trecqr.fusion): ranks are list positions (the
    scores, when not used, are made to keep that order)."""
    runs = []
    for r in rankings:
        docs = [item[0] if isinstance(item, tuple) else item for item in r]
        scores = [float(item[1]) for item in r] if scored else -np.arange(len(docs), dtype=float)
        runs.append(Run(pa.array(["q"] * len(docs), pa.string()), pa.array(docs, pa.string()),
                        np.asarray(scores, np.float64)))
    if not any(len(run) for run in runs):
        return None
    return build_pool(runs)


def _as_dict(pool, fused) -> dict:
    return dict(zip(pool.docno.to_pylist(), fused.tolist()))


def rrf(rankings, k_rrf: int = RRF_K) -> dict:
    """{docid: sum 1/(k_rrf + rank)} over rankings (each a list of docids or (docid, score)):
    trecqr.fusion's RRF, with ranks from the list order."""
    pool = _pool(rankings, scored=False)
    if pool is None:
        return {}
    return _as_dict(pool, fusion_comb.comb_sum(fusion_positional.rrf(pool, k_rrf)))


def combsum(rankings) -> dict:
    """{docid: sum of min-max normalised scores} over rankings of (docid, score): trecqr.fusion's
    CombSUM after the plain min-max (a ranking whose scores are all equal gives all 1)."""
    pool = _pool([r for r in rankings if r], scored=True)
    if pool is None:
        return {}
    normed = fusion_norm.min_max(pool, floor=0.0, constant=1.0)
    return _as_dict(pool, fusion_comb.comb_sum(normed))


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


def _result(value, variant, gen, ref, k, measure, p, **extra) -> dict:
    out = {"value": float(value), "variant": variant, "measure": measure, "k": k}
    if measure == "rbo":
        out["p"] = p
    out.update(extra)
    out["generated_hits"] = len(gen)
    out["reference_hits"] = len(ref)
    return out


def sim_ret(generated: str, target: str, index, k: int = DEFAULT_K, measure: str = "rbo",
            p: float = DEFAULT_P) -> dict:
    """Overlap of the generated and the target query's top k."""
    r = ranker(index)
    gen = [d for d, _ in r.rank(generated, k)]
    ref = [d for d, _ in r.rank(target, k)]
    return _result(compare(gen, ref, k, measure, p), "sim_ret", gen, ref, k, measure, p,
                   **r.params())


def sim_ret_plus(generated: str, target: str, index, k: int = DEFAULT_K, measure: str = "rbo",
                 p: float = DEFAULT_P, *, fb_docs: int = FB_DOCS, fb_terms: int = FB_TERMS,
                 original_weight: float = ORIGINAL_WEIGHT, filter_terms: bool = R.FILTER_TERMS,
                 texts=None) -> dict:
    """Overlap of the generated query's top k with the RM3-expanded target's top k."""
    r = ranker(index)
    if texts is not None:
        r.set_texts(texts)
    gen = [d for d, _ in r.rank(generated, k)]
    expanded, weights = r.expand(target, k, fb_docs=fb_docs, fb_terms=fb_terms,
                                 original_weight=original_weight, filter_terms=filter_terms)
    ref = [d for d, _ in expanded]
    return _result(compare(gen, ref, k, measure, p), "sim_ret+", gen, ref, k, measure, p,
                   **r.params(), expansion="rm3 (Anserini's)", fb_docs=fb_docs,
                   fb_terms=fb_terms, original_weight=original_weight,
                   filter_terms=filter_terms, expanded_query=weights)


def sim_ret_plus_plus(generated: str, reference_queries, index, k: int = DEFAULT_K,
                      measure: str = "rbo", p: float = DEFAULT_P, *, fusion: str = "rrf",
                      rrf_k: int = RRF_K, depth: int = FUSE_DEPTH) -> dict:
    """Overlap of the generated query's top k with the fused top k of reference_queries.

    reference_queries: the queries to fuse (e.g. :func:`next_half` of a session).
    """
    r = ranker(index)
    refs = list(reference_queries)
    if not refs:
        raise ValueError("sim_ret++ needs at least one reference query")
    gen = [d for d, _ in r.rank(generated, k)]
    fused = fuse([r.rank(q, depth) for q in refs], fusion, k, rrf_k)
    ref = [d for d, _ in fused]
    extra = {"fusion": fusion, "depth": depth, "reference_queries": refs}
    if fusion == "rrf":
        extra["rrf_k"] = rrf_k
    return _result(compare(gen, ref, k, measure, p), "sim_ret++", gen, ref, k, measure, p,
                   **r.params(), **extra)
