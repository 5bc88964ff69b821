"""Measures of the retrieved set as a whole, ignoring order (trec_eval's m_set_P.c,
m_set_rel_P.c, m_set_recall.c, m_set_map.c, m_set_F.c).

Each is 0 when its denominator would be 0. ``-M N`` makes them measures of the top N.
"""

from __future__ import annotations

import numpy as np

from trecqr.measures.base import DoubleParams, Measure, register


def _ratio(num, den, ok):
    return np.divide(np.asarray(num, np.float64), np.asarray(den, np.float64),
                     out=np.zeros(len(ok)), where=ok)


@register
class SetP(Measure):
    name = "set_P"
    explanation = "Set precision: relevant retrieved / retrieved."

    def compute(self, b, p):
        return _ratio(b.num_rel_ret_judged, b.num_ret, b.num_ret > 0)[:, None]


@register
class SetRelativeP(Measure):
    name = "set_relative_P"
    explanation = ("Relative set precision: relevant retrieved / min(retrieved, R), the "
                   "precision relative to the best possible for a set of this size.")

    def compute(self, b, p):
        ok = (b.num_ret > 0) & (b.num_rel > 0)
        return _ratio(b.num_rel_ret_judged, np.minimum(b.num_ret, b.num_rel), ok)[:, None]


@register
class SetRecall(Measure):
    name = "set_recall"
    explanation = "Set recall: relevant retrieved / relevant."

    def compute(self, b, p):
        return _ratio(b.num_rel_ret_judged, b.num_rel, b.num_rel > 0)[:, None]


@register
class SetMap(Measure):
    name = "set_map"
    explanation = "Set map: relevant retrieved squared / (retrieved * relevant)."

    def compute(self, b, p):
        a = b.num_rel_ret_judged.astype(np.float64)
        ok = (b.num_ret > 0) & (b.num_rel > 0)
        return _ratio(a * a, b.num_ret.astype(np.float64) * b.num_rel.astype(np.float64),
                      ok)[:, None]


@register
class SetF(Measure):
    name = "set_F"
    explanation = ("Set F measure, weighted harmonic mean of set recall and precision: "
                   "(b+1)PR / (bP + R), parameter b (default 1.0; 0 gives precision).")
    params = DoubleParams(1.0)

    def compute(self, b, p):
        x = p.values[0]
        ok = b.num_rel_ret_judged > 0
        rr = b.num_rel_ret_judged.astype(np.float64)
        with np.errstate(divide="ignore", invalid="ignore"):
            prec = rr / b.num_ret.astype(np.float64)
            rec = rr / b.num_rel.astype(np.float64)
            f = (x + 1.0) * prec * rec / (x * prec + rec)
        return np.where(ok, f, 0.0)[:, None]
