"""trecqr: a trec_eval-exact, columnar scorer for TREC runs and qrels.

Python API::

    import trecqr
    res = trecqr.evaluate("qrels.txt", "run.txt", ["map", "ndcg_cut.3", "recip_rank"])
    res.aggregate()     # {"map": ..., "ndcg_cut_3": ..., "recip_rank": ...}
    res.per_query()     # {qid: {measure: value}}
"""

from .api import Results, evaluate, load_qrels, load_run
from .compat import (RelevanceEvaluator, compute_aggregated_measure, parse_qrel, parse_run,
                     supported_measures)
from .errors import InputError, TrecqrError, UsageError
from .formats import Qrels, Run, read_qrels, read_run, write_qrels, write_run

__version__ = "0.1.0"

__all__ = ["evaluate", "Results", "load_qrels", "load_run", "Qrels", "Run", "read_qrels",
           "read_run", "write_qrels", "write_run", "InputError", "TrecqrError", "UsageError",
           "RelevanceEvaluator", "parse_run", "parse_qrel", "supported_measures",
           "compute_aggregated_measure"]
