"""What fusion checks and prepares before it fuses: the runs read, the method and norm
resolved, the parameters checked against the method and the number of runs.

Shared by :func:`~trecqr.fusion.entry.fuse`, the grid search
(:mod:`~trecqr.fusion.optimize`) and the command line's checks before reading, so that the
three refuse the same things in the same words.
"""

from __future__ import annotations

from trecqr.api.evaluation import load_run
from trecqr.errors import UsageError
from trecqr.formats.inputs import named_runs
from trecqr.fusion.methods import Method, method as find_method
from trecqr.fusion.normalization import canonical, normalise
from trecqr.fusion.pool import Pool, build_pool


def read_runs(runs) -> list:
    """The runs as trecqr Runs: the one place fusion reads its inputs."""
    if isinstance(runs, (str, bytes)) or hasattr(runs, "read"):
        raise UsageError("fuse takes a list of runs")
    return [load_run(r) for r in named_runs(runs, door="fuse")[0]]


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
    allowed = set(m.params) | set(m.defaults) | set(m.trained) | set(m.train_params)
    unknown = [k for k in full if k not in allowed]
    if unknown:  # ignored, it would fuse with the defaults and say nothing
        takes = ", ".join(sorted(allowed)) or "no parameter"
        raise UsageError(f"{m.name} takes no {unknown[0]} (it takes {takes})")
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
        if isinstance(w, (str, bytes)) or not hasattr(w, "__len__"):
            raise UsageError(f"{m.name}: weights must be one number per run, got {w!r}")
        if len(w) != n_runs:
            raise UsageError(f"{m.name}: {len(w)} weights for {n_runs} runs")
        try:
            full["weights"] = [float(x) for x in w]
        except (TypeError, ValueError):
            raise UsageError(f"{m.name}: weights must be numbers, got {list(w)!r}") from None
    for key in ("probs", "log_odds", "map_scores"):
        if key in full and len(full[key]) != n_runs:
            raise UsageError(f"{m.name}: {key} has {len(full[key])} entries for {n_runs} runs")
    return full


def prepared(runs, norm) -> Pool:
    return normalise(build_pool(runs), norm)
