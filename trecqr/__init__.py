"""trecqr: a trec_eval-exact, columnar scorer for TREC runs and qrels.

Python API::

    import trecqr
    res = trecqr.evaluate("qrels.txt", "run.txt", ["map", "ndcg_cut.3", "recip_rank"])
    res.aggregate()     # {"map": ..., "ndcg_cut_3": ..., "recip_rank": ...}
    res.per_query()     # {qid: {measure: value}}

Names are imported on first use (PEP 562), so that the command line can start reading a run
file before numpy and pyarrow are loaded.
"""

from __future__ import annotations

import importlib

from trecqr.version import __version__

_EXPORTS = {
    "evaluate": ".api.evaluation", "Results": ".api.evaluation",
    "load_qrels": ".api.evaluation", "load_run": ".api.evaluation",
    "evaluate_many": ".api.many",
    "RelevanceEvaluator": ".api.pytrec", "compute_aggregated_measure": ".api.pytrec",
    "parse_qrel": ".api.pytrec", "parse_run": ".api.pytrec", "supported_measures": ".api.pytrec",
    "supported_nicknames": ".api.pytrec",
    "InputError": ".errors", "TrecqrError": ".errors", "UsageError": ".errors",
    "Qrels": ".formats", "Run": ".formats", "read_qrels": ".formats", "read_run": ".formats",
    "write_qrels": ".formats", "write_run": ".formats",
    "compare": ".report.compare",
    "agree_labels": ".report.agree", "agree_rankings": ".report.agree",
    "agree_repro": ".report.agree",
    "bounds": ".report.bounds",
    "register_ir_measures": ".api.irm_provider",
    "fuse": ".fusion.entry", "optimize_fusion": ".fusion.optimize",
    "cqr": ".workflows.cqr",
}

__all__ = list(_EXPORTS)


def __getattr__(name: str):
    if name not in _EXPORTS:
        raise AttributeError(f"module 'trecqr' has no attribute {name!r}")
    value = getattr(importlib.import_module(_EXPORTS[name], __name__), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_EXPORTS))
