"""Counts: runid, num_q, num_ret, num_rel, num_rel_ret, num_nonrel_judged_ret.

Summaries of the num_* counts are sums over topics, not means (trec_eval's calc_avg_meas_empty).
"""

from __future__ import annotations

import numpy as np

from trecqr.measures.base import Measure, register


@register
class Runid(Measure):
    name = "runid"
    explanation = "Runid given by results input file."
    summary = "none"
    per_query = False

    def compute(self, b, p):
        return np.zeros((b.n, 1))


@register
class NumQ(Measure):
    name = "num_q"
    explanation = ("Number of topics results averaged over (every qrels topic with -c).")
    integer = True
    summary = "count"
    per_query = False

    def compute(self, b, p):
        return np.ones((b.n, 1))


@register
class NumRet(Measure):
    name = "num_ret"
    explanation = "Number of documents retrieved for topic (after -M and -J)."
    integer = True
    summary = "sum"
    bogus_zero = True

    def compute(self, b, p):
        return b.num_ret.astype(np.float64)[:, None]


@register
class NumRel(Measure):
    name = "num_rel"
    explanation = "Number of relevant documents for topic (grade >= -l). Summary is the sum."
    integer = True
    summary = "sum"

    def compute(self, b, p):
        return b.num_rel.astype(np.float64)[:, None]

    def summarize(self, values, ctx):
        # trec_eval's te_calc_avg_num_rel: with -c, count grades > 0 over every qrels topic
        if ctx.options.complete:
            return np.array([float(ctx.rankings.num_rel_all)])
        return super().summarize(values, ctx)


@register
class NumRelRet(Measure):
    name = "num_rel_ret"
    explanation = "Number of relevant documents retrieved for topic. Summary is the sum."
    integer = True
    summary = "sum"

    def compute(self, b, p):
        return b.num_rel_ret_judged.astype(np.float64)[:, None]


@register
class NumNonrelJudgedRet(Measure):
    name = "num_nonrel_judged_ret"
    explanation = "Number of non-relevant judged documents retrieved for topic."
    integer = True
    summary = "sum"

    def compute(self, b, p):
        nonrel = (b.rel >= 0) & ~b.is_rel
        return np.count_nonzero(nonrel, axis=1).astype(np.float64)[:, None]
