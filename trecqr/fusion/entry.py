"""``trecqr.fuse``: fuse two or more runs into one, with ranx's algorithms and normalisations.

    fused = trecqr.fuse(["a.run", "b.run"], method="rrf")            # a trecqr Run
    fused = trecqr.fuse(runs, method="wsum", norm="min-max", weights=[0.7, 0.3])
    fused = trecqr.fuse(runs, method="probfuse", params={"n_segments": 10},
                        train_qrels="train.qrels", train_runs=train_runs)
    fused = trecqr.fuse(runs, method="wsum", optimize="ndcg_cut.3", train_qrels="train.qrels")

Each option of ``trecqr fuse`` has its keyword here: ``--method`` method, ``--norm`` norm,
``--params K=V`` params={K: V}, ``--weights`` weights, ``--train-qrels`` train_qrels,
``--train-run`` train_runs, ``--optimize`` optimize, ``--runid`` runid; ``-o`` is
:func:`trecqr.write_run` on the result.

Runs are paths, ``{qid: {docno: score}}`` dicts, DataFrames or Runs (read as ``eval`` reads
them). The result is in trec_eval's order (score descending, ties by docno descending).
"""

from __future__ import annotations

from trecqr.api.evaluation import load_qrels
from trecqr.errors import UsageError
from trecqr.fusion.checks import check_params, prepared, read_runs, resolve
from trecqr.fusion.methods import Method, fused_scores
from trecqr.fusion.optimize import ONLY_TRAINED, grid_search, trials
from trecqr.fusion.pool import fused_run
from trecqr.fusion.training import train


def default_runid(m: Method, norm, runs) -> str:
    ids = "+".join(r.runid for r in runs)
    return f"{m.name}-{norm or 'none'}-{ids}".replace(" ", "_")


def fuse(runs, method: str = "rrf", norm: str | None = "min-max", params: dict | None = None,
         *, weights=None, train_qrels=None, train_runs=None, optimize: str | None = None,
         runid: str | None = None):
    """Fuse runs (two or more) with method after normalising each with norm (ranx's default
    min-max; None for none). params holds the method's parameters by ranx's names (``k``,
    ``gamma``, ``sigma``, ``phi``, ``n_segments``, ``w``); weights (one per run, for wsum,
    wmnz, mixed, wbordafuse, wcondorcet) is ``params["weights"]``, as ``--weights`` is on the
    command line. The trained methods (posfuse, probfuse, segfuse, slidefuse, mapfuse,
    bayesfuse) take their estimates in params (ranx's ``probs``, ``log_odds``,
    ``map_scores``), or train them here on train_qrels with train_runs (one per run, in the
    same order; the runs themselves if not given), normalised the same way. optimize (a
    measure: ``ndcg``, ``ndcg_cut.3``, ``nDCG@10``...) chooses the weights or parameter by
    ranx's grid search on train_qrels first, as :func:`trecqr.optimize_fusion` does (which
    returns the choice)."""
    m, norm = resolve(method, norm)
    params = with_weights(params, weights)
    loaded = read_runs(runs)
    if len(loaded) < 2:
        raise UsageError("fuse needs two or more runs")
    if train_runs is not None and train_qrels is None:
        raise UsageError("train_runs needs train_qrels")
    training = loaded if train_runs is None else train_runs
    if optimize is not None:
        if train_qrels is None:
            raise UsageError("optimize needs train_qrels (the judgments to search on)")
        params.update(optimized(m, norm, params, train_qrels, training, optimize))
    trains = m.trained and not all(k in params for k in m.trained)
    if trains and train_qrels is None:
        raise UsageError(f"{m.name} is trained: give train_qrels (and train_runs) or "
                         f"{', '.join(m.trained)} in params")
    full = check_params(m, params, len(loaded), trains)
    if trains:
        full.update(trained_params(m, norm, full, train_qrels, training, len(loaded)))
    pool = prepared(loaded, norm)
    return fused_run(pool, fused_scores(m, pool, full), runid or default_runid(m, norm, loaded))


def with_weights(params: dict | None, weights) -> dict:
    """params (a copy) with weights as ``params["weights"]``; both given: a UsageError."""
    full = dict(params or {})
    if weights is not None:
        if "weights" in full:
            raise UsageError("weights given twice: as weights= and in params; give one")
        full["weights"] = weights
    return full


def optimized(m: Method, norm, params: dict, qrels, runs, measure: str) -> dict:
    """The parameters ranx's grid search chooses for m on qrels and runs (the optimize
    option); one already in params would be overridden, so it is refused."""
    searched = list(m.trained) if m.name in ONLY_TRAINED else [trials(m.name, len(runs))[0]]
    given = [k for k in searched if k in params]
    if given:
        raise UsageError(f"optimize chooses {', '.join(given)}: leave {given[0]} out")
    return grid_search(qrels, runs, m.name, norm, measure)[0]


def trained_params(m: Method, norm, params: dict, qrels, runs, n_runs: int) -> dict:
    loaded = read_runs(runs)
    if len(loaded) != n_runs:
        raise UsageError(f"{len(loaded)} training runs for {n_runs} runs")
    return train(m.name, prepared(loaded, norm), load_qrels(qrels), params)
