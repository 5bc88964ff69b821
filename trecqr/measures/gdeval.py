"""``ERR@k`` and ``nDCG(dcg='exp-log2')@k`` as ir_measures' ``gdeval`` provider computes them:
gdeval.pl 1.2a, the TREC 2010 Web track script bundled with ir_measures 0.4.3.

gdeval's rules, reproduced here:

* **qrels**: grades must be integers up to ``$MAX_JUDGMENT = 4`` (gdeval stops with "format
  error" otherwise: so does trecqr). Only positive grades are kept; a document judged
  positively twice for a topic gets the *lowest* of its grades (the qrels are sorted by
  grade descending and the last assignment wins), while the ideal ranking keeps every line.
* **ranking**: score descending, ties by docno descending (``runOrder``; byte-wise ``lt``), all
  rows kept; a document's gain is its grade, 0 if unjudged or judged <= 0.
* **nDCG@k** = DCG@k / ideal DCG@k with DCG = sum over the first k of ``(2**g - 1) / ln(i+2)``
  (natural log: the base cancels), ideal from the positive grades sorted descending.
* **ERR@k** = sum over the first k of ``r * decay / i`` with ``r = (2**g - 1) / 2**4`` and
  ``decay`` the product of ``(1 - r)`` above (the maximum grade is fixed at 4, not the
  qrels' maximum).
* **topics**: only topics with at least one positive judgment get a line (``$seen``); the
  others, and qrels topics the run lacks, get ir_measures' default 0.
* **precision**: gdeval prints ``%.5f``; ir_measures reads those strings, so values are
  rounded to 5 decimals here too.

gdeval itself refuses topic ids that are not digits after the last ``-`` (CAsT's ``106_1``:
"format error on line 1", so ir_measures finds no working provider on CAsT runs); trecqr
computes what gdeval gives on the same files with topics renumbered. Sums are accumulated in
gdeval's order with libm's ``log``, so the unrounded values are gdeval's too.
"""

from __future__ import annotations

import math

import numpy as np
from ir_measures.providers.base import NOT_PROVIDED

from trecqr.errors import UsageError
from trecqr.measures.base import irm_native
from trecqr.rankings.irm import lookup, ranking, topic_codes

MAX_JUDGMENT = 4


def _check(measure) -> int:
    import ir_measures
    measure.validate_params()
    if not ir_measures.gdeval.supports(measure):
        why = "it needs an @cutoff" if measure.NAME == "ERR" else \
            "it needs an @cutoff, and nDCG with dcg='exp-log2', no gains, no judged_only"
        if measure.NAME == "nDCG" and measure["cutoff"] is NOT_PROVIDED:
            why += ("; without a cutoff only ir_measures' optional ranx provider takes it, and "
                    "trecqr does not reproduce ranx")
        raise UsageError(f"ir_measures measure {measure} is not supported by its provider "
                         f"gdeval ({why})")
    cutoff = int(measure["cutoff"])
    if cutoff < 1:
        raise UsageError(f"{measure}: gdeval needs a cutoff of at least 1 (it divides by zero)")
    return cutoff


CHUNK = 2048  # topics per (topics, depth) matrix


def _by_topic(values: np.ndarray, starts: np.ndarray, width: int, fn) -> np.ndarray:
    """``fn`` of the (topics, width) matrix of each topic's values (``values[starts[t]:
    starts[t+1]]``, at most ``width`` of them), 0-padded; computed CHUNK topics at a time."""
    n = len(starts) - 1
    if width == 0:
        return np.zeros(n)
    out = []
    for lo in range(0, n, CHUNK):
        hi = min(n, lo + CHUNK)
        topic = np.repeat(np.arange(hi - lo), np.diff(starts[lo:hi + 1]))
        rank = np.arange(starts[lo], starts[hi]) - starts[lo:hi][topic]
        matrix = np.zeros((hi - lo, width))
        matrix[topic, rank] = values[starts[lo]:starts[hi]]
        out.append(fn(matrix))
    return np.concatenate(out) if out else np.zeros(0)


def _first(topic: np.ndarray, starts: np.ndarray, width: int):
    """Mask of rows ranked within ``width`` of their topic, and the kept rows' starts."""
    keep = np.arange(len(topic)) - starts[topic] < width
    return keep, np.searchsorted(topic[keep], np.arange(len(starts)))


def _discount(width: int) -> np.ndarray:
    return np.array([math.log(i + 2) for i in range(width)])


def _round5(values: np.ndarray) -> np.ndarray:
    return np.array([float(f"{v:.5f}") for v in values.tolist()], dtype=np.float64)


def gdeval_values(run, qrels, topics: list, cutoff: int):
    """(nDCG@cutoff, ERR@cutoff) per topic as gdeval prints them (0 for unseen topics)."""
    grade = np.asarray(qrels.grade, dtype=np.int64)
    if len(grade) and grade.max() > MAX_JUDGMENT:
        raise UsageError(f"gdeval (ERR, nDCG exp-log2) accepts grades up to {MAX_JUDGMENT}; the "
                         f"qrels have {int(grade.max())}")
    n = len(topics)
    positive = np.flatnonzero(grade > 0)
    # ideal: each topic's positive grades, descending
    qcode = topic_codes(qrels.qid, topics)[positive]
    inq = qcode >= 0
    pos_rows, pos_topic = positive[inq], qcode[inq]
    order = np.lexsort((-grade[pos_rows], pos_topic))
    pos_rows, pos_topic = pos_rows[order], pos_topic[order]
    seen = np.zeros(n, bool)
    seen[pos_topic] = True
    pstarts = np.searchsorted(pos_topic, np.arange(n + 1))
    iwidth = int(min(cutoff, np.diff(pstarts).max(initial=0)))
    ikeep, istarts = _first(pos_topic, pstarts, iwidth)
    idisc = _discount(iwidth)
    ideal = _by_topic(2.0 ** grade[pos_rows[ikeep]] - 1, istarts, iwidth,
                      lambda m: np.cumsum(m / idisc, axis=1)[:, -1])

    # the run: each row's gain is the last-assigned (lowest) positive grade of its docno
    rows, topic, starts = ranking(run, topics, "docno_desc")
    width = int(min(cutoff, np.diff(starts).max(initial=0)))
    keep, kstarts = _first(topic, starts, width)
    where = lookup(run, rows[keep], qrels,
                   pos_rows[np.argsort(-grade[pos_rows], kind="stable")], last=True)
    gain = 2.0 ** np.where(where >= 0, grade[np.maximum(where, 0)], 0) - 1
    disc = _discount(width)
    steps = np.arange(1.0, width + 1.0)
    dcg = _by_topic(gain, kstarts, width, lambda m: np.cumsum(m / disc, axis=1)[:, -1])

    def err_of(m):
        r = m / 2.0 ** MAX_JUDGMENT
        decay = np.cumprod(np.concatenate([np.ones((len(m), 1)), 1 - r[:, :-1]], axis=1),
                           axis=1)
        return np.cumsum(r * decay / steps, axis=1)[:, -1]

    err = _by_topic(gain, kstarts, width, err_of)
    with np.errstate(invalid="ignore", divide="ignore"):
        ndcg = np.where(seen, dcg / np.where(seen, ideal, 1.0), 0.0)
    err = np.where(seen, err, 0.0)
    return _round5(ndcg), _round5(err)


@irm_native("nDCG", provider="gdeval")  # as nDCG(dcg='exp-log2')@k only: log2 is pytrec_eval's
def ndcg_exp_log2(run, qrels, topics: list, measure) -> np.ndarray:
    """gdeval's nDCG@k (``nDCG(dcg='exp-log2')@k``), the ``@irm_native`` signature."""
    return gdeval_values(run, qrels, topics, _check(measure))[0]


@irm_native("ERR", provider="gdeval")
def err(run, qrels, topics: list, measure) -> np.ndarray:
    """gdeval's ERR@k, the ``@irm_native`` signature."""
    return gdeval_values(run, qrels, topics, _check(measure))[1]
