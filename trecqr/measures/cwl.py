"""The C/W/L measures of cwl_eval (pip ``cwl-eval`` 1.0.12) as ir_measures' ``cwl_eval``
provider (0.4.3) computes them: ``BPM``, ``INST``, ``INSQ``, ``SDCG``, ``NERR8``-``NERR11`` and
``RBP(rel=r)``.

The provider's rules, reproduced here:

* **gains**: a grade g is first clipped to ``max(g, 0)``; ``RBP(rel=r)`` uses 1 when it is
  >= r and 0 otherwise; the other measures scale it to ``(min(max(g, min_rel), max_rel) -
  min_rel) / (max_rel - min_rel)`` (``min_rel`` defaults to 0, ``max_rel`` is required).
  Repeated qrels lines: the last one counts. Unjudged documents have gain 0 (cwl's "worse
  case"; residuals are not reported by the provider).
* **ranking**: each topic sorted by score descending, ties in input order (Python's stable
  ``sorted``), cut or padded with zero gains to ``max_n = 1000`` positions (the provider's
  ``RankingMaker(max_n=1000)``), so a ranking never ends before rank 1000.
* **value**: the expected utility per item, ``W . gains`` where ``W`` is the C/W/L weight
  vector built from the measure's continuation vector ``C`` (cwl's ``CWLMetric.w_vector``):
  ``W_1 = 1 / sum(prod(C_1..C_{i-1}))``, ``W_i = W_1 * prod(C_1..C_{i-1})``.
* **topics**: every run topic that has qrels lines (even only non-relevant ones); qrels topics
  the run lacks get ir_measures' default, 0.

Each measure is one continuation-vector kernel below, written with the same floating-point
operations in the same order as cwl's (``math.pow`` where cwl raises numpy scalars to a power),
so the values are cwl_eval's bit for bit.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
from ir_measures.providers.base import NOT_PROVIDED

from trecqr.errors import UsageError
from trecqr.measures.base import irm_native
from trecqr.rankings.irm import lookup, ranking

MAX_N = 1000  # ir_measures' RankingMaker(max_n=1000), cwl_eval's default depth


def _param(measure, name):
    value = measure[name]
    return None if value is NOT_PROVIDED else value


def _check(measure) -> None:
    import ir_measures

    measure.validate_params()
    if not ir_measures.cwl_eval.supports(measure):
        hint = {"RBP": " (cwl_eval needs RBP(rel=...) and no @cutoff; no other provider in "
                       "ir_measures' default pipeline computes RBP)"}.get(measure.NAME, "")
        raise UsageError(f"ir_measures measure {measure} is not supported by its provider "
                         f"cwl_eval{hint}")
    if measure.NAME != "RBP" and not _param(measure, "min_rel") < _param(measure, "max_rel"):
        raise UsageError(f"{measure}: min_rel must be less than max_rel (cwl_eval provider)")


def ranked_gains(run, qrels, topics: list, measure):
    """Each topic's ranked gains (its first MAX_N rows), as the provider's handler maps grades,
    unjudged 0: (flat gains, start of each topic in them)."""
    grade = np.maximum(np.asarray(qrels.grade, dtype=np.int64), 0)
    if measure.NAME == "RBP":
        gain = (grade >= _param(measure, "rel")).astype(np.float64)
    else:
        lo, hi = _param(measure, "min_rel"), _param(measure, "max_rel")
        gain = (np.minimum(np.maximum(grade, lo), hi) - lo) / (hi - lo)
    rows, topic, starts = ranking(run, topics, "input")
    keep = np.arange(len(rows)) - starts[topic] < MAX_N
    rows, topic = rows[keep], topic[keep]
    where = lookup(run, rows, qrels)
    flat = np.where(where >= 0, gain[np.maximum(where, 0)], 0.0)
    return flat, np.searchsorted(topic, np.arange(len(topics) + 1))


def _padded(flat: np.ndarray, start: int, end: int) -> np.ndarray:
    """A topic's gain vector cut or padded with zeros to MAX_N (cwl's get_gain_vector)."""
    gains = np.zeros(MAX_N)
    gains[:end - start] = flat[start:end]
    return gains


# --- continuation vectors (cwl/ruler/measures/*.py, c_vector with worse_case=True) ---

def _c_rbp(gains, m):  # cwl_rbp.RBPCWLMetric
    return np.dot(np.ones(MAX_N), float(_param(m, "p")))


def _c_bpm(gains, m):  # cwl_bpm.BPMCWLMetric(T, K=cutoff), unit costs
    c_gain = np.cumsum(gains)
    stop = np.flatnonzero(~(c_gain < float(_param(m, "T"))))
    first = stop[0] if len(stop) else MAX_N
    cvec = np.zeros(MAX_N)
    c_cost = np.arange(1, MAX_N + 1, dtype=np.float64)  # cumulative unit costs
    stop_cost = np.flatnonzero(~(c_cost < _param(m, "cutoff")))
    first = min(first, stop_cost[0] if len(stop_cost) else MAX_N)
    cvec[:first] = 1.0
    return cvec


def _c_inst(gains, m):  # cwl_inst.INSTCWLMetric
    T = float(_param(m, "T"))
    Ti = T - np.cumsum(gains)
    r = np.arange(1.0, MAX_N + 1.0)
    base = (r + T + Ti - 1.0) / (r + T + Ti)
    return np.fromiter((math.pow(x, 2.0) for x in base.tolist()), np.float64, MAX_N)


@lru_cache(maxsize=64)
def _insq_vector(T: float) -> np.ndarray:
    return np.array([(((i + 1.0) + (2.0 * T) - 1.0) / ((i + 1.0) + (2.0 * T))) ** 2.0
                     for i in range(MAX_N)])


def _c_insq(gains, m):  # cwl_insq.INSQCWLMetric
    return _insq_vector(float(_param(m, "T")))


@lru_cache(maxsize=64)
def _sdcg_vector(k: int) -> np.ndarray:
    return np.array([math.log(i + 1, 2.0) / math.log(i + 2, 2.0) if i < k else 0.0
                     for i in range(1, MAX_N + 1)])


def _c_sdcg(gains, m):  # cwl_dcg.NDCGCWLMetric(k)
    return _sdcg_vector(int(_param(m, "cutoff")))


def _c_nerr8(gains, m):  # cwl_nerr.NERReq8CWLMetric(k)
    cvec = np.zeros(MAX_N)
    k = max(min(MAX_N, _param(m, "cutoff") - 1), 0)
    cvec[:k] = 1 - gains[:k]
    return cvec


@lru_cache(maxsize=64)
def _nerr9_factor(k: int) -> np.ndarray:
    return np.array([1.0 * rank / (rank + 1.0) for rank in range(1, k + 1)])


def _c_nerr9(gains, m):  # cwl_nerr.NERReq9CWLMetric(k)
    cvec = np.zeros(MAX_N)
    k = max(min(MAX_N, _param(m, "cutoff") - 1), 0)
    cvec[:k] = _nerr9_factor(k) * (1.0 - gains[:k])
    return cvec


def _c_nerr10(gains, m):  # cwl_nerr.NERReq10CWLMetric(phi=p)
    return float(_param(m, "p")) * (1 - gains)


@lru_cache(maxsize=64)
def _nerr11_factor(T: float) -> np.ndarray:
    return np.array([((rank + (2.0 * T) - 1.0) / (rank + (2.0 * T))) ** 2.0
                     for rank in range(1, MAX_N + 1)])


def _c_nerr11(gains, m):  # cwl_nerr.NERReq11CWLMetric(T)
    return _nerr11_factor(float(_param(m, "T"))) * (1.0 - gains)


_C_VECTOR = {"RBP": _c_rbp, "BPM": _c_bpm, "INST": _c_inst, "INSQ": _c_insq, "SDCG": _c_sdcg,
             "NERR8": _c_nerr8, "NERR9": _c_nerr9, "NERR10": _c_nerr10, "NERR11": _c_nerr11}


def expected_utility(cvec: np.ndarray, gains: np.ndarray) -> float:
    """cwl's CWLMetric: the W vector from C, then the expected utility per item W . gains."""
    cvec_prod = np.cumprod(cvec[0:-1])
    cvec_prod = np.pad(cvec_prod, (1, 0), "constant", constant_values=1.0)
    w1 = np.divide(1.0, np.sum(cvec_prod))
    wvec = np.append(w1, np.multiply(cvec_prod[1:len(cvec_prod)], w1))
    return float(np.sum(np.dot(wvec, gains)))


@irm_native("BPM", "INST", "INSQ", "SDCG", "NERR8", "NERR9", "NERR10", "NERR11", "RBP",
            provider="cwl_eval")  # one C/W/L kernel per measure; RBP only as RBP(rel=r), no @k
def cwl_measure(run, qrels, topics: list, measure) -> np.ndarray:
    """Per-topic values of a cwl_eval measure (the ``@irm_native`` signature)."""
    _check(measure)
    c_vector = _C_VECTOR[measure.NAME]
    flat, starts = ranked_gains(run, qrels, topics, measure)
    out = np.empty(len(topics))
    for t in range(len(topics)):
        gains = _padded(flat, starts[t], starts[t + 1])
        out[t] = expected_utility(c_vector(gains, measure), gains)
    return out
