"""Fusion, side by side: ranx 0.3.21's ``fuse`` against ``trecqr.fuse`` for every method.

    python benchmarks/bench_fuse.py [--queries 8209] [--docs 100] [--runs 5]
                                    [--condorcet-queries 200] [--methods rrf,wsum,...]
                                    [--memory-cap 9] [--per-method]

The runs: RUNS runs of QUERIES topics x DOCS documents, each topic's documents drawn (seeded)
from a pool of 2 x DOCS, so that about half of a run's documents are in each other run, with
uniform random scores, written as TREC files. Each side runs in its own child process, capped
at MEMORY_CAP GB of address space (RLIMIT_AS; Arrow's allocator is the system one there, as
Arrow's default reserves address space it never uses): the trecqr child reads the files with
``read_run``, the ranx child with ranx's own reader (``Run.from_file``), before any clock
starts. Method by method, the trecqr child then the ranx child times the fuse call (each warmed
up first on the first 20 topics, which compiles ranx's numba functions), the other child idle.
A method that does not fit is reported as such on its row ("ranx: out of memory at 9 GB") and
the child, its garbage freed, goes on with the next one (a new child if it died; --per-method:
a new child for every method, so that no method inherits another's heap). The parent, which
only writes the files, is under the same cap.

Each method is timed with min-max normalisation (ranx's default), weights equal, the trained
ones with parameters trained beforehand by trecqr on seeded judgments (the same parameters for
both). Condorcet's, a Python sort in both, is timed on the first CONDORCET_QUERIES topics only
(ranx looks each document up in every run by a linear search: its time grows with the square
of the depth). Printed: a Markdown table of wall and CPU time (ms; CPU of every thread: ranx
runs numba's prange on all cores, trecqr one), ranx / trecqr, each side's peak resident memory
while fusing (inputs included) and the 1-minute load average when the method started (each row
on stderr as soon as it is measured).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import pickle
import resource
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np
import pyarrow as pa

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from trecqr.formats.qrels import qrels_from_dict  # noqa: E402
from trecqr.formats.run import Run, read_run, write_run  # noqa: E402
from trecqr.fusion import fuse  # noqa: E402
from trecqr.fusion.entry import prepared  # noqa: E402
from trecqr.fusion.methods import METHODS, method as find  # noqa: E402
from trecqr.fusion.training import train  # noqa: E402

PARAMS = {"combgmnz": {"gamma": 0.5}, "rbc": {"phi": 0.8}, "probfuse": {"n_segments": 10},
          "slidefuse": {"w": 5}}
WEIGHTED = ("wbordafuse", "wcondorcet", "wsum", "wmnz", "mixed")
WARM_QUERIES = 20
GB = 1024 ** 3


def make_runs(folder: str, queries: int, docs: int, n_runs: int, cuts: dict, seed: int = 0):
    """Write the runs (run{r}.trec) and, for each name: topics in cuts, run{r}.{name}.trec
    holding the first topics only."""
    rng = np.random.default_rng(seed)
    qids = np.repeat(np.array([f"q{q}" for q in range(queries)]), docs)
    for r in range(n_runs):
        picks = np.concatenate([rng.choice(2 * docs, docs, replace=False) for _ in range(queries)])
        topic = np.repeat(np.arange(queries), docs)
        docnos = np.char.add(np.char.add(np.char.add("d", topic.astype(str)), "_"),
                             picks.astype(str))
        del picks, topic
        scores = np.sort(rng.random(queries * docs).reshape(queries, docs), axis=1)[:, ::-1]
        run = Run(pa.array(qids), pa.array(docnos), scores.ravel().copy(), f"r{r}")
        del docnos, scores
        write_run(run, run_path(folder, r))
        for name, n in cuts.items():
            k = min(n, queries) * docs
            write_run(Run(run.qid.slice(0, k), run.docno.slice(0, k), run.score[:k], run.runid),
                      run_path(folder, r, name))
        del run


def run_path(folder: str, r: int, cut: str = "") -> str:
    return os.path.join(folder, f"run{r}{'.' + cut if cut else ''}.trec")


def make_qrels(queries: int, docs: int, seed: int = 1):
    rng = np.random.default_rng(seed)
    return qrels_from_dict({f"q{q}": {f"d{q}_{j}": 1
                                      for j in rng.choice(2 * docs, 20, replace=False)}
                            for q in range(queries)})


def timed(fn, repeat: int) -> tuple:
    """Median wall and CPU time (ms; CPU of every thread of the process)."""
    walls, cpus = [], []
    for _ in range(repeat):
        c0, t0 = time.process_time(), time.perf_counter()
        fn()
        walls.append(time.perf_counter() - t0)
        cpus.append(time.process_time() - c0)
    return statistics.median(walls) * 1000, statistics.median(cpus) * 1000


def reset_peak() -> None:
    """Start the peak resident size (VmHWM) again from the current one (Linux)."""
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")


def peak_bytes() -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def params_of(name: str, args) -> dict:
    m = find(name)
    params = dict(PARAMS.get(m.name, {}))
    if m.name in WEIGHTED:
        params["weights"] = [1 / args.runs] * args.runs
    return params


def trained_path(folder: str, name: str) -> str:
    return os.path.join(folder, f"trained-{name}.pickle")


# --------------------------------------------------------------------------- the children
class Side:
    """What a child needs of its library: reading runs and fusing them."""

    def __init__(self, side: str, folder: str, n_runs: int):
        self.side, self.folder, self.n_runs = side, folder, n_runs
        if side == "ranx":
            import ranx

            self.ranx = ranx

    def read(self, cut: str = "") -> list:
        paths = [run_path(self.folder, r, cut) for r in range(self.n_runs)]
        if self.side == "ranx":
            return [self.ranx.Run.from_file(p, kind="trec") for p in paths]
        return [read_run(p) for p in paths]

    def fuse(self, runs, name: str, params: dict):
        m = find(name)
        if self.side == "ranx":
            rparams = {k: v for k, v in params.items() if k != "n_segments"}
            return self.ranx.fuse(runs, norm="min-max", method=m.ranx, params=rparams)
        return fuse(runs, method=m.name, norm="min-max", params=params)


def child(args) -> None:
    """Serve the parent: read a method's name per line on stdin, time it, answer one JSON line
    on stdout ({"done": name, ...}, or {"failed": name, "why": ...} when it did not fit)."""
    side = Side(args.child, args.folder, args.runs)
    say = lambda **kw: print(json.dumps(kw), flush=True)  # noqa: E731
    runs = {"": None, "condorcet": None}
    try:
        warm = side.read("warm")
    except MEMORY_ERRORS as exc:
        return say(failed="", why=why(exc))
    say(ready=True)
    for line in sys.stdin:
        name = line.strip()
        try:
            say(done=name, **measure(side, name, runs, warm, args))
        except MEMORY_ERRORS as exc:  # what failed to fit is garbage now: go on
            say(failed=name, why=why(exc), peak=peak_bytes())
            gc.collect()


MEMORY_ERRORS = (MemoryError, RuntimeError)  # numba: "dict.__setitem__ failed unexpectedly"


def why(exc: Exception) -> str:
    if isinstance(exc, MemoryError) or "failed unexpectedly" in str(exc):
        return "out of memory"
    raise exc


def measure(side: Side, name: str, runs: dict, warm: list, args) -> dict:
    m = find(name)
    params = params_of(name, args)
    if m.trained:
        if side.side == "trecqr" and not os.path.exists(trained_path(args.folder, name)):
            pool = prepared(read_runs_once(side, runs, ""), "min-max")
            got = train(m.name, pool, make_qrels(args.queries, args.docs), params)
            del pool
            with open(trained_path(args.folder, name), "wb") as f:
                pickle.dump(got, f)
        with open(trained_path(args.folder, name), "rb") as f:
            params.update(pickle.load(f))
    cut = "condorcet" if "condorcet" in m.name else ""
    for other in runs:
        if other != cut:
            runs[other] = None
    gc.collect()
    mine = read_runs_once(side, runs, cut)
    side.fuse(warm, name, params)  # warm-up (ranx: compiles numba's functions)
    gc.collect()
    reset_peak()
    load = os.getloadavg()[0]
    wall, cpu = timed(lambda: side.fuse(mine, name, params), args.repeat)
    return {"wall": wall, "cpu": cpu, "peak": peak_bytes(), "load": load}


def read_runs_once(side: Side, runs: dict, cut: str) -> list:
    if runs[cut] is None:
        runs[cut] = side.read(cut)
    return runs[cut]


# --------------------------------------------------------------------------- the parent
def capped(gb: float):
    limit = int(gb * GB)
    return lambda: resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


class Child:
    """One side's child process, started again when it died."""

    def __init__(self, side: str, args, folder: str):
        self.side, self.args, self.folder, self.proc = side, args, folder, None

    def start(self) -> None:
        a = self.args
        cmd = [sys.executable, os.path.abspath(__file__), "--child", self.side,
               "--folder", self.folder, "--queries", str(a.queries), "--docs", str(a.docs),
               "--runs", str(a.runs), "--repeat", str(a.repeat)]
        # Arrow's default allocator reserves address space it does not use: with it, RLIMIT_AS
        # would cap far below the memory really held
        env = dict(os.environ, ARROW_DEFAULT_MEMORY_POOL="system")
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     text=True, env=env, preexec_fn=capped(a.memory_cap))
        self.answer()

    def answer(self) -> dict:
        line = self.proc.stdout.readline()
        if not line:
            rc = self.proc.wait()
            self.proc = None
            return {"failed": f"died (exit {rc}) under the {self.args.memory_cap:g} GB cap"}
        event = json.loads(line)
        if "failed" in event:
            if not event["failed"]:  # while reading its inputs: it has exited
                self.proc.wait()
                self.proc = None
            return {"failed": f"{event['why']} at {self.args.memory_cap:g} GB"}
        return event

    def measure(self, name: str) -> dict:
        if self.proc is None:
            self.start()
        if self.proc is None:  # died while reading its inputs
            return {"failed": f"out of memory at {self.args.memory_cap:g} GB (reading)"}
        self.proc.stdin.write(name + "\n")
        self.proc.stdin.flush()
        res = self.answer()
        if "failed" in res:
            print(f"{self.side} {name}: {res['failed']}", file=sys.stderr, flush=True)
        else:
            print(f"{self.side} {name}: {res['wall']:,.0f} ms wall, {res['cpu']:,.0f} ms CPU, "
                  f"peak {res['peak'] / GB:.1f} GB, load {res['load']:.1f}", file=sys.stderr,
                  flush=True)
        if self.args.per_method:
            self.stop()
        return res

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.stdin.close()
            self.proc.wait()
            self.proc = None


def cell(res: dict, key: str, side: str) -> str:
    if "failed" in res:
        return f"{side}: {res['failed']}" if key == "wall" else "-"
    if key == "peak":
        return f"{res['peak'] / GB:.1f} GB"
    return f"{res[key]:,.0f} ms"


def ratio(a: dict, b: dict, key: str) -> str:
    if "failed" in a or "failed" in b:
        return "-"
    return f"{a[key] / b[key]:.1f}x"


def row(name: str, a: dict, b: dict, args) -> str:
    label = name
    if "condorcet" in name:
        label += f" (first {args.condorcet_queries} topics)"
    load = "/".join(f"{r['load']:.1f}" for r in (a, b) if "load" in r)
    return (f"| {label} | {cell(a, 'wall', 'ranx')} | {cell(b, 'wall', 'trecqr')} | "
            f"{ratio(a, b, 'wall')} | {cell(a, 'cpu', 'ranx')} | {cell(b, 'cpu', 'trecqr')} | "
            f"{ratio(a, b, 'cpu')} | {cell(a, 'peak', 'ranx')} | {cell(b, 'peak', 'trecqr')} | "
            f"{load} |")


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                 formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    ap.add_argument("--queries", type=int, default=8209, help="topics per run")
    ap.add_argument("--docs", type=int, default=100, help="documents per topic and run")
    ap.add_argument("--runs", type=int, default=5, help="runs to fuse")
    ap.add_argument("--condorcet-queries", type=int, default=200,
                    help="topics Condorcet and weighted Condorcet are timed on")
    ap.add_argument("--repeat", type=int, default=1, help="timings per method (median)")
    ap.add_argument("--methods", default=",".join(METHODS),
                    help="comma-separated methods (trecqr's or ranx's names)")
    ap.add_argument("--ranx-methods", default=None,
                    help="time ranx on these methods only (default: every method): e.g. at a "
                         "size where ranx's inputs alone nearly fill the cap")
    ap.add_argument("--memory-cap", type=float, default=9.0,
                    help="address-space cap of each child process, GB (RLIMIT_AS)")
    ap.add_argument("--per-method", action="store_true",
                    help="a new child process per method and side (default: one per side, "
                         "a new one only after a child died)")
    ap.add_argument("--child", choices=("ranx", "trecqr"), help=argparse.SUPPRESS)
    ap.add_argument("--folder", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        return child(args)
    capped(args.memory_cap)()  # the parent too: it only writes the files
    names = [find(n).name for n in args.methods.split(",")]
    ranx_too = None if args.ranx_methods is None else {
        find(n).name for n in args.ranx_methods.split(",")}
    with tempfile.TemporaryDirectory() as folder:
        make_runs(folder, args.queries, args.docs, args.runs,
                  {"warm": WARM_QUERIES, "condorcet": args.condorcet_queries})
        gc.collect()
        # method by method, trecqr first (it trains the parameters ranx then uses); each side's
        # child waits (holding its inputs, idle) while the other one fuses
        sides = {side: Child(side, args, folder) for side in ("trecqr", "ranx")}
        ours, theirs = {}, {}
        try:
            for name in names:
                ours[name] = sides["trecqr"].measure(name)
                if ranx_too is None or name in ranx_too:
                    theirs[name] = sides["ranx"].measure(name)
                else:
                    theirs[name] = {"failed": "not run (--ranx-methods)"}
        finally:
            for c in sides.values():
                c.stop()
    print(f"| {args.runs} runs of {args.queries:,} x {args.docs:,} | ranx wall | trecqr wall | "
          "ranx / trecqr | ranx CPU | trecqr CPU | ranx / trecqr | ranx peak | trecqr peak | "
          "load (ranx/trecqr) |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for name in names:
        print(row(name, theirs[name], ours[name], args))


if __name__ == "__main__":
    main()
