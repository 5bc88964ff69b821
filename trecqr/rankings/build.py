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

from trecqr.runtime.deferred import pc
from trecqr.errors import InputError, NoCommonTopicsError
from trecqr.formats.arrays import as_numpy, positions, sorted_distinct
from trecqr.rankings.trec_order import qid_codes, raise_duplicate, ranked_columns
from trecqr.rankings.ragged import IDX, depth_groups, padded, padded_ranges
from trecqr.rankings.options import Options

NONPOOL = -1
UNJUDGED = -2
PAD = -3


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
    run_topics: list | None = None  # the run's topics in first-seen order (build_rankings')

    @property
    def num_ret(self) -> np.ndarray:
        return np.diff(self.offsets)

    def __len__(self) -> int:
        return len(self.qids)

    def check_coverage(self, run_source: str, rel_source: str) -> None:
        """Fail where trec_eval fails: no topic in common; or, under 10.0 without -c, a judged
        topic without results (10.0 loops over the judged topics and exits on it)."""
        if len(self.qids) == 0:
            raise NoCommonTopicsError(
                run_source, None, f"no queries with both results and relevance info: none of "
                f"the {len(self.run_only)} topics of the run is among the "
                f"{len(self.qrels_only)} topics of {rel_source}", self.run_only, self.qrels_only)
        if self.options.v10 and not self.options.complete and self.qrels_only:
            raise InputError(run_source, None,
                             f"topic {self.qrels_only[0]!r} of {rel_source} has no results "
                             f"({len(self.qrels_only)} such topics); trec_eval 10.0 stops here "
                             f"(\"result qid not found\"); use -c to score them as empty "
                             f"rankings, or --compat 9.0.8 to skip them")

    def batches(self):
        """Yield (topic indices, Batch) covering all topics, grouped by ranking depth and
        limited in size, so that a measure's (topics x depth) temporaries stay small."""
        for idx in depth_groups(self.num_ret):
            yield idx, self.batch(idx)

    def batch(self, idx: np.ndarray) -> "Batch":
        num_ret = self.num_ret[idx]
        rel = padded(self.rel, self.offsets[idx], num_ret, PAD)  # int32 unless grades need more
        rel.setflags(write=False)  # often a view of self.rel: measures must not write to it
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
        """Documents counted relevant: grade >= relevance level (-l). With -l <= -1 trec_eval's
        rank loops count unjudged documents too; padding never counts."""
        return (self.rel >= self.options.relevance_level) & (self.rel != PAD)

    @cached_property
    def rel_so_far(self) -> np.ndarray:
        """Number of relevant documents at or above each rank (int)."""
        return np.cumsum(self.is_rel, axis=1, dtype=np.int32 if self.depth < 2 ** 31 else None)

    @cached_property
    def num_rel_ret(self) -> np.ndarray:
        """Relevant documents in the ranking, as trec_eval's rank loops count them."""
        return self.rel_so_far[:, -1] if self.depth else np.zeros(self.n, np.int64)

    @cached_property
    def num_rel_ret_judged(self) -> np.ndarray:
        """form_res_rels' ``num_rel_ret``: relevant among judged documents (grade >= 0). Equals
        num_rel_ret unless -l < 0 makes unjudged documents "relevant" in the rank loops."""
        if self.options.relevance_level >= 0:
            return self.num_rel_ret
        return np.count_nonzero(self.is_rel & (self.rel >= 0), axis=1)

    @cached_property
    def valid(self) -> np.ndarray:
        return np.arange(self.depth)[None, :] < self.num_ret[:, None]

    @cached_property
    def ranks(self) -> np.ndarray:
        """1-based ranks as float64, shape (depth,)."""
        return np.arange(1, self.depth + 1, dtype=np.float64)

    def at(self, cumulative: np.ndarray, k: int) -> np.ndarray:
        """Value of a cumulative (n, depth) array at rank k (the last rank if the ranking is
        shorter)."""
        if self.depth == 0:
            return np.zeros(self.n, dtype=cumulative.dtype)
        return cumulative[:, min(k, self.depth) - 1]


def seqsum(values: np.ndarray) -> np.ndarray:
    """Row sums added left to right, as trec_eval's loops do (numpy's sum is pairwise)."""
    if values.shape[1] == 0:
        return np.zeros(values.shape[0])
    return np.cumsum(values, axis=1)[:, -1]


# --------------------------------------------------------------------------- building
def levels_fit(grades: np.ndarray) -> bool:
    return not len(grades) or (grades.min() > -2 ** 31 and grades.max() < 2 ** 31)


def _grades(n: int, hit_rows, doc_of_hit, topic_of_hit, qkey_sorted, grade_sorted, ndocs,
            dtype) -> np.ndarray:
    """Grade of each run line: NONPOOL unless its (topic, docno) is judged."""
    rel = np.full(n, NONPOOL, dtype=dtype)
    if len(hit_rows) and len(qkey_sorted):
        rkey = topic_of_hit.astype(np.int64) * ndocs + doc_of_hit.astype(np.int64)
        pos = np.minimum(np.searchsorted(qkey_sorted, rkey), len(qkey_sorted) - 1)
        found = qkey_sorted[pos] == rkey
        g = grade_sorted[pos[found]]
        rel[hit_rows[found]] = np.where(g < 0, UNJUDGED, g)
    return rel


def _cut_blocks(rel: np.ndarray, starts: np.ndarray, lengths: np.ndarray, options: Options):
    """-M then -J on rankings stored as consecutive blocks (one per topic, in rank order)."""
    if options.max_docs < (int(lengths.max()) if len(lengths) else 0):
        lengths = np.minimum(lengths, options.max_docs)
        rel = rel[padded_ranges(starts, lengths)]
        starts = (np.cumsum(lengths) - lengths)
    if options.judged_only:
        judged = rel >= 0
        cum = np.concatenate([[0], np.cumsum(judged)])
        lengths = cum[starts + lengths] - cum[starts]
        rel = rel[judged]
        starts = np.cumsum(lengths) - lengths
    return rel, starts, lengths


def judgment_keys(qrels, topic_codes, doc_codes, ndocs: int) -> tuple:
    """(order, sorted keys) of the qrels rows by their (topic, docno) key, topic_code * ndocs
    + doc_code; a repeated (topic, docno) is an input error, named at its second line."""
    qkey = topic_codes.astype(np.int64) * ndocs + doc_codes.astype(np.int64)
    korder = np.argsort(qkey, kind="stable")
    qkey_sorted = qkey[korder]
    dup = np.flatnonzero(qkey_sorted[1:] == qkey_sorted[:-1])
    if len(dup):
        i = int(korder[dup[0]])
        raise_duplicate(qrels, "judgment", qrels.qid[i].as_py(), qrels.docno[i].as_py())
    return korder, qkey_sorted


def build_rankings(run, qrels, options: Options) -> Rankings:
    """Join run and qrels into the rankings of every topic trec_eval would evaluate."""
    # topics: strcmp order of UTF-8 bytes is code point order, as Python sorts str
    codes = getattr(run, "codes", None)  # from the C scanner, when it read the run
    q_local, q_topics = qid_codes(qrels.qid)
    q_topic_set = set(q_topics)
    if codes is not None:
        r_topics, rq = codes.topics, None  # rq: the scanner's, made when needed
    else:
        rq, r_topics = qid_codes(run.qid)
    # a run dict's judged topics with an empty ranking ({"q2": {}}) are evaluated, as
    # pytrec_eval evaluates them (scored on an empty ranking)
    r_topic_set = set(r_topics) | (set(getattr(run, "empty_topics", ())) & q_topic_set)
    vocab = sorted(q_topic_set | r_topic_set)
    index = {q: i for i, q in enumerate(vocab)}
    qq = np.array([index[q] for q in q_topics], dtype=IDX)[q_local]
    # run lines carry local topic codes (numbering r_topics); `local` maps them into vocab
    local = np.array([index[t] for t in r_topics], dtype=IDX)

    # qrels: duplicates, then (topic, doc) keys over the qrels' docnos
    scanned_hits = codes is not None and codes.hit_row is not None and codes.judged is not None
    if scanned_hits:
        dict_docs = codes.judged  # the scanner matched every line against these docnos
        qd = positions(qrels.docno, dict_docs)
    else:
        enc = pc.dictionary_encode(qrels.docno)
        dict_docs = enc.dictionary
        qd = as_numpy(enc.indices)
    ndocs = max(len(dict_docs), 1)
    korder, qkey_sorted = judgment_keys(qrels, qq, qd, ndocs)
    grade_sorted = qrels.grade[korder]
    rel_dtype = IDX if levels_fit(qrels.grade) else np.int64

    # which topics are evaluated, and where each run topic goes (-1: not evaluated)
    if options.complete and options.v10:
        evaluated = sorted(q_topic_set)
    else:
        evaluated = sorted(q_topic_set & r_topic_set)
    ev_codes = np.array([index[q] for q in evaluated], dtype=np.int64)
    pos_of = np.full(len(vocab), -1, IDX)
    pos_of[ev_codes] = np.arange(len(evaluated), dtype=IDX)
    topic_pos = pos_of[local]
    gq = pos_of[qq]  # each judgment's evaluated topic (-1: none)
    n = len(run)

    if codes is not None and codes.duplicate_row >= 0:
        i = codes.duplicate_row
        raise_duplicate(run, "document", run.qid[i].as_py(), run.docno[i].as_py())

    if codes is not None and codes.block_start is not None \
            and codes.tie_float32 == options.float32_scores:
        # the scanner's block mode: topics in consecutive blocks, ranked but for tie fix-ups
        starts = codes.block_start.astype(np.int64)
        lengths = np.diff(np.append(starts, n))
        hit = codes.hit_row
        hit_topic = codes.block_topic[np.searchsorted(starts, hit, side="right") - 1]
        rel = _grades(n, hit, codes.hit_index, local[hit_topic], qkey_sorted, grade_sorted,
                      ndocs, rel_dtype)
        if len(codes.tie_dst):
            rel[codes.tie_dst] = rel[codes.tie_src]
        rel, starts, lengths = _cut_blocks(rel, starts, lengths, options)
        bpos = topic_pos[codes.block_topic]
        keep = bpos >= 0
        if not keep.all() or np.any(np.diff(bpos[keep]) < 0):
            perm = np.flatnonzero(keep)[np.argsort(bpos[keep], kind="stable")]
            rel = rel[padded_ranges(starts[perm], lengths[perm])]
            bpos, lengths = bpos[perm], lengths[perm]
        ranked_rel = rel
        counts = np.zeros(len(evaluated), np.int64)
        counts[bpos] = lengths  # every block now belongs to an evaluated topic
    else:
        # not in block form (interleaved topics, unsorted scores, read without the scanner):
        # the C columns ranker
        if rq is None:
            rq = codes.line_codes(n)
        ranked_rel, counts = ranked_columns(run, rq, topic_pos, qrels, gq, options, rel_dtype,
                                            len(evaluated))

    bogus = np.array([q not in r_topic_set for q in evaluated], dtype=bool)
    # trec_eval 10.0 -c: a one-document ranking "ceci_nest_pas_un_docno", unjudged, which
    # form_res_rels then cuts like any ranking: -J drops it, -M0 too (ranking left empty)
    if bogus.any() and not options.judged_only and options.max_docs > 0:
        counts = counts + bogus
        ins = np.cumsum(counts)[bogus] - 1
        out = np.empty(len(ranked_rel) + int(bogus.sum()), ranked_rel.dtype)
        mask = np.zeros(len(out), bool)
        mask[ins] = True
        out[mask] = NONPOOL
        out[~mask] = ranked_rel
        ranked_rel = out
    offsets = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)

    # qrels grade counts per evaluated topic
    judged = (gq >= 0) & (qrels.grade >= 0)
    levels = sorted_distinct(qrels.grade[qrels.grade >= 0])
    lev_idx = np.searchsorted(levels, qrels.grade[judged])
    level_counts = np.bincount(gq[judged] * len(levels) + lev_idx,
                               minlength=len(evaluated) * len(levels)
                               ).reshape(len(evaluated), len(levels))
    num_rel = level_counts[:, levels >= options.relevance_level].sum(axis=1)

    return Rankings(
        qids=evaluated, offsets=offsets, rel=ranked_rel, num_rel=num_rel, levels=levels,
        level_counts=level_counts, bogus=bogus, options=options, runid=run.runid,
        num_qrels_topics=len(q_topic_set), num_rel_all=int(np.count_nonzero(qrels.grade > 0)),
        qrels_only=sorted(q_topic_set - r_topic_set), run_only=sorted(r_topic_set - q_topic_set),
        run_topics=r_topics)
