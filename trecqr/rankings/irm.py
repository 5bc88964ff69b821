"""Rankings and judgments as ir_measures' Python providers see them (cwl_eval, gdeval, compat,
accuracy, msmarco, judged): one ordered list of run rows per topic, and each row's grade looked
up in the qrels. The one module of ranking code for ir_measures' orders (trec_eval's own is
:mod:`trecqr.rankings.build`).

Each provider orders a topic differently, so the order is a parameter:

* ``"input"``: score descending, ties in input (file or dict) order: Python's stable
  ``sorted(key=score, reverse=True)`` (cwl_eval, accuracy);
* ``"docno_asc"``: score descending, ties by docno ascending (compat: ``sort()`` then a stable
  sort on the score; msmarco and judged: ``sorted(key=(-score, docno))``);
* ``"docno_desc"``: score descending, ties by docno descending, byte-wise (gdeval's ``runOrder``,
  trec_eval's rule).

Scores compare as float64, as Python reads them; rows of a topic stay rows (a repeated docno
counts twice, as in every one of these providers).
"""

from __future__ import annotations

import numpy as np

from trecqr.runtime.deferred import pa, pc
from trecqr.formats.arrays import (arrow_indices, arrow_mask, arrow_numbers, as_numpy, filled,
                              string_array)


def topic_codes(qid: pa.Array, topics: list) -> np.ndarray:
    """Index of each row's topic in ``topics`` (-1 when absent)."""
    return filled(pc.index_in(qid, value_set=string_array(topics)), -1).astype(np.int64)


def _stable_lexsort(keys) -> np.ndarray:
    """np.lexsort's order (last key most significant), equal keys in input order: one stable
    argsort per key, least significant first (faster than lexsort on millions of rows)."""
    order = np.arange(len(keys[0]))
    for key in keys:
        order = order[np.argsort(key[order], kind="stable")]
    return order


def ranking(run, topics: list, ties: str = "input"):
    """Rows of ``run`` for ``topics``, each topic's rows in the provider's order.

    Returns (rows, topic code per ranked row, start offset of each topic in ``rows``; a topic
    without rows is an empty slice).
    """
    code = topic_codes(run.qid, topics)
    rows = np.flatnonzero(code >= 0)
    t = code[rows]
    neg = -np.asarray(run.score, dtype=np.float64)[rows]
    if ties == "input":
        order = _stable_lexsort((neg, t))
    elif ties in ("docno_asc", "docno_desc"):
        # one stable multi-key sort (Arrow compares strings byte-wise)
        table = pa.table({"t": arrow_numbers(t), "s": arrow_numbers(neg),
                          "d": run.docno.take(arrow_indices(rows))})
        way = "ascending" if ties == "docno_asc" else "descending"
        order = pc.sort_indices(table, sort_keys=[("t", "ascending"), ("s", "ascending"),
                                                  ("d", way)])
        order = as_numpy(order)
    else:  # pragma: no cover - internal
        raise ValueError(ties)
    rows, t = rows[order], t[order]
    starts = np.searchsorted(t, np.arange(len(topics) + 1))
    return rows, t, starts


def _keys(qid: pa.Array, docno: pa.Array) -> pa.Array:
    return pc.binary_join_element_wise(qid.cast(pa.string()), docno.cast(pa.string()), "\x00")


def lookup(run, rows: np.ndarray, qrels, qrels_rows: np.ndarray | None = None,
           last: bool = True) -> np.ndarray:
    """Row index into the qrels of each ranked run row's (topic, docno), -1 when unjudged.

    Among repeated qrels lines for a (topic, docno) the last one counts (``last``; a dict
    keeps the last value) or the first. ``qrels_rows`` restricts the qrels rows considered.
    """
    qrows = np.arange(len(qrels)) if qrels_rows is None else np.asarray(qrels_rows)
    if last:
        qrows = qrows[::-1]
    if not len(qrows) or not len(rows):
        return np.full(len(rows), -1, np.int64)
    qtake, rtake = arrow_indices(qrows), arrow_indices(rows)
    qkeys = _keys(qrels.qid.take(qtake), qrels.docno.take(qtake))
    rkeys = _keys(run.qid.take(rtake), run.docno.take(rtake))
    where = filled(pc.index_in(rkeys, value_set=qkeys), -1).astype(np.int64)
    return np.where(where >= 0, qrows[np.maximum(where, 0)], -1)


# --------------------------------------------------------------------------- msmarco, judged
def _ranks(t: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """1-based rank of each ranked row within its topic."""
    return np.arange(len(t)) - starts[t] + 1


def _in_qrels(run, rows, topic, qrels, topics, qrels_mask) -> np.ndarray:
    """Whether each ranked row's (topic, docno) is among the qrels rows selected by mask."""
    qcode = topic_codes(qrels.qid, topics)
    keep = (qcode >= 0) & qrels_mask
    kept = qrels.docno.filter(arrow_mask(keep))
    docs = pc.unique(kept)
    ndocs = max(len(docs), 1)
    qkey = qcode[keep] * ndocs + as_numpy(pc.index_in(kept, value_set=docs)).astype(np.int64)
    where = pc.index_in(run.docno.take(arrow_indices(rows)), value_set=docs)
    found = as_numpy(where.is_valid())
    rkey = topic * ndocs + filled(where, 0).astype(np.int64)
    return found & np.isin(rkey, qkey)


def rr_at_cutoff(run, qrels, topics: list, rel: int, cutoff: int, ranked=None) -> np.ndarray:
    """ir_measures' msmarco provider, MRR@cutoff per topic: 1/rank of the first document with
    grade >= rel, in ``sorted(key=(-score, docno))`` order (``ranked``: that ranking, when the
    caller has it already)."""
    rows, topic, starts = ranked or ranking(run, topics, "docno_asc")
    rank = _ranks(topic, starts)
    hit = _in_qrels(run, rows, topic, qrels, topics, qrels.grade >= rel) & (rank <= cutoff)
    first = np.full(len(topics), np.iinfo(np.int64).max)
    np.minimum.at(first, topic[hit], rank[hit])
    found = first < np.iinfo(np.int64).max
    return np.where(found, 1.0 / np.where(found, first, 1), 0.0)


def judged_at_cutoff(run, qrels, topics: list, cutoff: int | None, ranked=None) -> np.ndarray:
    """ir_measures' Judged@cutoff: judged docs (any grade) in the top cutoff, over
    min(cutoff, documents retrieved); the whole ranking without a cutoff."""
    rows, topic, starts = ranked or ranking(run, topics, "docno_asc")
    rank = _ranks(topic, starts)
    judged = _in_qrels(run, rows, topic, qrels, topics, np.ones(len(qrels), bool))
    size = np.bincount(topic, minlength=len(topics))
    depth = size if cutoff is None else np.minimum(size, cutoff)
    counted = judged & (rank <= depth[topic])
    count = np.bincount(topic[counted], minlength=len(topics)).astype(np.float64)
    return count / depth
