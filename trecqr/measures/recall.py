"""Recall and relative precision at rank cutoffs (trec_eval's m_recall.c, m_rel_P.c).

A cutoff past the end of the ranking counts the missing documents as nonrelevant. Both are 0
for a topic without relevant documents.
"""

from __future__ import annotations

import numpy as np

from trecqr.measures.base import LongCutoffs, Measure, register


@register
class Recall(Measure):
    name = "recall"
    explanation = "Recall (relevant retrieved / relevant) in the top k documents, for cutoffs k."
    params = LongCutoffs(5, 10, 15, 20, 30, 100, 200, 500, 1000)

    def compute(self, b, p):
        cols = [np.divide(b.at(b.rel_so_far, k).astype(np.float64), b.num_rel,
                          out=np.zeros(b.n), where=b.num_rel > 0) for k in p.values]
        return np.stack(cols, axis=1)


@register
class RelativeP(Measure):
    name = "relative_P"
    explanation = ("Precision at cutoff k relative to the best possible, relevant in the top k "
                   "over min(k, R): precision up to R, recall after.")
    params = LongCutoffs(5, 10, 15, 20, 30, 100, 200, 500, 1000)

    def compute(self, b, p):
        cols = []
        for k in p.values:
            best = np.minimum(k, b.num_rel).astype(np.float64)
            cols.append(np.divide(b.at(b.rel_so_far, k).astype(np.float64), best,
                                  out=np.zeros(b.n), where=b.num_rel > 0))
        return np.stack(cols, axis=1)
