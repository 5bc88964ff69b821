"""Interpolated precision at recall points: iprec_at_recall and 11pt_avg
(trec_eval's m_iprec_at_recall.c, m_11pt_avg.c).

Interpolated precision at the c-th relevant document is the best precision at that rank or
any later rank. A recall point p becomes a number of relevant documents c: 9.0.8 computes
``(long)(p * R + 0.9)``, 10.0 ``lround(p * R)`` (so 0.1 of R=15 is 2 under 9.0.8, 2 under 10.0,
but 0.1 of R=11 is 2 under 9.0.8 and 1 under 10.0).

trec_eval assigns the cutoffs walking a stack from the last parameter down while it walks the
ranking backwards; :func:`interpolated_at_cutoffs` reproduces that walk, which also decides
what unsorted 11pt_avg parameters (allowed: they are plain parameters, not cutoffs) get.
"""

from __future__ import annotations

import numpy as np

from trecqr.rankings.build import seqsum
from trecqr.measures.base import (DoubleCutoffs, DoubleParams, Measure, batch_memo, register,
                   relevant_positions)


def lround(x: np.ndarray) -> np.ndarray:
    """C lround: nearest integer, halves away from zero (numpy's round is half-to-even)."""
    a = np.abs(x)
    f = np.floor(a)
    r = f + ((a - f) >= 0.5)
    return (np.sign(x) * r).astype(np.int64)


def recall_cutoffs(percent: float, num_rel: np.ndarray, v10: bool) -> np.ndarray:
    x = percent * num_rel.astype(np.float64)
    if v10:
        return lround(x)
    return np.trunc(x + 0.9).astype(np.int64)


def interpolated_at_cutoffs(b, percents) -> np.ndarray:
    """(n, len(percents)) interpolated precision values as trec_eval leaves them (computed
    once per batch and parameters: iprec_at_recall and 11pt_avg share them)."""
    return batch_memo(b, ("interpolated", tuple(percents)),
                      lambda: _interpolated_at_cutoffs(b, percents))


def _interpolated_at_cutoffs(b, percents) -> np.ndarray:
    n, k = b.n, len(percents)
    vals = np.zeros((n, k))
    if k == 0:
        return vals
    # the walk starts from form_res_rels' count of judged relevant documents and steps down at
    # every document the rank loop calls relevant; the two differ only with -l < 0
    num_rel_ret = b.num_rel_ret_judged
    rel_so_far = b.rel_so_far - (b.num_rel_ret - num_rel_ret)[:, None]
    cuts = np.stack([recall_cutoffs(pc, b.num_rel, b.options.v10) for pc in percents], axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        prec = np.where(b.valid, rel_so_far / b.ranks, 0.0)
        # int_precis before the walk: precision at the last rank (0/0 = -nan if none retrieved)
        at_end = num_rel_ret / b.num_ret.astype(np.float64)
    best_below = np.maximum.accumulate(prec[:, ::-1], axis=1)[:, ::-1] if b.depth else prec

    if b.options.relevance_level >= 0:  # rank of the c-th relevant document, directly
        rows, cols = relevant_positions(b)
        first = np.searchsorted(rows, np.arange(n))
        count = b.num_rel_ret

    def position(c):
        if b.options.relevance_level < 0:
            return np.count_nonzero(rel_so_far < c[:, None], axis=1)
        found = (c >= 1) & (c <= count)
        at = first + np.clip(c, 1, np.maximum(count, 1)) - 1
        return np.where(found, cols[np.minimum(at, max(len(cols) - 1, 0))] if len(cols)
                        else b.depth, np.where(c < 1, 0, b.depth))

    def interp(c):
        """Best precision at or after the c-th relevant document (1 <= c <= num_rel_ret)."""
        pos = np.minimum(position(c), max(b.depth - 1, 0))
        return np.take_along_axis(best_below, pos[:, None], axis=1)[:, 0] if b.depth else at_end

    # after the walk, int_precis is the best precision from the first relevant document on
    final = np.where(num_rel_ret > 0, interp(np.ones(n, np.int64)), at_end)
    skipping = np.ones(n, bool)     # leading cutoffs above num_rel_ret are left at 0
    stuck = np.zeros(n, bool)       # walk passed this cutoff: it and all below get `final`
    time = num_rel_ret.copy()       # relevant count at which the last cutoff was assigned
    for j in range(k - 1, -1, -1):
        c = cuts[:, j]
        skip = skipping & (c > num_rel_ret)
        skipping = skip
        active = ~skip & ~stuck
        take = active & (c >= 1) & (c <= time)
        stuck |= active & ~take
        vals[:, j] = np.where(take, interp(np.where(take, c, 1)), 0.0)
        vals[:, j] = np.where(stuck, final, vals[:, j])
        time = np.where(take, c, time)
    return vals


@register
class IprecAtRecall(Measure):
    name = "iprec_at_recall"
    explanation = ("Interpolated precision at recall points: the best precision at any rank at "
                   "or after the point where that fraction of R relevant documents is retrieved.")
    params = DoubleCutoffs(0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)

    def compute(self, b, p):
        return interpolated_at_cutoffs(b, p.values)


@register
class ElevenPtAvg(Measure):
    name = "11pt_avg"
    explanation = ("Interpolated precision averaged over recall points (default the 11 points "
                   "0.0, 0.1, ..., 1.0).")
    params = DoubleParams(0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)

    def compute(self, b, p):
        vals = interpolated_at_cutoffs(b, p.values)
        # trec_eval adds them from the last parameter to the first
        return (seqsum(vals[:, ::-1]) / float(len(p.values)))[:, None]
