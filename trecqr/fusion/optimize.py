"""``optimize_fusion``: ranx's grid search of a method's weights or parameter on training qrels.

The grids are ranx's: weights in steps of 0.1 from 0 to 1 for every run, only the
combinations whose sum is exactly 1.0 (as Python adds them; WSUM, WMNZ, Mixed, weighted
BordaFuse and Condorcet); gamma, sigma and phi from 0.01 to 1.0 by 0.01 (CombGMNZ, logN_ISR,
RBC); RRF's k from 10 to 100 by 10; ProbFuse's number of segments and SlideFuse's window from 1
to 100. Each trial fuses the training runs and scores them with ``measure`` (any measure
``trecqr.evaluate`` takes: ``ndcg``, ``map``, ``nDCG@10``...); the last trial with the best
score wins, as in ranx (``>=``). PosFuse, SegFuse, MAPFuse and BayesFuse have nothing to
search: they are trained. The scores are trecqr's (trec_eval's), so where ranx's measure
differs from trec_eval's, the choice may differ too.
"""

from __future__ import annotations

from itertools import product

import numpy as np

from trecqr.api.evaluation import evaluate, load_qrels
from trecqr.errors import UsageError
from trecqr.fusion.checks import check_params, prepared, read_runs, resolve
from trecqr.fusion.methods import fused_scores
from trecqr.fusion.pool import fused_run
from trecqr.fusion.training import train

WEIGHTED = ("wsum", "wmnz", "mixed", "wbordafuse", "wcondorcet")
ONLY_TRAINED = ("posfuse", "segfuse", "mapfuse", "bayesfuse")


def _grid(lo: float, hi: float, step: float) -> list:
    digits = str(step)[::-1].find(".")
    return [round(x, digits) for x in np.arange(lo, hi + step, step)]


def weight_grid(n_runs: int, step: float = 0.1) -> list:
    weights = _grid(0, 1, step)
    return [list(seq) for seq in product(*[weights] * n_runs) if sum(seq) == 1.0]


#: the methods with one parameter: its name and its grid, as ranx's optimize_fusion searches it
_GRIDS = {
    "combgmnz": ("gamma", lambda: _grid(0.01, 1.0, 0.01)),
    "logn_isr": ("sigma", lambda: _grid(0.01, 1.0, 0.01)),
    "rbc": ("phi", lambda: _grid(0.01, 1.0, 0.01)),
    "rrf": ("k", lambda: list(range(10, 101, 10))),
    "probfuse": ("n_segments", lambda: list(range(1, 101))),
    "slidefuse": ("w", lambda: list(range(1, 101))),
}


def trials(method: str, n_runs: int) -> tuple:
    """(parameter name, values) of method's grid."""
    if method in WEIGHTED:
        return "weights", weight_grid(n_runs)
    if method in _GRIDS:
        name, grid = _GRIDS[method]
        return name, grid()
    raise UsageError(f"{method} has no parameter to optimise (ranx's optimize_fusion "
                     f"supports {', '.join(WEIGHTED + tuple(_GRIDS) + ONLY_TRAINED)})")


def grid_search(qrels, runs, method: str = "wsum", norm="min-max", measure: str = "ndcg"):
    """(best parameters, their score, parameter name or None) of method on qrels and runs."""
    m, norm = resolve(method, norm)
    loaded = read_runs(runs)
    if len(loaded) < 2:
        raise UsageError("fuse needs two or more runs")
    q = load_qrels(qrels)
    pool = prepared(loaded, norm)
    if m.name in ONLY_TRAINED:
        return train(m.name, pool, q, {}), None, None
    name, values = trials(m.name, len(loaded))
    fixed = {}
    if m.name == "slidefuse":
        fixed = train(m.name, pool, q, {})
    best, best_score = None, 0.0
    for value in values:
        params = dict(fixed, **{name: value})
        if m.name == "probfuse":
            params.update(train(m.name, pool, q, params))
        full = check_params(m, params, len(loaded), False)
        fused = fused_run(pool, fused_scores(m, pool, full), "trial")
        score = next(iter(evaluate(q, fused, [measure]).aggregate().values()), 0.0)
        if best is None or score >= best_score:
            best, best_score = params, score
    return best, best_score, name


def optimize_fusion(qrels, runs, norm="min-max", method: str = "wsum", metric: str = "ndcg"):
    """ranx's ``optimize_fusion``: the best parameters of method on qrels and runs, as a dict
    to pass to :func:`trecqr.fuse` as ``params``."""
    return grid_search(qrels, runs, method, norm, metric)[0]
