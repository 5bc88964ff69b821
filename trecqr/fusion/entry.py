"""``trecqr.fuse``: fuse two or more runs into one, with ranx's algorithms and normalisations.

    fused = trecqr.fuse(["a.run", "b.run"], method="rrf")            # a trecqr Run
    fused = trecqr.fuse(runs, method="wsum", norm="min-max", params={"weights": [0.7, 0.3]})
    fused = trecqr.fuse(runs, method="probfuse", params={"n_segments": 10},
                        train_qrels="train.qrels", train_runs=train_runs)

Runs are paths, ``{qid: {docno: score}}`` dicts, DataFrames or Runs (read as ``eval`` reads
them). The result is in trec_eval's order (score descending, ties by docno descending).
"""

from __future__ import annotations

from trecqr.api.evaluation import load_qrels, load_run
from trecqr.errors import UsageError
from trecqr.fusion.methods import Method, fused_scores, method as find_method
from trecqr.fusion.normalization import canonical, normalise
from trecqr.fusion.pool import Pool, build_pool, fused_run
from trecqr.fusion.training import train


def read_runs(runs) -> list:
    """The runs as trecqr Runs: the one place fusion reads its inputs."""
    if isinstance(runs, (str, bytes)) or hasattr(runs, "read"):
        raise UsageError("fuse takes a list of runs")
    return [load_run(r) for r in runs]


def resolve(method, norm):
    """(Method, canonical norm), or a UsageError naming the choices."""
    try:
        return find_method(method), canonical(norm)
    except ValueError as exc:
        raise UsageError(str(exc)) from None


# parameters that count something: (lowest, highest); ranx divides by n_segments and slides a
# window of 2w + 1 positions (a window wider than the run's depth is the whole run)
WHOLE_PARAMS = {"n_segments": (1, 1_000_000), "w": (0, None)}


def whole_param(method: str, key: str, value, low: int, high: int | None) -> int:
    """value as an int, or a UsageError naming the valid range."""
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and value == value \
        and abs(value) != float("inf") and value == int(value) and value >= low \
        and (high is None or value <= high)
    if not ok:
        rng = f"from {low} to {high:,}" if high is not None else f">= {low}"
        raise UsageError(f"{method}: {key} must be a whole number {rng}, got {value!r}")
    return int(value)


def check_params(m: Method, params: dict, n_runs: int, trained: bool) -> dict:
    """params with the method's defaults, checked; trained: training will fill its part."""
    full = dict(m.defaults)
    full.update(params or {})
    need = list(m.params) + ([] if trained else list(m.trained))
    if trained:
        need += list(m.train_params)
    missing = [p for p in need if p not in full]
    if missing:
        extra = " (or train it with train_qrels)" if m.trained and not trained else ""
        raise UsageError(f"{m.name} needs {', '.join(missing)}{extra}")
    for key, (low, high) in WHOLE_PARAMS.items():
        if key in full:
            full[key] = whole_param(m.name, key, full[key], low, high)
    if "weights" in full:
        w = full["weights"]
        if len(w) != n_runs:
            raise UsageError(f"{m.name}: {len(w)} weights for {n_runs} runs")
        full["weights"] = [float(x) for x in w]
    for key in ("probs", "log_odds", "map_scores"):
        if key in full and len(full[key]) != n_runs:
            raise UsageError(f"{m.name}: {key} has {len(full[key])} entries for {n_runs} runs")
    return full


def prepared(runs, norm) -> Pool:
    return normalise(build_pool(runs), norm)


def default_runid(m: Method, norm, runs) -> str:
    ids = "+".join(r.runid for r in runs)
    return f"{m.name}-{norm or 'none'}-{ids}".replace(" ", "_")


def fuse(runs, method: str = "rrf", norm: str | None = "min-max", params: dict | None = None,
         *, train_qrels=None, train_runs=None, runid: str | None = None):
    """Fuse runs (two or more) with method after normalising each with norm (ranx's default
    min-max; None for none). The trained methods (posfuse, probfuse, segfuse, slidefuse,
    mapfuse, bayesfuse) take their estimates in params (ranx's ``probs``, ``log_odds``,
    ``map_scores``), or train them here on train_qrels with train_runs (one per run, in the
    same order; the runs themselves if not given), normalised the same way."""
    m, norm = resolve(method, norm)
    loaded = read_runs(runs)
    if len(loaded) < 2:
        raise UsageError("fuse needs two or more runs")
    trains = m.trained and not all(k in (params or {}) for k in m.trained)
    if trains and train_qrels is None:
        raise UsageError(f"{m.name} is trained: give train_qrels (and train_runs) or "
                         f"{', '.join(m.trained)} in params")
    full = check_params(m, params, len(loaded), trains)
    if trains:
        full.update(trained_params(m, norm, full, train_qrels,
                                   loaded if train_runs is None else train_runs, len(loaded)))
    pool = prepared(loaded, norm)
    return fused_run(pool, fused_scores(m, pool, full), runid or default_runid(m, norm, loaded))


def trained_params(m: Method, norm, params: dict, qrels, runs, n_runs: int) -> dict:
    loaded = read_runs(runs)
    if len(loaded) != n_runs:
        raise UsageError(f"{len(loaded)} training runs for {n_runs} runs")
    return train(m.name, prepared(loaded, norm), load_qrels(qrels), params)
