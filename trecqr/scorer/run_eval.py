"""One trec_eval invocation: read inputs in the chosen relevance format, score, z-score."""

from __future__ import annotations

from ..errors import UsageError
from .options import Options


def run_trec_eval(qrels, run, measures, options: Options, *, rel_format: str = "qrels",
                  zscores=None, engine: str = "native"):
    """Return the Evaluation that ``trec_eval [options] -m ... QRELS RUN`` would print."""
    from ..api import score_trec

    if rel_format != "qrels":
        raise UsageError(f"unknown relevance format {rel_format!r} for -R")
    z = None
    if zscores is not None:
        from .zscores import read_zscores

        z = read_zscores(zscores)
    if engine == "pytrec_eval":
        from ..compat.pytrec_engine import score_with_pytrec_eval

        return score_with_pytrec_eval(qrels, run, measures, options)
    return score_trec(qrels, run, measures, options, zscores=z)
