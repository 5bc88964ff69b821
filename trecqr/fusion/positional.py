"""Rank-based fusion: each run's documents get a score from their position alone (ISR, RRF,
RBC, BordaFuse, MAPFuse, and the trained PosFuse, ProbFuse, SegFuse, SlideFuse, BayesFuse),
then a combination of :mod:`comb` adds them up.

A position is the document's place (from 0) in the run after normalisation, as ranx reads it:
the run's own order, except after the borda normalisation, which lists every candidate in the
candidates' order. Each transform is one vector expression over the Pool's position matrix.
"""

from __future__ import annotations

import math

import numpy as np

from trecqr.fusion.pool import Pool

# SegFuse's segments: 0-5, 5-15, 15-35, ... (10 * 2^(k-1) - 5), ten of them
SEGMENT_EDGES = np.array([0] + [10 * 2 ** (k - 1) - 5 for k in range(1, 11)])
# BayesFuse's cut-offs
BAYES_CUTOFFS = (0, 5, 10, 15, 20, 30, 100, 200, 500, 1000)


def _scored(pool: Pool, score: np.ndarray) -> Pool:
    return pool.with_scores(np.where(pool.present, score, np.nan))


def _at(table: np.ndarray, pos: np.ndarray, beyond: float = 0.0) -> np.ndarray:
    """table[pos] where pos is inside the table, ``beyond`` elsewhere (and where absent)."""
    inside = (pos >= 0) & (pos < len(table))
    out = np.full(pos.shape, beyond, np.float64)
    out[inside] = table[pos[inside]]
    return out


def _pos(pool: Pool) -> np.ndarray:
    return np.maximum(pool.pos, 0)  # absent (-1): any value, masked by _scored


def isr(pool: Pool) -> Pool:
    return _scored(pool, 1 / (_pos(pool) + 1.0) ** 2)  # float: int32 squares overflow


def rrf(pool: Pool, k: float) -> Pool:
    return _scored(pool, 1 / (k + _pos(pool) + 1))


def rbc(pool: Pool, phi: float) -> Pool:
    return _scored(pool, (1 - phi) * np.power(float(phi), _pos(pool)))


def borda_points(pool: Pool) -> Pool:
    """c - position for a document the run has (c the topic's candidates); a candidate it
    lacks gets (c - n + 1) / 2, n the run's documents, and counts as retrieved."""
    c = np.diff(pool.starts)[pool.topic][:, None]
    points = np.where(pool.present, c - pool.pos, (c - pool.length + 1) / 2)
    return pool.with_scores(points.astype(np.float64), np.zeros_like(pool.pos))


def mapfuse(pool: Pool, map_scores) -> Pool:
    m = np.asarray(map_scores, np.float64)[None, :]
    return _scored(pool, m / (_pos(pool) + 1))


def _per_run(pool: Pool, tables, beyond: float = 0.0) -> np.ndarray:
    out = np.empty(pool.score.shape)
    for r in range(pool.n_runs):
        out[:, r] = _at(np.asarray(tables[r], np.float64), pool.pos[:, r], beyond)
    return out


def posfuse(pool: Pool, probs) -> Pool:
    return _scored(pool, _per_run(pool, probs))


def probfuse(pool: Pool, probs) -> Pool:
    """Segment k of a run of n documents (n_segments equal segments of ceil(n / n_segments))
    scores probs[k] / (k + 1)."""
    out = np.empty(pool.score.shape)
    for r in range(pool.n_runs):
        seg_probs = np.asarray(probs[r], np.float64)
        n_seg = len(seg_probs)
        size = np.maximum(-(-pool.length[:, r] // n_seg), 1)
        seg = np.maximum(pool.pos[:, r], 0) // size
        out[:, r] = (seg_probs / np.arange(1, n_seg + 1))[np.minimum(seg, n_seg - 1)]
    return _scored(pool, out)


def segfuse(pool: Pool, probs) -> Pool:
    """probs[segment of the position] x (normalised score + 1); past the last segment, 0."""
    seg = np.searchsorted(SEGMENT_EDGES, pool.pos, side="right") - 1
    return _scored(pool, _per_run(pool.with_scores(pool.score, seg), probs) * (pool.score + 1))


def slidefuse(pool: Pool, probs, w: int) -> Pool:
    """Mean of probs over the window [p - w, p + w] cut to the run's n documents (probs past
    their end add nothing but the window still counts them), added left to right."""
    out = np.full(pool.score.shape, np.nan)
    for r in range(pool.n_runs):
        p_r = np.asarray(probs[r], np.float64)
        for n in np.unique(pool.length[:, r]):
            rows = np.flatnonzero((pool.length[:, r] == n) & pool.present[:, r])
            if len(rows) == 0:
                continue
            table = _window_means(p_r, int(n), int(w))
            out[rows, r] = table[pool.pos[rows, r]]
    return pool.with_scores(out)


def _window_means(probs: np.ndarray, n: int, w: int) -> np.ndarray:
    w = min(w, n)  # a wider window is cut to the same positions: the work stays O(n * n)
    p = np.arange(n)
    a = np.maximum(p - w, 0)
    b = np.minimum(p + w, n - 1)
    padded = np.zeros(n + 2 * w + len(probs))
    padded[:len(probs)] = probs
    acc = np.zeros(n)
    for d in range(2 * w + 1):  # a + d runs over a .. b (then past b: masked)
        idx = a + d
        acc += np.where(idx <= b, padded[np.minimum(idx, len(padded) - 1)], 0.0)
    return acc / (b - a + 1)


def bayesfuse(pool: Pool, log_odds) -> Pool:
    """log_odds[position] per run; positions past the table score as a missing document."""
    return _scored(pool, _per_run(pool, log_odds, math.log(0.001 / 0.999)))
