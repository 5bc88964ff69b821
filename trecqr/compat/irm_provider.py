"""trecqr as an ir_measures provider, first in ir_measures' default pipeline.

``trecqr.register_ir_measures()`` registers the provider (``ir_measures.providers.registry
["trecqr"]``) and puts it first in ``ir_measures.DefaultPipeline``, so that
``ir_measures.calc_aggregate`` / ``iter_calc`` / ``evaluator`` and PyTerrier's
``pt.Experiment`` (which evaluates through ``ir_measures``) compute with trecqr every measure
trecqr computes natively; ir_measures' other providers keep the rest.

The measures claimed are those trecqr scores with ir_measures' semantics (see
:mod:`trecqr.measures.names`): the pytrec_eval, judged and msmarco providers' measures and the
native rows of :mod:`trecqr.measures.irm_native` (cwl_eval, gdeval, compat, accuracy), except the
intent-aware family, whose qrels need subtopics (``trecqr.evaluate(..., diversity=True)``
computes those). Whether trecqr takes a measure's parameters is checked once per measure, on a
one-topic example, so the provider never claims a measure it would then refuse.

ir_measures' inputs (dicts, DataFrames, iterables of namedtuples) go through trecqr's input
layer (:mod:`trecqr.formats.objects`) as they are, not rebuilt into dicts.
"""

from __future__ import annotations

import warnings

import ir_measures
import pyarrow.compute as pc
from ir_measures.providers import Evaluator, Provider
from ir_measures.util import Metric

from ..api import evaluate
from ..errors import InputError, TrecqrError
from ..formats.objects import load_qrels_any, load_run_any
from ..measures.irm_native import native

_FAMILIES = ("pytrec_eval", "judged", "msmarco")
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
        return TrecqrEvaluator(measures, qrels, _providers_without_trecqr(measures) > 1)


def _providers_without_trecqr(measures) -> int:
    """How many providers ir_measures' own pipeline would split these measures among. With
    more than one, its FallbackEvaluator gives every measure a DEFAULT for the topics left
    without a value, Accuracy included; with one, Accuracy's topics without a value stay so."""
    left, used = set(measures), 0
    for provider in ir_measures.DefaultPipeline.providers:
        if provider.NAME == TrecqrProvider.NAME or not left:
            continue
        mine = {m for m in left if provider.supports(m)}
        if mine and provider.is_available():
            left -= mine
            used += 1
    return used


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

    def __init__(self, measures, qrels, all_defaults: bool = False):
        empty = [q for q, docs in qrels.items() if not docs] if isinstance(qrels, dict) else []
        judged = {q: d for q, d in qrels.items() if d} if empty else qrels
        self._qrels = _loaded(load_qrels_any, judged)
        topics = set(pc.unique(self._qrels.qid).to_pylist()) if self._qrels is not None \
            else set()
        super().__init__(measures, topics | set(empty))
        self._by_name = {str(m): m for m in measures}
        self._all_defaults = all_defaults

    def iter_calc(self, run):
        """The run's topics in its own order (ir_measures' providers add them so, and its
        means are sums in that order), then the DEFAULT of every other qrels topic, except
        for the measures whose provider yields none (Accuracy) when it alone would have
        computed them (see _providers_without_trecqr)."""
        expected = {(m, q) for m in self.measures if self._all_defaults or _has_default(m)
                    for q in self.qrel_qids}
        for metric in self._iter_calc(run):
            expected.discard((metric.measure, metric.query_id))
            yield metric
        for measure, query_id in sorted(expected, key=lambda x: (str(x[0]), x[1])):
            yield Metric(query_id=query_id, measure=measure, value=measure.DEFAULT)

    def _iter_calc(self, run):
        r = None if self._qrels is None else _loaded(load_run_any, run)
        if r is None:
            return
        with warnings.catch_warnings():  # ir_measures gives the defaults without a warning
            warnings.simplefilter("ignore")
            per_query = evaluate(self._qrels, r, list(self.measures)).per_query()
        for qid in pc.unique(r.qid).to_pylist():
            for name, value in per_query.get(qid, {}).items():
                yield Metric(query_id=qid, measure=self._by_name[name], value=value)


def _has_default(measure) -> bool:
    row = native(measure)
    return row is None or row.defaults


def _loaded(load, obj):
    """Columns of a qrels or run, or None when it has no row (ir_measures then yields only
    the defaults); any other input error is raised."""
    if isinstance(obj, dict) and not any(obj.values()) or \
            hasattr(obj, "__len__") and not isinstance(obj, str) and len(obj) == 0:
        return None
    try:
        return load(obj)
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
