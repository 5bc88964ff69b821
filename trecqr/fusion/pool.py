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

from trecqr.runtime.deferred import pa
from trecqr.formats.arrays import IDX, arrow_indices, as_numpy, string_array
from trecqr.formats.order import qid_codes, sort_ties, trec_order
from trecqr.formats.run import Run

from trecqr.fusion import _pool as _kernel


@dataclass
class Pool:
    """Candidates by runs. Row c of every matrix is candidate c; column r is run r.

    topics: qids by topic code. docs, dcode: the runs' docnos (an Arrow string array, one per
    row of the runs) and each candidate's first row in it (the qid and docno columns are made
    from these when asked).
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
        return string_array(self.topics).take(arrow_indices(self.topic))

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


def _by_topic(tcode: np.ndarray, n_topics: int) -> np.ndarray:
    """The stable order of rows by topic code: numpy's radix sort when the codes fit 16 bits
    (one pass over the rows), its merge sort otherwise."""
    small = np.uint16 if n_topics <= np.iinfo(np.uint16).max else np.int64
    return np.argsort(tcode.astype(small), kind="stable")


def candidates(tcode: np.ndarray, docno: pa.Array, n_topics: int) -> tuple:
    """Number the distinct (topic, docno) pairs of the rows topic by topic, each topic's in
    order of first appearance over the rows (taken in the rows' order, stably by topic).
    Returns (each row's candidate, each candidate's first row), int32 (runs of up to 2**31
    lines). The C kernel hashes each topic's docnos in a table of its own."""
    n = len(tcode)
    if n == 0:
        return np.zeros(0, IDX), np.zeros(0, IDX)
    rows = _by_topic(tcode, n_topics).astype(IDX)  # rows in (topic, row) order
    bounds = np.zeros(n_topics + 1, np.int64)
    np.cumsum(np.bincount(tcode, minlength=n_topics), out=bounds[1:])
    offsets, data = docno.buffers()[1:]
    # a sliced array's offsets start at its offset (they index the data buffer as they are)
    offsets = np.frombuffer(offsets, IDX, count=n + 1, offset=docno.offset * IDX().itemsize)
    cand, heads = _kernel.candidates(offsets, data if data is not None else b"", rows, bounds)
    return np.frombuffer(cand, IDX), np.frombuffer(heads, IDX)


def build_pool(runs) -> Pool:
    """The Pool of a list of trecqr Runs (two or more)."""
    topic_index: dict = {}
    tcodes, docnos, scores, positions, which = [], [], [], [], []
    for r, run in enumerate(runs):
        order, pos, codes, uniq = _ordered(run)
        remap = np.array([topic_index.setdefault(q, len(topic_index)) for q in uniq], IDX)
        tcodes.append(remap[codes] if len(codes) else np.zeros(0, IDX))
        docnos.append(_take(run.docno, order))
        score = np.asarray(run.score, np.float64)
        scores.append(score if order is None else score[order])
        positions.append(pos.astype(np.int32))
        which.append(np.full(len(pos), r, np.int8 if len(runs) < 128 else np.int32))
    topics, n_runs = list(topic_index), len(runs)
    tcode = np.concatenate(tcodes)
    docno = pa.chunked_array(docnos, pa.string()).combine_chunks()
    cand, heads = candidates(tcode, docno, len(topics))
    topic = tcode[heads]
    run_of = np.concatenate(which)
    score = np.full((len(topic), n_runs), np.nan)
    pos = np.full((len(topic), n_runs), -1, np.int32)
    score[cand, run_of] = np.concatenate(scores)
    pos[cand, run_of] = np.concatenate(positions)
    starts = np.searchsorted(topic, np.arange(len(topics) + 1))
    counts = np.bincount(tcode * n_runs + run_of, minlength=len(topics) * n_runs)
    length = counts.reshape(len(topics), n_runs).astype(np.int32)[topic]
    return Pool(topics, docno, heads, topic, starts, score, pos, length)


def _score_order(pool: Pool, fused: np.ndarray) -> np.ndarray:
    """Candidates by topic, then fused score descending, ties in any order (``sort_ties``
    then puts them by docno): one unstable sort of the scores and a stable radix sort of the
    topic codes, where a lexsort would sort stably twice. NaN scores (which fall last) are
    kept in candidate order, as the lexsort does."""
    if np.isnan(fused).any():
        return np.lexsort((-fused, pool.topic)).astype(IDX)
    order = np.argsort(-fused)
    return order[_by_topic(pool.topic[order], len(pool.topics))].astype(IDX)


def fused_run(pool: Pool, fused: np.ndarray, runid: str) -> Run:
    """The fused scores as a Run in trec_eval's order (topics in the pool's order, scores
    descending, ties by docno descending), as a run file would be written."""
    order = sort_ties(_score_order(pool, fused), pool.topic, fused, _Docnos(pool))
    take = arrow_indices(pool.dcode[order])
    qid = string_array(pool.topics).take(arrow_indices(pool.topic[order]))
    return Run(qid, pool.docs.take(take), fused[order], runid, "<fused run>")
