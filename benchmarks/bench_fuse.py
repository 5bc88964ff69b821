"""Fusion, side by side: ranx 0.3.21's ``fuse`` against ``trecqr.fuse`` for every method.

    python benchmarks/bench_fuse.py [--queries 8209] [--docs 100] [--runs 5]
                                    [--condorcet-queries 200] [--methods rrf,wsum,...]

The runs: RUNS runs of QUERIES topics x DOCS documents, each topic's documents drawn (seeded)
from a pool of 2 x DOCS, so that about half of a run's documents are in each other run, with
uniform random scores. They are written as TREC files and read (trecqr's ``read_run``; ranx's
Runs are built from the same columns as ``ranx.Run(dict)`` builds them) before any clock starts, and ranx's numba functions
are compiled first on a small input (warm-up). Each method is timed with min-max
normalisation (ranx's default), the trained ones with parameters trained beforehand (the same
for both), weights equal. Condorcet's, a Python sort in both, is timed on the first
CONDORCET_QUERIES topics only (ranx looks each document up in every run by a linear search:
its time grows with the square of the depth). Printed: a Markdown table of wall and CPU times
(ms) and ranx / trecqr (each row on stderr as soon as it is measured).
"""

from __future__ import annotations

import argparse
import os
import statistics
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
from trecqr.fusion.methods import METHODS  # noqa: E402
from trecqr.fusion.training import train  # noqa: E402

PARAMS = {"combgmnz": {"gamma": 0.5}, "rbc": {"phi": 0.8}, "probfuse": {"n_segments": 10},
          "slidefuse": {"w": 5}}
WEIGHTED = ("wbordafuse", "wcondorcet", "wsum", "wmnz", "mixed")


def make_runs(folder: str, queries: int, docs: int, n_runs: int, seed: int = 0) -> list:
    rng = np.random.default_rng(seed)
    qids = np.repeat(np.array([f"q{q}" for q in range(queries)]), docs)
    paths = []
    for r in range(n_runs):
        picks = np.concatenate([rng.choice(2 * docs, docs, replace=False) for _ in range(queries)])
        topic = np.repeat(np.arange(queries), docs)
        docnos = np.char.add(np.char.add(np.char.add("d", topic.astype(str)), "_"),
                             picks.astype(str))
        scores = np.sort(rng.random(queries * docs).reshape(queries, docs), axis=1)[:, ::-1]
        run = Run(pa.array(qids), pa.array(docnos), scores.ravel().copy(), f"r{r}")
        path = os.path.join(folder, f"run{r}.trec")
        write_run(run, path)
        paths.append(path)
    return paths


def make_qrels(queries: int, docs: int, seed: int = 1):
    rng = np.random.default_rng(seed)
    return qrels_from_dict({f"q{q}": {f"d{q}_{j}": 1 for j in rng.choice(2 * docs, 20, replace=False)}
                            for q in range(queries)})


def ranx_run(run: Run, width: int = 24):
    """The run as a ranx Run, built as ``Run(dict)`` does (numba's bulk insert of per-topic
    arrays) but from the columns, not from a Python dict of every line."""
    import ranx
    from numba.typed import List
    from ranx.data_structures.common import create_and_sort

    qids = run.qid.to_numpy(zero_copy_only=False)
    docs = run.docno.to_numpy(zero_copy_only=False).astype(f"<U{width}")
    starts = np.flatnonzero(np.concatenate([[True], qids[1:] != qids[:-1]]))
    ends = np.append(starts[1:], len(qids))
    out = ranx.Run()
    out.run = create_and_sort(List(qids[starts].tolist()),
                              List([docs[a:b] for a, b in zip(starts, ends)]),
                              List([run.score[a:b].astype(float) for a, b in zip(starts, ends)]))
    out.sorted = True
    return out


def cut(run: Run, queries: int) -> Run:
    keep = set(f"q{q}" for q in range(queries))
    mask = pa.array([q in keep for q in run.qid.to_pylist()])
    return Run(run.qid.filter(mask), run.docno.filter(mask),
               run.score[np.asarray(mask.to_numpy(zero_copy_only=False))], run.runid)


def ranx_cut(run, queries: int):
    import ranx

    keep = {f"q{q}" for q in range(queries)}
    return ranx.Run({q: dict(run[q]) for q in run.keys() if q in keep})


def timed(fn, repeat: int) -> tuple:
    """Median wall and CPU time (ms; CPU of every thread: ranx runs numba's prange on all
    cores, trecqr one)."""
    walls, cpus = [], []
    for _ in range(repeat):
        c0, t0 = time.process_time(), time.perf_counter()
        fn()
        walls.append(time.perf_counter() - t0)
        cpus.append(time.process_time() - c0)
    return statistics.median(walls) * 1000, statistics.median(cpus) * 1000


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--queries", type=int, default=8209)
    ap.add_argument("--docs", type=int, default=100)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--condorcet-queries", type=int, default=200)
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--methods", default=",".join(METHODS))
    args = ap.parse_args(argv)

    import ranx

    from trecqr.fusion.methods import method as find

    with tempfile.TemporaryDirectory() as folder:
        paths = make_runs(folder, args.queries, args.docs, args.runs)
        ours = [read_run(p) for p in paths]
        theirs = [ranx_run(r) for r in ours]
        small_ranx = [ranx_run(cut(r, 20)) for r in ours]  # the same types, for the warm-up
    qrels = make_qrels(args.queries, args.docs)
    pool = prepared(ours, "min-max")
    rows = []
    for name in args.methods.split(","):
        m = find(name)
        params = dict(PARAMS.get(m.name, {}))
        if m.name in WEIGHTED:
            params["weights"] = [1 / args.runs] * args.runs
        if m.trained:
            params.update(train(m.name, pool, qrels, params))
        rparams = {k: v for k, v in params.items() if k != "n_segments"}
        mine, mine_r = ours, theirs
        note = ""
        if "condorcet" in m.name:
            mine = [cut(r, args.condorcet_queries) for r in ours]
            mine_r = [ranx_cut(r, args.condorcet_queries) for r in theirs]
            note = f" (first {args.condorcet_queries} topics)"
        ranx.fuse(small_ranx, norm="min-max", method=m.ranx, params=rparams)  # compile
        t_ranx = timed(lambda: ranx.fuse(mine_r, norm="min-max", method=m.ranx,
                                         params=rparams), args.repeat)
        t_ours = timed(lambda: fuse(mine, method=m.name, norm="min-max", params=params),
                       args.repeat)
        rows.append((m.name + note, t_ranx, t_ours))
        print(f"| {m.name}{note} | {t_ranx[0]:,.0f} ms | {t_ours[0]:,.0f} ms | "
              f"{t_ranx[0] / t_ours[0]:.1f}x | {t_ranx[1]:,.0f} ms | {t_ours[1]:,.0f} ms | "
              f"{t_ranx[1] / t_ours[1]:.1f}x |", file=sys.stderr, flush=True)
    print(f"| {args.runs} runs of {args.queries:,} x {args.docs:,} | ranx wall | trecqr wall | "
          "ranx / trecqr | ranx CPU | trecqr CPU | ranx / trecqr |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for name, a, b in rows:
        print(f"| {name} | {a[0]:,.0f} ms | {b[0]:,.0f} ms | {a[0] / b[0]:.1f}x | "
              f"{a[1]:,.0f} ms | {b[1]:,.0f} ms | {a[1] / b[1]:.1f}x |")


if __name__ == "__main__":
    main()
