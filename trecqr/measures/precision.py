"""Precision at cutoffs and reciprocal rank (trec_eval's m_P.c, m_recip_rank.c)."""

from __future__ import annotations

import numpy as np

from trecqr.measures.base import LongCutoffs, Measure, register


@register
class P(Measure):
    name = "P"
    explanation = ("Precision at cutoffs; a ranking shorter than the cutoff is filled with "
                   "nonrelevant documents (P_20 of 4 relevant in 15 retrieved is 4/20).")
    params = LongCutoffs(5, 10, 15, 20, 30, 100, 200, 500, 1000)

    def compute(self, b, p):
        return np.stack([b.at(b.rel_so_far, k) / float(k) for k in p.values], axis=1)


@register
class RecipRank(Measure):
    name = "recip_rank"
    explanation = "Reciprocal rank of the first relevant retrieved document (0 if none)."

    def compute(self, b, p):
        has = b.is_rel.any(axis=1) if b.depth else np.zeros(b.n, bool)
        first = np.argmax(b.is_rel, axis=1) if b.depth else np.zeros(b.n, np.int64)
        return np.where(has, 1.0 / (first + 1.0), 0.0)[:, None]
