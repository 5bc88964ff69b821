"""Which engine scores ``trecqr eval``: ir_measures names (RR@3, nDCG@10, R(rel=2)@100) go to
the API's split scorer, ``--engine pytrec_eval`` to pytrec_eval itself (the cross-check), and
everything else to trec_eval's pipeline (:mod:`trecqr.api.invocation`).

It sits beside :mod:`trecqr.api.pytrec` (rank 6 of tests/test_layers.py), since the pytrec_eval
engine is there; the command line only parses options and prints.
"""

from __future__ import annotations

from trecqr.api.evaluation import split_and_score
from trecqr.api.invocation import check_rel_format, read_z, run_trec_eval
from trecqr.api.pytrec_engine import score_with_pytrec_eval
from trecqr.errors import UsageError
from trecqr.engine.names import split_measures
from trecqr.report import bounds, outputs


def evaluate_one(qrels, run, measures, options, rel_format, zscores, engine):
    """The Evaluation ``trecqr eval`` prints for one run (qrels: a path or a parsed file)."""
    trec_args, irm = split_measures(list(measures))  # as the API reads them: AP, RR@3
    if irm and rel_format != "diversity":  # ir_measures names (RR@3, nDCG@10): API path
        if rel_format != "qrels" or engine != "native":
            raise UsageError(f"ir_measures names ({irm[0][0]}) need -R qrels and the native "
                             "engine")
        ev = split_and_score(qrels, run, trec_args, irm, options, zscores).evaluation
        if not trec_args:  # the API scores "runid" as a placeholder: not asked for here
            ev.columns = [c for c in ev.columns if c.name != "runid"]
        return ev
    if engine == "pytrec_eval":  # the cross-check: pytrec_eval computes the values
        check_rel_format(rel_format)
        if rel_format != "qrels":
            raise UsageError(f"--engine pytrec_eval reads only -R qrels, not {rel_format}")
        return score_with_pytrec_eval(qrels, run, list(measures), options,
                                      zscores=read_z(zscores))
    return run_trec_eval(qrels, run, list(measures), options, rel_format=rel_format,
                         zscores=zscores)


def evaluate_rendered(qrels, run, spec, out):
    """One of several runs, in a worker: (its output text, its coverage line)."""
    fmt, query, summary, places = out
    ev = evaluate_one(qrels, run, *spec)
    return outputs.render(ev, fmt, query=query, summary=summary, places=places), outputs.coverage_line(ev)


def bounds_rendered(qrels, run, spec, out):
    """evaluate_rendered with --bounds: each measure, its upper bound and unjudged share."""
    fmt, query, summary, places = out
    ev, grade, added = bounds.bounds_evaluation(lambda q, r: evaluate_one(q, r, *spec), qrels,
                                                run, spec[1])
    return (outputs.render(ev, fmt, query=query, summary=summary, places=places),
            outputs.coverage_line(ev) + bounds.note(grade, added))
