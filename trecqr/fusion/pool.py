"""The runs to fuse as columns: one table of candidates (a topic and a document any run
retrieved for it) by runs, so that every algorithm is a few numpy operations on whole
columns instead of a dictionary look-up per document and run.

Each run is first put in trec_eval's order (topics grouped, scores descending, ties by docno
descending): a document's position in that order is its rank for the rank-based algorithms.
Candidates are numbered topic by topic (topics in order of first appearance over the runs), and
within a topic in order of first appearance over the runs taken in turn (run 1 from its top,
then the documents run 2 adds, ...): that is the order in which Condorcet starts its sort and in
which the borda normalisation lists the documents a run lacks (ranx takes a Python set's order
there, which changes with PYTHONHASHSEED).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..formats.arrays import IDX, arrow_indices, as_numpy
from ..formats.order import qid_codes, sort_ties, trec_order
from ..formats.run import Run


@dataclass
class Pool:
    """Candidates by runs. Row c of every matrix is candidate c; column r is run r.

    topics: qids by topic code. docs, dcode: the documents' docnos (an Arrow string array) and
    each candidate's index in it (the qid and docno columns are made from these when asked).
    topic: each candidate's topic code (candidates of a topic are consecutive); starts: the
    first candidate of each topic, and the number of candidates at the end.
    score: the run's (normalised) score, NaN where the run lacks the candidate. pos: the
    candidate's 0-based position in the run's order for its topic, -1 where absent.
    length: the number of documents each run has for the candidate's topic.
    """

    topics: list
    docs: pa.Array
    dcode: np.ndarray
    topic: np.ndarray
    starts: np.ndarray
    score: np.ndarray
    pos: np.ndarray
    length: np.ndarray
    present: np.ndarray | None = None

    def __post_init__(self):
        if self.present is None:
            self.present = self.pos >= 0

    @property
    def n_runs(self) -> int:
        return self.score.shape[1]

    @property
    def qid(self) -> pa.Array:
        return pa.array(self.topics, pa.string()).take(arrow_indices(self.topic))

    @property
    def docno(self) -> pa.Array:
        return self.docs.take(arrow_indices(self.dcode))

    def with_scores(self, score: np.ndarray, pos: np.ndarray | None = None,
                    length: np.ndarray | None = None) -> "Pool":
        return Pool(self.topics, self.docs, self.dcode, self.topic, self.starts, score,
                    self.pos if pos is None else pos, self.length if length is None else length,
                    self.present if pos is None else None)


class _Docnos:
    """The candidates' docnos for ``sort_ties``, which takes only the tied ones: made from the
    dictionary when taken, not as a column of every candidate."""

    def __init__(self, pool: Pool):
        self.pool = pool

    def take(self, indices):
        return self.pool.docs.take(arrow_indices(self.pool.dcode[as_numpy(indices)]))


def _ordered(run: Run):
    """Rows of run in trec_eval's order: (order or None if already so, 0-based positions,
    topic codes of the ordered rows, topics by code). A run read by the C scanner has its
    topic codes already (no qid column is built)."""
    known = getattr(run, "codes", None)
    if known is not None:
        codes, uniq = known.line_codes(len(run)).astype(np.int64), list(known.topics)
    else:
        codes, uniq = qid_codes(run.qid)
    order, rank, _ = trec_order(run, float32=False, qcode=codes)
    if len(order) and order[0] == 0 and (np.diff(order) == 1).all():
        order = None
    return order, rank - 1, (codes if order is None else codes[order]), uniq


def _take(arr, order):
    return arr if order is None else arr.take(arrow_indices(order))


def build_pool(runs) -> Pool:
    """The Pool of a list of trecqr Runs (two or more)."""
    topic_index: dict = {}
    tcodes, docnos, scores, positions, which = [], [], [], [], []
    for r, run in enumerate(runs):
        order, pos, codes, uniq = _ordered(run)
        remap = np.array([topic_index.setdefault(q, len(topic_index)) for q in uniq], np.int64)
        tcodes.append(remap[codes] if len(codes) else np.zeros(0, np.int64))
        docnos.append(_take(run.docno, order))
        score = np.asarray(run.score, np.float64)
        scores.append(score if order is None else score[order])
        positions.append(pos)
        which.append(np.full(len(pos), r, np.int32))
    topics = list(topic_index)
    tcode = np.concatenate(tcodes)
    denc = pc.dictionary_encode(pa.chunked_array(docnos, pa.string()).combine_chunks())
    dcode = as_numpy(denc.indices).astype(np.int64)
    run_of = np.concatenate(which)
    pos_all = np.concatenate(positions).astype(np.int64)
    score_all = np.concatenate(scores)
    # rows by (topic, run, position): each run's rows are already by position within a topic,
    # so a stable sort by topic does it; a hash (first-seen) encoding of (topic, doc) in that
    # order numbers the candidates as wanted, topic by topic
    rows = np.argsort(tcode, kind="stable")
    key = tcode[rows] * max(len(denc.dictionary), 1) + dcode[rows]
    kenc = pc.dictionary_encode(arrow_indices(key))
    cand = np.empty(len(rows), np.int64)
    cand[rows] = as_numpy(kenc.indices)
    n_cand, n_runs = len(kenc.dictionary), len(runs)
    score = np.full((n_cand, n_runs), np.nan)
    pos = np.full((n_cand, n_runs), -1, np.int64)
    score[cand, run_of] = score_all
    pos[cand, run_of] = pos_all
    ckey = as_numpy(kenc.dictionary)
    n_docs = max(len(denc.dictionary), 1)
    topic = ckey // n_docs
    starts = np.searchsorted(topic, np.arange(len(topics) + 1))
    counts = np.bincount(tcode * n_runs + run_of, minlength=len(topics) * n_runs)
    length = counts.reshape(len(topics), n_runs)[topic]
    return Pool(topics, denc.dictionary, ckey % n_docs, topic, starts, score, pos, length)


def fused_run(pool: Pool, fused: np.ndarray, runid: str) -> Run:
    """The fused scores as a Run in trec_eval's order (topics in the pool's order, scores
    descending, ties by docno descending), as a run file would be written."""
    order = np.lexsort((-fused, pool.topic)).astype(IDX)
    order = sort_ties(order, pool.topic, fused, _Docnos(pool))
    take = arrow_indices(pool.dcode[order])
    qid = pa.array(pool.topics, pa.string()).take(arrow_indices(pool.topic[order]))
    return Run(qid, pool.docs.take(take), fused[order], runid, "<fused run>")
