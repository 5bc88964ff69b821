"""R-precision and precision at multiples of R (trec_eval's m_Rprec.c, m_Rprec_mult.c)."""

from __future__ import annotations

import numpy as np

from trecqr.measures.base import DoubleCutoffs, Measure, register


def rel_in_top(b, k: np.ndarray) -> np.ndarray:
    """Relevant documents in the top k of each topic (k per topic; ranks beyond num_ret add
    none)."""
    if b.depth == 0:
        return np.zeros(b.n, np.int64)
    idx = np.clip(np.minimum(k, b.num_ret), 1, b.depth) - 1
    got = np.take_along_axis(b.rel_so_far, idx[:, None], axis=1)[:, 0]
    return np.where((k > 0) & (b.num_ret > 0), got, 0)


def rprec_mult_cutoffs(percents: float, num_rel: np.ndarray) -> np.ndarray:
    """(long)(p * R + 0.9): the rank cutoff trec_eval derives from a multiple p of R."""
    return np.trunc(percents * num_rel.astype(np.float64) + 0.9).astype(np.int64)


@register
class Rprec(Measure):
    name = "Rprec"
    explanation = ("Precision after R documents have been retrieved, R the number of relevant "
                   "documents of the topic (0 if nothing retrieved or no relevant documents).")

    def compute(self, b, p):
        look = np.minimum(b.num_ret, b.num_rel)
        rel = rel_in_top(b, look)
        return np.divide(rel.astype(np.float64), b.num_rel,
                         out=np.zeros(b.n), where=look > 0)[:, None]


@register
class RprecMult(Measure):
    name = "Rprec_mult"
    explanation = ("Precision at rank cutoffs (long)(m*R + 0.9) for multiples m of R; cutoffs "
                   "past the ranking count the missing documents as nonrelevant.")
    params = DoubleCutoffs(0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0)

    def compute(self, b, p):
        # trec_eval walks the ranking backwards from form_res_rels' judged relevant count,
        # stepping down at each document the rank loop calls relevant (they differ if -l < 0);
        # the walk stops when its count reaches 0, and a cutoff <= 0 is never reached: both 0
        offset = b.num_rel_ret - b.num_rel_ret_judged
        cols = []
        for m in p.values:
            cut = rprec_mult_cutoffs(m, b.num_rel)
            rel = np.maximum(rel_in_top(b, cut) - offset, 0)
            cols.append(np.divide(rel.astype(np.float64), cut.astype(np.float64),
                                  out=np.zeros(b.n), where=cut > 0))
        return np.stack(cols, axis=1)
