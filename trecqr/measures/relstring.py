"""relstring (trec_eval's m_relstring.c): the grades of the first N retrieved documents as a
string, printed per topic only (``relstring 301 '0010-.'``).

Characters: the grade 0-9, '>' above 9, '-' not in the qrels, '.' judged with a negative
grade. trec_eval 10.0 with -c prints '' for a topic missing from the run, but only when the
measure has its default name "relstring"; ``relstring.20`` shows its bogus one-document
ranking, '-'.
"""

from __future__ import annotations

import numpy as np

from trecqr.rankings.build import NONPOOL, PAD, UNJUDGED
from trecqr.measures.base import DoubleParams, Measure, register


@register
class RelString(Measure):
    name = "relstring"
    explanation = ("The grades of the first N retrieved documents (default 10): digit, '>' for "
                   "grades above 9, '-' not in the qrels, '.' unjudged. Per topic only.")
    params = DoubleParams(10.0)
    summary = "none"

    def compute(self, b, p):
        length = max(int(p.values[0]), 0)   # (long) truncation toward zero
        width = min(length, b.depth)
        rel = b.rel[:, :width]
        chars = np.where(rel > 9, ord(">"),
                np.where(rel >= 0, ord("0") + np.clip(rel, 0, 9),
                np.where(rel == NONPOOL, ord("-"),
                np.where(rel == UNJUDGED, ord("."), ord("<"))))).astype(np.uint8)
        chars[rel == PAD] = 0  # padding past num_ret: NUL bytes end the string
        if width == 0:
            strings = np.array([""] * b.n, dtype=object)
        else:
            strings = np.ascontiguousarray(chars).view(f"S{width}")[:, 0]
            strings = strings.astype(f"U{width}").astype(object)
        if b.options.v10 and p.printable is None:
            strings[b.bogus] = ""
        return strings[:, None]

    def format_query_value(self, value) -> str:
        return f"'{value}'"
