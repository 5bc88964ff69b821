"""RM3 pseudo-relevance feedback on a bm25s index, as Anserini's ``Rm3Reranker`` computes it.

sim_ret+ compares a generated query's ranking with the ranking of the *target expanded by
RM3*. RM3 has many variants; this one is Anserini 0.22.1's (``io.anserini.rerank.lib.
Rm3Reranker``, what Pyserini's ``LuceneSearcher.set_rm3`` runs), step by step, so that a
bm25s index and a Lucene index give the same expansion up to their small BM25 differences
(checked on the TREC Session 2013 collection, tests/generative/test_retrieval_sim_lucene.py: given
Lucene's analysis and first stage, the same terms and weights as Anserini on all 465 queries;
on the bm25s index itself, the same feedback terms for 442 of them). On a Lucene index
trecqr runs Anserini's reranker itself (:mod:`trecqr.retrieval.lucene`).

Defaults are Pyserini's: ``fb_docs=10, fb_terms=10, original_weight=0.5, filter_terms=True``.

1. First stage: the target's BM25 top :data:`RERANK_CUTOFF` (50, Anserini's ``rerankcutoff``)
   passages, ordered by score descending then docid ascending (Anserini's
   ``BREAK_SCORE_TIES_BY_DOCID``); the first ``fb_docs`` of them are the feedback passages D_i,
   with their BM25 scores s_i. (So at most 50 feedback passages, as in Anserini.)
2. Each D_i's text (read back from the collection file the index was built from, or ``texts``)
   is analysed with the index's analyzer into term frequencies tf_i(w). A term is kept when it
   has 2 to 20 characters, consists of ``[a-z0-9]`` only (when ``filter_terms``), and occurs
   in at most 10% of the index's passages (df / N <= 0.1 in float32, Anserini's stop-word
   heuristic; N = the passages in the index). D_i's vector is pruned to its ``fb_terms``
   most frequent kept terms (ties: term ascending), and |D_i| = the sum of the pruned tfs.
3. RM1(w) = sum_i s_i tf_i(w) / |D_i| over the union of the pruned vectors (passages with no
   kept term are skipped); pruned to the ``fb_terms`` heaviest (ties: term ascending) and
   scaled to sum 1.
4. Query model Q(w) = count of w in the analysed target / number of analysed target terms
   (no filter).
5. RM3(w) = original_weight Q(w) + (1 - original_weight) RM1(w) over the union. When no
   feedback term passes step 2 (in a tiny collection every term is in more than 10% of the
   passages) RM1 is empty and the weights sum to original_weight, as in Anserini; the ranking
   is that of the query alone.
6. The expanded query is a weighted bag of term queries: score(d) = sum_w RM3(w) BM25(w, d),
   passages with score > 0; ranked in trec_eval's order (score descending, docid descending)
   and cut at k, as every trecqr run.

Arithmetic is float64 here and float32 in Anserini, so weights agree to about 1e-6; when two
candidate terms tie in Anserini's float32 but not here (or the reverse), a pruning can keep a
different term.
"""

from __future__ import annotations

import re

import numpy as np

from trecqr.retrieval.analysis import Analyzer
from trecqr.retrieval.indexdir import order_hits

FB_DOCS = 10
FB_TERMS = 10
ORIGINAL_WEIGHT = 0.5
FILTER_TERMS = True
RERANK_CUTOFF = 50
MAX_DF_RATIO = np.float32(0.1)

_ENGLISH = re.compile(r"[a-z0-9]+")


def _top(weights: dict, n: int) -> dict:
    """The n heaviest entries, ties by term ascending (Anserini's FeatureVector.pruneToSize)."""
    return dict(sorted(weights.items(), key=lambda x: (-x[1], x[0]))[:n])


def feedback_passages(ranking, fb_docs: int) -> list:
    """The first fb_docs of a first-stage ranking [(docid, score)] re-ordered as Anserini's
    first stage orders it (score descending, docid ascending by UTF-8 bytes), after its cut at
    RERANK_CUTOFF."""
    ordered = sorted(ranking, key=lambda x: (-x[1], x[0].encode("utf-8")))[:RERANK_CUTOFF]
    return ordered[:fb_docs]


def _term_ok(term: str, filter_terms: bool) -> bool:
    return 2 <= len(term) <= 20 and (not filter_terms or _ENGLISH.fullmatch(term) is not None)


def relevance_model(feedback, texts, analyzer, df, n_docs: int, *, fb_terms: int = FB_TERMS,
                    filter_terms: bool = FILTER_TERMS) -> dict:
    """RM1 {term: weight} (sum 1) from feedback [(docid, score)] (steps 2-3 of the module doc).

    texts: {docid: text}; df: term -> document frequency in the index (0 if absent)."""
    rm1: dict = {}
    for docid, score in feedback:
        tf: dict = {}
        for t in analyzer(texts[docid]):
            tf[t] = tf.get(t, 0) + 1
        kept = {t: n for t, n in tf.items() if _term_ok(t, filter_terms)
                and np.float32(df(t)) / np.float32(n_docs) <= MAX_DF_RATIO}
        kept = _top(kept, fb_terms)
        norm = float(sum(kept.values()))
        if norm <= 0.001:
            continue
        for t, n in kept.items():
            rm1[t] = rm1.get(t, 0.0) + n / norm * score
    rm1 = _top(rm1, fb_terms)
    z = sum(rm1.values())
    return {t: w / z for t, w in rm1.items()} if z > 0 else {}


def query_model(terms) -> dict:
    """Q(w): the analysed query's term counts scaled to sum 1."""
    out: dict = {}
    for t in terms:
        out[t] = out.get(t, 0.0) + 1.0
    return {t: v / len(terms) for t, v in out.items()}


def interpolate(qmodel: dict, rm1: dict, original_weight: float) -> dict:
    """RM3 = original_weight Q + (1 - original_weight) RM1, heaviest first (ties: term
    ascending), terms of weight 0 dropped."""
    out = {t: original_weight * qmodel.get(t, 0.0) + (1 - original_weight) * rm1.get(t, 0.0)
           for t in set(qmodel) | set(rm1)}
    return {t: w for t, w in sorted(out.items(), key=lambda x: (-x[1], x[0])) if w > 0}


def bm25s_expand(index, query: str, first_stage, texts, *, fb_docs: int = FB_DOCS,
                 fb_terms: int = FB_TERMS, original_weight: float = ORIGINAL_WEIGHT,
                 filter_terms: bool = FILTER_TERMS, analyzer=None) -> dict:
    """{term: weight} of the RM3-expanded query on a bm25s index handle (retriever, docids,
    manifest); first_stage: the query's ranking [(docid, score)], at least RERANK_CUTOFF deep.
    analyzer: the index's (pass one for many queries: it caches stems)."""
    retriever = index[0]
    analyzer = analyzer or Analyzer()
    vocab = retriever.vocab_dict
    indptr = retriever.scores["indptr"]
    n_docs = int(retriever.scores["num_docs"])

    def df(term):
        i = vocab.get(term)
        return 0 if i is None else int(indptr[i + 1] - indptr[i])

    q_terms = analyzer(query)
    if not q_terms:
        return {}
    rm1 = relevance_model(feedback_passages(first_stage, fb_docs), texts, analyzer, df, n_docs,
                          fb_terms=fb_terms, filter_terms=filter_terms)
    return interpolate(query_model(q_terms), rm1, original_weight)


def bm25s_weighted_ranking(index, weights: dict, k: int) -> list:
    """[(docid, score)] for score(d) = sum_w weight(w) BM25(w, d) on a bm25s index handle;
    passages scoring > 0, trec_eval order, top k."""
    retriever, docids = index[0], index[1]
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
    return [(d, s) for s, d in order_hits(total[hit], docids.take(hit).to_pylist(), k)]
