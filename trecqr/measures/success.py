"""Success at rank cutoffs (trec_eval's m_success.c): 1 if a relevant document is in the top k."""

from __future__ import annotations

import numpy as np

from trecqr.measures.base import LongCutoffs, Measure, register


@register
class Success(Measure):
    name = "success"
    explanation = "1 if a relevant document is retrieved in the top k, else 0, for cutoffs k."
    params = LongCutoffs(1, 5, 10)

    def compute(self, b, p):
        return np.stack([(b.at(b.rel_so_far, k) > 0).astype(np.float64) for k in p.values],
                        axis=1)
