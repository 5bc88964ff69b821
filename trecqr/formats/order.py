"""trec_eval's order of a run's rows: topics by first appearance, scores descending, ties by
docno descending (byte-wise strcmp); the rank column of the file is ignored.

Writing a run (formats), ranking it for measures (scorer) and the adapters all need this one
order, so it lives here, below the scorer.
"""

from __future__ import annotations

import numpy as np

from trecqr.runtime.deferred import pa, pc
from trecqr.formats.arrays import IDX, arrow_indices, arrow_numbers, as_numpy


# --------------------------------------------------------------------------- qid codes
def _blocks(qid: pa.Array):
    """Starts of runs of equal qids, and the qid of each run (cheap when files are grouped)."""
    n = len(qid)
    if n == 0:
        return np.zeros(0, IDX), []
    change = pc.not_equal(qid.slice(1), qid.slice(0, n - 1))
    starts = np.concatenate([[0], np.flatnonzero(as_numpy(change)) + 1])
    if len(starts) > 200_000 and len(starts) > n // 8:  # interleaved file: hash instead
        enc = qid.dictionary_encode()
        return None, (enc.dictionary.to_pylist(), as_numpy(enc.indices))
    return starts, qid.take(arrow_indices(starts)).to_pylist()


def qid_codes(qid: pa.Array, vocab_index: dict | None = None):
    """Map each row's qid to a code; returns (codes, unique qids seen, in first-seen order).

    Without vocab_index, codes number the qids in first-seen order.
    """
    starts, names = _blocks(qid)
    if starts is None:
        uniq, idx = names
        if vocab_index is None:
            return idx.astype(IDX), uniq
        remap = np.array([vocab_index[u] for u in uniq], dtype=IDX)
        return remap[idx], uniq
    if vocab_index is None:
        local: dict = {}
        block_codes = np.array([local.setdefault(q, len(local)) for q in names], IDX)
        uniq = list(local)
    else:
        block_codes = np.array([vocab_index[q] for q in names], dtype=IDX)
        uniq = list(dict.fromkeys(names))
    lengths = np.diff(np.append(starts, len(qid)))
    return np.repeat(block_codes, lengths), uniq


# --------------------------------------------------------------------------- ordering
def sort_ties(order, qcode: np.ndarray, score: np.ndarray, docno):
    """Within runs of equal (topic, score) in `order`, put docnos in descending byte order.

    ``order`` None means the rows are already in score order (identity permutation).
    """
    n = len(qcode)
    q, s = (qcode, score) if order is None else (qcode[order], score[order])
    tie = (q[1:] == q[:-1]) & (s[1:] == s[:-1])
    del q, s
    if order is None:
        order = np.arange(n, dtype=IDX)
    if not tie.any():
        return order
    in_group = np.zeros(n, bool)
    in_group[:-1] |= tie
    in_group[1:] |= tie
    pos = np.flatnonzero(in_group)
    group = np.cumsum(np.concatenate([[1], ~tie[pos[:-1]]]))  # new group unless tied to prev
    table = pa.table({"g": arrow_numbers(group), "d": docno.take(arrow_indices(order[pos]))})
    within = pc.sort_indices(table, sort_keys=[("g", "ascending"), ("d", "descending")])
    order[pos] = order[pos][as_numpy(within)]
    return order


def _block_sort(score: np.ndarray, starts: np.ndarray, n: int) -> np.ndarray:
    """Rows by score descending within each topic block, equal scores in row order: the
    order of a stable lexsort on (topic, -score) when topics are in blocks, as one stable
    sort per row of a padded (topics x depth) array (many short sorts, not one long one)."""
    lengths = np.diff(np.append(starts, n)).astype(np.int64)
    width = int(lengths.max())
    if width * len(starts) > 4 * n:  # very uneven blocks: padding would cost more
        qcode = np.repeat(np.arange(len(starts)), lengths)
        return np.lexsort((-score, qcode)).astype(IDX)
    cols = np.arange(width)
    valid = cols[None, :] < lengths[:, None]
    neg = np.full((len(starts), width), np.inf, dtype=score.dtype)
    neg[valid] = -score  # rows are consecutive blocks: row-major fill is the row order
    within = np.argsort(neg, axis=1, kind="stable")
    return (within + starts[:, None].astype(np.int64))[valid].astype(IDX)


def trec_order(run, float32: bool, qcode: np.ndarray | None = None):
    """Row order of trec_eval's ranking, the 1-based rank of each row in that order, and the
    start of each topic's block in it.

    Runs written in rank order (each topic one block, scores non-increasing) need no sort:
    only groups of tied scores are reordered by docno.
    """
    if qcode is None:
        qcode, _ = qid_codes(run.qid)
    score = run.score.astype(np.float32) if float32 else run.score
    n = len(score)
    order = None
    starts = np.zeros(min(n, 1), IDX)
    if n > 1:
        same = qcode[1:] == qcode[:-1]
        heads = np.flatnonzero(~same).astype(IDX)
        heads += 1
        starts = np.concatenate([starts, heads])
        grouped = len(starts) == len(np.unique(qcode[starts]))  # each topic in one block
        if grouped:
            down = score[1:] > score[:-1]
            down &= same
            if not down.any():
                order = sort_ties(None, qcode, score, run.docno)
            del down
        del same, heads
        if order is None and grouped:
            order = sort_ties(_block_sort(score, starts, n), qcode, score, run.docno)
        elif order is None:
            order = sort_ties(np.lexsort((-score, qcode)).astype(IDX), qcode, score, run.docno)
            q = qcode[order]
            starts = np.flatnonzero(np.concatenate([[True], q[1:] != q[:-1]])).astype(IDX)
            del q
    lengths = np.diff(np.append(starts, n)).astype(IDX)
    rank = np.ones(n, IDX)
    rank[starts[1:]] = 1 - lengths[:-1]
    np.cumsum(rank, out=rank)
    return order if order is not None else np.arange(n, dtype=IDX), rank, starts
