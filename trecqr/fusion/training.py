"""Training of the probabilistic fusions on judged topics (ranx's ``*_train``): PosFuse and
SlideFuse's probability of relevance at each position, ProbFuse's and SegFuse's per segment,
BayesFuse's log-odds per cut-off segment, MAPFuse's MAP of each run.

All start from hit lists: for each training topic (every topic of the qrels, in the qrels'
order) and run, 1 where the document at that position (of the normalised run) is judged
relevant (grade >= 1), 0 elsewhere; a run lacking the topic has an empty list. They are held
as a (topics x depth) matrix and a length per topic, and every estimate is a column reduction.
Sums over topics add topic after topic, as ranx's loops do.
"""

from __future__ import annotations

import math

import numpy as np

from trecqr.runtime.deferred import pa, pc
from trecqr.formats.arrays import as_numpy
from trecqr.fusion.pool import Pool
from trecqr.fusion.positional import BAYES_CUTOFFS, SEGMENT_EDGES


def _keys(qid, docno) -> pa.Array:
    return pc.binary_join_element_wise(qid, docno, "\x1f")


def score_positions(pool: Pool) -> np.ndarray:
    """Each present candidate's position in its run when the run is sorted by its normalised
    score (descending, ties by docno descending): the order ranx reads hit lists in (it sorts
    a normalised run before). It is the run's own order except after the borda
    normalisation, where the documents a run lacks follow its own."""
    doc_rank = np.empty(len(pool.docno), np.int64)
    doc_rank[as_numpy(pc.array_sort_indices(pool.docno, order="descending"))] = \
        np.arange(len(pool.docno))
    pos = np.full(pool.pos.shape, -1, np.int64)
    for r in range(pool.n_runs):
        rows = np.flatnonzero(pool.present[:, r])
        order = rows[np.lexsort((doc_rank[rows], -pool.score[rows, r], pool.topic[rows]))]
        topic = pool.topic[order]
        pos[order, r] = np.arange(len(order)) - np.searchsorted(topic, topic)
    return pos


def hit_lists(pool: Pool, qrels) -> list:
    """[(hits (topics x depth), lengths)] per run, over the qrels' topics."""
    pool = pool.with_scores(pool.score, score_positions(pool))
    grade = np.asarray(qrels.grade)
    relevant = _keys(qrels.qid.filter(pa.array(grade >= 1)),
                     qrels.docno.filter(pa.array(grade >= 1)))
    is_hit = as_numpy(pc.is_in(_keys(pool.qid, pool.docno), value_set=relevant))
    topics = list(dict.fromkeys(qrels.qid.to_pylist()))
    where = {t: i for i, t in enumerate(pool.topics)}
    out = []
    depth = int(pool.length.max()) if len(pool.length) else 0
    for r in range(pool.n_runs):
        hits = np.zeros((len(topics), max(depth, 1)))
        lengths = np.zeros(len(topics), np.int64)
        for i, t in enumerate(topics):
            code = where.get(t)
            if code is None:
                continue
            lo, hi = pool.starts[code], pool.starts[code + 1]
            rows = np.arange(lo, hi)[pool.present[lo:hi, r]]
            lengths[i] = pool.length[lo, r] if hi > lo else 0
            hits[i, pool.pos[rows, r]] = is_hit[rows]
        out.append((hits, lengths))
    return out


def _topic_sum(values: np.ndarray) -> np.ndarray:
    """Column sums adding rows in order (numpy reduces axis 0 row by row)."""
    acc = np.zeros(values.shape[1:])
    for row in values:
        acc += row
    return acc


def position_probs(hits: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """P(relevant | position) over the topics whose list reaches the position."""
    depth = int(lengths.max()) if len(lengths) else 0
    reach = np.arange(depth)[None, :] < lengths[:, None]
    return hits[:, :depth].sum(axis=0) / reach.sum(axis=0)


def probfuse_probs(hits: np.ndarray, lengths: np.ndarray, n_segments: int) -> np.ndarray:
    """Mean over topics of each of n_segments equal segments' precision (a topic whose list
    has fewer documents than segments leaves the later ones out, but still counts)."""
    cum = np.concatenate([np.zeros((len(hits), 1)), np.cumsum(hits, axis=1)], axis=1)
    size = -(-lengths // n_segments)
    contrib = np.zeros((len(hits), n_segments))
    reached = int(lengths.max()) if len(lengths) else 0  # segments from there on are empty
    for k in range(min(n_segments, reached)):
        start = np.minimum(k * size, lengths)
        end = np.minimum((k + 1) * size, lengths)
        n = end - start
        got = np.take_along_axis(cum, end[:, None], 1)[:, 0] - \
            np.take_along_axis(cum, start[:, None], 1)[:, 0]
        contrib[:, k] = np.where(n > 0, got / np.maximum(n, 1), 0.0)
    return _topic_sum(contrib) / max(len(hits), 1)


def segfuse_probs(hits: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """Mean over topics of each SegFuse segment's precision (over the segment's full size)."""
    width = SEGMENT_EDGES[-1]
    padded = np.zeros((len(hits), width))
    keep = min(hits.shape[1], width)
    padded[:, :keep] = hits[:, :keep]
    cum = np.concatenate([np.zeros((len(hits), 1)), np.cumsum(padded, axis=1)], axis=1)
    sizes = np.diff(SEGMENT_EDGES)
    contrib = (cum[:, SEGMENT_EDGES[1:]] - cum[:, SEGMENT_EDGES[:-1]]) / sizes
    return _topic_sum(contrib) / max(len(hits), 1)


def bayes_log_odds(hits: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """log(p / (1 - p)) for each BayesFuse cut-off segment, p the mean precision (0.001 in
    place of 0 for p and for 1 - p), repeated over the segment's positions."""
    width = BAYES_CUTOFFS[-1]
    padded = np.zeros((len(hits), width))
    keep = min(hits.shape[1], width)
    padded[:, :keep] = hits[:, :keep]
    odds = np.zeros(width)
    n = len(hits)
    for start, end in zip(BAYES_CUTOFFS[:-1], BAYES_CUTOFFS[1:]):
        avg = 0.0
        for count in padded[:, start:end].sum(axis=1).tolist():
            avg += (count / (end - start)) / n
        if avg == 0:
            avg += 0.001
        neg = 1 - avg
        if neg == 0:
            neg += 0.001
        odds[start:end] = math.log(avg / neg)
    return odds


def mean_ap(hits: np.ndarray, lengths: np.ndarray, relevant: np.ndarray) -> float:
    """MAP of the run over the training topics (a topic without relevant documents counts 0)."""
    cum = np.cumsum(hits, axis=1)
    prec = np.where(hits > 0, cum / np.arange(1, hits.shape[1] + 1), 0.0)
    ap = np.where(relevant > 0, prec.sum(axis=1) / np.maximum(relevant, 1), 0.0)
    return float(ap.mean()) if len(ap) else 0.0


def relevant_counts(qrels) -> np.ndarray:
    """Documents judged relevant (grade >= 1) per qrels topic, in the qrels' topic order."""
    topics = list(dict.fromkeys(qrels.qid.to_pylist()))
    index = {t: i for i, t in enumerate(topics)}
    grade = np.asarray(qrels.grade)
    codes = np.array([index[q] for q in qrels.qid.to_pylist()], np.int64)
    return np.bincount(codes[grade >= 1], minlength=len(topics))


def train(method: str, pool: Pool, qrels, params: dict) -> dict:
    """The trained parameters of method (a canonical name) on the normalised training pool."""
    lists = hit_lists(pool, qrels)
    if method in ("posfuse", "slidefuse"):
        return {"probs": [position_probs(h, n) for h, n in lists]}
    if method == "probfuse":
        return {"probs": [probfuse_probs(h, n, int(params["n_segments"])) for h, n in lists]}
    if method == "segfuse":
        return {"probs": [segfuse_probs(h, n) for h, n in lists]}
    if method == "bayesfuse":
        return {"log_odds": [bayes_log_odds(h, n) for h, n in lists]}
    if method == "mapfuse":
        rel = relevant_counts(qrels)
        return {"map_scores": [mean_ap(h, n, rel) for h, n in lists]}
    raise ValueError(f"{method} is not trained")
