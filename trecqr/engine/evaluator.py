"""Compute selected measures over rankings, per topic and summarised, as trec_eval's main loop.

Per-topic values are what trec_eval stores in ``q_eval`` (and what pytrec_eval returns); the
summary is its ``calc_avg`` over them: a left-to-right sum in topic order divided by the number
of topics (every qrels topic with -c), a sum for counts, a geometric mean for gm_*.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from trecqr.rankings.options import Options
from trecqr.rankings.build import Rankings


@dataclass
class EvalContext:
    """What a measure may read: the rankings, and the inputs behind them (for prefs, jg)."""

    rankings: Rankings
    options: Options
    run: object = None
    rel_info: object = None

    @cached_property
    def batches(self):
        return list(self.rankings.batches())


@dataclass
class SummaryContext:
    num_avg: int
    num_evaluated: int
    options: Options
    rankings: Rankings
    zscores: object = None


@dataclass
class Column:
    """One output value (``P_5``): its per-topic values and its summary."""

    name: str
    measure: "Measure"  # a trecqr.measures.base.Measure (the layer above: not imported)
    values: np.ndarray
    summary: object = None


@dataclass
class Evaluation:
    """Everything trec_eval would print for one run, before formatting."""

    qids: list
    columns: list
    runid: str
    options: Options
    rankings: Rankings
    zscored: bool = False
    missing_zscores: list = field(default_factory=list)
    # ir_measures names: {qid: {name: DEFAULT}} of the qrels topics without results, which
    # their means count (measures.population reads it)
    defaults: dict = field(default_factory=dict)

    def column(self, name: str) -> Column:
        for c in self.columns:
            if c.name == name:
                return c
        raise KeyError(name)


def compute_values(measure: "Measure", params: "Params", ctx: EvalContext) -> np.ndarray:
    """Per-topic values of one measure, (topics, values), batch by batch."""
    custom = getattr(measure, "compute_all", None)
    if custom is not None:
        return custom(ctx, params)
    names = measure.value_names(params)
    n = len(ctx.rankings)
    out = None
    for idx, batch in ctx.batches:
        vals = measure.compute(batch, params)
        if out is None:
            out = np.zeros((n, len(names)), dtype=vals.dtype)
        out[idx] = vals
    if out is None:
        out = np.zeros((n, len(names)))
    return out


def finish_evaluation(rk: Rankings, options: Options, per_measure, zscores=None) -> Evaluation:
    """From per-topic values [(measure, params, values)] to the Evaluation: bogus topics'
    zeros (10.0 -c), z-scores (-Z), summaries. rk needs only its topic-level fields (qids,
    bogus, num_qrels_topics, num_rel_all, runid): the streaming path passes rankings without
    documents."""
    for measure, params, values in per_measure:
        if measure.bogus_zero and options.v10 and rk.bogus.any():
            values[rk.bogus] = 0
    missing = []
    if zscores is not None:
        missing = zscores.apply(rk.qids, per_measure)
    num_avg = rk.num_qrels_topics if options.complete else len(rk)
    sctx = SummaryContext(num_avg, len(rk), options, rk, zscores)
    columns = []
    for measure, params, values in per_measure:
        names = measure.value_names(params)
        summary = (measure.summarize(values, sctx) if measure.summary != "none"
                   else [None] * len(names))
        for j, name in enumerate(names):
            columns.append(Column(name, measure, values[:, j], summary[j]))
    return Evaluation(list(rk.qids), columns, rk.runid, options, rk, zscores is not None, missing)
