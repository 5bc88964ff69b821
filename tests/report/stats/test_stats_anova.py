"""trecqr.report.stats.anova against its references: statsmodels' anova_lm and pairwise_tukeyhsd,
scipy's tukey_hsd and studentized range, the numbers of Sakai's textbook example, and, for
the randomised Tukey HSD, the exact permutation distribution and the classical test."""

from __future__ import annotations

import functools
import itertools
import math

import numpy as np
import pandas as pd
import pytest
import statsmodels.formula.api as smf
from scipy import stats
from statsmodels.stats.anova import anova_lm
from statsmodels.stats.multicomp import pairwise_tukeyhsd

from cast_inputs import MEASURES, cast_scores
from trecqr.errors import UsageError
from trecqr.report.stats import anova, paired

# Sakai, "情報アクセス評価方法論" (2015), Table 5.1: three systems x 20 topics, as
# elinor's documentation quotes it (kampersanda/elinor, src/statistical_tests/
# two_way_anova_without_replication.rs) with the book's results to 4 places.
SAKAI_5_1 = np.array([
    [0.70, 0.30, 0.20, 0.60, 0.40, 0.40, 0.00, 0.70, 0.10, 0.30,
     0.50, 0.40, 0.00, 0.60, 0.50, 0.30, 0.10, 0.50, 0.20, 0.10],
    [0.50, 0.10, 0.00, 0.20, 0.40, 0.30, 0.00, 0.50, 0.30, 0.30,
     0.40, 0.40, 0.10, 0.40, 0.20, 0.10, 0.10, 0.60, 0.30, 0.20],
    [0.00, 0.00, 0.20, 0.10, 0.30, 0.30, 0.10, 0.20, 0.40, 0.40,
     0.40, 0.30, 0.30, 0.20, 0.20, 0.20, 0.10, 0.50, 0.40, 0.30]])


def _long(x: np.ndarray) -> pd.DataFrame:
    m, n = x.shape
    return pd.DataFrame({"score": x.ravel(), "system": np.repeat([f"s{i}" for i in range(m)], n),
                         "topic": np.tile([f"t{k:04d}" for k in range(n)], m)})


@functools.lru_cache(maxsize=None)
def _anova_lm(measure: str) -> pd.DataFrame:
    """statsmodels' table of a CAsT measure (an OLS with 158 topic dummies: seconds, once)."""
    x = cast_scores()[measure]
    return anova_lm(smf.ols("score ~ C(system) + C(topic)", _long(x)).fit())


def _upper(p: np.ndarray) -> np.ndarray:
    return p[np.triu_indices(len(p), 1)]


@pytest.mark.parametrize("measure", MEASURES)
def test_two_way_anova_is_statsmodels_anova_lm(measure):
    """Sums of squares, degrees of freedom, F and p for systems and topics: statsmodels' OLS
    with C(system) + C(topic) (balanced, so type I = type II), to 1e-9; the effect sizes are
    the documented formulas on those reference numbers."""
    x = cast_scores()[measure]
    ref = _anova_lm(measure)
    got = anova.two_way_anova(x)
    close = dict(rtol=1e-9, atol=0)
    for row, suffix in (("C(system)", "system"), ("C(topic)", "topic"), ("Residual", "error")):
        np.testing.assert_allclose(getattr(got, f"ss_{suffix}"), ref.loc[row, "sum_sq"], **close)
        assert getattr(got, f"df_{suffix}") == ref.loc[row, "df"]
        np.testing.assert_allclose(getattr(got, f"ms_{suffix}"), ref.loc[row, "mean_sq"], **close)
    for row, suffix in (("C(system)", "system"), ("C(topic)", "topic")):
        np.testing.assert_allclose(getattr(got, f"f_{suffix}"), ref.loc[row, "F"], **close)
        np.testing.assert_allclose(getattr(got, f"p_{suffix}"), ref.loc[row, "PR(>F)"], **close)
    s_a, s_e = ref.loc["C(system)", "sum_sq"], ref.loc["Residual", "sum_sq"]
    s_t = ref["sum_sq"].sum()
    v_e, phi_a, f_a = ref.loc["Residual", "mean_sq"], ref.loc["C(system)", "df"], \
        ref.loc["C(system)", "F"]
    np.testing.assert_allclose(got.ss_total, s_t, **close)
    np.testing.assert_allclose(got.eta2, s_a / s_t, **close)
    np.testing.assert_allclose(got.partial_eta2, s_a / (s_a + s_e), **close)
    np.testing.assert_allclose(got.omega2, (s_a - phi_a * v_e) / (s_t + v_e), **close)
    np.testing.assert_allclose(got.partial_omega2,
                               phi_a * (f_a - 1) / (phi_a * (f_a - 1) + x.size), **close)


def test_two_way_anova_on_sakais_textbook_example():
    got = anova.two_way_anova(SAKAI_5_1.copy())
    assert (got.systems, got.topics, got.df_error) == (3, 20, 38)
    for value, book in ((got.ss_system, 0.1083), (got.ss_topic, 1.0293),
                        (got.ss_error, 0.8317), (got.ss_total, 1.9693),
                        (got.ms_system, 0.0542), (got.ms_topic, 0.0542),
                        (got.ms_error, 0.0219), (got.f_system, 2.475)):
        assert abs(value - book) < 1e-4
    assert abs(got.p_system - 0.098) < 1e-3 and abs(got.p_topic - 0.009) < 1e-3


@pytest.mark.parametrize("measure", MEASURES)
def test_one_way_tukey_hsd_is_statsmodels_and_scipy(measure):
    """design="one-way" is statsmodels' pairwise_tukeyhsd of the scores with the system as the
    only factor (topics ignored), and scipy.stats.tukey_hsd of the rows: p-values and mean
    differences to 1e-9."""
    x = cast_scores()[measure]
    df = _long(x)
    ref = pairwise_tukeyhsd(df["score"], df["system"])
    got = anova.tukey_hsd(x, design="one-way")
    assert got.df == x.shape[0] * (x.shape[1] - 1) == ref.df_total
    np.testing.assert_allclose(_upper(got.pvalues), ref.pvalues, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(_upper(got.diff), ref.meandiffs, rtol=1e-9, atol=1e-15)
    np.testing.assert_allclose(got.pvalues[~np.eye(5, dtype=bool)],
                               stats.tukey_hsd(*x).pvalue[~np.eye(5, dtype=bool)],
                               rtol=1e-9, atol=1e-12)
    assert [(i, j) for i, j, _, _ in got.pairs()] == [(i, j) for i in range(5)
                                                    for j in range(i + 1, 5)]


@pytest.mark.parametrize("measure", MEASURES)
def test_two_way_tukey_hsd_uses_the_anova_residual(measure):
    """design="two-way" (the default): q = |diff| / sqrt(V_E / n) with anova_lm's residual
    mean square and (m-1)(n-1) degrees of freedom, p from scipy's studentized range, to
    1e-9. Blocking on topics removes their variance: smaller p-values than the one-way test
    for every pair that differs."""
    x = cast_scores()[measure]
    m, n = x.shape
    resid = _anova_lm(measure).loc["Residual"]
    got = anova.tukey_hsd(x)
    means = x.mean(axis=1)
    q = np.abs(means[None, :] - means[:, None]) / math.sqrt(resid["mean_sq"] / n)
    ref = stats.studentized_range.sf(_upper(q), m, resid["df"])
    np.testing.assert_allclose(_upper(got.pvalues), ref, rtol=1e-9, atol=1e-12)
    assert got.df == (m - 1) * (n - 1)
    one_way = _upper(anova.tukey_hsd(x, design="one-way").pvalues)
    assert np.all(_upper(got.pvalues) <= one_way)


def test_randomised_tukey_hsd_within_monte_carlo_error_of_the_exact_permutation_test():
    """Three runs x 5 topics: all 6^5 assignments of each topic's scores to the systems can be
    enumerated, which gives the exact p of every pair; 20,000 random draws land within 4
    standard errors of each."""
    x = cast_scores()["ndcg_cut_3"][[0, 2, 4]][:, 35:40]
    perms = np.array(list(itertools.permutations(range(3))))
    combos = np.array(list(itertools.product(range(len(perms)), repeat=x.shape[1])))
    permuted = x.T[np.arange(x.shape[1])[None, :, None], perms[combos]]  # draws x topics x systems
    means = permuted.sum(axis=1) / x.shape[1]
    ranges = means.max(axis=1) - means.min(axis=1)
    observed = np.abs(_upper(x.mean(axis=1)[None, :] - x.mean(axis=1)[:, None]))
    exact = np.array([np.mean(ranges >= d - 1e-12) for d in observed])
    assert np.all((exact > 0.05) & (exact < 0.95)), exact
    got = _upper(anova.randomized_tukey_hsd(x, 20000, seed=11).pvalues)
    assert np.all(np.abs(got - exact) < 4 * np.sqrt(exact * (1 - exact) / 20000))


def test_randomised_tukey_hsd_is_seeded_and_repeatable(monkeypatch):
    """Same seed, same p-values, whatever the block size (memory bound) of the draws."""
    x = cast_scores()["map"][:, :60]
    a = anova.randomized_tukey_hsd(x, 3000, seed=5)
    assert np.array_equal(a.pvalues, anova.randomized_tukey_hsd(x, 3000, seed=5).pvalues,
                          equal_nan=True)
    monkeypatch.setattr(anova, "BLOCK_CELLS", 7 * x.size + 1)  # blocks of 7 draws
    assert np.array_equal(a.pvalues, anova.randomized_tukey_hsd(x, 3000, seed=5).pvalues,
                          equal_nan=True)
    b = anova.randomized_tukey_hsd(x, 3000, seed=6)
    assert not np.array_equal(a.pvalues, b.pvalues, equal_nan=True)
    assert np.all(np.abs(_upper(a.pvalues) - _upper(b.pvalues)) < 0.05)
    assert (a.permutations, a.seed) == (3000, 5)
    assert np.all(_upper(a.pvalues) >= 1 / 3001)  # the observed assignment counts


def test_randomised_tukey_hsd_matches_the_classical_test_when_no_system_differs():
    """Scores drawn from the two-way model the classical test assumes (normal, additive topic
    effects, no system effect): the randomised p-values are within Monte Carlo error (4
    standard errors at 20,000 draws) of the classical two-way HSD's."""
    rng = np.random.default_rng(2012)
    x = rng.normal(0.4, 0.2, (1, 158)) + rng.normal(0, 0.1, (5, 158))
    classical = _upper(anova.tukey_hsd(x).pvalues)
    got = _upper(anova.randomized_tukey_hsd(x, 20000, seed=1).pvalues)
    assert np.all(np.abs(got - classical) < 4 * np.sqrt(classical * (1 - classical) / 20000)
                  + 1e-4)


@pytest.mark.parametrize("measure", MEASURES)
def test_randomised_tukey_hsd_on_the_real_runs(measure):
    """100,000 permutations of the five CAsT runs: the pairs significant at 0.05 and at 0.01
    are those of the classical two-way HSD. The p-values themselves are not within Monte
    Carlo error of the classical ones here: these systems differ a lot, and shuffling a
    topic's scores among them spreads the null distribution by their differences too (the
    classical test's V_E excludes them), so the randomised p-values are larger (by up to
    0.06 on these runs; the previous test shows the two agree when no system differs)."""
    x = cast_scores()[measure]
    classical = _upper(anova.tukey_hsd(x).pvalues)
    got = _upper(anova.randomized_tukey_hsd(x, 100_000, seed=2012).pvalues)
    for alpha in (0.05, 0.01):
        assert np.array_equal(got <= alpha, classical <= alpha)
    assert np.all(np.abs(got - classical) < 0.06)


def test_bad_matrices_are_refused():
    with pytest.raises(UsageError, match="systems x topics"):
        anova.two_way_anova(np.zeros(5))
    with pytest.raises(UsageError, match="at least 2 systems"):
        anova.tukey_hsd(np.zeros((1, 5)))
    with pytest.raises(UsageError, match="finite"):
        anova.randomized_tukey_hsd(np.array([[0.1, np.nan], [0.2, 0.3]]))
    with pytest.raises(UsageError, match="design"):
        anova.tukey_hsd(np.ones((2, 3)), design="three-way")


def test_identical_systems_are_not_different():
    x = np.tile(cast_scores()["map"][0], (3, 1))
    assert np.all(_upper(anova.tukey_hsd(x, design="one-way").pvalues) == 1.0)
    assert np.all(_upper(anova.randomized_tukey_hsd(x, 100, seed=0).pvalues) == 1.0)


def test_randomised_tukey_hsd_of_two_systems_is_the_randomization_test():
    """Shuffling a topic's two scores is flipping the sign of their difference, and the range
    of two means is |their difference|: the same test as paired.randomization_test, so the
    two estimates agree within Monte Carlo error (different draws, 20,000 each)."""
    x = cast_scores()["map"][[0, 4]]
    got = anova.randomized_tukey_hsd(x, 20000, seed=4).pvalues[0, 1]
    ref = paired.randomization_test(x[1] - x[0], 20000, rng=4)
    assert 0.01 < ref < 0.99
    assert abs(got - ref) < 4 * math.sqrt(2 * ref * (1 - ref) / 20000)
