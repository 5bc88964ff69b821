"""G and binG, trec_eval's experimental gain measures (m_G.c, m_binG.c).

G credits a document retrieved at rank i with gain / log2(2 + cost(i) - gain so far), where
cost(i) sums, over ranks up to i, the ideal ranking's gain (at least 1); normalized by the sum
of the ideal gains. binG is the binary version averaged over relevant documents (-l counts).
"""

from __future__ import annotations

import numpy as np

from trecqr.measures.base import Measure, ParamPairs, register, relevant_positions, row_sums
from trecqr.measures.gain import graded_groups, libm_log2, log2_int, prefix_sums


@register
class BinG(Measure):
    name = "binG"
    explanation = ("Binary G: average over relevant documents of 1 / log2(2 + nonrelevant "
                   "documents retrieved before it); unretrieved ones count 0.")

    def compute(self, b, p):
        rows, cols = relevant_positions(b)
        arg = 2 + (cols + 1) - b.rel_so_far[rows, cols]  # 3 + i - rel_so_far
        logs = log2_int(b.depth + 3)
        total = row_sums(rows, 1.0 / logs[arg], b.n)
        return np.divide(total, b.num_rel, out=np.zeros(b.n),
                         where=b.num_rel_ret > 0)[:, None]


def _exact_integers(values: np.ndarray) -> bool:
    """Integral values whose sums stay exact in a double (|total| < 2**52)."""
    return bool(np.all(values == np.floor(values))) and float(np.abs(values).sum()) < 2.0 ** 52


def _running_sums(grp, rows, cols, gains):
    """G's two running sums at the documents with a gain: of the ideal costs (the ideal gain,
    at least 1) and of the gains, in rank order up to and including each one.

    With integral gains every partial sum is an exact integer, so they come from the short
    ideal ranking and the sparse gains alone; otherwise from cumulative sums over the whole
    depth, as trec_eval's loop adds them."""
    if not len(gains):
        return np.zeros(0), np.zeros(0)
    depth = grp.gains.shape[1]
    w = min(depth, grp.ideal.shape[1])
    ideal = grp.ideal[:, :w]
    if _exact_integers(ideal) and _exact_integers(gains):
        icost = np.cumsum(np.where(ideal >= 1.0, ideal, 1.0), axis=1)
        last = icost[:, -1] if w else np.zeros(grp.n)
        inside = cols < w
        sum_cost = np.where(inside, icost[rows, np.minimum(cols, max(w - 1, 0))] if w else 0.0,
                            last[rows] + (cols - w + 1))
        running = np.cumsum(gains)
        start = np.searchsorted(rows, np.arange(grp.n))  # each topic's first entry
        before = np.where(start > 0, running[np.maximum(start - 1, 0)], 0.0)
        return sum_cost, running - before[rows]
    full = np.zeros((grp.n, depth))
    full[:, :w] = ideal
    sum_cost = np.cumsum(np.where(full >= 1.0, full, 1.0), axis=1)
    sum_results = np.cumsum(grp.gains, axis=1)
    return sum_cost[rows, cols], sum_results[rows, cols]


@register
class G(Measure):
    name = "G"
    explanation = ("Normalized gain G: each retrieved document earns gain / log2(2 + ideal "
                   "cost so far - gain so far), summed and divided by the ideal total gain. "
                   "Gains as for ndcg (level=gain pairs).")
    params = ParamPairs()

    def compute(self, b, p):
        out = np.zeros((b.n, 1))
        for grp in graded_groups(b, p):
            # terms only where a document has a gain (zeros elsewhere add nothing)
            rows, cols = np.nonzero(grp.gains != 0.0)
            gains = grp.gains[rows, cols]
            sum_cost, sum_results = _running_sums(grp, rows, cols, gains)
            arg = (2.0 + sum_cost) - sum_results
            with np.errstate(divide="ignore", invalid="ignore"):  # log2(1) = 0: inf, as in C
                total = row_sums(rows, gains / libm_log2(arg), grp.n)
            ideal_total = prefix_sums(grp.ideal)[:, -1]
            out[grp.rows, 0] = np.divide(total, ideal_total, out=np.zeros(grp.n),
                                         where=ideal_total > 0.0)
        return out
