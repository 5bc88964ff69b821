"""``Compat(p=..., normalize=...)``, Clarke, Vtyurina and Smucker's compatibility (TOIS 2021),
as ir_measures' ``compat`` provider (0.4.3, ``compat_provider.py``) computes it: the rank-biased
overlap of the run with an ideal ranking.

The provider's rules, reproduced here:

* **run**: the topic's documents as a dict (a repeated docno counts once, with its last
  score), sorted by score descending, ties by docno ascending;
* **ideal**: the documents graded > 0 (a dict too: the last grade counts, the first line
  places it), sorted by grade descending, then by their run score descending (0.0 when not
  retrieved), then in qrels order;
* **RBO** to depth ``max(len(run), len(ideal))``: ``sum_i p^i |run[:i+1] & ideal[:i+1]| /
  (i+1)`` over ``sum_i p^i``, accumulated term by term with ``weight *= p`` as the provider
  does; ``normalize`` divides by the ideal's RBO with itself when that is > 0;
* **topics**: run topics with qrels lines; qrels topics the run lacks get the default 0.
"""

from __future__ import annotations

import numpy as np

from trecqr.runtime.deferred import pa, pc
from trecqr.errors import UsageError
from trecqr.formats.qrels import Qrels
from trecqr.formats.run import Run
from trecqr.measures.base import irm_native
from trecqr.rankings.irm import lookup, ranking, topic_codes


def _last_rows(qid, docno, rows: np.ndarray) -> np.ndarray:
    """Of ``rows``, the last one for each (topic, docno), in ``rows``' order (dict semantics:
    the first occurrence places the key, the last one gives its value: returned as
    (place, value row) pairs)."""
    keys = pc.binary_join_element_wise(qid.take(pa.array(rows)).cast(pa.string()),
                                       docno.take(pa.array(rows)).cast(pa.string()), "\x00")
    uniq = pc.unique(keys)
    if len(uniq) == len(rows):  # no repeated key
        return rows, rows
    k = pc.index_in(keys, value_set=uniq).to_numpy(zero_copy_only=False).astype(np.int64)
    first = np.full(len(uniq), len(rows))
    np.minimum.at(first, k, np.arange(len(rows)))
    last = np.full(len(uniq), -1)
    np.maximum.at(last, k, np.arange(len(rows)))
    return rows[first], rows[last]


def _rbo(overlap_at: np.ndarray, weights: np.ndarray) -> float:
    """The provider's rbo() given |ranking[:i+1] & ideal[:i+1]| for i < depth."""
    depth = len(overlap_at)
    w = weights[:depth]
    score = np.cumsum(w * overlap_at / np.arange(1.0, depth + 1.0))[-1]
    return float(score / np.cumsum(w)[-1])


def _overlaps(pos_a: np.ndarray, pos_b: np.ndarray, depth: int) -> np.ndarray:
    """|a[:i+1] & b[:i+1]| for i < depth, from each shared item's positions in a and b."""
    counts = np.bincount(np.maximum(pos_a, pos_b), minlength=depth)[:depth]
    return np.cumsum(counts).astype(np.float64)


@irm_native("Compat", provider="compat")
def compat(run, qrels, topics: list, measure) -> np.ndarray:
    """Per-topic Compat (the ``@irm_native`` signature)."""
    import ir_measures

    measure.validate_params()
    if not ir_measures.compat.supports(measure):  # pragma: no cover - every Compat is
        raise UsageError(f"ir_measures measure {measure} is not supported by its provider compat")
    p, normalize = float(measure["p"]), bool(measure["normalize"])
    n = len(topics)
    score = np.asarray(run.score, dtype=np.float64)
    grade = np.asarray(qrels.grade, dtype=np.int64)

    # the run as a dict: one row per (topic, docno) with the last score
    rows, _, _ = ranking(run, topics, "input")
    place, value = _last_rows(run.qid, run.docno, np.sort(rows))
    dict_run = Run(run.qid.take(_pa(place)), run.docno.take(_pa(place)), score[value])
    rrows, rtopic, rstarts = ranking(dict_run, topics, "docno_asc")

    # the qrels as a dict, then the ideal ranking
    qcode = topic_codes(qrels.qid, topics)
    qrows = np.flatnonzero(qcode >= 0)
    qplace, qvalue = _last_rows(qrels.qid, qrels.docno, qrows)
    qplace = qplace[grade[qvalue] > 0]
    qvalue = qvalue[grade[qvalue] > 0]
    in_run = lookup(dict_run, np.arange(len(dict_run.score)), Qrels(
        qrels.qid.take(_pa(qplace)), qrels.docno.take(_pa(qplace)), grade[qvalue]))
    ideal_score = np.zeros(len(qplace))
    hit = in_run >= 0
    ideal_score[in_run[hit]] = dict_run.score[np.flatnonzero(hit)]
    itopic = qcode[qplace]
    iorder = np.lexsort((qplace, -ideal_score, -grade[qvalue], itopic))
    irows, itopic = qplace[iorder], itopic[iorder]
    istarts = np.searchsorted(itopic, np.arange(n + 1))
    # position of each ideal document in the topic's run ranking (-1 if not retrieved)
    run_pos = np.full(len(dict_run.score), -1)
    run_pos[rrows] = np.arange(len(rrows)) - rstarts[rtopic]
    ideal_in_run = np.full(len(qplace), -1)
    ideal_in_run[in_run[hit]] = run_pos[np.flatnonzero(hit)]  # in qplace order
    ideal_in_run = ideal_in_run[iorder]

    lengths = np.diff(rstarts)
    ilengths = np.diff(istarts)
    depth_max = int(np.maximum(lengths, ilengths).max(initial=0))
    weights = np.cumprod(np.concatenate([[1.0], np.full(max(depth_max - 1, 0), p)]))
    out = np.zeros(n)
    for t in range(n):
        if lengths[t] == 0:
            continue  # not in the run: ir_measures' default
        depth = int(max(lengths[t], ilengths[t]))
        ipos = np.arange(ilengths[t])
        rpos = ideal_in_run[istarts[t]:istarts[t + 1]]
        shared = rpos >= 0
        value_t = _rbo(_overlaps(rpos[shared], ipos[shared], depth), weights)
        if normalize:
            best = _rbo(_overlaps(ipos, ipos, depth), weights)
            if best > 0.0:
                value_t = value_t / best
        out[t] = value_t
    return out


def _pa(rows):
    return pa.array(rows)
