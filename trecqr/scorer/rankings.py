"""From a run and qrels to the per-topic rankings that measures read.

This is trec_eval's ``form_res_rels`` done for all topics at once, on columns:

1. documents of a topic are ordered by score descending, ties broken by docno descending
   (byte-wise strcmp); the rank column of the file is ignored. trec_eval 9.0.8 compares scores
   as 32-bit floats, 10.0 as doubles.
2. ``-M N`` keeps the first N documents of that order; ``-J`` then drops unjudged ones.
3. each ranked document gets its grade: NONPOOL (-1) when not in the qrels of the topic,
   UNJUDGED (-2) when judged with a negative grade.

Measures receive :class:`Batch` objects: the rankings of several topics padded to a common
depth in a 2-D array, so that every measure is a handful of numpy operations over all topics.
Topics are grouped by depth (powers of two) so padding never more than doubles memory.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..errors import InputError
from .options import Options

NONPOOL = -1
UNJUDGED = -2
PAD = -3


# --------------------------------------------------------------------------- qid codes
def _blocks(qid: pa.Array):
    """Starts of runs of equal qids, and the qid of each run (cheap when files are grouped)."""
    n = len(qid)
    if n == 0:
        return np.zeros(0, np.int64), []
    change = pc.not_equal(qid.slice(1), qid.slice(0, n - 1))
    starts = np.concatenate([[0], np.flatnonzero(change.to_numpy(zero_copy_only=False)) + 1])
    if len(starts) > 200_000 and len(starts) > n // 8:  # interleaved file: hash instead
        enc = pc.dictionary_encode(qid)
        return None, (enc.dictionary.to_pylist(), enc.indices.to_numpy())
    return starts, qid.take(pa.array(starts)).to_pylist()


def qid_codes(qid: pa.Array, vocab_index: dict | None = None):
    """Map each row's qid to a code; returns (codes, unique qids seen, in first-seen order).

    Without vocab_index, codes number the qids in first-seen order.
    """
    starts, names = _blocks(qid)
    if starts is None:
        uniq, idx = names
        if vocab_index is None:
            return idx.astype(np.int64), uniq
        remap = np.array([vocab_index[u] for u in uniq], dtype=np.int64)
        return remap[idx], uniq
    if vocab_index is None:
        local: dict = {}
        block_codes = np.array([local.setdefault(q, len(local)) for q in names], np.int64)
        uniq = list(local)
    else:
        block_codes = np.array([vocab_index[q] for q in names], dtype=np.int64)
        uniq = list(dict.fromkeys(names))
    lengths = np.diff(np.append(starts, len(qid)))
    return np.repeat(block_codes, lengths), uniq


def topics_of(qid: pa.Array) -> list:
    """Distinct qids of a column (cheap for files grouped by topic)."""
    starts, names = _blocks(qid)
    return list(dict.fromkeys(names if starts is not None else names[0]))


# --------------------------------------------------------------------------- ordering
def _sort_ties(order: np.ndarray, qcode: np.ndarray, score: np.ndarray, docno: pa.Array):
    """Within runs of equal (topic, score) in `order`, put docnos in descending byte order."""
    q, s = qcode[order], score[order]
    tie = (q[1:] == q[:-1]) & (s[1:] == s[:-1])
    if not tie.any():
        return order
    in_group = np.zeros(len(order), bool)
    in_group[:-1] |= tie
    in_group[1:] |= tie
    pos = np.flatnonzero(in_group)
    group = np.cumsum(np.concatenate([[1], ~tie[pos[:-1]]]))  # new group unless tied to prev
    table = pa.table({"g": group, "d": docno.take(pa.array(order[pos]))})
    within = pc.sort_indices(table, sort_keys=[("g", "ascending"), ("d", "descending")])
    order = order.copy()
    order[pos] = order[pos][within.to_numpy()]
    return order


def trec_order(run, float32: bool, qcode: np.ndarray | None = None):
    """Row order of trec_eval's ranking and the 1-based rank of each row in that order.

    Returns (order, rank): ``order`` lists rows topic block by topic block. Runs written in
    rank order (each topic one block, scores non-increasing) need no sort: only groups of tied
    scores are reordered by docno.
    """
    if qcode is None:
        qcode, _ = qid_codes(run.qid)
    score = run.score.astype(np.float32) if float32 else run.score
    n = len(score)
    order = None
    if n > 1:
        same = qcode[1:] == qcode[:-1]
        heads = np.concatenate([[0], np.flatnonzero(~same) + 1])
        grouped = len(heads) == len(np.unique(qcode[heads]))  # each topic in one block
        if grouped and not np.any(same & (score[1:] > score[:-1])):
            order = _sort_ties(np.arange(n), qcode, score, run.docno)
    if order is None:
        order = _sort_ties(np.lexsort((-score, qcode)), qcode, score, run.docno)
    q = qcode[order]
    first = np.ones(n, bool)
    first[1:] = q[1:] != q[:-1]
    starts = np.flatnonzero(first)
    rank = np.arange(1, n + 1) - np.repeat(starts, np.diff(np.append(starts, n)))
    return order, rank


# --------------------------------------------------------------------------- duplicates
def _docno_codes(docno: pa.Array) -> np.ndarray:
    """Integer codes with equal codes exactly for equal docnos.

    Canonical decimal docids (MS MARCO, TopiOCQA: no sign, no leading zeros) are their own
    codes, which costs one cast; any other docids are dictionary-encoded (hashing).
    """
    try:
        values = pc.cast(docno, pa.int64()).to_numpy(zero_copy_only=False)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        values = None
    if values is not None and len(values) and values.min() >= 0:
        powers = 10 ** np.arange(19, dtype=np.int64)
        digits = np.maximum(np.searchsorted(powers, values, side="right"), 1)
        lengths = pc.binary_length(docno).to_numpy(zero_copy_only=False)
        if np.array_equal(digits, lengths):
            return values
    return pc.dictionary_encode(docno).indices.to_numpy(zero_copy_only=False).astype(np.int64)


def _duplicate_rows(qcode: np.ndarray, docno: pa.Array, order: np.ndarray):
    """Indices (i, j) of a repeated (topic, docno) pair, or None.

    ``order`` lists rows topic block by topic block (trec_order), so each topic's docno codes
    are sorted as one row of a padded 2-D array: many short sorts instead of one long one.
    """
    n = len(qcode)
    if n < 2:
        return None
    codes = _docno_codes(docno)[order]
    q = qcode[order]
    starts = np.flatnonzero(np.concatenate([[True], q[1:] != q[:-1]]))
    lengths = np.diff(np.append(starts, n))
    klass = np.ceil(np.log2(lengths)).astype(np.int64)
    for k in np.unique(klass):
        sel = np.flatnonzero(klass == k)
        width = int(lengths[sel].max())
        if width < 2:
            continue
        mat = np.broadcast_to(-1 - np.arange(width, dtype=np.int64), (len(sel), width)).copy()
        row = np.repeat(np.arange(len(sel)), lengths[sel])
        col = np.arange(int(lengths[sel].sum())) - np.repeat(np.cumsum(lengths[sel]) - lengths[sel],
                                                             lengths[sel])
        mat[row, col] = codes[np.repeat(starts[sel], lengths[sel]) + col]
        mat.sort(axis=1)
        hit = np.flatnonzero((mat[:, 1:] == mat[:, :-1]).any(axis=1))
        if len(hit):
            t = sel[hit[0]]
            block = order[starts[t]:starts[t] + lengths[t]]
            vals = codes[starts[t]:starts[t] + lengths[t]]
            uniq, first, counts = np.unique(vals, return_index=True, return_counts=True)
            v = uniq[counts > 1][0]
            rows = block[vals == v]
            return int(rows[0]), int(rows[1])
    return None


def _raise_duplicate(obj, what: str, qid: str, docno: str):
    lines = obj.locate(lambda f: len(f) >= 3 and f[0] == qid and f[2] == docno)
    where = lines[1] if len(lines) > 1 else None
    first = f" (first at line {lines[0]})" if len(lines) > 1 else ""
    raise InputError(obj.source, where,
                     f"duplicate {what} for topic {qid!r} and docno {docno!r}{first}")


# --------------------------------------------------------------------------- rankings
@dataclass
class Rankings:
    """Rankings of every evaluated topic, as flat arrays (CSR) plus per-topic qrels counts."""

    qids: list            # evaluated topics, strcmp order
    offsets: np.ndarray   # (n+1,) into rel
    rel: np.ndarray       # grades in ranked order (NONPOOL / UNJUDGED for unjudged docs)
    num_rel: np.ndarray   # (n,) judged docs with grade >= relevance level
    levels: np.ndarray    # distinct grades >= 0 in the qrels
    level_counts: np.ndarray  # (n, len(levels)) judged docs per grade
    bogus: np.ndarray     # (n,) topics without a run ranking scored on a bogus one (10.0 -c)
    options: Options
    runid: str
    num_qrels_topics: int  # trec_eval's num_q_rels: every topic of the qrels file
    num_rel_all: int      # docs with grade > 0 over all qrels topics (num_rel under -c)
    qrels_only: list = field(default_factory=list)
    run_only: list = field(default_factory=list)

    @property
    def num_ret(self) -> np.ndarray:
        return np.diff(self.offsets)

    def __len__(self) -> int:
        return len(self.qids)

    def batches(self):
        """Yield (topic indices, Batch) covering all topics, grouped by ranking depth."""
        n = len(self.qids)
        depth = self.num_ret
        klass = np.where(depth > 0, np.ceil(np.log2(np.maximum(depth, 1))).astype(np.int64) + 1, 0)
        for k in np.unique(klass):
            idx = np.flatnonzero(klass == k)
            yield idx, self.batch(idx)
        if n == 0:
            return

    def batch(self, idx: np.ndarray) -> "Batch":
        num_ret = self.num_ret[idx]
        width = int(num_ret.max()) if len(idx) else 0
        rel = np.full((len(idx), width), PAD, dtype=np.int64)
        if width:
            row = np.repeat(np.arange(len(idx)), num_ret)
            starts = self.offsets[idx]
            col = np.arange(int(num_ret.sum())) - np.repeat(np.cumsum(num_ret) - num_ret, num_ret)
            rel[row, col] = self.rel[np.repeat(starts, num_ret) + col]
        return Batch(qids=[self.qids[i] for i in idx], rel=rel, num_ret=num_ret,
                     num_rel=self.num_rel[idx], levels=self.levels,
                     level_counts=self.level_counts[idx], options=self.options,
                     bogus=self.bogus[idx])


@dataclass
class Batch:
    """Rankings of some topics, padded with PAD to a common depth: what a measure computes on.

    rel[i, r] is the grade of the document at rank r+1 of topic i (NONPOOL/UNJUDGED if unjudged).
    """

    qids: list
    rel: np.ndarray
    num_ret: np.ndarray
    num_rel: np.ndarray
    levels: np.ndarray
    level_counts: np.ndarray
    options: Options
    bogus: np.ndarray

    @property
    def n(self) -> int:
        return len(self.qids)

    @property
    def depth(self) -> int:
        return self.rel.shape[1]

    @property
    def relevance_level(self) -> int:
        return self.options.relevance_level

    @cached_property
    def is_rel(self) -> np.ndarray:
        """Documents counted relevant: grade >= relevance level (-l)."""
        return self.rel >= self.options.relevance_level

    @cached_property
    def rel_so_far(self) -> np.ndarray:
        """Number of relevant documents at or above each rank (int)."""
        return np.cumsum(self.is_rel, axis=1)

    @cached_property
    def num_rel_ret(self) -> np.ndarray:
        return self.rel_so_far[:, -1] if self.depth else np.zeros(self.n, np.int64)

    @cached_property
    def valid(self) -> np.ndarray:
        return np.arange(self.depth)[None, :] < self.num_ret[:, None]

    @cached_property
    def ranks(self) -> np.ndarray:
        """1-based ranks as float64, shape (depth,)."""
        return np.arange(1, self.depth + 1, dtype=np.float64)

    def at(self, cumulative: np.ndarray, k: int) -> np.ndarray:
        """Value of a cumulative (n, depth) array at rank k (the last rank if the ranking is shorter)."""
        if self.depth == 0:
            return np.zeros(self.n, dtype=cumulative.dtype)
        return cumulative[:, min(k, self.depth) - 1]


def seqsum(values: np.ndarray) -> np.ndarray:
    """Row sums added left to right, as trec_eval's loops do (numpy's sum is pairwise)."""
    if values.shape[1] == 0:
        return np.zeros(values.shape[0])
    return np.cumsum(values, axis=1)[:, -1]


# --------------------------------------------------------------------------- building
def build_rankings(run, qrels, options: Options) -> Rankings:
    """Join run and qrels into the rankings of every topic trec_eval would evaluate."""
    # topics: strcmp order of UTF-8 bytes is code point order, as Python sorts str
    q_topic_set, r_topic_set = set(topics_of(qrels.qid)), set(topics_of(run.qid))
    vocab = sorted(q_topic_set | r_topic_set)
    index = {q: i for i, q in enumerate(vocab)}
    qq, _ = qid_codes(qrels.qid, index)
    rq, _ = qid_codes(run.qid, index)

    # qrels: duplicates, then (topic, doc) keys over the qrels docno dictionary
    enc = pc.dictionary_encode(qrels.docno)
    dict_docs = enc.dictionary
    qd = enc.indices.to_numpy().astype(np.int64)
    ndocs = max(len(dict_docs), 1)
    qkey = qq * ndocs + qd
    korder = np.argsort(qkey, kind="stable")
    qkey_sorted = qkey[korder]
    dup = np.flatnonzero(qkey_sorted[1:] == qkey_sorted[:-1])
    if len(dup):
        i = int(korder[dup[0]])
        _raise_duplicate(qrels, "judgment", qrels.qid[i].as_py(), qrels.docno[i].as_py())
    grade_sorted = qrels.grade[korder]

    # run: duplicates, grades of retrieved documents
    order, rank = trec_order(run, options.float32_scores, qcode=rq)
    pair = _duplicate_rows(rq, run.docno, order)
    if pair is not None:
        i = pair[0]
        _raise_duplicate(run, "document", run.qid[i].as_py(), run.docno[i].as_py())
    where = pc.index_in(run.docno, value_set=dict_docs)
    rel = np.full(len(run), NONPOOL, dtype=np.int64)
    hit = np.flatnonzero(where.is_valid().to_numpy(zero_copy_only=False))
    if len(hit):
        rkey = rq[hit] * ndocs + where.take(pa.array(hit)).to_numpy().astype(np.int64)
        pos = np.minimum(np.searchsorted(qkey_sorted, rkey), len(qkey_sorted) - 1)
        found = qkey_sorted[pos] == rkey
        g = grade_sorted[pos[found]]
        rel[hit[found]] = np.where(g < 0, UNJUDGED, g)

    # -M, -J
    keep = rank <= options.max_docs
    order = order[keep]
    ranked_rel = rel[order]
    ranked_q = rq[order]
    if options.judged_only:
        judged = ranked_rel >= 0
        ranked_rel, ranked_q = ranked_rel[judged], ranked_q[judged]

    # which topics are evaluated
    both = q_topic_set & r_topic_set
    if options.complete and options.v10:
        evaluated = sorted(q_topic_set)
    else:
        evaluated = sorted(both)
    ev_codes = np.array([index[q] for q in evaluated], dtype=np.int64)
    pos_of = np.full(len(vocab), -1, np.int64)
    pos_of[ev_codes] = np.arange(len(evaluated))

    # CSR of ranked grades per evaluated topic (run order of blocks is arbitrary: stable sort)
    p = pos_of[ranked_q]
    sel = p >= 0
    p, ranked_rel = p[sel], ranked_rel[sel]
    if len(p) and np.any(p[1:] < p[:-1]):
        o = np.argsort(p, kind="stable")
        p, ranked_rel = p[o], ranked_rel[o]
    counts = np.bincount(p, minlength=len(evaluated))
    bogus = np.array([q not in r_topic_set for q in evaluated], dtype=bool)
    if bogus.any():  # trec_eval 10.0 -c: a one-document ranking "ceci_nest_pas_un_docno"
        counts = counts + bogus
        ins = np.cumsum(counts)[bogus] - 1
        out = np.empty(len(ranked_rel) + int(bogus.sum()), np.int64)
        mask = np.zeros(len(out), bool)
        mask[ins] = True
        out[mask] = NONPOOL
        out[~mask] = ranked_rel
        ranked_rel = out
    offsets = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)

    # qrels grade counts per evaluated topic
    gq = pos_of[qq]
    judged = (gq >= 0) & (qrels.grade >= 0)
    levels = np.unique(qrels.grade[qrels.grade >= 0])
    lev_idx = np.searchsorted(levels, qrels.grade[judged])
    level_counts = np.bincount(gq[judged] * len(levels) + lev_idx,
                               minlength=len(evaluated) * len(levels)
                               ).reshape(len(evaluated), len(levels))
    num_rel = level_counts[:, levels >= options.relevance_level].sum(axis=1)

    return Rankings(
        qids=evaluated, offsets=offsets, rel=ranked_rel, num_rel=num_rel, levels=levels,
        level_counts=level_counts, bogus=bogus, options=options, runid=run.runid,
        num_qrels_topics=len(q_topic_set), num_rel_all=int(np.count_nonzero(qrels.grade > 0)),
        qrels_only=sorted(q_topic_set - r_topic_set), run_only=sorted(r_topic_set - q_topic_set))
