"""Unjudged documents at rank cutoffs, trec_eval 10.0's ``unj`` (m_unjudged.c).

Unjudged means not in the qrels or judged with a negative grade. Missing ranks past the end
of the ranking count as judged. 10.0 zeroes it for -c topics missing from the run.
"""

from __future__ import annotations

import numpy as np

from trecqr.rankings.build import NONPOOL, UNJUDGED
from trecqr.measures.base import LongCutoffs, Measure, register


@register
class Unjudged(Measure):
    name = "unj"
    explanation = ("Fraction of the top k documents that are unjudged (not in the qrels, or "
                   "with a negative grade), for cutoffs k.")
    params = LongCutoffs(5, 10, 20)
    since = "10.0"
    bogus_zero = True

    def compute(self, b, p):
        unj_so_far = np.cumsum((b.rel == NONPOOL) | (b.rel == UNJUDGED), axis=1)
        return np.stack([b.at(unj_so_far, k) / float(k) for k in p.values], axis=1)
