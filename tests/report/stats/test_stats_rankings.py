"""trecqr.report.stats.rankings: system-ranking agreement. Kendall's tau and Spearman's rho against
scipy; tau_AP and RBO (no reference package installs here: pyircor needs Python < 3.8, rbo
pins numpy 1) against literal transcriptions of the papers' formulas and hand-worked values.

The real case: the five CAsT 2021 organiser runs ranked by two sets of judgments, the
official qrels and a second set derived from them (see :func:`_second_rankings`), under map
and ndcg_cut.3."""

from __future__ import annotations

import functools
import math

import numpy as np
import pytest
from scipy import stats

import trecqr
from cast_inputs import cast_scores
from trecqr.errors import UsageError
from trecqr.formats import read_qrels
from trecqr.formats.qrels import Qrels
from trecqr.report.stats import rankings


def _means(qrels, measure: str, **options) -> np.ndarray:
    return np.array([trecqr.evaluate(qrels, r, [measure], **options).aggregate()[
        measure.replace(".", "_")] for r in cast_scores()["runs"]])


@functools.lru_cache(maxsize=None)
def _second_rankings() -> list:
    """(x, y) pairs: the runs' means under the official qrels and under a second set of
    judgments, each of which reorders the five runs: map at relevance level 3 (only grades
    3-4 relevant); ndcg_cut.3 with binary grades (every grade > 0 made 1); ndcg_cut.3 with a
    third of the judgments (every third line)."""
    official = cast_scores()["qrels"]
    q = read_qrels(official)
    binary = Qrels(q.qid, q.docno, np.minimum(q.grade, 1), "binary")
    rows = np.flatnonzero(np.arange(len(q)) % 3 == 0)
    third = Qrels(q.qid.take(rows), q.docno.take(rows), q.grade[rows], "third")
    ndcg = _means(official, "ndcg_cut.3")
    return [(_means(official, "map"), _means(official, "map", relevance_level=3)),
            (ndcg, _means(binary, "ndcg_cut.3")), (ndcg, _means(third, "ndcg_cut.3"))]


def _random_with_ties(seed: int, n: int = 40):
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 12, n) / 12
    return x, x + rng.normal(0, 0.2, n).round(1)


def test_tau_and_spearman_are_scipy():
    cases = _second_rankings() + [_random_with_ties(s) for s in range(5)]
    for x, y in cases:
        assert abs(rankings.kendall_tau(x, y) - stats.kendalltau(x, y).statistic) < 1e-12
        assert abs(rankings.spearman(x, y) - stats.spearmanr(x, y).statistic) < 1e-12
    assert len(set(_random_with_ties(0)[0])) < 40  # ties exercised (tau-b, mid-ranks)
    for x, y in _second_rankings():  # the second judgments reorder the runs
        assert not np.array_equal(np.argsort(x), np.argsort(y))


def _tau_ap_yilmaz(x, y) -> float:
    """Yilmaz et al. (2008), eq. 1, literally: positions i = 2..N of y's ranking, C(i) the
    number of systems above i in y's ranking that x ranks above the system at i."""
    order = sorted(range(len(y)), key=lambda s: -y[s])
    total = 0.0
    for i in range(1, len(order)):
        c = sum(1 for j in range(i) if x[order[j]] > x[order[i]])
        total += c / i
    return 2 * total / (len(x) - 1) - 1


def _tau_ap_pairwise(x, y) -> float:
    """Urbano and Marrero's (ICTIR 2017) pairwise form of the same sum: every concordant pair
    adds 1 / (the lower of its two positions in y's ranking - 1)."""
    n = len(x)
    pos = {s: p for p, s in enumerate(sorted(range(n), key=lambda s: -y[s]), 1)}
    total = 0.0
    for i in range(n):
        for j in range(i + 1, n):
            if np.sign(x[i] - x[j]) == np.sign(y[i] - y[j]):
                total += 1 / (max(pos[i], pos[j]) - 1)
    return 2 * total / (n - 1) - 1


def test_tau_ap_is_the_papers_formula():
    rng = np.random.default_rng(8)
    cases = [rng.permutation(25).astype(float) for _ in range(6)]
    for x, y in zip(cases, cases[1:]):
        got = rankings.tau_ap(x, y)
        assert abs(got - _tau_ap_yilmaz(x, y)) < 1e-12
        assert abs(got - _tau_ap_pairwise(x, y)) < 1e-12
    for x, y in _second_rankings()[:2]:
        assert abs(rankings.tau_ap(x, y) - _tau_ap_yilmaz(x, y)) < 1e-12


def test_tau_ap_weighs_the_top():
    """Same tau for one swap at the top and one at the bottom; tau_AP punishes the top one;
    identical rankings give 1, reversed -1, and without errors at the top tau_AP >= tau."""
    truth = np.arange(10, 0, -1.0)
    top, bottom = truth.copy(), truth.copy()
    top[[0, 1]] = top[[1, 0]]
    bottom[[8, 9]] = bottom[[9, 8]]
    assert rankings.kendall_tau(truth, top) == rankings.kendall_tau(truth, bottom)
    assert rankings.tau_ap(truth, top) < rankings.tau_ap(truth, bottom)
    assert abs(rankings.tau_ap(truth, top) - (1 - 2 / 9)) < 1e-12  # C(2) = 0, others right
    assert rankings.tau_ap(truth, truth) == 1.0
    assert abs(rankings.tau_ap(truth, -truth) + 1) < 1e-12


def _rbo_webber(x, y, p) -> float:
    """Webber et al. (2010) eq. 32, literally, for two rankings of the same k items."""
    rx = sorted(range(len(x)), key=lambda s: -x[s])
    ry = sorted(range(len(y)), key=lambda s: -y[s])
    k = len(x)
    agree = [len(set(rx[:d]) & set(ry[:d])) for d in range(1, k + 1)]
    return agree[-1] / k * p ** k + (1 - p) / p * sum(
        agree[d - 1] / d * p ** d for d in range(1, k + 1))


def test_rbo_is_the_papers_formula():
    assert abs(rankings.rbo([3, 2, 1], [2, 3, 1], p=0.5) - 0.5) < 1e-15  # worked by hand
    rng = np.random.default_rng(4)
    for _ in range(5):
        x, y = rng.permutation(30).astype(float), rng.permutation(30).astype(float)
        for p in (0.5, 0.9, 0.98):
            assert abs(rankings.rbo(x, y, p) - _rbo_webber(x, y, p)) < 1e-12
            assert abs(rankings.rbo(x, y, p) - rankings.rbo(y, x, p)) < 1e-12
    for x, y in _second_rankings():
        assert abs(rankings.rbo(x, y, 0.9) - _rbo_webber(x, y, 0.9)) < 1e-12
    assert rankings.rbo(x, x, 0.9) == pytest.approx(1.0, abs=1e-15)


def test_ties_and_bad_input_are_refused():
    with pytest.raises(UsageError, match="systems 1, 2 tie at 0.5 in the reference ranking"):
        rankings.tau_ap([0.9, 0.5, 0.5], [0.1, 0.2, 0.3])
    with pytest.raises(UsageError, match="tie"):
        rankings.rbo([0.9, 0.5, 0.4], [0.1, 0.1, 0.3])
    with pytest.raises(UsageError, match="same length"):
        rankings.kendall_tau([1, 2, 3], [1, 2])
    with pytest.raises(UsageError, match="at least two systems"):
        rankings.spearman([1], [1])
    with pytest.raises(UsageError, match="between 0 and 1"):
        rankings.rbo([1, 2], [1, 2], p=1.0)
    assert math.isnan(rankings.kendall_tau([1, 1, 1], [1, 2, 3]))
