"""The evaluation core: one function, :func:`execute`, runs a plan (:mod:`.plan`) on inputs.

Every door reaches it: ``trecqr.evaluate``, ``evaluate_many``, ``RelevanceEvaluator``,
``trecqr eval`` and the commands built on :func:`trecqr.api.evaluation.score_trec` (compare,
breakdown, cqr, presets). Per call, trec_eval's rankings are built once (:func:`.rankings.rank`),
whatever the mix of names: trec_eval's names are computed on them, and so is every ir_measures
name that its pytrec_eval provider computes (another relevance level, -J or nDCG gains is a
view of the same rankings, :func:`.rankings.variant`). Names ranked in another order
(``RR@k``, ``Judged@k``, cwl_eval, gdeval, compat, accuracy, pyndeval) read the run's columns,
each order computed once (:mod:`trecqr.rankings.irm`).

The run comes as the door decided it (:func:`trecqr.formats.inputs.decide`): columns
(:class:`~trecqr.formats.Run`), a TREC text path (read here, or streamed piece by piece when
large), or a pytrec_eval dict, which :func:`.rankings.rank` ranks (and, for pytrec_eval's common
measures, computes) in one pass of the C module.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from operator import itemgetter

import numpy as np

from trecqr.engine.evaluator import (Column, EvalContext, Evaluation, compute_values,
                                     finish_evaluation)
from trecqr.engine.stream import Fallback, score_stream, wants_stream
from trecqr.engine.rankings import Ranked, qrels_topics, rank, variant
from trecqr.rankings.irm import judged_at_cutoff, ranking, rr_at_cutoff
from trecqr.engine.names import IrMeasuresColumn, aggregate
from trecqr.engine.pytrec_values import TopicValues, value_keys


@dataclass
class Outcome:
    """What a plan gives: the Evaluation (trec_eval's columns, then the ir_measures names'),
    and the ir_measures defaults of qrels topics the run lacks, ``{qid: {name: DEFAULT}}``."""

    evaluation: Evaluation
    defaults: dict = field(default_factory=dict)


def execute(plan, qrels, run, *, div=None, zscores=None, check: bool = True,
            empty_topics=(), rel_info=None):
    """Run ``plan`` on qrels and a run; an :class:`Outcome` (a pytrec_eval plan: its result,
    ``{qid: {key: value}}`` for the run's judged topics, in run order).

    run: its :class:`~trecqr.formats.inputs.Input` (kind ``dict``, ``trec`` or ``columns``),
    decided by the door. qrels: Qrels, DictQrels, or DiversityQrels (a diversity plan); div:
    the diversity qrels of intent-aware names in a mixed plan. check: refuse inputs with no
    topic in common, as trec_eval. empty_topics: qrels topics with no judgment at all (a
    dict's ``{"b": {}}``), which ir_measures scores with the measures' defaults. rel_info: the
    judgments of another relevance format (-R prefs, qrels_prefs, qrels_jg), which its
    measures read; ``qrels`` then names the judged (topic, docno) pairs that decide the topics.

    One route: a large or compressed TREC file is scored piece by piece (:mod:`.stream`, the
    same values in bounded memory); everything else is ranked once (:func:`.rankings.rank`,
    which chooses the C pass over dicts itself) and measured on those rankings.
    """
    options = plan.options
    if not plan.irm and not plan.keyed and run.kind == "trec" \
            and wants_stream(run, options):  # a large or compressed run file: piece by piece
        try:
            return Outcome(score_stream(qrels, run.obj, list(plan.trec), options, zscores))
        except Fallback:  # the whole-file readers report its errors
            pass
    ranked = rank(plan, qrels, run)
    if plan.keyed and ranked.c_values is not None:  # the C pass gave pytrec_eval's result
        return ranked.c_values
    ev, defaults = _evaluation(plan, ranked, qrels, div, empty_topics, check, zscores,
                               rel_info)
    return ev if plan.keyed else Outcome(ev, {} if plan.diversity else defaults)


def _evaluation(plan, ranked: Ranked, qrels, div, empty_topics, check=False, zscores=None,
                rel_info=None):
    """(the Evaluation, or a keyed plan's pytrec_eval result; the ir_measures defaults)."""
    options = plan.options
    rk = ranked.rankings
    if check and not plan.keyed:
        rk.check_coverage(ranked.source, qrels.source)
    ctx = EvalContext(rk, options, ranked.given_run, qrels if rel_info is None else rel_info)
    per_measure = c_values(plan.trec, ranked) if ranked.c_values is not None else \
        [(m, p, compute_values(m, p, ctx)) for m, p in plan.trec]
    if plan.keyed:
        return pytrec_result(TopicValues(rk.qids, key_values(per_measure))), {}
    ev = finish_evaluation(rk, options, per_measure, zscores)
    defaults = irm_columns(plan, ranked, qrels, div, ev, empty_topics, ctx) if plan.irm else {}
    ev.defaults = defaults
    return ev, defaults


def warn_no_common(num_run_topics: int, num_qrels_topics: int) -> None:
    warnings.warn(f"no topic in common: none of the {num_run_topics} topics of the run has "
                  f"judgments among the {num_qrels_topics} qrels topics; ir_measures names "
                  "score every qrels topic with their default (0)")


def pytrec_result(tv: TopicValues) -> dict:
    """``{qid: {key: value}}``, pytrec_eval's result, from per-topic arrays."""
    keys = list(tv.values)
    if not keys:
        return {q: {} for q in tv.qids}
    rows = np.column_stack([tv.values[k] for k in keys]).tolist()
    return {q: dict(zip(keys, row)) for q, row in zip(tv.qids, rows)}


def c_values(selection, ranked: Ranked, prefix: str = "") -> list:
    """[(measure, params, values)] for ``ranked``'s topics from the C pass's values (keys of
    a pytrec_eval invocation's names prefixed ``"i:"``)."""
    rows = [ranked.c_values[q] for q in ranked.rankings.qids]
    keys = [[prefix + key for key in m.value_names(p)] for m, p in selection]
    flat = [k for ks in keys for k in ks]
    table = np.array(list(map(itemgetter(*flat), rows)) if flat and rows else [],
                     dtype=np.float64).reshape(len(rows), len(flat))
    out, j = [], 0
    for (measure, params), ks in zip(selection, keys):
        out.append((measure, params, table[:, j:j + len(ks)]))
        j += len(ks)
    return out


def key_values(per_measure) -> dict:
    """Per-topic values under pytrec_eval's keys (:func:`.pytrec_values.value_keys`)."""
    keys = value_keys([(m, p) for m, p, _ in per_measure])
    return {key: np.zeros(len(per_measure[i][2])) if j is None else
            np.asarray(per_measure[i][2][:, j], dtype=np.float64)
            for key, (i, j) in keys.items()}


def irm_columns(plan, ranked: Ranked, qrels, div, ev: Evaluation, empty_topics,
                ctx: EvalContext) -> dict:
    """Append one column per ir_measures name to ``ev`` (aligned with its topics); return the
    defaults of the qrels topics the run lacks.

    ir_measures' semantics: a qrels topic absent from the run, or with no judgments at all,
    gets the measure's DEFAULT and counts in the mean, taken in the run's topic order."""
    rk = ranked.rankings
    topics = ranked.run_order  # the evaluated topics, in the run's order
    where = {q: i for i, q in enumerate(rk.qids)}
    perm = np.array([where[q] for q in topics], dtype=np.int64)  # run order -> rk order
    judged = ranked.judged_topics if ranked.judged_topics is not None and not plan.diversity \
        else qrels_topics(div if plan.diversity else qrels)
    all_topics = set(judged) | set(empty_topics)
    if not topics:
        warn_no_common(ranked.num_run_topics, len(all_topics))
    group_values = []
    for i, group in enumerate(plan.groups):
        if ranked.c_values is not None:
            per_measure = c_values(group.selection, ranked, f"{i}:")
        else:
            grk = variant(rk, group, qrels, ranked)
            gctx = ctx if grk is rk else EvalContext(grk, grk.options)  # batches made once
            per_measure = [(m, p, compute_values(m, p, gctx)) for m, p in group.selection]
        group_values.append(key_values(per_measure))
    orders: dict = {}  # one ranking per provider order
    # the providers that read the run's rows (not pytrec_eval's) see a dict's empty ranking
    # as a topic without results (ir_measures' default), not as a ranking to score
    empty = set(ranked.run_columns().empty_topics) if plan.needs_run_columns else set()
    with_rows = [q for q in topics if q not in empty] if empty else topics

    def ordered(ties):
        if ties not in orders:
            orders[ties] = ranking(ranked.run_columns(), with_rows, ties)
        return orders[ties]

    missing = sorted(all_topics - set(topics))
    defaults: dict = {q: {} for q in missing}
    for name in plan.irm:
        m = name.measure
        if name.kind == "pytrec":
            aligned = group_values[name.group][name.match]  # rk order
            in_run_order = aligned[perm]
        else:
            if name.kind == "judged":
                values = judged_at_cutoff(ranked.run_columns(), ranked.qrels_columns(),
                                          with_rows, name.cutoff, ordered("docno_asc"))
            elif name.kind == "msmarco":
                values = rr_at_cutoff(ranked.run_columns(), ranked.qrels_columns(),
                                      with_rows, m["rel"], name.cutoff, ordered("docno_asc"))
            else:
                judged = div if name.row.qrels_kind == "diversity" else ranked.qrels_columns()
                values = name.row.function(ranked.run_columns(), judged, with_rows, m)
            in_run_order = np.asarray(values, dtype=np.float64)
            if empty:
                fill = np.nan if name.row is not None and not name.row.defaults else m.DEFAULT
                got = dict(zip(with_rows, in_run_order.tolist()))
                in_run_order = np.array([got.get(q, fill) for q in topics], dtype=np.float64)
            aligned = np.zeros(len(rk.qids))
            aligned[perm] = in_run_order
        sparse = name.row is not None and not name.row.defaults
        if sparse:  # only the topics the provider yields (NaN: none)
            has = ~np.isnan(in_run_order)
            summary, integer = aggregate(name.agg, in_run_order[has], int(has.sum()))
        else:
            for q in missing:
                defaults[q][name.caller] = float(m.DEFAULT)
            summary, integer = aggregate(name.agg, in_run_order, len(all_topics))
        ev.columns.append(Column(name.caller, IrMeasuresColumn(name.caller, integer, sparse),
                                 aligned, summary))
    return {q: values for q, values in defaults.items() if values}


