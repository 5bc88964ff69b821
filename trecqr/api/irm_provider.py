"""trecqr as an ir_measures provider, first in ir_measures' default pipeline.

``trecqr.register_ir_measures()`` registers the provider (``ir_measures.providers.registry
["trecqr"]``) and puts it first in ``ir_measures.DefaultPipeline``, so that
``ir_measures.calc_aggregate`` / ``iter_calc`` / ``evaluator`` and PyTerrier's
``pt.Experiment`` (which evaluates through ``ir_measures``) compute with trecqr every measure
trecqr computes natively; ir_measures' other providers keep the rest.

The measures claimed are those trecqr scores with ir_measures' semantics (see
:mod:`trecqr.engine.names`): the pytrec_eval, judged and msmarco providers' measures and the
families declared in :mod:`trecqr.measures.irm_native` (cwl_eval, gdeval, compat, accuracy),
except the intent-aware family, whose qrels need subtopics (``trecqr.evaluate(..., diversity=True)``
computes those). Whether trecqr takes a measure's parameters is checked once per measure, on a
one-topic example, so the provider never claims a measure it would then refuse.

ir_measures' inputs (dicts, DataFrames, iterables of namedtuples) go through trecqr's input
layer (:func:`trecqr.formats.inputs.decide`, :mod:`trecqr.formats.objects`) as they are, not
rebuilt into dicts.
"""

from __future__ import annotations

import warnings

import ir_measures
from ir_measures.providers import Evaluator, Provider
from ir_measures.util import Metric

from trecqr.runtime.deferred import pc
from trecqr.api.evaluation import evaluate
from trecqr.errors import InputError, TrecqrError
from trecqr.formats import inputs
from trecqr.formats.arrays import key_ids
from trecqr.formats.inputs import Input
from trecqr.formats.objects import qrels_columns, run_columns
from trecqr.measures.irm_native import native
from trecqr.engine.plan import make_plan
from trecqr.engine.pytrec_values import value_keys

_FAMILIES = ("pytrec_eval", "judged", "msmarco")
# why the provider refuses qrels that judge a document twice, in ir_measures' terms
DUPLICATES = ("; ir_measures' own providers would each read a different judgment (pytrec_eval "
              "the last one, msmarco's RR@k any with rel or more), so one run could get "
              "RR@3 = 1.0 beside RR = 0.5. Keep one judgment per (query_id, doc_id) and "
              "evaluate again, e.g. qrels.drop_duplicates(['query_id', 'doc_id'], keep='last') "
              "on a DataFrame")
_PROBE_QRELS = {"q1": {"a": 2, "b": 0, "c": 1}}
_PROBE_RUN = {"q1": {"a": 0.5, "b": 0.9, "d": 0.1}}


class TrecqrProvider(Provider):
    """ir_measures provider computed by trecqr (see the module docstring)."""

    NAME = "trecqr"
    SUPPORTED_MEASURES: list = []  # supports() decides, from trecqr's own tables

    def __init__(self):
        super().__init__()
        self._supported: dict = {}

    def supports(self, measure) -> bool:
        key = repr(measure)
        if key not in self._supported:
            self._supported[key] = _claims(measure)
        return self._supported[key]

    def _evaluator(self, measures, qrels):
        measures = list(measures)
        return TrecqrEvaluator(measures, qrels, _blocks(measures))


def _own_split(measures) -> list:
    """[(provider name, its measures)]: how ir_measures' own pipeline (without trecqr) splits
    these measures among its providers, in pipeline order (None: measures none of them
    takes). Measures are sorted by name first: ir_measures hands a provider a set, whose
    order changes with PYTHONHASHSEED."""
    left, out = sorted(measures, key=str), []
    for provider in ir_measures.DefaultPipeline.providers:
        if provider.NAME == TrecqrProvider.NAME or not left:
            continue
        mine = [m for m in left if provider.supports(m)]
        if mine and provider.is_available():
            left = [m for m in left if m not in mine]
            out.append((provider.NAME, mine))
    if left:
        out.append((None, left))
    return out


def _blocks(measures) -> list:
    """[(provider name, measures in the order it yields them)]: the order of ir_measures' own
    rows. pytrec_eval yields each topic's values in its result's key order (trec_eval's
    measure table, which trecqr's plan keeps); the others, by name."""
    out = []
    for name, mine in _own_split(measures):
        if name == "pytrec_eval":
            plan = make_plan(mine)
            keys = [list(value_keys(g.selection)) for g in plan.groups]
            where = {str(n.caller): (n.group, keys[n.group].index(n.match))
                     for n in plan.irm}
            mine = sorted(mine, key=lambda m: where.get(str(m), (len(keys), 0)))
        out.append((name, mine))
    return out


def _claims(measure) -> bool:
    """Whether trecqr computes this ir_measures measure natively with these parameters."""
    registry = ir_measures.providers.registry
    try:
        measure.validate_params()
        row = native(measure)
        if not any(registry[name].supports(measure) for name in _FAMILIES):
            if row is None or row.qrels_kind != "qrels" or \
                    not registry[row.provider].supports(measure):
                return False
    except (AssertionError, KeyError, ValueError, TypeError):
        return False
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            evaluate(_PROBE_QRELS, _PROBE_RUN, [measure])
    except (TrecqrError, ValueError, TypeError):
        return False
    return True


class TrecqrEvaluator(Evaluator):
    """The qrels read once (through the input layer); each run scored by trecqr.evaluate."""

    def __init__(self, measures, qrels, blocks=None):
        self._qrels = _loaded(qrels_columns, qrels)
        if self._qrels is not None:  # a dict's topics without judgments ({"b": {}}) too
            topics = set(pc.unique(self._qrels.qid).to_pylist()) | set(self._qrels.empty_topics)
        else:  # no judgment at all: a dict's topics, if any, are all without judgments
            topics = set(key_ids((q for q, d in qrels.items() if isinstance(d, dict)),
                                 "<qrels dict>", "query id")) if isinstance(qrels, dict) else set()
        super().__init__(measures, topics)
        self._by_name = {str(m): m for m in measures}
        self._blocks = _blocks(self.measures) if blocks is None else blocks
        # how many providers ir_measures' own pipeline would split these measures among: with
        # more than one, its FallbackEvaluator gives every measure a DEFAULT for the topics
        # left without a value, Accuracy included; with one, Accuracy's topics stay without
        self._all_defaults = sum(1 for name, _ in self._blocks if name is not None) > 1
        # calc_aggregate's keys in the same order (ir_measures hands over a set)
        self.measures = [m for _, block in self._blocks for m in block]

    def iter_calc(self, run):
        """The rows in the order ir_measures' own pipeline gives them, whatever the hash
        seed: per provider it would use (pipeline order), its values (pytrec_eval: topic by
        topic in the run's order; msmarco: measure by measure), then that provider's DEFAULT
        for every other qrels topic; last, for the measures whose provider yields no default
        (Accuracy), a DEFAULT where several providers share the measures. Each measure's
        values come in the run's topic order, then its defaults: its mean is the same sum."""
        per_query: dict = {}  # {qid: {name: value}}, topics in the run's order
        for metric in self._iter_calc(run):
            per_query.setdefault(metric.query_id, {})[str(metric.measure)] = metric.value
        topics = list(per_query)
        expected = {(m, q) for m in self.measures for q in self.qrel_qids}
        for name, block in self._blocks:
            rows = self._msmarco_rows(block, per_query, topics) if name == "msmarco" else \
                ((q, m) for q in topics for m in block)
            for qid, measure in rows:
                value = per_query.get(qid, {}).get(str(measure))
                if value is not None:
                    expected.discard((measure, qid))
                    yield Metric(query_id=qid, measure=measure, value=value)
            yield from self._defaults(expected, [m for m in block if _has_default(m)])
        if self._all_defaults:
            yield from self._defaults(expected, self.measures)

    @staticmethod
    def _defaults(expected, measures):
        wanted = set(measures)
        mine = sorted(((m, q) for m, q in expected if m in wanted),
                      key=lambda x: (str(x[0]), x[1]))
        for measure, query_id in mine:
            expected.discard((measure, query_id))
            yield Metric(query_id=query_id, measure=measure, value=measure.DEFAULT)

    def _msmarco_rows(self, block, per_query, topics):
        """msmarco's order: measure by measure, the run's topics with a document of grade
        rel or more (the others get their DEFAULT after)."""
        if not topics:
            return
        for measure in block:
            grades = self._qrels.grade >= measure["rel"]
            rel_topics = set(pc.unique(self._qrels.qid.filter(grades)).to_pylist())
            for qid in topics:
                if qid in rel_topics:
                    yield qid, measure

    def _iter_calc(self, run):
        """The values of the run's topics, in its order (a dict's empty rankings included)."""
        r = None if self._qrels is None else _loaded(run_columns, run)
        if r is None:
            return
        with warnings.catch_warnings():  # ir_measures gives the defaults without a warning
            warnings.simplefilter("ignore")
            try:
                per_query = evaluate(Input("columns", self._qrels), Input("columns", r),
                                     list(self.measures)).per_query()
            except InputError as exc:
                if "duplicate judgment for topic" in exc.message:  # after a DataFrame's "row J: "
                    raise InputError(exc.source, exc.line, exc.message + DUPLICATES) from None
                raise
        topics = key_ids(run, r.source, "query id") if isinstance(run, dict) \
            else pc.unique(r.qid).to_pylist()  # a dict's keys as its reader names them
        for qid in topics:
            for name, value in per_query.get(qid, {}).items():
                yield Metric(query_id=qid, measure=self._by_name[name], value=value)


def _has_default(measure) -> bool:
    row = native(measure)
    return row is None or row.defaults


def _loaded(columns, obj):
    """Columns of a qrels or run (``columns``: :func:`~trecqr.formats.objects.run_columns` or
    :func:`~trecqr.formats.objects.qrels_columns`), or None when it has no row (ir_measures
    then yields only the defaults); any other input error is raised."""
    if isinstance(obj, dict) and not any(obj.values()) or \
            hasattr(obj, "__len__") and not isinstance(obj, str) and len(obj) == 0:
        return None
    try:
        return columns(inputs.decide(obj))
    except InputError as exc:
        if exc.message == "no rows":
            return None
        raise


def register_ir_measures():
    """Register trecqr's ir_measures provider and put it first in ir_measures' default
    pipeline (``ir_measures.calc_aggregate``, ``iter_calc``, PyTerrier's ``pt.Experiment``).
    Calling it again changes nothing. Returns the provider."""
    registry = ir_measures.providers.registry
    provider = registry.get(TrecqrProvider.NAME)
    if provider is None:
        provider = ir_measures.providers.register(TrecqrProvider())
    pipeline = ir_measures.DefaultPipeline.providers
    if provider in pipeline:
        pipeline.remove(provider)
    pipeline.insert(0, provider)
    return provider
