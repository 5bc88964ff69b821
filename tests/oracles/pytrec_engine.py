"""The pytrec_eval oracle of the tests: trec_eval's output with per-topic values from
pytrec_eval itself (it was ``trecqr eval --engine pytrec_eval``; only the tests use it).

Inputs are read and checked by trecqr, handed to pytrec_eval as dicts, and its per-topic
values are summarised and printed by trecqr exactly as native values are (-c denominators,
gm_* means, -Z z-scores), so for every measure pytrec_eval supports the text output must equal
trecqr's own: :func:`pytrec_eval_output` takes ``trecqr eval``'s options.

Options: -l, -J, -c, -q, -n, -Z are honoured. -M is honoured by truncating each topic's
ranking in trec_eval's order (score as a C float descending, docno descending) before handing
it over: that is exactly what trec_eval does first. Not available, because pytrec_eval is
trec_eval 9.0.8 with fixed settings: ``--compat 10.0``, ``-l`` below 1 (pytrec_eval rejects
it), ``-M 0`` (pytrec_eval crashes when the first topic has no documents), and measures outside
``pytrec_eval.supported_measures`` (prefs, qrels_jg, yaap, ...).
``relstring`` has no numeric value in pytrec_eval: its per-topic strings are trecqr's.
"""

from __future__ import annotations

import sys

import numpy as np

from trecqr.api.evaluation import load_qrels, load_run
from trecqr.api.invocation import read_z
from trecqr.errors import UsageError
from trecqr.formats import Run
from trecqr.formats.order import trec_order
from trecqr.engine.pytrec_values import (COMPAT, CUTOFF_MEASURES, ZERO_VALUED, normalize_measures,
                                      supported_measures)
from trecqr.engine.selection import select
from trecqr.engine.evaluator import EvalContext, compute_values, finish_evaluation
from trecqr.rankings.options import Options
from trecqr.rankings.build import build_rankings
from trecqr.report import outputs

_NATIVE = frozenset({"relstring"})  # shown by trecqr: pytrec_eval returns no value for it


class _FromPytrecEval:
    """A measure whose per-topic values were computed by pytrec_eval (delegates the rest)."""

    def __init__(self, measure, values):
        self._measure = measure
        self._values = values

    def __getattr__(self, attr):
        return getattr(self._measure, attr)

    def compute_all(self, ctx, params):
        return self._values


def _check_options(options: Options, selection) -> None:
    if options.compat != COMPAT:
        raise UsageError(f"the pytrec_eval oracle is trec_eval {COMPAT}: "
                         f"--compat {options.compat} is not available")
    if options.max_docs == 0:
        raise UsageError("the pytrec_eval oracle: -M 0 leaves every topic without documents, "
                         "which pytrec_eval cannot score (it reads unallocated memory)")
    if options.relevance_level < 1:
        raise UsageError("the pytrec_eval oracle: -l must be at least 1 "
                         f"(pytrec_eval rejects relevance level {options.relevance_level})")
    if options.relevance_level >= 2 ** 31:
        raise UsageError("the pytrec_eval oracle: -l must be below 2**31 (pytrec_eval reads it "
                         f"into a C int), not {options.relevance_level}")
    missing = [m.name for m, _ in selection if m.name not in supported_measures]
    if missing:
        raise UsageError("the pytrec_eval oracle does not support measure(s) "
                         f"{', '.join(missing)}")
    for measure, params in selection:  # what pytrec_eval would only print, once per topic
        check = getattr(measure, "check", None)
        if check is not None:
            check(params)


def _pytrec_argument(measure, params) -> str:
    """The measure string for pytrec_eval, refused when pytrec_eval would alter the parameters."""
    if params.printable is None:
        return measure.name
    arg = f"{measure.name}.{params.printable}"
    try:
        same = normalize_measures([arg]) == {arg}
    except ValueError:
        same = False
    if not same:
        raise UsageError(f"the pytrec_eval oracle cannot pass parameters {params.printable!r} of "
                         f"{measure.name} unchanged (its measure syntax allows only "
                         "non-negative numbers, and sorts and merges them)")
    return arg


def _truncate(run, max_docs: int):
    """Keep the first max_docs documents of every topic, in trec_eval 9.0.8's order."""
    order, rank = trec_order(run, float32=True)[:2]
    keep = np.sort(order[rank <= max_docs])
    return Run(run.qid.take(keep), run.docno.take(keep), run.score[keep], run.runid,
               run.source)


def score_with_pytrec_eval(qrels, run, measures, options: Options, zscores=None):
    """The Evaluation trec_eval would print, with per-topic values computed by pytrec_eval."""
    import pytrec_eval

    selection = select(list(measures or []), options.compat)
    _check_options(options, selection)
    q = load_qrels(qrels, comments=options.v10)
    r = load_run(run, comments=options.v10)
    rankings = build_rankings(r, q, options)  # checks duplicates; topics, -c counts
    rankings.check_coverage(r.source, q.source)
    if options.max_docs < len(r):
        r = _truncate(r, options.max_docs)

    args = [_pytrec_argument(m, p) for m, p in selection if m.name not in _NATIVE]
    qrels_dict: dict = {}
    for qid, doc, grade in zip(q.qid.to_pylist(), q.docno.to_pylist(), q.grade.tolist()):
        qrels_dict.setdefault(qid, {})[doc] = grade
    run_dict: dict = {qid: {} for qid in rankings.qids}
    for qid, doc, score in zip(r.qid.to_pylist(), r.docno.to_pylist(), r.score.tolist()):
        if qid in run_dict:
            run_dict[qid][doc] = score
    result = {}
    if args:
        evaluator = pytrec_eval.RelevanceEvaluator(
            qrels_dict, set(args), relevance_level=options.relevance_level,
            judged_docs_only_flag=int(options.judged_only))
        result = evaluator.evaluate(run_dict)

    ctx = EvalContext(rankings, options, r, q)
    proxied = []
    for measure, params in selection:
        if measure.name in _NATIVE:
            proxied.append((measure, params))
            continue
        names = measure.value_names(params)
        if measure.name in CUTOFF_MEASURES:
            keys = names
        elif len(names) == 1:
            keys = [measure.name]
        else:  # pragma: no cover - no such 9.0.8 measure
            raise UsageError(f"the pytrec_eval oracle: {measure.name} has several values")
        values = np.zeros((len(rankings.qids), len(keys)))
        if measure.name not in ZERO_VALUED:
            for i, qid in enumerate(rankings.qids):
                per_topic = result[qid]
                gone = [k for k in keys if k not in per_topic]
                if gone:  # a pytrec_eval that names a value otherwise than trec_eval does
                    raise UsageError(f"the pytrec_eval oracle gives no value for {gone[0]}")
                values[i] = [per_topic[k] for k in keys]
        proxied.append((_FromPytrecEval(measure, values), params))
    per_measure = [(m, p, compute_values(m, p, ctx)) for m, p in proxied]
    return finish_evaluation(rankings, options, per_measure, zscores)


def pytrec_eval_output(qrels, run, args) -> str:
    """What ``trecqr eval ARGS QRELS RUN`` prints, values from pytrec_eval: ARGS among
    -q, -c, -n, -J, -l N, -M N, -m NAME, -Z FILE."""
    measures, flags, values = [], set(), {}
    it = iter(args)
    for arg in it:
        if arg in ("-q", "-c", "-n", "-J"):
            flags.add(arg)
        elif arg in ("-l", "-M", "-m", "-Z"):
            value = next(it)
            if arg == "-m":
                measures.append(str(value))
            else:
                values[arg] = value
        else:
            raise ValueError(f"the oracle does not take {arg!r}")
    options = Options(relevance_level=int(values.get("-l", 1)),
                      max_docs=int(values.get("-M", sys.maxsize)), judged_only="-J" in flags,
                      complete="-c" in flags)
    ev = score_with_pytrec_eval(qrels, run, measures, options, read_z(values.get("-Z")))
    return outputs.render(ev, "trec", query="-q" in flags, summary="-n" not in flags)
