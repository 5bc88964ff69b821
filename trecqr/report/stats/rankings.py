"""Two rankings of the same systems (say, the ranking human qrels give a set of runs under a
measure, and the ranking LLM qrels give them): how far they agree.

Each function takes two score vectors over the same systems, ``x[i]`` and ``y[i]`` being
system i's score (a mean over topics) under the first and the second judgments; a higher
score ranks higher. They differ in what they count:

* :func:`kendall_tau` - Kendall's tau-b: concordant minus discordant pairs, corrected for
  ties; equals ``scipy.stats.kendalltau(x, y).statistic`` (variant "b").
* :func:`spearman` - Spearman's rho: Pearson's correlation of the ranks (ties get their
  average rank); equals ``scipy.stats.spearmanr(x, y).statistic``.
* :func:`tau_ap` - Yilmaz, Aslam and Robertson's AP correlation (SIGIR 2008): like tau, but a
  swap near the top costs more. Asymmetric: ``x`` is the reference ranking (the human
  qrels), ``y`` the one judged against it.
* :func:`rbo` - Webber, Moffat and Zobel's rank-biased overlap (TOIS 2010), the extrapolated
  RBO_ext (their eq. 32) of the two full rankings with persistence ``p``: top-weighted
  overlap, 1 for the same order.

tau_AP and RBO are defined for rankings without ties; they refuse tied scores (name the
systems that tie, and break the tie or leave one out) rather than break them arbitrarily.
"""

from __future__ import annotations

import numpy as np
from scipy import stats

from trecqr.errors import UsageError
from trecqr.report.stats.paired import paired_arrays


def _scores(x, y) -> tuple[np.ndarray, np.ndarray]:
    x, y = paired_arrays(x, y, "system scores")
    if len(x) < 2:
        raise UsageError("a ranking agreement needs at least two systems")
    if not (np.all(np.isfinite(x)) and np.all(np.isfinite(y))):
        raise UsageError("system scores must be finite numbers")
    return x, y


def _no_ties(v: np.ndarray, which: str) -> None:
    values, counts = np.unique(v, return_counts=True)
    if np.any(counts > 1):
        tied = np.flatnonzero(v == values[np.argmax(counts > 1)])
        raise UsageError(f"systems {', '.join(str(int(i)) for i in tied)} tie at "
                         f"{float(v[tied[0]])!r} in {which}; this measure needs a ranking "
                         "without ties")


def kendall_tau(x, y) -> float:
    """Kendall's tau-b: (C - D) / sqrt((P - T_x) (P - T_y)), over the P = n(n-1)/2 pairs of
    systems, C and D the concordant and discordant pairs, T_x and T_y the pairs tied in x and
    in y. nan when either ranking is all ties."""
    x, y = _scores(x, y)
    i, j = np.triu_indices(len(x), 1)
    sx, sy = np.sign(x[i] - x[j]), np.sign(y[i] - y[j])
    pairs = len(i)
    denom = np.sqrt(float(pairs - np.count_nonzero(sx == 0)) *
                    float(pairs - np.count_nonzero(sy == 0)))
    return float(np.sum(sx * sy) / denom) if denom else float("nan")


def spearman(x, y) -> float:
    """Spearman's rho: Pearson's correlation of the average ranks of x and of y."""
    x, y = _scores(x, y)
    rx, ry = stats.rankdata(x), stats.rankdata(y)
    rx -= rx.mean()
    ry -= ry.mean()
    denom = np.sqrt(np.sum(rx * rx) * np.sum(ry * ry))
    return float(np.sum(rx * ry) / denom) if denom else float("nan")


def tau_ap(x, y) -> float:
    """AP correlation of ranking ``y`` against the reference ``x`` (no ties in either):
    tau_AP = 2 / (n - 1) * sum_{i=2..n} C(i) / (i - 1) - 1, where i runs over the positions of
    y's ranking and C(i) counts the systems y places above position i that x also ranks above
    that system. Identical rankings give 1, reversed ones -1."""
    x, y = _scores(x, y)
    _no_ties(x, "the reference ranking")
    _no_ties(y, "the compared ranking")
    order = np.argsort(-y, kind="stable")
    xs = x[order]  # reference scores in y's order
    above = xs[None, :] > xs[:, None]  # above[i, j]: x ranks the system at j above i's
    correct = np.tril(above, k=-1).sum(axis=1)[1:]  # only j before i in y's order
    n = len(x)
    return float(2.0 / (n - 1) * np.sum(correct / np.arange(1, n)) - 1.0)


def rbo(x, y, p: float = 0.9) -> float:
    """Extrapolated rank-biased overlap RBO_ext of the rankings by x and by y (no ties),
    Webber et al. 2010 eq. 32 for two rankings of the same k systems:
    RBO_ext = (X_k / k) p^k + (1 - p) / p * sum_{d=1..k} (X_d / d) p^d, X_d the number of
    systems both rankings place in their top d (X_k = k)."""
    x, y = _scores(x, y)
    if not 0 < p < 1:
        raise UsageError(f"RBO's persistence p must be between 0 and 1 (got {p!r})")
    _no_ties(x, "the first ranking")
    _no_ties(y, "the second ranking")
    k = len(x)
    depth_x = np.empty(k, dtype=np.int64)
    depth_y = np.empty(k, dtype=np.int64)
    depth_x[np.argsort(-x, kind="stable")] = np.arange(1, k + 1)
    depth_y[np.argsort(-y, kind="stable")] = np.arange(1, k + 1)
    # a system is in both tops from depth max(its two ranks) on: X_d = #{max <= d}
    overlap = np.cumsum(np.bincount(np.maximum(depth_x, depth_y), minlength=k + 1)[1:])
    d = np.arange(1, k + 1)
    weights = p ** d.astype(np.float64)
    return float(overlap[-1] / k * p ** k + (1 - p) / p * np.sum(overlap / d * weights))
