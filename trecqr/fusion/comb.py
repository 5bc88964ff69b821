"""Score combinations over the runs (Fox & Shaw's Comb family, Lee's CombGMNZ, weighted sums):
one vector operation per run on the Pool's score columns.

Sums add the runs one after another in the runs' order (run 1 + run 2 + ...), as ranx's
``sum([...])`` does, so that fused scores are the same doubles and ties fall the same way.
A document a run lacks adds 0 (CombSUM, WSUM), counts -1e9 for CombMAX and 1e9 for CombMIN
(ranx's fill values), and is left out of CombMED, CombANZ, CombMNZ and the other "non-zero"
combinations, which count the runs that have the document.
"""

from __future__ import annotations

import numpy as np

from trecqr.fusion.pool import Pool


def _filled(pool: Pool, fill: float) -> np.ndarray:
    return np.where(pool.present, pool.score, fill)


def present_sum(pool: Pool, weights=None) -> np.ndarray:
    """Sum over runs (in order) of each candidate's scores, absent ones adding 0."""
    s = _filled(pool, 0.0)
    acc = np.zeros(len(s))
    for r in range(pool.n_runs):
        acc += s[:, r] if weights is None else weights[r] * s[:, r]
    return acc


def hits(pool: Pool) -> np.ndarray:
    """How many runs have each candidate."""
    return pool.present.sum(axis=1)


def comb_sum(pool: Pool) -> np.ndarray:
    return present_sum(pool)


def comb_max(pool: Pool) -> np.ndarray:
    return _filled(pool, -1e9).max(axis=1)


def comb_min(pool: Pool) -> np.ndarray:
    return _filled(pool, 1e9).min(axis=1)


def comb_med(pool: Pool) -> np.ndarray:
    """Median of the scores of the runs that have the document (the mean of the middle two
    for an even count)."""
    ordered = np.sort(pool.score, axis=1)  # NaN (absent) last
    n = hits(pool)
    rows = np.arange(len(n))
    hi = ordered[rows, n // 2]
    lo = ordered[rows, np.maximum((n - 1) // 2, 0)]
    return np.where(n % 2 == 1, hi, (lo + hi) / 2)


def comb_anz(pool: Pool) -> np.ndarray:
    return present_sum(pool) / hits(pool)


def comb_mnz(pool: Pool) -> np.ndarray:
    return present_sum(pool) * hits(pool)


def comb_gmnz(pool: Pool, gamma: float) -> np.ndarray:
    return present_sum(pool) * hits(pool).astype(np.float64) ** gamma


def log_mnz(pool: Pool) -> np.ndarray:
    """sum x log(count): log_ISR's combination."""
    return present_sum(pool) * np.log(hits(pool))


def logn_mnz(pool: Pool, sigma: float) -> np.ndarray:
    """sum x log(count + sigma): logN_ISR's combination."""
    return present_sum(pool) * np.log(hits(pool) + sigma)


def wsum(pool: Pool, weights) -> np.ndarray:
    return present_sum(pool, weights)


def wmnz(pool: Pool, weights) -> np.ndarray:
    """Sum of the scores times the sum of the weights of the runs that have the document."""
    w = np.zeros(len(pool.score))
    present = pool.present
    for r in range(pool.n_runs):
        w += np.where(present[:, r], weights[r], 0.0)
    return present_sum(pool) * w


def mixed(pool: Pool, weights) -> np.ndarray:
    """Weighted sum over the runs that have the document times sqrt(count)."""
    return present_sum(pool, weights) * np.sqrt(hits(pool))


def sum_odds(pool: Pool) -> np.ndarray:
    """BayesFuse's sum of log-odds; a run lacking the document adds log(0.001 / 0.999)."""
    s = _filled(pool, np.log(0.001 / 0.999))
    acc = np.zeros(len(s))
    for r in range(pool.n_runs):
        acc += s[:, r]
    return acc
