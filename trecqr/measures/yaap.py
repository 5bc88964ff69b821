"""Yet Another Average Precision (trec_eval's m_yaap.c; Robertson, ECIR 2012).

log((1 + S) / (1 + R - S)), S the sum over relevant retrieved documents of precision at their
rank (average precision times R). Not in any nickname: only with ``-m yaap``.
"""

from __future__ import annotations

import numpy as np

from trecqr.rankings.build import seqsum
from trecqr.measures import _libm
from trecqr.measures.base import Measure, register


@register
class Yaap(Measure):
    name = "yaap"
    explanation = ("Yet Another Average Precision: log((1 + S) / (1 + R - S)), S the sum of "
                   "precision at each relevant retrieved document.")

    def compute(self, b, p):
        s = seqsum(np.where(b.is_rel, b.rel_so_far / b.ranks, 0.0))
        return _libm.log((1.0 + s) / (1.0 + b.num_rel.astype(np.float64) - s))[:, None]
