"""Set utility (trec_eval's m_utility.c): a linear weighting of the contingency table.

utility.p1,p2,p3,p4 = p1 * relevant retrieved + p2 * nonrelevant retrieved
+ p3 * relevant not retrieved + p4 * nonrelevant not retrieved, the last counted from the
collection size given with -N (0 by default, as trec_eval). Exactly four parameters.
"""

from __future__ import annotations

import numpy as np

from trecqr.errors import UsageError
from trecqr.measures.base import DoubleParams, Measure, register


@register
class Utility(Measure):
    name = "utility"
    explanation = ("Set utility p1*a + p2*b + p3*c + p4*d over relevant/nonrelevant x "
                   "retrieved/not retrieved counts (default 1,-1,0,0).")
    params = DoubleParams(1.0, -1.0, 0.0, 0.0)

    def check(self, p) -> None:
        """trec_eval's one refusal (its calc_utility, once per topic, then a zero mean)."""
        if len(p.values) != 4:
            raise UsageError("measure 'utility': improper number of coefficients "
                             f"(need 4, got {len(p.values)})")

    def compute(self, b, p):
        self.check(p)
        p1, p2, p3, p4 = p.values
        ret, rel, relret = b.num_ret, b.num_rel, b.num_rel_ret_judged
        coll = np.int64(b.options.num_docs_in_coll)  # trec_eval's long: -N may pass 2**31
        value = (p1 * relret + p2 * (ret - relret) + p3 * (rel - relret)
                 + p4 * (coll + relret - ret - rel))
        if b.options.v10 and p.printable is None:
            # trec_eval 10.0 zeroes the value named exactly "utility" on -c's bogus ranking
            value = np.where(b.bogus, 0.0, value)
        return value.astype(np.float64)[:, None]
