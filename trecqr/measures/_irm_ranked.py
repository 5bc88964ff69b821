"""Measures that ir_measures computes in Python on its own ranking, not trec_eval's.

ir_measures' ``msmarco`` provider (``RR@k``) and ``judged`` provider (``Judged@k``) sort each
topic with ``sorted(key=(-score, docno))``: float64 scores descending, ties by docno
*ascending*, where trec_eval compares C floats and breaks ties by docno descending. Both are
computed here for all topics at once.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc


def _topic_codes(qid: pa.Array, topics: list) -> np.ndarray:
    """Index of each row's topic in ``topics`` (-1 when absent)."""
    return pc.index_in(qid, value_set=pa.array(topics, pa.string())).fill_null(-1) \
        .to_numpy().astype(np.int64)


def python_ranking(run, topics: list):
    """Rows of ``run`` for ``topics`` in ir_measures' order; returns (rows, topic, rank)."""
    code = _topic_codes(run.qid, topics)
    rows = np.flatnonzero(code >= 0)
    table = pa.table({"t": code[rows], "s": -run.score[rows], "d": run.docno.take(pa.array(rows))})
    order = pc.sort_indices(table, sort_keys=[("t", "ascending"), ("s", "ascending"),
                                              ("d", "ascending")]).to_numpy()
    rows, topic = rows[order], code[rows][order]
    start = np.flatnonzero(np.concatenate([[True], topic[1:] != topic[:-1]])) if len(topic) \
        else np.zeros(0, np.int64)
    rank = np.arange(len(topic)) - np.repeat(start, np.diff(np.append(start, len(topic)))) + 1
    return rows, topic, rank


def _in_qrels(run, rows, topic, qrels, topics, qrels_mask) -> np.ndarray:
    """Whether each ranked row's (topic, docno) is among the qrels rows selected by mask."""
    qcode = _topic_codes(qrels.qid, topics)
    keep = (qcode >= 0) & qrels_mask
    docs = pc.unique(qrels.docno.filter(pa.array(keep)))
    ndocs = max(len(docs), 1)
    qkey = qcode[keep] * ndocs + pc.index_in(qrels.docno.filter(pa.array(keep)),
                                             value_set=docs).to_numpy().astype(np.int64)
    where = pc.index_in(run.docno.take(pa.array(rows)), value_set=docs)
    found = where.is_valid().to_numpy(zero_copy_only=False)
    rkey = topic * ndocs + where.fill_null(0).to_numpy().astype(np.int64)
    return found & np.isin(rkey, qkey)


def rr_at_cutoff(run, qrels, topics: list, rel: int, cutoff: int) -> np.ndarray:
    """msmarco_eval's MRR@cutoff per topic: 1/rank of the first doc with grade >= rel."""
    rows, topic, rank = python_ranking(run, topics)
    hit = _in_qrels(run, rows, topic, qrels, topics, qrels.grade >= rel) & (rank <= cutoff)
    first = np.full(len(topics), np.iinfo(np.int64).max)
    np.minimum.at(first, topic[hit], rank[hit])
    found = first < np.iinfo(np.int64).max
    return np.where(found, 1.0 / np.where(found, first, 1), 0.0)


def judged_at_cutoff(run, qrels, topics: list, cutoff: int | None) -> np.ndarray:
    """ir_measures' Judged@cutoff: judged docs (any grade) in the top cutoff, over
    min(cutoff, documents retrieved); the whole ranking without a cutoff."""
    rows, topic, rank = python_ranking(run, topics)
    judged = _in_qrels(run, rows, topic, qrels, topics, np.ones(len(qrels), bool))
    size = np.bincount(topic, minlength=len(topics))
    depth = size if cutoff is None else np.minimum(size, cutoff)
    counted = judged & (rank <= depth[topic])
    count = np.bincount(topic[counted], minlength=len(topics)).astype(np.float64)
    return count / depth
