"""``Accuracy(cutoff=..., rel=...)`` as ir_measures' ``accuracy`` provider (0.4.3) computes it:
the share of (relevant, non-relevant) pairs of retrieved documents in the right order.

The provider's rules, reproduced here:

* **ranking**: each topic's rows (all kept) by score descending, ties in input order;
  the first ``cutoff`` of them (all without a cutoff, or with cutoff 0);
* a document is relevant when its grade (the last qrels line; 0 if unjudged) is >= ``rel``;
* value = ``1 - sum_r nonrel_above(r) / (nonrel * rel)`` over the retrieved relevant r;
* **topics**: a value only for run topics with qrels lines and at least one relevant document
  retrieved. The provider overrides ``iter_calc``, so no default fills the others in: they
  are *absent* (NaN here) and the mean is over the topics that have a value.

Where every retrieved document (within the cutoff) is relevant the provider divides by zero
(ZeroDivisionError, no result at all); trecqr leaves that topic out (NaN) instead.
"""

from __future__ import annotations

import numpy as np
from ir_measures.providers.base import NOT_PROVIDED

from trecqr.errors import UsageError
from trecqr.measures.base import irm_native
from trecqr.rankings.irm import lookup, ranking


# NaN = no value from the provider (it overrides iter_calc: no default); mean over the rest
@irm_native("Accuracy", provider="accuracy", defaults=False)
def accuracy(run, qrels, topics: list, measure) -> np.ndarray:
    """Per-topic Accuracy, NaN where the provider reports nothing (the ``@irm_native`` signature;
    aggregate with ``nanmean``, as the provider's mean covers reported topics only)."""
    import ir_measures
    measure.validate_params()
    if not ir_measures.accuracy.supports(measure):  # pragma: no cover - every Accuracy is
        raise UsageError(f"ir_measures measure {measure} is not supported by its provider "
                         "accuracy")
    cutoff = 0 if measure["cutoff"] is NOT_PROVIDED else int(measure["cutoff"])
    rel = measure["rel"]
    n = len(topics)
    rows, topic, starts = ranking(run, topics, "input")
    rank = np.arange(len(rows)) - starts[topic]
    if cutoff:  # `cutoff or len(documents)`: a negative cutoff keeps nothing, as zip(range())
        keep = rank < cutoff
        rows, topic = rows[keep], topic[keep]
    where = lookup(run, rows, qrels)
    grade = np.asarray(qrels.grade, dtype=np.int64)
    relevant = np.where(where >= 0, grade[np.maximum(where, 0)], 0) >= rel
    nonrel = ~relevant
    # non-relevant documents above each row: cumulative count within the topic
    cum = np.cumsum(nonrel)
    tstarts = np.searchsorted(topic, np.arange(n + 1))
    before = cum - nonrel - np.concatenate([[0], cum])[tstarts[topic]]
    pairs_ok = np.bincount(topic[relevant], weights=before[relevant], minlength=n)
    n_rel = np.bincount(topic[relevant], minlength=n)
    n_nonrel = np.bincount(topic[nonrel], minlength=n)
    out = np.full(n, np.nan)
    ok = (n_rel > 0) & (n_nonrel > 0)
    out[ok] = 1. - pairs_ok[ok] / (n_nonrel[ok].astype(np.float64) * n_rel[ok])
    return out
