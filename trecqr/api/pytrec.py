"""A drop-in for pytrec_eval (pytrec-eval-terrier 0.5.x), computed by trecqr's own engine.

``RelevanceEvaluator(qrels, measures, relevance_level, judged_docs_only_flag).evaluate(run)``
returns what pytrec_eval returns, key for key and bit for bit; the rules (measure strings,
keys, topics, ranking) live in :mod:`trecqr.engine.pytrec_values`, shared with the
ir_measures names. Run dicts are ranked in one pass by a C module (``formats/_dicts.c``).

The C extension of pytrec_eval reads ``relevance_level`` and ``judged_docs_only_flag`` with
format ``i`` into a C ``long``: only the low 32 bits are written, so a negative level becomes
``level + 2**32`` and 0 is rejected. We reproduce that rather than "fix" it.

Known differences, all where pytrec_eval has no usable answer: a NaN score raises ValueError
(pytrec_eval's sort is then undefined); parameters trec_eval rejects (``P.0``, duplicate
cutoffs, malformed ``ndcg`` gains) raise ValueError at construction, where pytrec_eval aborts
the process or prints to stderr and returns zeros; pytrec_eval segfaults when an empty or
all-negative topic is evaluated first, trecqr returns the intended values; numpy scalars are
accepted as scores (pytrec_eval takes Python int and float only).
"""

from __future__ import annotations

import collections

import numpy as np

from trecqr.version import __version__
from trecqr.errors import UsageError
from trecqr.formats import inputs
from trecqr.formats.inputs import TABLE_KINDS, Input
from trecqr.formats.objects import qrels_columns, run_columns
from trecqr.engine.execute import execute
from trecqr.engine.plan import pytrec_plan
from trecqr.engine.pytrec_values import (DictQrels, c_int, normalize_measures, supported_measures,
                                      supported_nicknames)

COLUMN_KINDS = TABLE_KINDS | {"columns"}  # beside pytrec_eval's dicts, read as columns


class RelevanceEvaluator:
    """pytrec_eval.RelevanceEvaluator, computed by trecqr (see the module docstring)."""

    def __init__(self, query_relevance, measures, relevance_level: int = 1,
                 judged_docs_only_flag: bool = False):
        normalized = normalize_measures(measures)
        columns = None
        given = inputs.decide(query_relevance)
        if given.kind in COLUMN_KINDS:  # DataFrames, Arrow tables, rows, ranx, trecqr's Qrels
            columns = qrels_columns(given)
        else:
            query_relevance = {qid: docs for qid, docs in query_relevance.items()
                               if len(docs) > 0}
        level = c_int(relevance_level)
        judged = c_int(judged_docs_only_flag)
        if level < 1:
            raise TypeError("Argument relevance_level should be positive.")
        try:
            self._plan = pytrec_plan(normalized, level, judged != 0)
        except UsageError as exc:
            raise ValueError(f"unsupported measure parameters: {exc}") from None
        # columns are counted as they are (DictQrels.from_columns), never made into dicts
        self._qrels = DictQrels(query_relevance) if columns is None else \
            DictQrels.from_columns(columns)
        self.measures = normalized

    def evaluate(self, scores) -> dict:
        """{qid: {measure: value}} for run topics that have judgments, in the run's order."""
        given = inputs.decide(scores)
        if given.kind == "dict":
            return execute(self._plan, self._qrels, given) if scores else {}
        if given.kind in COLUMN_KINDS:  # DataFrames, Arrow tables, rows, ranx, trecqr's Run
            run = run_columns(given)
            return execute(self._plan, self._qrels, Input("columns", run)) if len(run) else {}
        if not scores:
            return {}
        raise TypeError("Argument object scores should be of type dictionary.")


# --------------------------------------------------------------------------- helpers
def parse_run(f_run):
    """pytrec_eval.parse_run: ``{qid: {docno: float(score)}}`` from lines of a run file."""
    run = collections.defaultdict(dict)
    for line in f_run:
        query_id, _, object_id, ranking, score, _ = line.strip().split()
        assert object_id not in run[query_id]
        run[query_id][object_id] = float(score)
    return run


def parse_qrel(f_qrel):
    """pytrec_eval.parse_qrel: ``{qid: {docno: int(grade)}}`` from lines of a qrels file."""
    qrel = collections.defaultdict(dict)
    for line in f_qrel:
        query_id, _, object_id, relevance = line.strip().split()
        assert object_id not in qrel[query_id]
        qrel[query_id][object_id] = int(relevance)
    return qrel


def compute_aggregated_measure(measure: str, values) -> float:
    """pytrec_eval's aggregate: numpy's (pairwise) sum for ``num_*``, ``exp(sum/n)`` for
    ``gm_*``, numpy's mean otherwise; numpy is used so that the last bit agrees too."""
    if measure.startswith("num_"):
        return float(np.sum(values))
    if measure.startswith("gm_"):
        return float(np.exp(np.sum(values) / len(values)))
    return float(np.mean(values))


__all__ = ["RelevanceEvaluator", "parse_run", "parse_qrel", "supported_measures",
           "supported_nicknames", "compute_aggregated_measure", "__version__"]
