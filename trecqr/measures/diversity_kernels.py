"""ndeval's arrays for :mod:`trecqr.measures.diversity`: the judged documents and their
subtopics, the run's relevant hits, novelty gains, discounts and the greedy ideal ranking.

Kept apart from the measures (which read the parameters, cut off, normalise and finish each
value) because these kernels are the part that must match ``ndeval.c`` operation for
operation (tie orders, repeated multiplications, libm's log); the rules are listed in
:mod:`trecqr.measures.diversity`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from trecqr.runtime.deferred import pa, pc
from trecqr.rankings.irm import ranking, topic_codes


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
