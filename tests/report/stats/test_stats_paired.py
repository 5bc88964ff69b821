"""trecqr.report.stats.paired and trecqr.report.stats.corrections against their references, on the
CAsT 2021 organisers' runs (map and ndcg_cut.3 per topic): scipy's t-test and Wilcoxon test,
statsmodels' multipletests, and trecqr compare's own kernels (report/compare.py), which these
modules are to replace."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import stats
from statsmodels.stats.multitest import multipletests

from cast_inputs import MEASURES, cast_scores, pairs
from trecqr.errors import UsageError
from trecqr.report import compare as report_compare
from trecqr.report.stats import corrections, paired


def _family(test) -> np.ndarray:
    """The p-values of every pair of runs x both measures, by ``test(a, b) -> (stat, p)``."""
    s = cast_scores()
    return np.array([test(s[m][j], s[m][i])[1] for m in MEASURES
                     for i, j in pairs(len(s["runs"]))])


def test_the_real_runs_exercise_zeros_and_ties():
    """The comparisons below mean something: some paired differences are 0 (Wilcoxon's zero
    rule matters) and some |differences| tie (mid-ranks matter)."""
    s = cast_scores()
    assert len(s["topics"]) == 158
    d = s["ndcg_cut_3"][1] - s["ndcg_cut_3"][0]
    nonzero = np.abs(d[d != 0])
    assert np.count_nonzero(d == 0) > 0 and len(np.unique(nonzero)) < len(nonzero)


def test_t_test_is_scipy_and_trecqr_compare():
    s = cast_scores()
    for m in MEASURES:
        for i, j in pairs(5):
            a, b = s[m][j], s[m][i]
            ref = stats.ttest_rel(a, b)
            assert paired.t_test(a, b) == (float(ref.statistic), float(ref.pvalue))
            assert paired.t_test(a, b) == report_compare.t_test(a, b)
    assert paired.t_test(s["map"][0], s["map"][0]) == (0.0, 1.0)  # scipy: nan
    assert all(math.isnan(v) for v in paired.t_test([0.5], [0.2]))


@pytest.mark.parametrize("zero_method", ["wilcox", "pratt", "zsplit"])
def test_wilcoxon_is_scipy(zero_method):
    """Equal (==) to scipy.stats.wilcoxon with the same zero rule, on every pair and measure;
    "auto" picks the normal approximation here (158 topics, over scipy's 50), as
    method="asymptotic" does."""
    s = cast_scores()
    for m in MEASURES:
        for i, j in pairs(5):
            a, b = s[m][j], s[m][i]
            for method in ("auto", "asymptotic"):
                ref = stats.wilcoxon(a, b, zero_method=zero_method, method=method)
                got = paired.wilcoxon(a, b, zero_method=zero_method, method=method)
                assert got == (float(ref.statistic), float(ref.pvalue))


def test_wilcoxon_small_samples_and_edges():
    """Up to 50 topics: the exact distribution without ties or zeros, exhaustive sign flips
    with them (n <= 13), still scipy's numbers; 20 topics with ties take the normal
    approximation; no difference at all gives p = 1."""
    a = np.array([0.9, 0.1, 0.5, 0.7, 0.3, 0.8, 0.45])
    b = np.array([0.2, 0.15, 0.1, 0.75, 0.0, 0.35, 0.2])
    assert paired.wilcoxon(a, b) == tuple(float(v) for v in stats.wilcoxon(a, b))
    b[0] = a[0]  # a zero difference
    assert paired.wilcoxon(a, b) == tuple(float(v) for v in stats.wilcoxon(a, b))
    assert paired.wilcoxon(a, a) == (0.0, 1.0)
    c = cast_scores()["ndcg_cut_3"][:, :20]
    assert paired.wilcoxon(c[1], c[0]) == tuple(float(v) for v in stats.wilcoxon(c[1], c[0]))
    with pytest.raises(UsageError, match="zero_method"):
        paired.wilcoxon(a, b, zero_method="drop")


def test_randomization_test_is_trecqr_compares_and_repeatable():
    """Same seed, same draws: the p-value trecqr compare prints today, bit for bit."""
    s = cast_scores()
    for i, j in pairs(5):
        d = s["ndcg_cut_3"][j] - s["ndcg_cut_3"][i]
        got = paired.randomization_test(d, 2000, rng=np.random.SeedSequence(7))
        assert got == report_compare.randomization_test(d, 2000, np.random.SeedSequence(7))
        assert got == paired.randomization_test(d, 2000, rng=np.random.SeedSequence(7))
    assert paired.randomization_test(np.zeros(10), 100, rng=1) == 1.0


def test_randomization_test_within_monte_carlo_error_of_the_exact_test():
    """On 12 topics every one of the 2^12 sign vectors can be enumerated: the exact
    two-sided p. 50,000 random draws land within 4 standard errors of it."""
    d = cast_scores()["map"][1, :12] - cast_scores()["map"][0, :12]
    signs = np.array(list(itertools.product([-1.0, 1.0], repeat=len(d))))
    exact = np.mean(np.abs(signs @ d) >= abs(d.sum()) - 1e-12)
    assert 0.05 < exact < 0.95  # a p-value in the middle, where the error is largest
    got = paired.randomization_test(d, 50000, rng=3)
    assert abs(got - exact) < 4 * math.sqrt(exact * (1 - exact) / 50000)


@pytest.mark.parametrize("method,reference", [("holm", "holm"), ("bonferroni", "bonferroni"),
                                              ("bh", "fdr_bh"), ("by", "fdr_by")])
def test_corrections_are_statsmodels(method, reference):
    """Over the family of all pairs x both measures, for the t-test's and Wilcoxon's
    p-values (ties among them included): equal to multipletests to 1e-15."""
    for family in (_family(paired.t_test), _family(paired.wilcoxon)):
        ref = multipletests(family, method=reference)[1]
        np.testing.assert_allclose(corrections.adjust(family, method), ref, rtol=1e-15, atol=0)
        if method in ("holm", "bonferroni"):  # trecqr compare's today
            np.testing.assert_array_equal(corrections.adjust(family, method),
                                          report_compare.adjust(family, method))


@pytest.mark.parametrize("method,reference", [("holm", "holm"), ("bonferroni", "bonferroni"),
                                              ("bh", "fdr_bh"), ("by", "fdr_by")])
def test_corrections_leave_nan_out_of_the_family(method, reference):
    p = np.array([0.01, np.nan, 0.04, 0.03, 0.04, np.nan, 0.2])
    ok = ~np.isnan(p)
    got = corrections.adjust(p, method)
    assert np.array_equal(np.isnan(got), ~ok)
    np.testing.assert_allclose(got[ok], multipletests(p[ok], method=reference)[1], rtol=1e-15)


def test_correction_none_and_unknown():
    p = np.array([0.5, 0.01])
    out = corrections.adjust(p, "none")
    assert np.array_equal(out, p) and out is not p
    with pytest.raises(UsageError, match="holm, bonferroni, bh, by, none"):
        corrections.adjust(p, "fdr")
