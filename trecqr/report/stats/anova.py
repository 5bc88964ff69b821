"""Many systems over the same topics: two-way ANOVA and Tukey's HSD, classical and randomised.

Every function takes ``scores``, a systems x topics matrix (row i: system i's per-topic
scores, column k: topic k for every system, no missing cell). Comparing m systems pairwise
with m(m-1)/2 separate paired tests inflates the family-wise error; Tukey's HSD tests every
pair at once against the distribution of the largest difference between m means.

* :func:`two_way_anova` - systems x topics without replication (one score per cell): sums of
  squares, F and p for systems and for topics, and the system effect's size (eta^2, partial
  eta^2, omega^2, partial omega^2). Equals statsmodels'
  ``anova_lm(ols("score ~ C(system) + C(topic)"))``.
* :func:`tukey_hsd` - the classical (parametric) HSD, every pair's p from the studentized
  range distribution. ``design="one-way"`` is the textbook one-way test that statsmodels'
  ``pairwise_tukeyhsd(scores.ravel(), system labels)``, ``scipy.stats.tukey_hsd`` and
  ranx's ``compare(stat_test="tukey")`` compute: topics are ignored, the error variance is
  the within-system variance with m(n-1) degrees of freedom. ``design="two-way"`` (default)
  blocks on topics, as the scores are paired: the error variance is the two-way ANOVA's
  residual V_E with (m-1)(n-1) degrees of freedom, the paired form Sakai describes
  (*Laboratory Experiments in Information Retrieval*, 2018). elinor's ``TukeyHsdTest`` uses
  the same V_E but takes its p-values from Student's t, unadjusted for the m means.
* :func:`randomized_tukey_hsd` - Carterette's randomised Tukey HSD (TOIS 2012): on every
  permutation, each topic's scores are shuffled among the systems; the statistic is the
  largest minus the smallest permuted system mean; pair (i, j)'s p is the share of
  permutations whose statistic reaches |mean_i - mean_j|. Seeded, repeatable.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import stats

from trecqr.errors import UsageError

DESIGNS = ("two-way", "one-way")
BLOCK_CELLS = 4_000_000  # permuted scores held at once (32 MB): the draws per block follow


def _matrix(scores) -> np.ndarray:
    x = np.asarray(scores, dtype=np.float64)
    if x.ndim != 2:
        raise UsageError(f"scores must be a systems x topics matrix (got shape {x.shape})")
    if x.shape[0] < 2 or x.shape[1] < 2:
        raise UsageError(f"scores need at least 2 systems and 2 topics (got {x.shape[0]} "
                         f"x {x.shape[1]})")
    if not np.all(np.isfinite(x)):
        raise UsageError("scores must be finite numbers (a topic a system lacks is a choice "
                         "to make before the test: drop it, or count it 0)")
    return x


@dataclass(frozen=True)
class TwoWayAnova:
    """Two-way ANOVA without replication of a systems x topics matrix (m systems, n topics).

    ss_*: sums of squares (S_A systems, S_B topics, S_E residual, S_T total = S_A + S_B +
    S_E); df_*: degrees of freedom (m-1, n-1, (m-1)(n-1)); ms_*: mean squares (S / df);
    f_*, p_*: F = ms / ms_error and its upper-tail p.

    The system effect's size, with phi_A = m-1 and V_E = ms_error:
    eta2 = S_A / S_T; partial_eta2 = S_A / (S_A + S_E);
    omega2 = (S_A - phi_A V_E) / (S_T + V_E);
    partial_omega2 = phi_A (F_A - 1) / (phi_A (F_A - 1) + m n).
    """

    systems: int
    topics: int
    ss_system: float
    ss_topic: float
    ss_error: float
    ss_total: float
    df_system: int
    df_topic: int
    df_error: int
    ms_system: float
    ms_topic: float
    ms_error: float
    f_system: float
    p_system: float
    f_topic: float
    p_topic: float
    eta2: float
    partial_eta2: float
    omega2: float
    partial_omega2: float


def two_way_anova(scores) -> TwoWayAnova:
    """Two-way ANOVA without replication (systems x topics) of ``scores``; see
    :class:`TwoWayAnova`."""
    x = _matrix(scores)
    m, n = x.shape
    grand = x.mean()
    sys_means = x.mean(axis=1)
    top_means = x.mean(axis=0)
    ss_a = n * float(np.sum((sys_means - grand) ** 2))
    ss_b = m * float(np.sum((top_means - grand) ** 2))
    ss_e = float(np.sum((x - sys_means[:, None] - top_means[None, :] + grand) ** 2))
    ss_t = float(np.sum((x - grand) ** 2))
    df_a, df_b, df_e = m - 1, n - 1, (m - 1) * (n - 1)
    ms_a, ms_b, ms_e = ss_a / df_a, ss_b / df_b, ss_e / df_e
    with np.errstate(divide="ignore", invalid="ignore"):
        f_a = np.float64(ms_a) / ms_e
        f_b = np.float64(ms_b) / ms_e
    p_a = float(stats.f.sf(f_a, df_a, df_e))
    p_b = float(stats.f.sf(f_b, df_b, df_e))
    part = df_a * (float(f_a) - 1)
    return TwoWayAnova(
        m, n, ss_a, ss_b, ss_e, ss_t, df_a, df_b, df_e, ms_a, ms_b, ms_e, float(f_a), p_a,
        float(f_b), p_b, ss_a / ss_t if ss_t else float("nan"),
        ss_a / (ss_a + ss_e) if ss_a + ss_e else float("nan"),
        (ss_a - df_a * ms_e) / (ss_t + ms_e) if ss_t + ms_e else float("nan"),
        part / (part + m * n) if part + m * n else float("nan"))


@dataclass(frozen=True)
class PairwiseTest:
    """Every pair of systems compared at once.

    means[i]: system i's mean over the topics; diff[i, j] = means[j] - means[i];
    pvalues[i, j] = pvalues[j, i]: the pair's p-value (diagonal nan); statistic[i, j]: the
    studentized range q = |diff| / sqrt(variance / n) (classical) or |diff| (randomised);
    variance, df: the error variance and its degrees of freedom (classical only);
    permutations, seed: the randomised test's draws (0 and None for the classical one).
    """

    method: str
    means: np.ndarray
    diff: np.ndarray
    statistic: np.ndarray
    pvalues: np.ndarray
    variance: float = float("nan")
    df: int = 0
    permutations: int = 0
    seed: object = None

    def pairs(self) -> list:
        """(i, j, diff, p) for every pair i < j, in row order."""
        i, j = np.triu_indices(len(self.means), 1)
        return [(int(a), int(b), float(self.diff[a, b]), float(self.pvalues[a, b]))
                for a, b in zip(i, j)]


def _diffs(means: np.ndarray) -> np.ndarray:
    return means[None, :] - means[:, None]


def tukey_hsd(scores, design: str = "two-way") -> PairwiseTest:
    """Tukey's HSD for every pair of systems (rows of ``scores``), classical: p_ij =
    P(Q > q_ij) under the studentized range distribution of m means with the design's error
    degrees of freedom (``scipy.stats.studentized_range``). See the module docstring for the
    two designs."""
    x = _matrix(scores)
    m, n = x.shape
    means = x.mean(axis=1)
    if design == "two-way":
        res = two_way_anova(x)
        variance, df = res.ms_error, res.df_error
    elif design == "one-way":
        df = m * (n - 1)
        variance = float(np.sum((x - means[:, None]) ** 2)) / df
    else:
        raise UsageError(f"unknown design {design!r} ({', '.join(DESIGNS)})")
    diff = _diffs(means)
    with np.errstate(divide="ignore", invalid="ignore"):
        q = np.abs(diff) / np.sqrt(variance / n)
    p = np.asarray(stats.studentized_range.sf(q, m, df), dtype=np.float64)
    p[np.isnan(q) & (diff == 0)] = 1.0  # no variance and no difference: nothing to test
    np.fill_diagonal(p, np.nan)
    return PairwiseTest(f"tukey-hsd ({design})", means, diff, q, p, variance, df)


def randomized_tukey_hsd(scores, permutations: int = 10000, seed=0) -> PairwiseTest:
    """Carterette's randomised Tukey HSD for every pair of systems (rows of ``scores``).

    Each of the ``permutations`` draws shuffles every topic's column independently among the
    systems (``Generator.permuted`` of ``numpy.random.default_rng(seed)``, in blocks of at
    most :data:`BLOCK_CELLS` scores; the shuffles consume the stream in order, so the same
    seed gives the same p-values whatever the block size) and records the range
    max_i mean_i - min_i mean_i of the permuted system means. p_ij = (count + 1) /
    (permutations + 1), count = the number of draws whose range is at least
    |mean_i - mean_j| (within a relative 1e-12, so that float noise does not decide a tie);
    the +1 counts the observed assignment, as :func:`trecqr.report.stats.paired.randomization_test`
    does. With two systems this is the paired randomization test."""
    x = _matrix(scores)
    if permutations < 1:
        raise UsageError("permutations must be at least 1")
    m, n = x.shape
    means = x.sum(axis=1) / n
    diff = _diffs(means)
    observed = np.abs(diff)
    topics = np.ascontiguousarray(x.T)  # n x m: a row per topic, shuffled within the row
    rng = np.random.default_rng(seed)
    ranges = np.empty(permutations)
    per_block = max(1, BLOCK_CELLS // (n * m))
    done = 0
    while done < permutations:
        k = min(per_block, permutations - done)
        block = np.broadcast_to(topics, (k, n, m)).copy()
        rng.permuted(block, axis=2, out=block)
        sums = block.sum(axis=1) / n
        ranges[done:done + k] = sums.max(axis=1) - sums.min(axis=1)
        done += k
    ranges.sort()
    tol = 1e-12 * max(1.0, float(np.abs(x).sum(axis=1).max()) / n)
    count = permutations - np.searchsorted(ranges, (observed - tol).ravel(), side="left")
    p = (count.reshape(m, m) + 1) / (permutations + 1)
    np.fill_diagonal(p, np.nan)
    return PairwiseTest("randomized tukey-hsd", means, diff, observed, p,
                        permutations=permutations, seed=seed)
