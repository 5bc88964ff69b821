"""One run of ``trecqr eval``: trec_eval's pipeline (:mod:`trecqr.api.invocation`), which reads
the measure names once (trec_eval's and ir_measures') into one plan, and its rendering for the
worker processes of several runs; the command line only parses options and prints.
"""

from __future__ import annotations

from trecqr.api.invocation import run_trec_eval
from trecqr.report import outputs


def evaluate_one(qrels, run, measures, options, rel_format, zscores):
    """The Evaluation ``trecqr eval`` prints for one run (qrels: a path or a parsed file)."""
    return run_trec_eval(qrels, run, list(measures), options, rel_format=rel_format,
                         zscores=zscores)


def evaluate_rendered(qrels, run, spec, out):
    """One of several runs, in a worker: (its output text, its coverage line)."""
    fmt, query, summary, places = out
    ev = evaluate_one(qrels, run, *spec)
    text = outputs.render(ev, fmt, query=query, summary=summary, places=places)
    return text, outputs.coverage_line(ev)


def bounds_rendered(qrels, run, spec, out):
    """evaluate_rendered with --bounds: each measure, its upper bound and unjudged share."""
    from trecqr.report import bounds  # here: 10 ms of every eval's start-up, for --bounds only

    fmt, query, summary, places = out
    ev, grade, added = bounds.bounds_evaluation(lambda q, r: evaluate_one(q, r, *spec), qrels,
                                                run, spec[1])
    return (outputs.render(ev, fmt, query=query, summary=summary, places=places),
            outputs.coverage_line(ev) + bounds.note(grade, added))
