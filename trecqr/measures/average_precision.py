"""Average precision: map, gm_map, map_cut (trec_eval's m_map.c, m_gm_map.c, m_map_cut.c)."""

from __future__ import annotations

import numpy as np

from trecqr.measures import _libm
from trecqr.measures.base import (MIN_GEO_MEAN, LongCutoffs, Measure, batch_memo, register,
                   relevant_positions, row_sums)


def _precision_terms(b):
    """(rows, cols, precision) at each relevant retrieved document, in rank order."""
    def compute():
        rows, cols = relevant_positions(b)
        first = np.searchsorted(rows, np.arange(b.n))
        rel_so_far = np.arange(1, len(rows) + 1) - first[rows]
        return rows, cols, rel_so_far / (cols + 1.0)
    return batch_memo(b, "precision_terms", compute)


def average_precision(b) -> np.ndarray:
    """Sum over relevant retrieved docs of precision at their rank, over num_rel (0 if none).

    Only the relevant documents are visited: bincount adds their terms to their topic's total
    in rank order, as trec_eval's loop does (0.0 + t1 + t2 + ...).
    """
    rows, cols, terms = _precision_terms(b)
    total = row_sums(rows, terms, b.n)
    return np.divide(total, b.num_rel, out=np.zeros(b.n), where=(b.num_rel_ret > 0))


@register
class MAP(Measure):
    name = "map"
    explanation = ("Mean Average Precision: precision after each relevant document is "
                   "retrieved, averaged over all relevant documents of the topic.")

    def compute(self, b, p):
        return average_precision(b)[:, None]


@register
class GMMAP(Measure):
    name = "gm_map"
    explanation = ("Geometric mean of average precision over topics; per-topic values are "
                   f"log(max(AP, {MIN_GEO_MEAN})), the summary exp of their mean.")
    summary = "gm"
    per_query = False

    def compute(self, b, p):
        # libm's log, not numpy's SIMD one: they differ in the last bit for some inputs
        return _libm.log(np.maximum(average_precision(b), MIN_GEO_MEAN))[:, None]


@register
class MapCut(Measure):
    name = "map_cut"
    explanation = ("Average precision over the top k documents only (relevant documents "
                   "below rank k add nothing; still divided by R), for cutoffs k.")
    params = LongCutoffs(5, 10, 15, 20, 30, 100, 200, 500, 1000)

    def compute(self, b, p):
        rows, cols, terms = _precision_terms(b)  # summed left to right over ranks < k
        return np.stack([np.divide(row_sums(rows[cols < k], terms[cols < k], b.n), b.num_rel,
                                   out=np.zeros(b.n), where=b.num_rel > 0)
                         for k in p.values], axis=1)
