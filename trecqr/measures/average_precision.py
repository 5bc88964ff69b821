"""Average precision: map, gm_map (trec_eval's m_map.c, m_gm_map.c)."""

from __future__ import annotations

import math

import numpy as np

from ..scorer.rankings import seqsum
from .base import MIN_GEO_MEAN, Measure, register


def average_precision(b) -> np.ndarray:
    """Sum over relevant retrieved docs of precision at their rank, over num_rel (0 if none)."""
    terms = np.where(b.is_rel, b.rel_so_far / b.ranks, 0.0)
    total = seqsum(terms)
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
        return np.log(np.maximum(average_precision(b), MIN_GEO_MEAN))[:, None]
