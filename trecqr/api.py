"""The Python API: ``trecqr.evaluate(qrels, run, measures) -> Results``.

qrels and run may be paths (``.gz`` and ``-`` accepted), pytrec_eval-style dicts
(``{qid: {docno: grade|score}}``), pandas DataFrames with ir_measures' columns, or already
parsed :class:`~trecqr.formats.Run` / :class:`~trecqr.formats.Qrels`. Measures are trec_eval
names (``map``, ``P.5,10``, ``ndcg_cut.3``, nicknames such as ``all_trec``) or ir_measures names
(``nDCG@3``, ``RR@3``, ``R@100``).
"""

from __future__ import annotations

import sys

import pyarrow.compute as pc
from dataclasses import dataclass, field

from .errors import UsageError
from .formats import (Qrels, Run, qrels_from_dict, qrels_from_frame, read_qrels, read_run,
                      run_from_dict, run_from_frame)
from .measures.selection import select
from .scorer.evaluator import EvalContext, Evaluation, evaluate_rankings
from .scorer.options import Options
from .scorer.idspace import warn_id_space
from .scorer.rankings import build_rankings
from .scorer.stream import Fallback, score_stream, wants_stream


def _is_frame(obj) -> bool:
    return type(obj).__name__ == "DataFrame" and hasattr(obj, "columns")


def load_run(run, *, comments: bool = True, judged=None, float32: bool | None = None) -> Run:
    """A Run from a path, dict, DataFrame or Run. judged (the qrels' docnos) lets the file
    scanner match lines against the qrels while it reads."""
    if isinstance(run, Run):
        return run
    if isinstance(run, dict):
        return run_from_dict(run)
    if _is_frame(run):
        return run_from_frame(run)
    return read_run(run, comments=comments, judged=judged, float32=float32)


def load_qrels(qrels, *, comments: bool = True) -> Qrels:
    if isinstance(qrels, Qrels):
        return qrels
    if isinstance(qrels, dict):
        return qrels_from_dict(qrels)
    if _is_frame(qrels):
        return qrels_from_frame(qrels)
    return read_qrels(qrels, comments=comments)


def score_trec(qrels, run, measures=None, options: Options | None = None, *,
               zscores=None, check: bool = True) -> Evaluation:
    """trec_eval's computation: parsed inputs and ``-m`` style measure arguments. check=False
    leaves out trec_eval's refusal of inputs with no topic in common.

    ir_measures names (``RR@3``, ``nDCG@3``) are scored too, with their semantics, so every
    command built on this (compare, breakdown, plot, diff) takes the same vocabulary as eval.
    """
    options = options or Options()
    comments = options.v10
    if isinstance(measures, str):
        measures = [measures]
    if any(not isinstance(m, str) or "@" in m or "(" in m for m in measures or []):
        from .measures.names import split_measures

        trec_args, irm = split_measures(list(measures))
        if irm:
            ev = split_and_score(qrels, run, trec_args, irm, options, zscores).evaluation
            if not trec_args:  # "runid" stood in for the trec_eval part
                ev.columns = [c for c in ev.columns if c.name != "runid"]
            return ev
    selection = select(list(measures or []), options.compat)
    q = load_qrels(qrels, comments=comments)
    if wants_stream(run, options):  # a large or compressed run file: piece by piece
        try:
            return score_stream(q, run, selection, options, zscores)
        except Fallback:  # the whole-file readers report its errors
            pass
    r = load_run(run, comments=comments, judged=pc.unique(q.docno),
                 float32=options.float32_scores)
    rankings = build_rankings(r, q, options)
    if check:
        rankings.check_coverage(r.source, q.source)
    warn_id_space(q, r)  # trecqr/scorer/idspace.py
    run_arg = r if r is run else None  # a run read here is not needed past this point
    del r
    return evaluate_rankings(EvalContext(rankings, options, run_arg, q), selection, zscores)


@dataclass
class Results:
    """Per-topic and summary values of an evaluation, keyed by measure name."""

    evaluation: Evaluation
    names: dict  # output name -> name as the caller wrote it
    defaults: dict = field(default_factory=dict)  # ir_measures: {qid: {name: DEFAULT}}

    def aggregate(self) -> dict:
        """{measure name: summary value} over the evaluated topics (``all`` in trec_eval)."""
        out = {}
        for c in self.evaluation.columns:
            if c.measure.summary == "none":
                continue
            out[self.names.get(c.name, c.name)] = float(c.summary)
        return out

    def per_query(self) -> dict:
        """{qid: {measure name: value}} for every evaluated topic."""
        cols = [c for c in self.evaluation.columns if c.measure.summary != "none"
                or c.measure.per_query]
        result = {}
        for i, qid in enumerate(self.evaluation.qids):
            result[qid] = {self.names.get(c.name, c.name): _py(c.values[i]) for c in cols
                           if c.measure.name != "runid"
                           and not (getattr(c.measure, "sparse", False) and c.values[i] != c.values[i])}
        for qid, values in self.defaults.items():  # qrels topics the run lacks (ir_measures)
            result.setdefault(qid, {}).update(values)
        return result

    def to_dataframe(self):
        """Long format: one row per (qid, measure); qid ``all`` holds the summary."""
        import pandas as pd

        rows = [(qid, m, v) for qid, vals in self.per_query().items() for m, v in vals.items()]
        rows += [("all", m, v) for m, v in self.aggregate().items()]
        return pd.DataFrame(rows, columns=["query_id", "measure", "value"])


def _py(v):
    return v if isinstance(v, str) else float(v)


def evaluate(qrels, run, measures=None, *, relevance_level: int = 1, max_docs: int | None = None,
             judged_only: bool = False, complete: bool = False, compat: str = "9.0.8",
             zscores=None, diversity: bool | None = None) -> Results:
    """Score a run against qrels.

    Options are trec_eval's: relevance_level (-l), max_docs (-M), judged_only (-J),
    complete (-c), compat ("9.0.8" default, or "10.0").

    ir_measures names follow ir_measures: a qrels topic missing from the run, or with no
    judgments (``{"b": {}}``), gets the measure's default (0) and counts in the mean; qrels and
    run with no topic in common give those defaults with a warning (trec_eval names, and the
    command line, refuse them as trec_eval does).

    diversity: the qrels are diversity qrels (``topic subtopic docno grade``, ndeval's and
    pyndeval's reading: the second column is the subtopic), for the intent-aware family
    (``alpha_nDCG@10``, ``ERR_IA@20``...). None (default): so when those are asked for; a
    qrels dict then has one subtopic per topic, as ir_measures gives pyndeval.
    """
    from .measures.names import split_measures

    options = Options(relevance_level=relevance_level,
                      max_docs=sys.maxsize if max_docs is None else max_docs,
                      judged_only=judged_only, complete=complete, compat=compat)
    trec_args, irm = split_measures(measures)
    if diversity or (diversity is None and _intent_aware(irm)):
        if isinstance(qrels, dict):
            qrels = [(q, "0", d, g) for q, docs in qrels.items() for d, g in docs.items()]
        return Results(score_diversity(qrels, run, measures, options), {})
    return split_and_score(qrels, run, trec_args, irm, options, zscores, irm_semantics=True)


def _intent_aware(irm) -> bool:
    from .measures.irm_native import native

    return any(native(m) is not None and native(m).qrels_kind == "diversity" for _, m in irm)


def split_and_score(qrels, run, trec_args, irm, options, zscores=None, *,
                    irm_semantics: bool = False) -> Results:
    """Evaluate trec_eval-style arguments, then ir_measures-style names (if any).
    irm_semantics: the API's ir_measures rules for topics (see :func:`evaluate`)."""
    if zscores is not None and not hasattr(zscores, "apply"):  # a path, as run_trec_eval takes
        from .scorer.zscores import read_zscores

        zscores = read_zscores(zscores)
    comments = options.v10
    q = load_qrels(qrels, comments=comments)
    # ir_measures names need the run itself; trec_eval's alone may stream it (score_trec)
    r = run if not irm and wants_stream(run, options) else load_run(run, comments=comments)
    names: dict = {}
    only_irm = bool(irm) and not trec_args
    ev = score_trec(q, r, trec_args if trec_args or not irm else ["runid"], options,
                    zscores=zscores, check=not (only_irm and irm_semantics))
    defaults: dict = {}
    if irm:
        from .measures.names import score_ir_measures

        empty = [t for t, d in qrels.items() if not d] \
            if irm_semantics and isinstance(qrels, dict) else []
        defaults = score_ir_measures(q, r, irm, options, ev, names, empty)
    return Results(ev, names, defaults)


# what the ndeval program prints, in its order (-R diversity without -m)
NDEVAL_MEASURES = [f"{m}@{k}" for m in ("ERR_IA", "nERR_IA", "alpha_DCG", "alpha_nDCG")
                   for k in (5, 10, 20)] + ["NRBP", "nNRBP", "AP_IA"] + \
    [f"{m}@{k}" for m in ("P_IA", "StRecall") for k in (5, 10, 20)]


def score_diversity(qrels, run, measures, options: Options):
    """``-R diversity``: ndeval's intent-aware measures, named as ir_measures names them
    (``alpha_nDCG@10``, ``ERR_IA@20``, ``nNRBP``...), on diversity qrels (topic subtopic docno
    grade). The topics printed are trec_eval's (in the run and the qrels); the summary is
    ir_measures' mean over the qrels topics. Without measures: ndeval's own 21 columns."""
    from .formats.diversity import load_diversity_qrels, topic_qrels
    from .measures.irm_native import native
    from .measures.names import score_ir_measures, split_measures

    measures = [measures] if isinstance(measures, str) else list(measures or [])
    trec, irm = split_measures(measures or NDEVAL_MEASURES)
    other = trec + [name for name, m in irm
                    if native(m) is None or native(m).qrels_kind != "diversity"]
    if other:
        raise UsageError("-R diversity computes the intent-aware measures (alpha_nDCG@k, "
                         "alpha_DCG@k, ERR_IA@k, nERR_IA@k, NRBP, nNRBP, P_IA@k, AP_IA, "
                         f"StRecall@k), not {other[0]!r}")
    div = load_diversity_qrels(qrels)
    r = load_run(run, comments=options.v10)
    ev = score_trec(topic_qrels(div), r, ["runid"], options)
    score_ir_measures(div, r, irm, options, ev, {})
    ev.columns = [c for c in ev.columns if c.name != "runid"]
    return ev
