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
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from ir_measures.providers.base import NOT_PROVIDED
import pyarrow as pa
import pyarrow.compute as pc

from ..errors import UsageError
from .irm_rankings import ranking, topic_codes

DEFAULT_ALPHA = 0.5
DEFAULT_BETA = 0.5


# ------------------------------------------------------------------------------ inputs
@dataclass
class Judged:
    """The qrels of the evaluated topics: judged documents, their relevant subtopics (local
    indices per topic, in numbering order), and per-subtopic counts."""

    doc_topic: np.ndarray      # topic code of each judged (topic, docno)
    doc_key: pa.Array          # "topic\\0docno" of each judged document
    doc_order: np.ndarray      # byte-wise rank of each judged document's docno
    rel: np.ndarray            # bool [docs x S]: relevant to local subtopic s
    nrel_sub: np.ndarray       # int [topics x S]: documents relevant to subtopic s
    actual: np.ndarray         # int [topics]: subtopics with a relevant document
    key: tuple = ()            # (topics, rel) it was made for


def _key(qid: pa.Array, docno: pa.Array) -> pa.Array:
    return pc.binary_join_element_wise(qid.cast(pa.string()), docno.cast(pa.string()), "\x00")


def _judged(qrels, topics: list, rel: int) -> Judged:
    T = len(topics)
    code = topic_codes(qrels.qid, topics)
    # pyndeval numbers subtopics by first appearance over the whole qrels
    sub_index = pc.dictionary_encode(qrels.subtopic).indices.to_numpy(zero_copy_only=False)
    keep = np.flatnonzero(code >= 0)
    t, sub = code[keep], sub_index[keep].astype(np.int64)
    relevant = np.asarray(qrels.grade)[keep] >= rel
    keys = _key(qrels.qid.take(pa.array(keep)), qrels.docno.take(pa.array(keep)))
    enc = pc.dictionary_encode(keys)
    doc = enc.indices.to_numpy(zero_copy_only=False).astype(np.int64)
    doc_key = enc.dictionary
    ndocs = len(doc_key)
    doc_topic = np.zeros(ndocs, np.int64)
    doc_topic[doc] = t
    docnos = qrels.docno.take(pa.array(keep))
    first_row = np.full(ndocs, len(doc), np.int64)
    np.minimum.at(first_row, doc, np.arange(len(doc)))
    doc_docno = docnos.take(pa.array(first_row)) if ndocs else pa.array([], pa.string())
    doc_order = np.empty(ndocs, np.int64)
    doc_order[pc.sort_indices(doc_docno).to_numpy()] = np.arange(ndocs)
    # actual subtopics of each topic, numbered locally in the global order
    rt, rs = t[relevant], sub[relevant]
    pair = np.unique(rt * (int(sub_index.max(initial=0)) + 1) + rs) if len(rt) else \
        np.zeros(0, np.int64)
    width = int(sub_index.max(initial=0)) + 1
    pt, ps = pair // width, pair % width
    actual = np.bincount(pt, minlength=T).astype(np.int64)
    S = int(actual.max(initial=0))
    starts = np.concatenate([[0], np.cumsum(actual)[:-1]]) if T else np.zeros(0, np.int64)
    local = np.arange(len(pair)) - starts[pt]
    relmat = np.zeros((ndocs, max(S, 1)), bool)
    nrel_sub = np.zeros((T, max(S, 1)), np.int64)
    if len(rt):
        where = np.searchsorted(pair, rt * width + rs)
        ls = local[where]
        relmat[doc[relevant], ls] = True
        np.add.at(nrel_sub, (rt, ls), 1)
    return Judged(doc_topic, doc_key, doc_order, relmat, nrel_sub, actual)


@dataclass
class Ranked:
    """The run's ranked documents that are relevant to some subtopic ("hits")."""

    length: np.ndarray   # documents ranked per topic
    topic: np.ndarray    # topic code of each hit, hits in (topic, rank) order
    pos: np.ndarray      # 0-based rank of each hit
    rel: np.ndarray      # bool [hits x S]


def _ranked(run, judged: Judged, topics: list, judged_only: bool) -> Ranked:
    T = len(topics)
    rows, t, starts = ranking(run, topics, ties="docno_asc")
    where = pc.index_in(_key(run.qid.take(pa.array(rows)), run.docno.take(pa.array(rows))),
                        value_set=judged.doc_key).fill_null(-1) \
        .to_numpy(zero_copy_only=False).astype(np.int64) if len(rows) else \
        np.zeros(0, np.int64)
    if judged_only:  # ir_measures drops unjudged documents before pyndeval ranks
        keep = where >= 0
        rows, t, where = rows[keep], t[keep], where[keep]
        starts = np.searchsorted(t, np.arange(T + 1))
    length = np.diff(starts) if T else np.zeros(0, np.int64)
    pos = np.arange(len(rows)) - starts[:-1][t] if len(rows) else np.zeros(0, np.int64)
    # a docno ranked twice: ndeval's merge judges its first (best-ranked) row only
    if len(where):
        judged_rows = np.flatnonzero(where >= 0)
        _, first = np.unique(where[judged_rows], return_index=True)
        once = np.full(len(where), -1, np.int64)
        once[judged_rows[first]] = where[judged_rows[first]]
        where = once
    hit = where >= 0
    if hit.any():
        hit[hit] = judged.rel[where[hit]].any(axis=1)
    h = np.flatnonzero(hit)
    return Ranked(length, t[h], pos[h], judged.rel[where[h]])


# ------------------------------------------------------------------------------ kernels
def _powers(factor: float, n: int) -> np.ndarray:
    """1, f, f*f, ... by repeated multiplication (C's ``gain *= f``)."""
    out = np.empty(max(n, 1) + 1)
    out[0] = 1.0
    out[1:] = np.cumprod(np.full(len(out) - 1, factor))
    return out


@lru_cache(maxsize=8)
def _discounts(n: int) -> np.ndarray:
    """ndeval's discount(i): 1 at rank 0, log(2)/log(i + 2) after (libm's log)."""
    out = np.ones(max(n, 1))
    two = math.log(2.0)
    for i in range(1, n):
        out[i] = two / math.log(i + 2.0)
    return out


def _gains(topic: np.ndarray, rel: np.ndarray, alpha: float) -> np.ndarray:
    """Novelty gain of each hit (hits in (topic, rank) order): sum over its relevant subtopics,
    in numbering order, of (1 - alpha)^(earlier hits of the topic relevant to that subtopic)."""
    if not len(topic):
        return np.zeros(0)
    cum = np.cumsum(rel, axis=0, dtype=np.int64)
    first = np.flatnonzero(np.concatenate([[True], topic[1:] != topic[:-1]]))
    base = (cum - rel)[first]  # counts before each topic's first hit
    before = cum - rel - np.repeat(base, np.diff(np.append(first, len(topic))), axis=0)
    power = _powers(1.0 - alpha, int(before.max(initial=0)) + 1)
    score = np.zeros(len(topic))
    for s in range(rel.shape[1]):
        score = score + np.where(rel[:, s], power[before[:, s]], 0.0)
    return score


def _dense(topic, pos, values, T: int, depth: int) -> np.ndarray:
    """[T x depth] with values at (topic, pos) for pos < depth, zeros elsewhere."""
    out = np.zeros((T, depth))
    ok = pos < depth
    out[topic[ok], pos[ok]] = values[ok]
    return out


def _by_topic(topic, values, T: int) -> np.ndarray:
    """[T x most hits] with each topic's values left-aligned in order, zero padded."""
    counts = np.bincount(topic, minlength=T)
    out = np.zeros((T, int(counts.max(initial=0)) or 1))
    if len(topic):
        first = np.concatenate([[0], np.cumsum(counts)[:-1]])
        out[topic, np.arange(len(topic)) - first[topic]] = values
    return out


def _normalised(gain: np.ndarray, actual: np.ndarray, alpha: float, kind: str) -> np.ndarray:
    """ndeval's computeDCG / computeERR on [T x depth] gains: cumulative, divided by the ideal
    ideal from rank 2 on (rank 1 is left raw, as ndeval's loop starts at 1)."""
    T, depth = gain.shape
    if kind == "dcg":
        weight = _discounts(depth)[:depth]
        per_rank = gain * weight
    else:
        weight = np.arange(1, depth + 1, dtype=np.float64)
        per_rank = gain / weight
    cum = np.cumsum(per_rank, axis=1)
    ideal_gain = np.empty((T, depth))
    ideal_gain[:, 0] = actual
    ideal_gain[:, 1:] = 1.0 - alpha
    ideal_gain = np.cumprod(ideal_gain, axis=1)
    ideal = np.cumsum(ideal_gain * weight if kind == "dcg" else ideal_gain / weight, axis=1)
    out = cum.copy()
    with np.errstate(divide="ignore", invalid="ignore"):
        out[:, 1:] = cum[:, 1:] / ideal[:, 1:]
    out[actual == 0] = 0.0
    return out


def _ideal_gains(judged: Judged, T: int, alpha: float, depth: int | None) -> np.ndarray:
    """Gains of ndeval's greedy ideal ranking, [T x steps] (steps = depth, or every judged
    document with a positive gain when depth is None): at each rank the judged document with
    the highest novelty gain, ties to the larger docno (byte-wise)."""
    rel = judged.rel
    S = rel.shape[1]
    relevant = np.flatnonzero(rel.any(axis=1))
    if not len(relevant):
        return np.zeros((T, depth or 1))
    # documents with the same relevant subtopics (a pattern) are taken largest docno first
    bits = np.packbits(rel[relevant], axis=1)
    keys = np.concatenate([judged.doc_topic[relevant][:, None].astype(np.int64),
                           bits.astype(np.int64)], axis=1)
    uniq, pid = np.unique(keys, axis=0, return_inverse=True)
    pid = pid.ravel()
    P = len(uniq)
    p_topic = uniq[:, 0]
    p_rel = rel[relevant][np.unique(pid, return_index=True)[1]]
    # each pattern's docno ranks, largest first
    order = np.lexsort((-judged.doc_order[relevant], pid))
    p_count = np.bincount(pid, minlength=P)
    p_start = np.concatenate([[0], np.cumsum(p_count)[:-1]])
    p_docs = judged.doc_order[relevant][order]
    taken = np.zeros(P, np.int64)
    counts = np.zeros((T, S), np.int64)
    n_rel = np.bincount(p_topic, weights=p_count, minlength=T).astype(np.int64)
    steps = int(n_rel.max()) if depth is None else depth
    power = _powers(1.0 - alpha, int(n_rel.max()) + 1)
    out = np.zeros((T, max(steps, 1)))
    active = n_rel > 0
    for step in range(steps):
        live = np.flatnonzero((taken < p_count) & active[p_topic])
        if not len(live):
            break
        lt = p_topic[live]
        score = np.zeros(len(live))
        for s in range(S):
            score = score + np.where(p_rel[live, s], power[counts[lt, s]], 0.0)
        nxt = p_docs[p_start[live] + taken[live]]
        pick = np.lexsort((nxt, score, lt))
        last = np.flatnonzero(np.append(lt[pick][1:] != lt[pick][:-1], True))
        chosen = live[pick[last]]
        ct = p_topic[chosen]
        best = score[pick[last]]
        out[ct, step] = best
        taken[chosen] += 1
        counts[ct] += p_rel[chosen]
        active[ct[best == 0.0]] = False  # nothing left to gain (alpha = 1)
    return out


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


def alpha_dcg(run, qrels, topics, measure) -> np.ndarray:
    """alpha-DCG@k (``alpha_DCG``), ndeval's collection-independent normalisation."""
    return _dcg_err(run, qrels, topics, measure, "dcg", False)


def alpha_ndcg(run, qrels, topics, measure) -> np.ndarray:
    """alpha-nDCG@k (``alpha_nDCG``): alpha-DCG@k over the greedy ideal's."""
    return _dcg_err(run, qrels, topics, measure, "dcg", True)


def err_ia(run, qrels, topics, measure) -> np.ndarray:
    """ERR-IA@k (``ERR_IA``), alpha 0.5 as ir_measures invokes it."""
    return _dcg_err(run, qrels, topics, measure, "err", False, DEFAULT_ALPHA)


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


def nrbp(run, qrels, topics, measure) -> np.ndarray:
    """NRBP (novelty- and rank-biased precision), collection-independent normalisation."""
    return _nrbp(run, qrels, topics, measure, False)


def nnrbp(run, qrels, topics, measure) -> np.ndarray:
    """nNRBP: NRBP over the greedy ideal ranking's NRBP."""
    return _nrbp(run, qrels, topics, measure, True)


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
