"""G and binG, trec_eval's experimental gain measures (m_G.c, m_binG.c).

G credits a document retrieved at rank i with gain / log2(2 + cost(i) - gain so far), where
cost(i) sums, over ranks up to i, the ideal ranking's gain (at least 1); normalized by the sum
of the ideal gains. binG is the binary version averaged over relevant documents (-l counts).
"""

from __future__ import annotations

import numpy as np

from .base import Measure, ParamPairs, register, relevant_positions, row_sums
from .gain import graded_groups, libm_log2, log2_int, prefix_sums


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
            depth = grp.gains.shape[1]
            ideal = np.zeros((grp.n, depth))
            w = min(depth, grp.ideal.shape[1])
            ideal[:, :w] = grp.ideal[:, :w]
            cost = np.where(ideal >= 1.0, ideal, 1.0)
            sum_cost = np.cumsum(cost, axis=1)
            sum_results = np.cumsum(grp.gains, axis=1)
            # terms only where a document has a gain (zeros elsewhere add nothing)
            rows, cols = np.nonzero(grp.gains != 0.0)
            gains = grp.gains[rows, cols]
            arg = (2.0 + sum_cost[rows, cols]) - sum_results[rows, cols]
            with np.errstate(divide="ignore", invalid="ignore"):  # log2(1) = 0: inf, as in C
                total = row_sums(rows, gains / libm_log2(arg), grp.n)
            ideal_total = prefix_sums(grp.ideal)[:, -1]
            out[grp.rows, 0] = np.divide(total, ideal_total, out=np.zeros(grp.n),
                                         where=ideal_total > 0.0)
        return out
