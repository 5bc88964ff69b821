"""Condorcet fusion (Montague & Aslam) and its weighted form, as ranx runs it: the topic's
candidates, in the Pool's candidate order, sorted by Python's sort with a pairwise-majority
comparison; the i-th of c sorted documents scores c - i.

The comparison is ranx's: x goes before y when the runs (or weights) ranking x above y are at
least as many as the others; a run lacking a document ranks it at 1,000,000, so a run lacking
both votes for y. This "order" is not transitive (it is a majority vote), so the result
depends on the sort's algorithm and on the order it starts from: trecqr uses the same sort
(``sorted`` with ``cmp_to_key``) and starts from the candidates' first-appearance order over the
runs as they are ranked after normalisation (min-max-inverted ranks them again), where ranx
starts from a Python set's order (PYTHONHASHSEED-dependent).
"""

from __future__ import annotations

from functools import cmp_to_key
from itertools import compress
from operator import ge, lt

import numpy as np

from trecqr.fusion.pool import Pool

ABSENT = 1_000_000


def _ranks(pool: Pool) -> list:
    return np.where(pool.present, pool.pos, ABSENT).tolist()


def _first_appearance(pool: Pool) -> np.ndarray:
    """Candidates ordered topic by topic by first appearance over the runs taken in turn, each
    in its current ranking: by the first run that has the candidate, then its position there
    (the Pool's own candidate order while no normalisation has ranked the runs again)."""
    first = np.argmax(pool.present, axis=1)
    return np.lexsort((pool.pos[np.arange(len(first)), first], first, pool.topic))


def condorcet(pool: Pool, weights=None) -> np.ndarray:
    ranks = _ranks(pool)
    start = _first_appearance(pool).tolist()
    fused = np.empty(len(ranks))
    n_runs = pool.n_runs
    w = None if weights is None else [float(x) for x in weights]

    for t in range(len(pool.topics)):
        lo, hi = int(pool.starts[t]), int(pool.starts[t + 1])
        mine = ranks[lo:hi]
        if w is None:
            def cmp(x, y, mine=mine):
                votes = sum(map(lt, mine[x], mine[y]))
                return -1 if 2 * votes >= n_runs else 1
        else:
            def cmp(x, y, mine=mine):
                above = list(map(lt, mine[x], mine[y]))
                x_votes = sum(compress(w, above))
                y_votes = sum(compress(w, map(ge, mine[x], mine[y])))
                return -1 if x_votes >= y_votes else 1
        order = sorted([c - lo for c in start[lo:hi]], key=cmp_to_key(cmp))
        fused[lo + np.asarray(order, np.int64)] = np.arange(hi - lo, 0, -1, dtype=np.float64)
    return fused
