"""Binary preference: bpref and gm_bpref (trec_eval's m_bpref.c, m_gm_bpref.c).

Only judged documents count: unjudged ones (not in the qrels, or with a negative grade) are
skipped. Each judged relevant document adds 1 - min(N, R) / min(num_nonrel, R), N the judged
nonrelevant documents ranked above it (1 when N is 0); the sum is divided by R.
"""

from __future__ import annotations

import numpy as np

from trecqr.measures import _libm
from trecqr.measures.base import MIN_GEO_MEAN, Measure, batch_memo, register, row_sums


def bpref(b) -> np.ndarray:
    return batch_memo(b, "bpref", lambda: _bpref(b))


def _bpref(b) -> np.ndarray:
    level = b.relevance_level
    judged_nonrel = (b.rel >= 0) & (b.rel < level)
    judged_rel = (b.rel >= 0) & (b.rel >= level)
    num_nonrel = b.level_counts[:, b.levels < level].sum(axis=1)
    nonrel_above = np.cumsum(judged_nonrel, axis=1)
    denom = np.minimum(num_nonrel, b.num_rel).astype(np.float64)
    # terms only where a judged relevant document stands (zeros elsewhere add nothing)
    rows, cols = np.nonzero(judged_rel)
    above = nonrel_above[rows, cols]
    with np.errstate(divide="ignore", invalid="ignore"):
        frac = np.minimum(above, b.num_rel[rows]) / denom[rows]
    total = row_sums(rows, np.where(above > 0, 1.0 - frac, 1.0), b.n)
    return np.divide(total, b.num_rel, out=total.copy(), where=b.num_rel > 0)


@register
class Bpref(Measure):
    name = "bpref"
    explanation = ("Binary preference: fraction of the top R judged nonrelevant documents "
                   "ranked after each judged relevant document, averaged over the R relevant.")

    def compute(self, b, p):
        return bpref(b)[:, None]


@register
class GMBpref(Measure):
    name = "gm_bpref"
    explanation = ("bpref averaged with a geometric mean over topics; per-topic values are "
                   f"log(max(bpref, {MIN_GEO_MEAN})).")
    summary = "gm"
    per_query = False

    def compute(self, b, p):
        return _libm.log(np.maximum(bpref(b), MIN_GEO_MEAN))[:, None]
