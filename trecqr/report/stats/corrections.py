"""Multiple-testing corrections: adjusted p-values over a family of tests.

A paper that compares several runs on several measures makes many tests; each adjusted
p-value is compared with alpha directly. The family is whatever array the caller passes (for
``trecqr compare``: every pair x every measure). nan p-values (a test that could not be
made) stay nan and are not counted in the family size m.

Each method equals ``statsmodels.stats.multitest.multipletests(p, method=...)[1]`` on the
non-nan p-values (statsmodels' names: holm, bonferroni, fdr_bh, fdr_by):

* ``holm`` - Holm's step-down (controls the family-wise error rate);
* ``bonferroni`` - m * p (family-wise error rate);
* ``bh`` - Benjamini-Hochberg step-up (false discovery rate, independent or positively
  dependent tests);
* ``by`` - Benjamini-Yekutieli (false discovery rate under any dependence: BH times
  c(m) = 1 + 1/2 + ... + 1/m);
* ``none`` - the p-values unchanged.
"""

from __future__ import annotations

import numpy as np

from trecqr.errors import UsageError

CORRECTIONS = ("holm", "bonferroni", "bh", "by", "none")


def _finite(pvalues):
    p = np.asarray(pvalues, dtype=np.float64)
    if p.ndim != 1:
        raise UsageError(f"p-values must be a 1-D array (got shape {p.shape})")
    ok = np.flatnonzero(~np.isnan(p))
    return p, ok, ok[np.argsort(p[ok], kind="stable")]


def holm(pvalues) -> np.ndarray:
    """Holm's step-down: with p_(1) <= ... <= p_(m),
    adj_(i) = max_{j<=i} min(1, (m - j + 1) * p_(j))."""
    p, ok, order = _finite(pvalues)
    out = np.full(p.shape, np.nan)
    m = len(ok)
    if m:
        scaled = np.minimum(1.0, (m - np.arange(m)) * p[order])
        out[order] = np.maximum.accumulate(scaled)
    return out


def bonferroni(pvalues) -> np.ndarray:
    """min(1, m * p)."""
    p, ok, _ = _finite(pvalues)
    return np.minimum(1.0, len(ok) * p)


def benjamini_hochberg(pvalues, dependent: bool = False) -> np.ndarray:
    """Benjamini-Hochberg's step-up: adj_(i) = min_{j>=i} min(1, c * m / j * p_(j)), c = 1, or
    c = sum_{k=1..m} 1/k with ``dependent`` (Benjamini-Yekutieli)."""
    p, ok, order = _finite(pvalues)
    out = np.full(p.shape, np.nan)
    m = len(ok)
    if m:
        factor = np.arange(1, m + 1) / m  # the divisions statsmodels makes, in its order
        if dependent:
            factor = factor / np.sum(1.0 / np.arange(1, m + 1))
        scaled = p[order] / factor
        out[order] = np.minimum(1.0, np.minimum.accumulate(scaled[::-1])[::-1])
    return out


def adjust(pvalues, method: str) -> np.ndarray:
    """Adjusted p-values of the family ``pvalues`` by ``method`` (one of :data:`CORRECTIONS`)."""
    if method == "holm":
        return holm(pvalues)
    if method == "bonferroni":
        return bonferroni(pvalues)
    if method == "bh":
        return benjamini_hochberg(pvalues)
    if method == "by":
        return benjamini_hochberg(pvalues, dependent=True)
    if method == "none":
        return _finite(pvalues)[0].copy()
    raise UsageError(f"unknown correction {method!r} ({', '.join(CORRECTIONS)})")
