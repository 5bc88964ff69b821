"""The intent-aware (diversity) measures of NIST's ndeval, as ir_measures' ``pyndeval`` provider
computes them: ``alpha_nDCG@k``, ``alpha_DCG@k``, ``ERR_IA@k``, ``nERR_IA@k``, ``NRBP``,
``nNRBP``, ``P_IA@k``, ``AP_IA`` and ``StRecall@k``, from diversity qrels
(:mod:`trecqr.formats.diversity`).

ndeval's rules, kept exactly (its ``ndeval.c``, version 4.5, which pyndeval embeds):

* Ranking: pyndeval sorts a topic's documents by score descending, ties by docno ascending,
  and numbers them 1..n. A document is relevant to a subtopic when its grade there is at least
  ``rel``; a subtopic counts (``actualSubtopics``) when some document is relevant to it. A
  docno ranked twice is judged at its first (best) rank only.
* Novelty gain: at rank i (0-based) a document earns ``sum_j (1 - alpha)^c_j`` over its
  relevant subtopics j, c_j being the number of documents above it relevant to j; the sum runs
  over the subtopics in their numbering order (pyndeval: order of first appearance in the qrels)
  and the powers are repeated multiplications, as in C.
* alpha-DCG@k = sum_{i<k} gain_i * d(i) with d(0) = 1, d(i) = log 2 / log(i + 2), divided by
  the "ideal ideal" sum_{i<k} m (1 - alpha)^i d(i) (m = actualSubtopics); ERR-IA@k the same
  with 1 / (i + 1) for d(i). At k = 1 ndeval skips that division (its loop starts at rank 2):
  ERR_IA@1 and alpha_DCG@1 are the first document's raw gain.
* alpha-nDCG@k and nERR-IA@k divide the run's value by the same value of an ideal ranking of
  the judged documents, built greedily (the highest gain next, ties to the larger docno,
  byte-wise); they are 0 wherever the run's alpha-DCG@k is 0.
* NRBP = (1 - (1 - alpha) beta) / m * sum_i gain_i beta^i over the whole ranking; nNRBP
  divides by the ideal ranking's NRBP (a topic without a relevant document gives 0/0 = nan, as
  in ndeval).
* P_IA@k = (relevant (document, subtopic) pairs in the top k) / (k m); StRecall@k = subtopics
  covered in the top k / m; AP_IA = mean over the m subtopics of the subtopic's AP.
* A topic without a relevant document scores 0 (nNRBP: nan).

Parameters as ir_measures passes them: ``rel`` (1), ``alpha`` and ``beta`` (0.5; ERR-IA and
nERR-IA always use alpha 0.5), ``judged_only`` (unjudged documents removed from the run before
ranking; ir_measures 0.4.3's provider fails on it with a TypeError, so this is its evident
intent). Beyond the provider: a cutoff above 20 (pyndeval asserts ``cutoff <= 20``, ndeval's
compiled DEPTH) is computed as ndeval would with a larger DEPTH, and a measure without a cutoff
(which the provider cannot parse) is taken over the whole ranking (k = documents ranked).
alpha and beta must lie in [0, 1].

The arrays those rules work on (judged documents, ranked hits, gains, the greedy ideal) are
built in :mod:`trecqr.measures.diversity_kernels`; this module holds the measures.
"""

from __future__ import annotations

import numpy as np
from ir_measures.providers.base import NOT_PROVIDED

from trecqr.errors import UsageError
from trecqr.measures.base import irm_native
from trecqr.measures.diversity_kernels import (
    _by_topic,
    _dense,
    _gains,
    _ideal_gains,
    _judged,
    _normalised,
    _powers,
    _ranked,
    Ranked,
)

DEFAULT_ALPHA = 0.5
DEFAULT_BETA = 0.5

# ------------------------------------------------------------------------------ measures
def _param(measure, name, default):
    if name not in measure.SUPPORTED_PARAMS:
        return default
    value = measure[name]
    return default if value is NOT_PROVIDED else value


def _cutoffs(measure, ranked: Ranked) -> np.ndarray:
    """Per-topic cutoff: the measure's, or every ranked document without one."""
    k = _param(measure, "cutoff", None)
    if k is None:
        return np.maximum(ranked.length, 1)
    if int(k) < 1:
        raise UsageError(f"{measure}: the cutoff must be at least 1")
    return np.full(len(ranked.length), int(k))


def _prepare(run, qrels, topics, measure):
    for name in ("alpha", "beta"):
        v = _param(measure, name, DEFAULT_ALPHA)
        if not 0.0 <= float(v) <= 1.0:
            raise UsageError(f"{measure}: {name} must be between 0 and 1 (got {v})")
    if getattr(qrels, "qrels_kind", None) != "diversity":
        raise UsageError(f"{measure} needs diversity qrels (topic subtopic docno grade)")
    rel = int(_param(measure, "rel", 1))
    base = (tuple(topics), rel)
    judged = _memo(qrels, ("judged",) + base, lambda: _judged(qrels, topics, rel))
    ranked = _ranked(run, judged, topics, bool(_param(measure, "judged_only", False)))
    judged.key = base
    return judged, ranked


def _memo(qrels, key, compute):
    """compute(), kept in the qrels object's memo (several measures, one preparation)."""
    memo = getattr(qrels, "memo", None)
    if memo is None:
        return compute()
    if key not in memo:
        while len(memo) >= 16:
            memo.pop(next(iter(memo)))
        memo[key] = compute()
    return memo[key]


def _finish(values: np.ndarray, ranked: Ranked) -> np.ndarray:
    """A topic left without documents (judged_only) yields nothing in pyndeval: 0."""
    return np.where(ranked.length > 0, values, 0.0)


def _at(matrix: np.ndarray, k: np.ndarray) -> np.ndarray:
    return matrix[np.arange(len(k)), k - 1] if len(k) else np.zeros(0)


def _dcg_err(run, qrels, topics, measure, kind: str, normalise: bool, alpha=None):
    judged, ranked = _prepare(run, qrels, topics, measure)
    T = len(topics)
    alpha = float(_param(measure, "alpha", DEFAULT_ALPHA) if alpha is None else alpha)
    k = _cutoffs(measure, ranked)
    depth = int(k.max(initial=1))
    gains = _gains(ranked.topic, ranked.rel, alpha)
    value = _normalised(_dense(ranked.topic, ranked.pos, gains, T, depth), judged.actual,
                        alpha, kind)
    if normalise:
        gains_ideal = _memo(qrels, ("ideal",) + judged.key + (alpha, depth),
                            lambda: _ideal_gains(judged, T, alpha, depth))
        ideal = _normalised(gains_ideal, judged.actual, alpha, kind)
        with np.errstate(divide="ignore", invalid="ignore"):
            value = np.where(value != 0.0, value / np.where(value != 0.0, ideal, 1.0), 0.0)
    return _finish(_at(value, k), ranked)


@irm_native("alpha_DCG", provider="pyndeval", qrels_kind="diversity")
def alpha_dcg(run, qrels, topics, measure) -> np.ndarray:
    """alpha-DCG@k (``alpha_DCG``), ndeval's collection-independent normalisation."""
    return _dcg_err(run, qrels, topics, measure, "dcg", False)


@irm_native("alpha_nDCG", provider="pyndeval", qrels_kind="diversity")
def alpha_ndcg(run, qrels, topics, measure) -> np.ndarray:
    """alpha-nDCG@k (``alpha_nDCG``): alpha-DCG@k over the greedy ideal's."""
    return _dcg_err(run, qrels, topics, measure, "dcg", True)


@irm_native("ERR_IA", provider="pyndeval", qrels_kind="diversity")
def err_ia(run, qrels, topics, measure) -> np.ndarray:
    """ERR-IA@k (``ERR_IA``), alpha 0.5 as ir_measures invokes it."""
    return _dcg_err(run, qrels, topics, measure, "err", False, DEFAULT_ALPHA)


@irm_native("nERR_IA", provider="pyndeval", qrels_kind="diversity")
def nerr_ia(run, qrels, topics, measure) -> np.ndarray:
    """nERR-IA@k (``nERR_IA``): ERR-IA@k over the greedy ideal's."""
    return _dcg_err(run, qrels, topics, measure, "err", True, DEFAULT_ALPHA)


def _nrbp(run, qrels, topics, measure, normalise: bool) -> np.ndarray:
    judged, ranked = _prepare(run, qrels, topics, measure)
    T = len(topics)
    alpha = float(_param(measure, "alpha", DEFAULT_ALPHA))
    beta = float(_param(measure, "beta", DEFAULT_BETA))
    actual = judged.actual.astype(np.float64)
    factor = (1 - (1 - alpha) * beta) / np.where(actual > 0, actual, 1.0)
    gains = _gains(ranked.topic, ranked.rel, alpha)
    decay = _powers(beta, int(ranked.pos.max(initial=0)) + 1)
    total = np.cumsum(_by_topic(ranked.topic, gains * decay[ranked.pos], T), axis=1)[:, -1] \
        if T else np.zeros(0)
    value = np.where(actual > 0, total * factor, 0.0)
    if normalise:
        ideal = _memo(qrels, ("ideal",) + judged.key + (alpha, None),
                      lambda: _ideal_gains(judged, T, alpha, None))
        idecay = _powers(beta, ideal.shape[1])[:ideal.shape[1]]
        itotal = np.cumsum(ideal * idecay, axis=1)[:, -1]
        ivalue = np.where(actual > 0, itotal * factor, 0.0)
        with np.errstate(divide="ignore", invalid="ignore"):
            value = value / ivalue  # 0/0 = nan for a topic without relevant documents
    return _finish(value, ranked)


@irm_native("NRBP", provider="pyndeval", qrels_kind="diversity")
def nrbp(run, qrels, topics, measure) -> np.ndarray:
    """NRBP (novelty- and rank-biased precision), collection-independent normalisation."""
    return _nrbp(run, qrels, topics, measure, False)


@irm_native("nNRBP", provider="pyndeval", qrels_kind="diversity")
def nnrbp(run, qrels, topics, measure) -> np.ndarray:
    """nNRBP: NRBP over the greedy ideal ranking's NRBP."""
    return _nrbp(run, qrels, topics, measure, True)


@irm_native("P_IA", provider="pyndeval", qrels_kind="diversity")
def p_ia(run, qrels, topics, measure) -> np.ndarray:
    """P-IA@k: relevant (document, subtopic) pairs in the top k over k times the subtopics."""
    judged, ranked = _prepare(run, qrels, topics, measure)
    k = _cutoffs(measure, ranked)
    inside = ranked.pos < k[ranked.topic]
    count = np.bincount(ranked.topic[inside], weights=ranked.rel[inside].sum(axis=1),
                        minlength=len(topics)).astype(np.int64)
    denom = (k * judged.actual).astype(np.float64)
    value = np.where(judged.actual > 0, count / np.where(denom > 0, denom, 1.0), 0.0)
    return _finish(value, ranked)


@irm_native("StRecall", provider="pyndeval", qrels_kind="diversity")
def st_recall(run, qrels, topics, measure) -> np.ndarray:
    """Subtopic recall@k: subtopics with a relevant document in the top k over subtopics."""
    judged, ranked = _prepare(run, qrels, topics, measure)
    k = _cutoffs(measure, ranked)
    T, S = len(topics), judged.rel.shape[1]
    inside = ranked.pos < k[ranked.topic]
    seen = np.zeros((T, S), bool)
    tt, ss = np.nonzero(ranked.rel[inside])
    seen[ranked.topic[inside][tt], ss] = True
    actual = judged.actual.astype(np.float64)
    value = np.where(actual > 0, seen.sum(axis=1) / np.where(actual > 0, actual, 1.0), 0.0)
    return _finish(value, ranked)


@irm_native("AP_IA", provider="pyndeval", qrels_kind="diversity")
def ap_ia(run, qrels, topics, measure) -> np.ndarray:
    """AP-IA (MAP-IA per topic): the mean over subtopics of each subtopic's AP."""
    judged, ranked = _prepare(run, qrels, topics, measure)
    T, S = len(topics), judged.rel.shape[1]
    value = np.zeros(T)
    if len(ranked.topic):
        for s in range(S):
            hits = ranked.rel[:, s]
            t, pos = ranked.topic[hits], ranked.pos[hits]
            first = np.flatnonzero(np.concatenate([[True], t[1:] != t[:-1]])) if len(t) \
                else np.zeros(0, np.int64)
            count = np.arange(len(t)) - np.repeat(first, np.diff(np.append(first, len(t)))) + 1
            total = np.cumsum(_by_topic(t, count / (pos + 1.0), T), axis=1)[:, -1]
            nrel = judged.nrel_sub[:, s]
            value = value + np.where(nrel > 0, total / np.where(nrel > 0, nrel, 1), 0.0)
    actual = judged.actual.astype(np.float64)
    value = np.where(actual > 0, value / np.where(actual > 0, actual, 1.0), 0.0)
    return _finish(value, ranked)
