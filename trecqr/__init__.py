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

from .version import __version__

_EXPORTS = {
    "evaluate": ".api", "Results": ".api", "load_qrels": ".api", "load_run": ".api",
    "evaluate_many": ".api_many",
    "RelevanceEvaluator": ".compat", "compute_aggregated_measure": ".compat",
    "parse_qrel": ".compat", "parse_run": ".compat", "supported_measures": ".compat",
    "supported_nicknames": ".compat",
    "InputError": ".errors", "TrecqrError": ".errors", "UsageError": ".errors",
    "Qrels": ".formats", "Run": ".formats", "read_qrels": ".formats", "read_run": ".formats",
    "write_qrels": ".formats", "write_run": ".formats",
    "compare": ".report.compare",
    "register_ir_measures": ".compat.irm_provider",
    "fuse": ".fusion.entry", "optimize_fusion": ".fusion.optimize",
    "cqr": ".retrieval.cqr",
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
