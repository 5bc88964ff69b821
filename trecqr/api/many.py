"""Many runs in one call: the relevance file is read once, the runs are scored in parallel.

``evaluate_many(qrels, runs, measures, executor=None, **options)`` returns one
:class:`~trecqr.api.evaluation.Results` per run, in the order given. Runs given as paths are
scored in worker processes (``jobs``, default every core) or on any
``concurrent.futures.Executor``
(a Dask ``distributed`` client's ``get_executor()`` included); runs given as objects (dicts,
DataFrames, Runs) are scored here. Only the qrels (its path, or the object when it is not a
file) and each run's path travel to a worker; a worker keeps the relevance file it has read,
keyed by path, size and modification time, so it reads it once for all the runs it scores.

The same machinery serves ``trecqr eval QRELS RUN [RUN ...]`` (:mod:`trecqr.cli.eval_runs`,
through :func:`run_many` with the command's own per-run function) and ``trecqr compare``
(:func:`score_trec_many`).
"""

from __future__ import annotations

import glob
import os
import uuid
import warnings
from dataclasses import dataclass, field

from trecqr.api.evaluation import evaluate, load_qrels, score_trec
from trecqr.api.invocation import read_rel_info
from trecqr.errors import UsageError
from trecqr.formats import inputs
from trecqr.formats.inputs import Input, named_runs
from trecqr.runtime.memory import pool_workers
from trecqr.rankings.options import Options
from trecqr.runtime.workers import usable_cpus, worker_pool

_GLOB = "*?["
# A pool of processes costs ~1 s to start and warm up, and one process scores ~100 MB of run
# text a second: below this much run text in all, scoring here is as fast.
_POOL_BYTES = 192 << 20
_CACHE_LIMIT = 4
_RELEVANCE: dict = {}  # key -> parsed relevance file, in each worker (and in this process)


def expand_runs(args) -> tuple[list, bool]:
    """RUN arguments to run paths: a folder gives its files (sorted, hidden ones left out), a
    pattern that is not an existing file gives its matches (sorted). Also returns whether the
    arguments name several runs by their form (more than one argument, a folder or a pattern),
    which is what puts a ``run`` column in the structured outputs."""
    paths, several = [], len(args) > 1
    for arg in args:
        if arg != "-" and os.path.isdir(arg):
            found = sorted(os.path.join(arg, n) for n in os.listdir(arg)
                           if not n.startswith(".") and os.path.isfile(os.path.join(arg, n)))
            if not found:
                raise UsageError(f"folder {arg!r} holds no run file")
            paths += found
            several = True
        elif arg != "-" and not os.path.exists(arg) and any(c in arg for c in _GLOB):
            found = sorted(p for p in glob.glob(arg) if os.path.isfile(p))
            if not found:
                raise UsageError(f"no run file matches {arg!r}")
            paths += found
            several = True
        else:
            paths.append(arg)
    if len(paths) > 1 and "-" in paths:
        raise UsageError("stdin (-) can be the only RUN, not one of several")
    return paths, several


def _is_path(obj) -> bool:
    return isinstance(obj, (str, os.PathLike)) and os.fspath(obj) != "-"


@dataclass
class Relevance:
    """A relevance file (or object) as it travels to workers: the path and a key; the parsed
    object itself only when there is no file to read it from."""

    source: object
    kind: str = "qrels"  # qrels, prefs, qrels_prefs, qrels_jg, or "raw" (passed as given)
    options: object = None
    key: tuple = ()
    value: object = field(default=None, repr=False)

    @classmethod
    def of(cls, source, kind: str = "qrels", options=None) -> "Relevance":
        if kind != "raw" and _is_path(source):
            path = os.path.abspath(os.fspath(source))
            try:
                st = os.stat(path)
                key = (path, st.st_size, st.st_mtime_ns, kind, getattr(options, "v10", None))
            except OSError:  # reported by the reader
                key = ("unreadable", uuid.uuid4().hex)
            return cls(os.fspath(source), kind, options, key)
        if kind == "qrels" and not isinstance(source, Input):  # decided once, for every run
            source = inputs.decide(source, comments=True if options is None else options.v10)
        return cls(source, kind, options, ("object", uuid.uuid4().hex), source)

    def load(self):
        """The parsed relevance file (read once per process)."""
        if self.value is not None:
            return self.value
        if self.kind == "raw":
            return self.source
        hit = _RELEVANCE.get(self.key)
        if hit is None:
            hit = read_relevance(self.source, self.kind, self.options)
            while len(_RELEVANCE) >= _CACHE_LIMIT:
                _RELEVANCE.pop(next(iter(_RELEVANCE)))
            _RELEVANCE[self.key] = hit
        return hit

    def travelling(self, primed: bool = False) -> "Relevance":
        """What a task carries: no parsed object when the worker can read the file, or when
        it was handed the object once as it started (primed)."""
        if self.value is None or (self.key[0] == "object" and not primed):
            return self
        source = self.source if _is_path(self.source) else None
        return Relevance(source, self.kind, self.options, self.key)


def read_relevance(path, kind, options):
    comments = True if options is None else options.v10
    if kind == "qrels":  # read once, handed on as decided columns
        return Input("columns", load_qrels(path, comments=comments))
    return read_rel_info(path, kind, options)


def _prime(key, value) -> None:
    """Worker initializer: the relevance file the parent has already read."""
    _RELEVANCE[key] = value


def _call(fn, rel: Relevance, run, args: tuple):
    """Run fn(relevance, run, *args) in a worker: (result, warning texts). An error is raised
    as it is (trecqr's errors pickle whole, with their file and line)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = fn(rel.load(), run, *args)
    # the category: --quiet; trecqr's own warnings whole (their command-line wording, cli)
    return result, [(w.message if hasattr(w.message, "cli") else str(w.message), w.category)
                    for w in caught]


def _unwrap(out):
    result, messages = out
    for message, category in messages:
        warnings.warn(message, category, stacklevel=2)
    return result


def _pool_jobs(runs, jobs) -> int:
    """How many worker processes to start (1: score here). The default: every usable core,
    when the runs hold enough text to pay for starting them, and no more workers than fit
    under a cgroup memory limit. A ``jobs`` given is taken as it is."""
    if len(runs) < 2 or not all(_is_path(r) for r in runs):
        return 1
    if jobs is None:
        try:
            sizes = [os.path.getsize(r) for r in runs]
        except OSError:
            sizes = [0]
        if sum(sizes) < _POOL_BYTES:
            return 1
        jobs = pool_workers(usable_cpus(), max(sizes))
    if jobs < 1:
        raise UsageError(f"-j must be at least 1 (got {jobs})")
    return min(jobs, len(runs))


# what the forkserver imports once, so that each worker starts ready (with the module of the
# function the workers run: the eval command's is the command line's)
_PRELOAD = ["trecqr.api.evaluation", "trecqr.api.many", "trecqr.engine.selection"]


def run_many(fn, relevance: Relevance, runs, args: tuple = (), *, executor=None,
             jobs: int | None = None) -> list:
    """[fn(parsed relevance, run, *args) for run in runs], in parallel where it pays.

    fn must be a module-level function (it is pickled by name). With an executor, every run
    is a task on it; otherwise paths are scored in ``jobs`` worker processes (default: every
    core, when the runs are large or many enough to pay for starting them), objects here.
    Errors come back as the first failing run's error, in the order given."""
    runs = list(runs)
    if executor is not None:
        futures = [executor.submit(_call, fn, relevance.travelling(), run, args)
                   for run in runs]
        return _collect(futures)
    workers = _pool_jobs(runs, jobs)
    if workers <= 1:
        return [_unwrap(_call(fn, relevance, run, args)) for run in runs]
    relevance.value = relevance.load()  # read once, here: its errors come first
    rel = relevance.travelling(primed=True)
    # the workers ignore SIGINT, SIGTERM and SIGHUP: a Ctrl-C is this process's to handle
    # (guard.worker_pool ends them on the way out)
    with worker_pool(workers, [*_PRELOAD, fn.__module__], _prime,
                     (relevance.key, relevance.value)) as pool:
        return _collect([pool.submit(_call, fn, rel, run, args) for run in runs])


def _collect(futures) -> list:
    out = []
    try:
        for f in futures:
            out.append(_unwrap(f.result()))
    except BaseException:
        for f in futures:
            f.cancel()
        raise
    return out


# ---------------------------------------------------------------------------------------------
# what the API and compare run in workers


@dataclass
class Coverage:
    """What an Evaluation keeps of its rankings once it has left its worker: the topics found
    only in the qrels or only in the run (the coverage line and the JSON ``topics``)."""

    qrels_only: list
    run_only: list


def slim(ev):
    """An Evaluation without its rankings (large), as it travels back from a worker."""
    rk = ev.rankings
    if rk is not None and not isinstance(rk, Coverage):
        ev.rankings = Coverage(list(rk.qrels_only), list(rk.run_only))
    return ev


def _score_trec_task(qrels, run, measures, options):
    return slim(score_trec(qrels, run, measures, options))


def score_trec_many(qrels, runs, measures, options, *, executor=None, jobs=None) -> list:
    """[score_trec(qrels, run, measures, options) for run in runs], the qrels read once;
    the Evaluations keep only the coverage of their rankings."""
    return run_many(_score_trec_task, Relevance.of(qrels, "qrels", options), runs,
                    (measures, options), executor=executor, jobs=jobs)


def _evaluate_task(qrels, run, measures, options):
    res = evaluate(qrels, run, measures, **options)
    slim(res.evaluation)
    return res


def evaluate_many(qrels, runs, measures=None, executor=None, *, jobs: int | None = None,
                  **options) -> list | dict:
    """Score many runs against one qrels: ``[trecqr.evaluate(qrels, run, measures, **options)
    for run in runs]``, the qrels read once, the runs scored in parallel.

    runs: paths (a folder or a glob pattern expands to its files, sorted), or objects
    (dicts, DataFrames, Runs: scored in this process); ``{name: run}`` gives ``{name:
    Results}``. executor: any ``concurrent.futures.Executor`` (e.g.
    ``distributed.Client(...).get_executor()``); only the qrels and the run paths are sent to
    it. Without one, ``jobs`` worker processes
    (default: every core, when the runs are large or many enough to pay for them).
    """
    if isinstance(runs, (str, os.PathLike)):
        runs = [runs]
    runs, names = named_runs(runs, door="evaluate_many")
    if all(isinstance(r, (str, os.PathLike)) for r in runs):
        runs = expand_runs([os.fspath(r) for r in runs])[0]
    if isinstance(measures, str):
        measures = [measures]
    compat = options.get("compat", "9.0.8")
    rel = Relevance.of(qrels, "qrels", Options(compat="10.0" if compat == "10.0" else "9.0.8"))
    results = run_many(_evaluate_task, rel, runs, (measures, options), executor=executor,
                       jobs=jobs)
    return results if names is None else dict(zip(names, results))
