"""Rank-biased precision and its residual (trec_eval 10.0's m_rbp.c, m_rbp_resid.c).

``rbp.p=0.8`` sets the persistence (default 0.9; the last ``p=`` wins); other pairs are gains
as for ndcg. Gains are rescaled to (g - min) / (max - min) when one lies outside [0, 1]:
trec_eval leaves ``min`` and ``max`` uninitialised, and its published outputs agree with both
starting at 0. Powers of p are running products, as trec_eval multiplies.
"""

from __future__ import annotations

import numpy as np

from trecqr.measures.base import Measure, ParamPairs, register
from trecqr.measures.gain import GainTable, graded_groups, lookup_gains, prefix_sums

_EXPLAIN = ("Rank-Biased Precision (Moffat and Zobel, ACM TOIS 27(1), 2008): (1-p) sum of "
            "gain(rank i) p^(i-1); persistence p=0.9 by default, set with rbp.p=0.95")


def persistence(params) -> float:
    p = 0.9
    for name, value in params.values:
        if name == "p":
            p = float(value)
    return p


def powers(p: float, depth: int) -> np.ndarray:
    """p^0 .. p^depth as repeated products (depth+1 values)."""
    factors = np.full(depth + 1, p)
    factors[0] = 1.0
    return np.cumprod(factors)


def _normalized(table: GainTable) -> GainTable:
    lo = min((0.0,) + table.gain)
    hi = max((0.0,) + table.gain)
    if lo < 0 or hi > 1:
        gains = tuple((g - lo) / (hi - lo) for g in table.gain)
        return GainTable(table.level, gains, table.count_grade)
    return table


@register
class RBP(Measure):
    name = "rbp"
    explanation = _EXPLAIN + "; gains as for ndcg, rescaled to [0, 1]."
    params = ParamPairs()
    since = "10.0"

    def compute(self, b, p):
        prob = persistence(p)
        cur = powers(prob, b.depth)[: b.depth]
        out = np.zeros((b.n, 1))
        for grp in graded_groups(b, p, ideal=False):
            table = _normalized(grp.table)
            gains = grp.gains if table is grp.table else lookup_gains(grp.rel, table)
            total = prefix_sums(gains * cur[None, :])[:, -1]
            out[grp.rows, 0] = (1.0 - prob) * total
        return out


@register
class RBPResid(Measure):
    name = "rbp_resid"
    explanation = ("Residual of rbp: how much rbp could rise if every unjudged retrieved "
                   "document had gain 1 (p^num_ret + (1-p) sum over unjudged of p^(i-1)).")
    params = ParamPairs()
    since = "10.0"

    def compute(self, b, p):
        prob = persistence(p)
        pw = powers(prob, b.depth)
        unjudged = (b.rel < 0) & b.valid
        total = prefix_sums(np.where(unjudged, pw[None, : b.depth], 0.0))[:, -1]
        value = pw[b.num_ret] + (1.0 - prob) * total
        value = np.where(unjudged.any(axis=1), value, 0.0)
        if p.printable is None:
            # trec_eval 10.0 -c zeroes the value named exactly "rbp_resid" for topics missing
            # from the run (scored on a one-document bogus ranking)
            value = np.where(b.bogus, 0.0, value)
        return value[:, None]
