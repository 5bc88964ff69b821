"""Score normalisations applied to each run, per topic, before fusion: ranx's seven (min-max,
min-max-inverted, max, sum, zmuv, rank, borda) with ranx's definitions, floors included.

Each works on the Pool's score matrix (NaN where a run lacks a candidate) with one reduction
per topic (``np.*.reduceat`` over the topic starts). ranx's definitions, per run and topic:

- ``min-max``: (s - min) / max(max - min, 1e-9), so a topic with one document (or all scores
  equal) gets 0, not 1;
- ``max``: s / max(max, 1e-9) (a topic whose best score is not positive divides by 1e-9);
- ``sum``: (s - min) / max(sum - min * n, 1e-9);
- ``zmuv``: (s - mean) / max(std, 1e-9), the population standard deviation;
- ``rank``: 1 - position / n (position from 0);
- ``borda``: 1 - position / c for a document the run has, c the topic's candidates (every
  document of any run); a candidate the run lacks is added to it with
  0.5 - (n - 1) / (2 c). The run then lists every candidate, in the candidates' order, and
  that order (not the scores) is what rank-based fusion reads as its ranking, as in ranx.
"""

from __future__ import annotations

import numpy as np

from trecqr.runtime.deferred import pc
from trecqr.formats.arrays import as_numpy
from trecqr.fusion.pool import Pool

NORMS = ("min-max", "min-max-inverted", "max", "sum", "zmuv", "rank", "borda")
ALIASES = {"min_max": "min-max", "minmax": "min-max", "min_max_inverted": "min-max-inverted",
           "none": None}
FLOOR = 1e-9


def _ends(pool: Pool):
    """Each (topic, run)'s highest and lowest score, as (topics x runs) tables: the scores at
    its first and last position (a run's raw scores fall with its positions)."""
    n_topics = len(pool.topics)
    first = np.full((n_topics, pool.n_runs), -np.inf)
    last = np.full((n_topics, pool.n_runs), np.inf)
    rows, runs = np.nonzero(pool.pos == 0)
    first[pool.topic[rows], runs] = pool.score[rows, runs]
    rows, runs = np.nonzero(pool.present & (pool.pos == pool.length - 1))
    last[pool.topic[rows], runs] = pool.score[rows, runs]
    return first, last


def _scaled(pool: Pool, offset: np.ndarray | None, divisor: np.ndarray) -> np.ndarray:
    """(score - offset) / divisor, offset and divisor per (topic, run), taken to the rows one
    table at a time and applied in place (the same doubles as the expression on whole
    matrices, without its temporaries)."""
    if offset is None:
        out = pool.score.copy()
    else:
        out = offset[pool.topic]
        np.subtract(pool.score, out, out=out)
    out /= divisor[pool.topic]
    return out


def _sequential_sum(pool: Pool, values: np.ndarray) -> np.ndarray:
    """Sum over each topic's documents in each run's rank order, added one by one as ranx's
    numba ``sum`` does (numpy's pairwise sum rounds differently)."""
    n_topics = len(pool.topics)
    total = np.zeros((n_topics, pool.n_runs))
    if len(values) == 0:
        return total[pool.topic]
    depth = int(pool.pos.max()) + 1
    for r in range(pool.n_runs):
        rows = np.flatnonzero(pool.present[:, r])
        grid = np.zeros((depth, n_topics))
        grid[pool.pos[rows, r], pool.topic[rows]] = values[rows, r]
        acc = total[:, r].copy()
        for p in range(depth):
            acc += grid[p]
        total[:, r] = acc
    return total[pool.topic]


def min_max(pool: Pool, floor: float = FLOOR, constant: float | None = None) -> Pool:
    """ranx's min-max; floor=0 with constant=1.0 is the plain one sim_ret++'s CombSUM uses
    ((s - min) / (max - min), a topic whose scores are all equal gets 1)."""
    s = pool.score
    hi, lo = _ends(pool)
    if constant is None:
        return pool.with_scores(_scaled(pool, lo, np.maximum(hi - lo, floor)))
    hi, lo = hi[pool.topic], lo[pool.topic]
    flat = hi == lo
    with np.errstate(invalid="ignore", divide="ignore"):
        scaled = (s - lo) / np.where(flat, 1.0, hi - lo)
    return pool.with_scores(np.where(flat & pool.present, constant, scaled))


def _reranked(pool: Pool, score: np.ndarray) -> np.ndarray:
    """Each run's positions once its rows are sorted again by score (descending per topic,
    ties by docno descending, in bytes as trec_eval compares them), -1 where absent."""
    docno = pool.docno
    drank = np.empty(len(docno), np.int64)  # each candidate's docno's rank in byte order
    drank[as_numpy(pc.sort_indices(docno))] = np.arange(len(docno))
    pos = np.full(score.shape, -1, np.int64)
    for r in range(pool.n_runs):
        rows = np.flatnonzero(pool.present[:, r])
        rows = rows[np.lexsort((-drank[rows], -score[rows, r], pool.topic[rows]))]
        topic = pool.topic[rows]
        first = np.searchsorted(topic, topic)  # the topic's first row in the new order
        pos[rows, r] = np.arange(len(rows)) - first
    return pos


def min_max_inverted(pool: Pool) -> Pool:
    """ranx's min-max with invert: the lowest score becomes 1; the run is ranked again."""
    hi, lo = _ends(pool)
    score = (hi[pool.topic] - pool.score) / np.maximum(hi - lo, FLOOR)[pool.topic]
    return pool.with_scores(score, _reranked(pool, score), pool.length)


def max_norm(pool: Pool) -> Pool:
    hi, _ = _ends(pool)
    return pool.with_scores(_scaled(pool, None, np.maximum(hi, FLOOR)))


def sum_norm(pool: Pool) -> Pool:
    s = pool.score
    _, lo = _ends(pool)
    lo = lo[pool.topic]
    total = _sequential_sum(pool, s)
    return pool.with_scores((s - lo) / np.maximum(total - lo * pool.length, FLOOR))


def zmuv(pool: Pool) -> Pool:
    s = pool.score
    n = np.maximum(pool.length, 1)
    mean = _sequential_sum(pool, s) / n
    dev = np.where(pool.present, s - mean, 0.0)
    std = np.sqrt(_sequential_sum(pool, dev * dev) / n)
    return pool.with_scores((s - mean) / np.maximum(std, FLOOR))


def rank_norm(pool: Pool) -> Pool:
    score = 1 - pool.pos / np.maximum(pool.length, 1)
    return pool.with_scores(np.where(pool.present, score, np.nan))


def borda(pool: Pool) -> Pool:
    n_cand = np.diff(pool.starts)[pool.topic][:, None].astype(np.float64)
    mine = 1 - pool.pos / n_cand
    missing = 0.5 - (pool.length - 1) / (2 * n_cand)
    score = np.where(pool.present, mine, missing)
    order = (np.arange(len(pool.topic)) - pool.starts[pool.topic])[:, None]
    pos = np.broadcast_to(order, score.shape).copy()
    length = np.broadcast_to(n_cand.astype(np.int64), score.shape).copy()
    return pool.with_scores(score, pos, length)


_BY_NAME = {"min-max": min_max, "min-max-inverted": min_max_inverted, "max": max_norm,
            "sum": sum_norm, "zmuv": zmuv, "rank": rank_norm, "borda": borda}


def canonical(name):
    """The normalisation's canonical name (None for none), or a ValueError."""
    if name is None:
        return None
    key = str(name).lower()
    key = ALIASES.get(key, key)
    if key is not None and key not in _BY_NAME:
        raise ValueError(f"unknown normalisation {name!r} (use {', '.join(NORMS)} or none)")
    return key


def normalise(pool: Pool, name) -> Pool:
    key = canonical(name)
    return pool if key is None else _BY_NAME[key](pool)
