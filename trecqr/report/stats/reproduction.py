"""A run against its reproduction: repro_eval's measures (Breuer et al., "How to Measure the
Reproducibility of System-oriented IR Experiments", SIGIR 2020; ``repro-eval`` 0.5 on PyPI).

Two levels, as in the paper:

* **document order** (the rankings themselves): :func:`ktu` (Kendall's tau Union) and
  :func:`rbo` (rank-biased overlap), per topic and their mean over topics; the rankings come
  from :func:`rankings_of` (trec_eval's order: score descending, ties by docno descending);
* **effectiveness** (per-topic scores of a measure): :func:`rmse` between the original and
  the reproduced scores, and, for an experiment that compares an advanced run with a
  baseline, :func:`effect_ratio` (ER) and :func:`delta_ri` (DeltaRI).

Each equals repro_eval's function of the same name to 1e-9
(tests/stats/test_stats_reproduction.py); where repro_eval's definition has a rule of its own,
the docstring names it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import stats

from trecqr.errors import UsageError
from trecqr.formats.arrays import arrow_indices
from trecqr.formats.order import qid_codes, trec_order

KTU_DEPTH = 1000  # repro_eval's RUN_LENGTH
RBO_DEPTH = 1000  # repro_eval's RBO_DEPTH
MAX_DEPTH = 100_000  # RBO sums depth weights per topic: a larger depth is refused, not a hang
RBO_P = 0.95  # repro_eval's RBO_P


@dataclass(frozen=True)
class PerTopic:
    """A document-order measure per topic (``topics[k]``: ``values[k]``) and its mean."""

    topics: list
    values: np.ndarray

    @property
    def mean(self) -> float:
        return float(np.mean(self.values)) if len(self.values) else float("nan")


def rankings_of(run) -> dict:
    """{qid: [docno, ...]} of a trecqr Run, each topic's documents in trec_eval's order
    (score descending, equal scores by docno descending; scores as doubles, trec_eval 10.0's
    reading). repro_eval orders a topic by its lines in the file, equal scores in a row by
    docno descending: the same order for a file whose lines go down in score."""
    if len(run) == 0:
        return {}
    qcode, topics = qid_codes(run.qid)
    order, _, starts = trec_order(run, False, qcode)
    docnos = run.docno.take(arrow_indices(order)).to_pylist()
    ends = list(starts[1:]) + [len(order)]
    return {topics[qcode[order[s]]]: docnos[s:e] for s, e in zip(starts, ends)}


def _topics(original: dict, reproduced: dict) -> list:
    missing = [t for t in reproduced if t not in original]
    if missing:
        raise UsageError(f"topic {missing[0]!r} of the reproduction is not in the original run "
                         f"({len(missing)} such topics); compare runs over the same topics")
    return list(reproduced)


def ktu(original: dict, reproduced: dict, depth: int = KTU_DEPTH) -> PerTopic:
    """Kendall's tau Union per topic of the reproduction (in its order), repro_eval's
    definition: both rankings cut to their first ``depth`` documents; every document of
    either gets its index in the sorted union of the two; tau-b
    (``scipy.stats.kendalltau``) of the original's index sequence against the
    reproduction's, position by position. The two cut rankings must be equally long (scipy
    refuses otherwise); a topic with one document gives nan."""
    topics = _topics(original, reproduced)
    values = np.empty(len(topics))
    for k, topic in enumerate(topics):
        a, b = original[topic][:depth], reproduced[topic][:depth]
        if len(a) != len(b):
            raise UsageError(f"topic {topic!r}: the original ranks {len(a)} documents, the "
                             f"reproduction {len(b)}; KTU compares rankings of equal length "
                             "(pass a smaller depth)")
        union = {doc: i for i, doc in enumerate(sorted(set(a) | set(b)))}
        values[k] = stats.kendalltau([union[d] for d in a], [union[d] for d in b]).statistic
    return PerTopic(topics, values)


def rbo(original: dict, reproduced: dict, p: float = RBO_P,
        depth: int = RBO_DEPTH) -> PerTopic:
    """Rank-biased overlap per topic of the reproduction, repro_eval's definition (Clarke et
    al.'s, TOIS 2021, the compatibility code): sum_{d=1..depth} p^(d-1) X_d / d divided by
    sum_{d=1..depth} p^(d-1), X_d the number of documents both place in their top d. The
    depth is fixed: past the end of a short ranking its set stops growing (a truncated,
    normalised RBO, not Webber's extrapolated one)."""
    if not 0 < p < 1:
        raise UsageError(f"RBO's persistence p must be between 0 and 1 (got {p!r})")
    if not 1 <= depth <= MAX_DEPTH:
        raise UsageError(f"RBO's depth must be from 1 to {MAX_DEPTH:,} (got {depth})")
    topics = _topics(original, reproduced)
    d = np.arange(1, depth + 1)
    weights = p ** (d - 1.0)
    values = np.empty(len(topics))
    for k, topic in enumerate(topics):
        first = {}
        for pos, doc in enumerate(reproduced[topic][:depth], 1):
            first.setdefault(doc, pos)
        both = []
        seen = set()
        for pos, doc in enumerate(original[topic][:depth], 1):
            if doc in first and doc not in seen:
                seen.add(doc)
                both.append(max(pos, first[doc]))
        overlap = np.cumsum(np.bincount(np.asarray(both, dtype=np.int64),
                                        minlength=depth + 1)[1:])
        values[k] = np.sum(weights * overlap / d) / np.sum(weights)
    return PerTopic(topics, values)


def _aligned(*arrays) -> list:
    out = [np.asarray(a, dtype=np.float64) for a in arrays]
    if any(a.ndim != 1 for a in out) or len({len(a) for a in out}) != 1:
        raise UsageError("per-topic scores must be 1-D arrays over the same topics, in the "
                         f"same order (got lengths {[len(a) for a in out]})")
    if len(out[0]) == 0:
        raise UsageError("no topics to compare")
    return out


def rmse(original, reproduced) -> float:
    """Root mean square error of the per-topic scores: sqrt(mean((original - reproduced)^2)),
    both arrays over the same topics in the same order."""
    a, b = _aligned(original, reproduced)
    return float(np.sqrt(np.mean((a - b) ** 2)))


def effect_ratio(orig_advanced, orig_baseline, rep_advanced, rep_baseline) -> float:
    """ER = mean(rep_advanced - rep_baseline) / mean(orig_advanced - orig_baseline): the
    reproduced improvement per topic over the original one (1: the same effect; 0: none;
    negative: reversed). Each pair is over its own topics (the same ones for a reproduction,
    another collection's for a replication)."""
    oa, ob = _aligned(orig_advanced, orig_baseline)
    ra, rb = _aligned(rep_advanced, rep_baseline)
    return float(np.mean(ra - rb) / np.mean(oa - ob))


def delta_ri(orig_advanced, orig_baseline, rep_advanced, rep_baseline) -> float:
    """DeltaRI = RI_orig - RI_rep, RI = (mean(advanced) - mean(baseline)) / mean(baseline):
    the relative improvement lost (> 0) or gained (< 0) in the reproduction."""
    oa, ob = _aligned(orig_advanced, orig_baseline)
    ra, rb = _aligned(rep_advanced, rep_baseline)
    ri_orig = (np.mean(oa) - np.mean(ob)) / np.mean(ob)
    ri_rep = (np.mean(ra) - np.mean(rb)) / np.mean(rb)
    return float(ri_orig - ri_rep)
