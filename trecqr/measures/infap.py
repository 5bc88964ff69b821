"""Inferred AP (trec_eval's m_infap.c; Yilmaz and Aslam, CIKM 2006).

Documents not in the qrels are skipped but keep their rank; documents in the pool with a
negative grade ("unjudged") count in the estimate of how many judged documents sit above.
"""

from __future__ import annotations

import numpy as np

from trecqr.rankings.build import UNJUDGED
from trecqr.measures.base import Measure, register, row_sums

INFAP_EPSILON = 0.00001


@register
class InfAP(Measure):
    name = "infAP"
    explanation = ("Inferred AP: precision at each judged relevant document estimated from the "
                   "judged documents above it, averaged over the relevant documents.")

    def compute(self, b, p):
        level = b.relevance_level
        judged_nonrel = (b.rel >= 0) & (b.rel < level)
        judged_rel = (b.rel >= 0) & (b.rel >= level)
        rel_so_far = np.cumsum(judged_rel, axis=1)              # including this document
        nonrel_so_far = np.cumsum(judged_nonrel, axis=1)        # = above it, at relevant docs
        unjudged_so_far = np.cumsum(b.rel == UNJUDGED, axis=1)
        # the term only where a judged relevant document stands (zeros elsewhere add nothing)
        rows, cols = np.nonzero(judged_rel)
        fj = cols.astype(np.float64)                             # 0-based rank j
        rel_before = rel_so_far[rows, cols] - 1
        nonrel = nonrel_so_far[rows, cols]
        unjudged = unjudged_so_far[rows, cols]
        with np.errstate(divide="ignore", invalid="ignore"):
            # the expression exactly as trec_eval evaluates it, operation by operation
            term = (1.0 / (fj + 1.0)
                    + (fj / (fj + 1.0))
                    * ((rel_before + nonrel + unjudged) / fj)
                    * ((rel_before + INFAP_EPSILON)
                       / ((rel_before + nonrel) + 2 * INFAP_EPSILON)))
        total = row_sums(rows, np.where(fj == 0, 1.0, term), b.n)
        return np.divide(total, b.num_rel, out=total.copy(), where=b.num_rel > 0)[:, None]
