"""Two systems over the same topics: paired significance tests of per-topic scores.

Each test takes the two systems' per-topic scores (``a``, ``b``: equal-length arrays, topic k
of ``a`` paired with topic k of ``b``) or their differences, and returns a two-sided p-value.
When every difference is 0 there is nothing to test: the p-value is 1 (scipy's t-test would
give nan), so that a run compared with itself is never "significant" and never undefined.

* :func:`t_test` - Student's paired t-test, exactly ``scipy.stats.ttest_rel`` (the formula of
  ``trecqr compare`` today, trecqr/report/compare.py);
* :func:`wilcoxon` - Wilcoxon's signed-rank test, exactly ``scipy.stats.wilcoxon`` with the
  zero and tie handling named below;
* :func:`randomization_test` - Fisher's paired randomization test by random sign flips, seeded
  (the test ``trecqr compare --test randomization`` runs, same draws for the same seed);
* :func:`bootstrap_ci`, :func:`effect_size` - how large the mean difference is: its percentile
  bootstrap confidence interval (seeded) and Cohen's d_z.
"""

from __future__ import annotations

import math

import numpy as np

from trecqr.errors import UsageError
from trecqr.runtime.memory import scipy_stats

ZERO_METHODS = ("wilcox", "pratt", "zsplit")
WILCOXON_METHODS = ("auto", "exact", "asymptotic")


def paired_arrays(a, b, what: str = "paired scores") -> tuple[np.ndarray, np.ndarray]:
    """a and b as float arrays of one dimension and one length (item k of a pairs with item k
    of b: a topic's scores, or a system's), or a one-line refusal naming ``what`` they are."""
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    if a.shape != b.shape or a.ndim != 1:
        raise UsageError(f"{what} must be two 1-D arrays of the same length "
                         f"(got shapes {a.shape} and {b.shape})")
    return a, b


def t_test(a, b) -> tuple[float, float]:
    """Paired two-sided t-test of ``a`` against ``b``: (t, p), exactly
    ``scipy.stats.ttest_rel(a, b)``; (0.0, 1.0) when every difference is 0, (nan, nan) with
    fewer than two topics."""
    a, b = paired_arrays(a, b)
    if len(a) < 2:
        return math.nan, math.nan
    if not np.any(a - b):
        return 0.0, 1.0
    res = scipy_stats().ttest_rel(a, b)  # imported when it fits under a memory cap
    return float(res.statistic), float(res.pvalue)


def wilcoxon(a, b, zero_method: str = "wilcox", method: str = "auto") -> tuple[float, float]:
    """Wilcoxon signed-rank test of ``a`` against ``b``, two-sided: (statistic, p), exactly
    ``scipy.stats.wilcoxon(a, b, zero_method=zero_method, correction=False, method=method)``.

    The statistic is the smaller of the positive-rank and negative-rank sums (scipy's).

    * zeros (topics where ``a == b``): ``"wilcox"`` (the default, Wilcoxon's own rule) drops
      them before ranking; ``"pratt"`` ranks them and drops their ranks; ``"zsplit"`` splits
      their ranks between the two sums;
    * ties among the |differences| get their average rank (mid-ranks);
    * the p-value (scipy >= 1.13's ``"auto"``): over 50 topics, the normal approximation with
      the tie-corrected variance and no continuity correction; up to 50, the exact null
      distribution when there are neither ties nor zeros, else an exhaustive sign-flip
      permutation up to 13 topics and the normal approximation above. ``method="asymptotic"``
      always takes the normal approximation, whatever the scipy version.

    Returns (0.0, 1.0) when every difference is 0 (no topic separates the systems) and
    (nan, nan) for no topics."""
    a, b = paired_arrays(a, b)
    if zero_method not in ZERO_METHODS:
        raise UsageError(f"unknown zero_method {zero_method!r} ({', '.join(ZERO_METHODS)})")
    if method not in WILCOXON_METHODS:
        raise UsageError(f"unknown method {method!r} ({', '.join(WILCOXON_METHODS)})")
    if len(a) == 0:
        return math.nan, math.nan
    if not np.any(a - b):
        return 0.0, 1.0
    res = scipy_stats().wilcoxon(a, b, zero_method=zero_method, correction=False, method=method)
    return float(res.statistic), float(res.pvalue)


def randomization_test(d, permutations: int = 10000, rng=None, chunk: int = 1000) -> float:
    """Paired randomization (sign-flip) test of the per-topic differences ``d``, two-sided.

    Under the null hypothesis the two systems are exchangeable on every topic, so each
    difference is as likely to have either sign. Draws ``permutations`` random sign vectors s
    (from ``numpy.random.default_rng(rng)``, ``chunk`` at a time: the same seed gives the
    same p-value) and returns p = (count + 1) / (permutations + 1), count = the number of s
    with |sum(s * d)| >= |sum(d)| (within a relative 1e-12, so that float noise does not
    decide a tie). The +1 counts the observed signs themselves: p is never 0."""
    d = np.asarray(d, dtype=np.float64)
    if permutations < 1:
        raise UsageError("permutations must be at least 1",
                         cli="--permutations must be at least 1")
    rng = np.random.default_rng(rng)
    observed = abs(float(np.sum(d)))
    tol = 1e-12 * max(1.0, float(np.sum(np.abs(d))))
    count = 0
    done = 0
    while done < permutations:
        k = min(chunk, permutations - done)
        signs = rng.integers(0, 2, size=(k, len(d)), dtype=np.int8) * 2 - 1
        sums = np.abs(signs.astype(np.float64) @ d)
        count += int(np.count_nonzero(sums >= observed - tol))
        done += k
    return (count + 1) / (permutations + 1)


def bootstrap_ci(d, samples: int = 10000, level: float = 0.95, rng=None,
                 chunk: int = 1000) -> tuple[float, float]:
    """Percentile bootstrap confidence interval of mean(d): resample topics with replacement
    ``samples`` times; the (1-level)/2 and (1+level)/2 percentiles of the resampled means."""
    d = np.asarray(d, dtype=np.float64)
    n = len(d)
    if n == 0:
        return math.nan, math.nan
    rng = np.random.default_rng(rng)
    means = np.empty(samples)
    done = 0
    while done < samples:
        k = min(chunk, samples - done)
        idx = rng.integers(0, n, size=(k, n))
        means[done:done + k] = d[idx].mean(axis=1)
        done += k
    lo, hi = np.percentile(means, [100 * (1 - level) / 2, 100 * (1 + level) / 2])
    return float(lo), float(hi)


def effect_size(d) -> float:
    """Cohen's d_z: mean(d) / sd(d) (ddof=1); 0 when all d are 0, nan when sd is 0 otherwise."""
    d = np.asarray(d, dtype=np.float64)
    if len(d) < 2:
        return math.nan
    sd = float(np.std(d, ddof=1))
    m = float(np.mean(d))
    if sd == 0:
        return 0.0 if m == 0 else math.nan
    return m / sd
