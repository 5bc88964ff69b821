"""Which engine scores ``trecqr eval``: ir_measures names (RR@3, nDCG@10, R(rel=2)@100) go to
the API's split scorer, ``--engine pytrec_eval`` to pytrec_eval itself (the cross-check), and
everything else to trec_eval's pipeline (:mod:`trecqr.api.invocation`).

It sits beside :mod:`trecqr.api.pytrec` (rank 6 of tests/test_layers.py), since the pytrec_eval
engine is there; the command line only parses options and prints.
"""

from __future__ import annotations

from trecqr.api.invocation import check_rel_format, read_z, run_trec_eval
from trecqr.api.pytrec_engine import score_with_pytrec_eval
from trecqr.errors import UsageError
from trecqr.report import outputs


def evaluate_one(qrels, run, measures, options, rel_format, zscores, engine):
    """The Evaluation ``trecqr eval`` prints for one run (qrels: a path or a parsed file)."""
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
