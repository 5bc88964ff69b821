"""ir_measures-style names (``nDCG@3``, ``RR@3``, ``P(rel=2)@5``) beside trec_eval's.

Placeholder until the ir_measures front-end lands: every name is read as a trec_eval argument.
"""

from __future__ import annotations


def split_measures(measures):
    """Split measure names into (trec_eval ``-m`` arguments, ir_measures names)."""
    if measures is None:
        return [], []
    if isinstance(measures, str):
        measures = [measures]
    return list(measures), []


def score_ir_measures(qrels, run, names, options, evaluation, out_names):  # pragma: no cover
    raise NotImplementedError
