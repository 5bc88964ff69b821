"""Evaluation options, named after trec_eval's command-line flags."""

from __future__ import annotations

import sys
from dataclasses import dataclass

from trecqr.errors import UsageError

COMPAT_VERSIONS = ("9.0.8", "10.0")


@dataclass(frozen=True)
class Options:
    """What trec_eval's EPI holds: the switches that change how a run is scored.

    relevance_level (-l): minimum grade counted relevant (ndcg-family gains ignore it).
    max_docs (-M): documents kept per topic, after the tie-broken sort.
    judged_only (-J): drop unjudged documents from the ranking, after -M.
    complete (-c): average over every qrels topic; topics missing from the run score 0.
    compat: "9.0.8" (pytrec_eval's engine, the default) or "10.0".
    num_docs_in_coll (-N): collection size, read only by utility's fourth coefficient.
    """

    relevance_level: int = 1
    max_docs: int = sys.maxsize
    judged_only: bool = False
    complete: bool = False
    compat: str = "9.0.8"
    num_docs_in_coll: int = 0

    def __post_init__(self):
        if self.compat not in COMPAT_VERSIONS:
            raise UsageError(f"--compat must be one of {', '.join(COMPAT_VERSIONS)}, "
                             f"not {self.compat!r}")
        if self.max_docs < 0:
            raise UsageError(f"-M must not be negative (got {self.max_docs})")
        if self.max_docs > sys.maxsize:  # trec_eval's atol saturates at LONG_MAX: no cut
            object.__setattr__(self, "max_docs", sys.maxsize)

    @property
    def v10(self) -> bool:
        return self.compat == "10.0"

    @property
    def float32_scores(self) -> bool:
        """trec_eval 9.0.8 keeps scores in a C float: near-ties below float32 precision tie."""
        return self.compat == "9.0.8"
