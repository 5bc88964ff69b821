"""The Python API: ``trecqr.evaluate(qrels, run, measures) -> Results``.

qrels and run may be paths (``.gz`` and ``-`` accepted), pytrec_eval-style dicts
(``{qid: {docno: grade|score}}``), pandas DataFrames with ir_measures' columns, or already
parsed :class:`~trecqr.formats.Run` / :class:`~trecqr.formats.Qrels`. Measures are trec_eval
names (``map``, ``P.5,10``, ``ndcg_cut.3``, nicknames such as ``all_trec``) or ir_measures names
(``nDCG@3``, ``RR@3``, ``R@100``).
"""

from __future__ import annotations

import sys
from functools import lru_cache

import numpy as np

from trecqr.runtime.deferred import pa
from trecqr.api.views import ResultsViews
from trecqr.formats import Qrels, Run
from trecqr.formats.diversity import (DiversityQrels, detect_diversity, load_diversity_qrels,
                                topic_qrels)
from trecqr.formats import inputs
from trecqr.formats.inputs import Input
from trecqr.formats.objects import qrels_columns, run_columns
from trecqr.engine.execute import Outcome, execute
from trecqr.engine.rankings import strict_dict_qrels
from trecqr.engine.plan import Plan, make_plan
from trecqr.engine.population import populations
from trecqr.engine.evaluator import Evaluation
from trecqr.rankings.options import Options
from trecqr.engine.zscores import read_zscores

def load_run(run, *, comments: bool = True, judged=None, float32: bool | None = None) -> Run:
    """A Run from any input (paths, dicts, DataFrames, tables, rows...: formats.inputs).
    judged (the qrels' docnos) lets the file scanner match lines against the qrels."""
    inp = run if isinstance(run, Input) else inputs.decide(run, comments=comments)
    return run_columns(inp, comments=comments, judged=judged, float32=float32)


def load_qrels(qrels, *, comments: bool = True) -> Qrels:
    inp = qrels if isinstance(qrels, Input) else inputs.decide(qrels, comments=comments)
    return qrels_columns(inp, comments=comments)


def qrels_input(qrels: Input, options: Options):
    """(what the core reads the qrels from, qrels topics without judgments): a plain
    pytrec_eval qrels dict as DictQrels (the C ranker reads it as it is), else columns."""
    if qrels.kind == "dict":
        strict = strict_dict_qrels(qrels.obj)
        if strict is not None:
            return strict
    q = qrels_columns(qrels, comments=options.v10)  # a dict: qrels_from_dict
    return q, list(q.empty_topics)  # a dict's topics without judgments


def run_input(run: Input, options: Options) -> Input:
    """What the core reads a run from: a dict or a TREC text path as given (the core ranks
    dicts in one pass, and reads or streams files), anything else as columns."""
    if run.kind in ("dict", "trec"):
        return run
    return Input("columns", run_columns(run, comments=options.v10))  # a Qrels is refused


def decided(obj, options: Options) -> Input:
    """``obj``'s Input: decided here unless a door decided it already (evaluate_many's
    qrels, the provider's)."""
    return obj if isinstance(obj, Input) else inputs.decide(obj, comments=options.v10)


def run_plan(plan: Plan, qrels, run, *, zscores=None, check: bool = True) -> Outcome:
    """The core on the caller's objects (paths, dicts, DataFrames, parsed files). A
    diversity plan reads diversity qrels; a plan that mixes intent-aware names with others
    reads both kinds from the same object."""
    if zscores is not None and not hasattr(zscores, "apply"):  # a path, as -Z takes
        zscores = read_zscores(zscores)
    if plan.diversity:  # the qrels are read first, so their errors come first
        div = load_diversity_qrels(_as_records(getattr(qrels, "obj", qrels)))
        return execute(plan, topic_qrels(div), run_input(decided(run, plan.options),
                                                         plan.options),
                       div=div, zscores=zscores, check=check)
    qi = decided(qrels, plan.options)
    div = detect_diversity(qi.obj) if plan.intent_aware else None
    if div is not None:
        q, empty = topic_qrels(div), []
    else:
        q, empty = qrels_input(qi, plan.options)
        if plan.intent_aware:  # standard qrels: one subtopic per topic, as ir_measures does
            div = _one_subtopic(q if isinstance(q, Qrels) else q.columns())
    r = run_input(decided(run, plan.options), plan.options)
    return execute(plan, q, r, div=div, zscores=zscores, check=check, empty_topics=empty)


def _as_records(qrels):
    """A qrels dict as diversity records (one subtopic per topic); anything else as given."""
    if isinstance(qrels, dict):
        return [(q, "0", d, g) for q, docs in qrels.items() for d, g in docs.items()]
    return qrels


def _one_subtopic(q: Qrels) -> DiversityQrels:
    return DiversityQrels(q.qid, pa.array(np.full(len(q.grade), "0"), pa.string()), q.docno,
                          q.grade, q.source)


def score_trec(qrels, run, measures=None, options: Options | None = None, *,
               zscores=None, check: bool = True) -> Evaluation:
    """trec_eval's computation: inputs and ``-m`` style measure arguments (ir_measures names
    too, with their semantics, so every command built on this (compare, breakdown, plot,
    diff) takes the same vocabulary as eval). check=False leaves out trec_eval's refusal of
    inputs with no topic in common."""
    if isinstance(measures, str):
        measures = [measures]
    plan = make_plan(measures, options or Options())
    return run_plan(plan, qrels, run, zscores=zscores, check=check).evaluation


class Results(ResultsViews):
    """Per-topic and summary values of an evaluation, keyed by measure name.

    Made from the core's :class:`~trecqr.engine.execute.Outcome`. api/views: a short repr,
    ``_repr_html_``, ``to_dataframe(wide=...)``."""

    def __init__(self, outcome: Outcome):
        self.evaluation, self._populations = outcome.evaluation, None
        self.defaults = outcome.defaults  # ir_measures: {qid: {name: DEFAULT}}

    def __getstate__(self):  # populations are read again in another process
        return {**self.__dict__, "_populations": None}

    def aggregate(self) -> dict:
        """{measure name: summary value} over the evaluated topics (``all`` in trec_eval)."""
        out = {}
        for c in self.evaluation.columns:
            if c.measure.summary == "none":
                continue
            out[c.name] = float(c.summary)
        return out

    def populations(self) -> dict:
        """{measure name: :class:`~trecqr.engine.population.Population`}: the topics each
        summary value averages (``.topics``, ``.n``), by which rule (``.rule``: ``"trec_eval"``,
        ``"trec_eval -c"`` or ``"ir_measures"``), and which of them count without results
        (``.without_results``). Read from the per-topic values, on first use."""
        if self._populations is None:
            self._populations = populations(self.evaluation)
        return self._populations

    @property
    def n(self) -> dict:
        """{measure name: how many topics its summary value averages}."""
        return {name: p.n for name, p in self.populations().items()}

    def topics(self, measure: str) -> list:
        """The topics ``measure``'s summary value averages (each has a per_query() value)."""
        return list(self.populations()[measure].topics)

    def per_query(self) -> dict:
        """{qid: {measure name: value}}: for each measure, the topics its summary value
        averages (an ir_measures name: every qrels topic, a topic without results at the
        measure's default; a trec_eval name: the topics in both run and qrels), topics in
        trec_eval's (sorted) order."""
        cols = [c for c in self.evaluation.columns if c.measure.summary != "none"
                or c.measure.per_query]
        result = {}
        for i, qid in enumerate(self.evaluation.qids):
            result[qid] = {c.name: _py(c.values[i]) for c in cols
                           if c.measure.name != "runid"
                           and not (getattr(c.measure, "sparse", False)
                                    and c.values[i] != c.values[i])}
        if self.defaults:  # qrels topics the run lacks (ir_measures), in their sorted place
            for qid, values in self.defaults.items():
                result.setdefault(qid, {}).update(values)
            result = {qid: result[qid] for qid in sorted(result)}
        return result


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
    (``alpha_nDCG@10``, ``ERR_IA@20``...). None (default): so when only those are asked for
    (next to other names, the qrels are read both ways); a qrels dict then has one subtopic
    per topic, as ir_measures gives pyndeval.
    """
    options = _options(relevance_level, sys.maxsize if max_docs is None else max_docs,
                       judged_only, complete, compat)
    plan = make_plan(measures, options, irm_semantics=True, diversity=diversity)
    only_irm = bool(plan.irm) and not plan.trec
    return Results(run_plan(plan, qrels, run, zscores=zscores,
                            check=plan.diversity or not only_irm))


@lru_cache(maxsize=64)
def _options(relevance_level, max_docs, judged_only, complete, compat) -> Options:
    """evaluate's Options (immutable: made once per set of arguments, not once per call)."""
    return Options(relevance_level=relevance_level, max_docs=max_docs,
                   judged_only=judged_only, complete=complete, compat=compat)


# what the ndeval program prints, in its order (-R diversity without -m)
NDEVAL_MEASURES = [f"{m}@{k}" for m in ("ERR_IA", "nERR_IA", "alpha_DCG", "alpha_nDCG")
                   for k in (5, 10, 20)] + ["NRBP", "nNRBP", "AP_IA"] + \
    [f"{m}@{k}" for m in ("P_IA", "StRecall") for k in (5, 10, 20)]


def score_diversity(qrels, run, measures, options: Options):
    """``-R diversity``: ndeval's intent-aware measures, named as ir_measures names them
    (``alpha_nDCG@10``, ``ERR_IA@20``, ``nNRBP``...), on diversity qrels (topic subtopic docno
    grade). The topics printed are trec_eval's (in the run and the qrels); the summary is
    ir_measures' mean over the qrels topics. Without measures: ndeval's own 21 columns."""
    measures = [measures] if isinstance(measures, str) else list(measures or [])
    plan = make_plan(measures or NDEVAL_MEASURES, options, diversity=True)
    return run_plan(plan, qrels, run).evaluation
