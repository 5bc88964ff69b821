"""Compatibility front-ends: a pytrec_eval drop-in, and pytrec_eval as an alternative engine."""

from .pytrec import (RelevanceEvaluator, __version__, compute_aggregated_measure, parse_qrel,
                     parse_run, supported_measures, supported_nicknames)

__all__ = ["__version__", "RelevanceEvaluator", "compute_aggregated_measure", "parse_qrel", "parse_run",
           "supported_measures", "supported_nicknames"]
